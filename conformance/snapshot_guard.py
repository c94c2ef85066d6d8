"""Who may rewrite which pinned transcripts, and when a snapshot directory is bad input.

Only the reference shipped beside the suite may update the normative snapshots (decided by
where ``reference`` is loaded from, not by the name a harness gives itself); another harness
pins its own with ``--conformance-snapshots DIR``. A directory there that can never be used is
refused before the run, and one that is missing only where transcripts would be compared. A
partial run (a selection, a behaviour-only level, a run cut short) neither fails on nor deletes
the snapshots it did not use.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path
from typing import Final, Protocol

import pytest

import conformance
from conformance import parallel
from conformance.client import Client
from conformance.harness.contract import Profile
from conformance.harness.loading import DEFAULT_HARNESS, Choice
from conformance.harness.stdio import Stdio
from conformance.snapshots import ConformanceSnapshots


class Run(Protocol):
    """What of a run's state the guard reads (the plugin's), and where it leaves its notes."""

    choice: Choice | None
    client: Client | None
    profile: Profile | None
    levels: frozenset[str]
    notes: list[str]


def the_suites_reference(state: Run) -> bool:
    """Whether the run tests the reference shipped beside this suite, whose transcripts are the
    normative snapshots. Decided by what the name loads, not by the name: a copy of the
    reference's adapter answers "reference" to ``describe``, and a copy of its package in the
    project, first on the child's path, is what ``--harness reference`` imports there."""
    choice, client = state.choice, state.client
    if choice is None or client is None or choice.kind != "python":
        return False
    if choice.value not in (DEFAULT_HARNESS, "reference.adapter:ReferenceHarness"):
        return False
    transport = client.transport
    if isinstance(transport, Stdio):
        loaded = reference_in_child(transport)
    else:
        harness = getattr(transport, "harness", None)
        loaded = None if harness is None else inspect.getfile(type(harness))
    ours = Path(conformance.__file__).resolve().parent.parent / "reference"
    return loaded is not None and Path(loaded).resolve().parent == ours


def reference_in_child(transport: Stdio) -> str | None:
    """Where the harness's child finds ``reference``: asked of a Python started as it is."""
    probe = "import importlib.util as u; s = u.find_spec('reference'); print(s and s.origin)"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=transport.cwd, env=transport.env,
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    found = done.stdout.strip()
    return found if done.returncode == 0 and found not in ("", "None") else None


def dir_problem(directory: str) -> str | None:
    """Why ``--conformance-snapshots`` can never be used, or None. A path that is no directory
    failed every scenario case as the harness's defect ("no transcript … is pinned")."""
    if not directory:
        return "an empty path"
    if os.path.lexists(directory) and not os.path.isdir(directory):
        return "is not a directory"
    return None


def refuse_missing(config: pytest.Config, state: Run, items: list[pytest.Item]) -> None:
    """A missing ``--conformance-snapshots`` directory is bad input where the run would compare
    transcripts with it (a misspelt one failed every scenario case as the harness's defect):
    not in an update, which makes it, nor where no transcript is compared (the behaviour
    level, a harness without ``loop``, no scenario case selected)."""
    directory = config.getoption("conformance_snapshots")
    if not directory or os.path.lexists(directory):
        return
    if getattr(config.option, "update_snapshots", False) or "wording" not in state.levels:
        return
    if state.profile is None or not state.profile.has("loop"):
        return
    if any(parallel.SNAPSHOT_FIXTURES & set(getattr(item, "fixturenames", ())) for item in items):
        raise pytest.UsageError(
            f"--conformance-snapshots {directory}: no such directory; --snapshot-update makes "
            "it and pins this harness's transcripts there"
        )


SNAPSHOTS_AT_BEHAVIOUR: Final = (
    "--snapshot-update wrote nothing: the pinned transcripts are wording, which "
    "--conformance-level behaviour does not compare"
)
"""The note of an update at the behaviour level."""
SNAPSHOTS_NEED_LOOP: Final = (
    "--snapshot-update wrote nothing: the pinned transcripts are the scenario cases' (SCN), "
    "which need the loop capability, and this harness does not declare it"
)
"""The note of an update on a harness without ``loop``."""


def guard_update(config: pytest.Config, state: Run) -> None:
    """``--snapshot-update`` writes only where it may, and says so where it writes nothing."""
    if not getattr(config.option, "update_snapshots", False):
        return
    if state.profile is not None and not state.profile.has("loop"):
        state.notes.append(SNAPSHOTS_NEED_LOOP)
    elif "wording" not in state.levels:
        state.notes.append(SNAPSHOTS_AT_BEHAVIOUR)
    choice = state.choice
    if not config.getoption("conformance_snapshots") and not the_suites_reference(state):
        label = choice.label if choice is not None else "another harness"
        raise pytest.UsageError(
            "--snapshot-update would rewrite the suite's normative snapshots with the output "
            f"of {label}; pass --conformance-snapshots DIR to keep your own"
        )


def partial(config: pytest.Config) -> None:
    """Only part of the cases run (or ran): their unused snapshots fail nothing, lose nothing."""
    ConformanceSnapshots.partial_run = True
    config.option.warn_unused_snapshots = True
    if hasattr(config.option, "no_cleanup"):
        config.option.no_cleanup = True
