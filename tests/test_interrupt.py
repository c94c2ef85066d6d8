"""An interruption at an instruction with no line still ends the run as interrupted (exit 2).

pytest's terminal computes ``tb_lineno - 1`` for every entry of the interruption's traceback; a
signal raised at a loop's jump back has none, and the run ended with a TypeError and exit 1
(seen: a SIGTERM in ``watch._walk``).
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from conformance import interrupt
from tests.fixtures.interrupted_off_line import off_line
from tests.suite import report, run_suite


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
