"""Real agent harnesses, judged by the suite: one folder per harness (adapter, manifest, triage).

``python -m peers`` installs each at its pinned version into an environment of its own under
``peers/.envs/`` (outside git), runs the suite against it at the behaviour level and at the
default level, and writes ``docs/peers/``. The adapters only translate calls and results.
"""
