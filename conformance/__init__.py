"""harness-conformance: run SPEC.md against any agent harness, through a small contract.

PYTEST_DONT_REWRITE: ``python -m conformance`` imports this package before pytest starts, and
pytest marks the whole distribution for assertion rewriting; this marker keeps pytest from
warning that the (assertion-free) package module was imported too early.
"""

__version__ = "0.1.0"
