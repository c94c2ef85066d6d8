"""An interruption at an instruction with no line still ends the run as interrupted (exit 2).

pytest's terminal computes ``tb_lineno - 1`` for every entry of the interruption's traceback; a
signal raised at a loop's jump back has none, and the run ended with a TypeError and exit 1
(seen: a SIGTERM in ``watch._walk``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest

from conformance import interrupt
from tests.fixtures.interrupted_off_line import off_line
from tests.suite import REPO, outcomes, report, run_suite


def _interruption() -> KeyboardInterrupt:
    inner = off_line()
    assert cast("int | None", inner.tb_lineno) is None  # as at a loop's jump back
    cause = ValueError("where it was")
    cause.__traceback__ = inner
    exc = KeyboardInterrupt("signal 15")
    exc.__traceback__ = off_line()
    exc.__context__ = cause
    return exc


def test_pytest_cannot_format_an_entry_without_a_line() -> None:
    """What the repair is for (if pytest learns to, the repair is merely unneeded)."""
    excinfo = pytest.ExceptionInfo.from_exception(_interruption())
    with pytest.raises(TypeError, match="NoneType"):
        excinfo.getrepr(funcargs=True)


def test_every_entry_gets_its_functions_first_line() -> None:
    excinfo = pytest.ExceptionInfo.from_exception(_interruption())
    next(interrupt.pytest_keyboard_interrupt(excinfo))
    text = str(excinfo.getrepr(funcargs=True))
    assert "KeyboardInterrupt: signal 15" in text
    assert "ValueError: where it was" in text
    first = off_line.__code__.co_firstlineno
    assert excinfo.value.__traceback__ is not None
    assert excinfo.value.__traceback__.tb_lineno == first
    assert interrupt.lined(None) is None


def test_a_run_interrupted_off_a_line_ends_as_interrupted(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    done = run_suite("-p", "tests.fixtures.interrupted_off_line", "-k", "GRD-001",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == pytest.ExitCode.INTERRUPTED, done.stdout[-3000:] + done.stderr
    assert "TypeError" not in done.stdout + done.stderr
    assert "KeyboardInterrupt" in done.stdout
    data = report(path)
    assert (data["complete"], data["reason"]) == (False, "the run was interrupted")


def test_a_run_interrupted_while_it_collects_still_writes_its_reports(tmp_path: Path) -> None:
    # The signal comes before any case is known (driven: the plugin signals as the first case
    # module is collected); CI's cancel in the first second must not lose the reports.
    path, summary = tmp_path / "report.json", tmp_path / "summary.md"
    done = run_suite("-p", "tests.fixtures.term_in_collection", "--conformance-jobs", "1",
                     "--conformance-report", str(path), "--conformance-report-md", str(summary),
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == pytest.ExitCode.INTERRUPTED, done.stdout[-3000:] + done.stderr
    data = report(path)
    reason = "the run was interrupted before its cases were collected"
    assert (data["complete"], data["reason"], data["cases"]) == (False, reason, [])
    assert summary.read_text().startswith(
        "## Harness conformance: harness not known (the run ended before its handshake) — "
        "INCOMPLETE\n"
    )
    assert f"INCOMPLETE: {reason}" in done.stdout
    # Nor does such a report make a baseline: every case would be known, none of its failures.
    made = subprocess.run(
        [sys.executable, "-m", "conformance", "baseline", str(path)],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
        text=True, check=False,
    )  # fmt: skip
    assert made.returncode == 4
    assert made.stderr.strip().splitlines() == [
        f"ERROR: {path}: the run was cut short ({reason}; 0 not run): "
        "make the baseline from a complete run"
    ]


def test_a_run_interrupted_before_pytest_starts_ends_as_interrupted(tmp_path: Path) -> None:
    # SIGTERM while pytest loads its plugins (driven: importing the plugin signals): it was a
    # kill (143), with no report and the run's temporary directory left behind.
    temp = tmp_path / "tmp"
    temp.mkdir()
    path, summary = tmp_path / "report.json", tmp_path / "summary.md"
    done = run_suite("-p", "tests.fixtures.term_at_start", "--conformance-report", str(path),
                     "--conformance-report-md", str(summary), cwd=tmp_path,
                     env={"TMPDIR": str(temp)})  # fmt: skip
    assert done.returncode == pytest.ExitCode.INTERRUPTED, done.stdout[-3000:] + done.stderr
    assert done.stderr.strip().splitlines() == [
        "INCOMPLETE: the run was interrupted before it started"
    ]
    data = report(path)
    assert (data["complete"], data["reason"], data["cases"]) == (
        False,
        "the run was interrupted before it started",
        [],
    )
    assert summary.read_text().startswith(
        "## Harness conformance: harness not known (the run ended before its handshake) — "
        "INCOMPLETE\n"
    )
    assert os.listdir(temp) == []


def test_a_run_interrupted_while_its_harness_starts_does_not_wait_for_the_handshake(
    tmp_path: Path,
) -> None:
    path = tmp_path / "report.json"
    done = run_suite("--harness", "tests.fixtures.term_while_starting:harness",
                     "--conformance-jobs", "1", "--conformance-handshake-timeout", "60",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == pytest.ExitCode.INTERRUPTED, done.stdout[-3000:] + done.stderr
    data = report(path)
    assert (data["complete"], data["harness"]) == (False, {})
    assert str(data["reason"]).startswith("the run was interrupted")
    assert "did not complete the handshake" not in done.stdout + done.stderr


def test_a_run_interrupted_while_pytest_configures_still_writes_its_reports(
    tmp_path: Path,
) -> None:
    path = tmp_path / "report.json"
    done = run_suite("-p", "tests.fixtures.term_in_configure", "--conformance-report", str(path),
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == pytest.ExitCode.INTERRUPTED, done.stdout[-3000:] + done.stderr
    data = report(path)
    assert (data["complete"], data["reason"]) == (
        False,
        "the run was interrupted before it started",
    )


def test_a_sigterm_as_the_run_stops_its_harness_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    done = run_suite("-p", "tests.fixtures.term_in_close", "--conformance-case", "RD-001",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert "INCOMPLETE" not in done.stdout + done.stderr
    data = report(path)
    assert (data["complete"], outcomes(data)) == (True, {"RD-001": "passed"})
