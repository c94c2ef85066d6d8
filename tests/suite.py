"""Running the conformance suite from the project's own tests: in a subprocess, off the repo."""

from __future__ import annotations

import json
import os
import select
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent


def child_env(**extra: str) -> dict[str, str]:
    """This environment for a child run, without the marks of the pytest run around it.

    Under ``pytest -n`` a child inherits ``PYTEST_XDIST_WORKER``; syrupy then takes the child
    for a worker and neither reports nor removes snapshots.
    """
    inherited = {
        k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST_", "PYTEST_CURRENT"))
    }
    return {**inherited, "PYTHONPATH": str(REPO), **extra}


def cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m conformance ARGS`` as a user types it (pytest's cache on)."""
    return subprocess.run(
        [sys.executable, "-m", "conformance", *args], cwd=cwd, env=child_env(**(env or {})),
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def run_suite(
    *args: str, cwd: Path, env: dict[str, str] | None = None, profile: str = "default"
) -> subprocess.CompletedProcess[str]:
    """``python -m conformance`` on this checkout's sources, with a fast hypothesis profile.

    The user's cache directory (hypothesis' home) is one beside ``cwd``, under pytest's temp,
    unless ``env`` names another.
    """
    environment = child_env(**{"XDG_CACHE_HOME": str(cwd.parent / "xdg-cache"), **(env or {})})
    command = [sys.executable, "-m", "conformance", "-p", "no:cacheprovider"]
    command += ["--hypothesis-profile", profile, *_own_base(args, cwd), *args]
    return _run(command, cwd, environment)


def run_pytest(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Plain pytest with the plugin, for node-ID selections."""
    environment = child_env()
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "conformance.plugin"]
    command += ["--hypothesis-profile", "default", "--rootdir", str(cwd), *_own_base(args, cwd)]
    command += args
    return _run(command, cwd, environment)


HANG_S = 900.0
"""A run of the suite still going after this long hangs (none takes over a minute, busy or not)."""


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The run, or a failed test that says it hangs: a hang must not hold CI until it is killed.

    Not a time budget: the bound is fifteen times the slowest run on a busy machine.
    """
    try:
        return subprocess.run(
            command, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=HANG_S
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout
        pytest.fail(
            f"{shlex.join(command)} hangs: not ended in {HANG_S:g} s\n{(out or '')[-3000:]}"
        )


def _own_base(args: tuple[str, ...], cwd: Path) -> list[str]:
    """Keep the run's workspaces under the test's directory (the suite makes and removes it)."""
    if any(a.startswith("--conformance-basetemp") for a in args):
        return []
    return ["--conformance-basetemp", str(cwd / ".conformance-base")]


def report(path: Path) -> dict[str, object]:
    """A JSON report written by ``--conformance-report``."""
    data: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return data


def outcomes(data: dict[str, object]) -> dict[str, str]:
    """Case ID → outcome."""
    cases = data["cases"]
    assert isinstance(cases, list)
    return {case["id"]: case["outcome"] for case in cases}


def case_of(data: dict[str, object], case_id: str) -> dict[str, object]:
    """One case's entry in a JSON report."""
    cases = data["cases"]
    assert isinstance(cases, list)
    found = [case for case in cases if case["id"] == case_id]
    assert found, f"{case_id} is not in the report"
    entry: dict[str, object] = found[0]
    return entry


def by_area(data: dict[str, object], outcome: str) -> dict[str, int]:
    """Area → how many of its cases ended with ``outcome``."""
    counts: dict[str, int] = {}
    cases = data["cases"]
    assert isinstance(cases, list)
    for case in cases:
        if case["outcome"] == outcome:
            counts[case["area"]] = counts.get(case["area"], 0) + 1
    return counts


def fixture(name: str) -> str:
    """A fixture harness by module attribute, e.g. ``tools_only:harness``."""
    return f"tests.fixtures.{name}"


ONE_LINE_ERRORS = "ERROR"


def error_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The ERROR lines a run printed (a bad input must give exactly one)."""
    return [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("ERROR")]


def cases(data: dict[str, object]) -> list[dict[str, Any]]:
    """The case entries of a JSON report."""
    found = data["cases"]
    assert isinstance(found, list)
    return found


def process_ends(pid: int) -> bool:
    """Whether process ``pid`` (not a child of this one) ends, waited for without polling;
    one that does not is killed, so that a failing test leaves nothing running either."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        if select.select([handle], [], [], 60)[0]:  # a bound against a hang only
            return True
        signal.pidfd_send_signal(handle, signal.SIGKILL)
        return False
    finally:
        os.close(handle)
