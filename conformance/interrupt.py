"""An interrupted run still ends as interrupted: exit 2, its report written, pytest's summary.

A signal (SIGTERM from CI, or Ctrl-C) is raised where the main thread happens to be, and that
can be an instruction with no line of its own, such as a loop's jump back to its start. Its
traceback entry then has no line number, and pytest's terminal fails to format the traceback
(``None - 1``): the run ended with that TypeError and exit 1 instead, as if a case had failed.
Each such entry is given its function's first line before pytest reads it.
"""

from __future__ import annotations

import types
from collections.abc import Generator
from typing import cast

import pytest
from _pytest._code import Traceback


def lined(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` with a line number in every entry (the function's first line where it had none)."""
    entries: list[types.TracebackType] = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    if all(cast("int | None", entry.tb_lineno) is not None for entry in entries):
        return entries[0] if entries else None
    rebuilt: types.TracebackType | None = None
    for entry in reversed(entries):
        line = cast("int | None", entry.tb_lineno)  # None: typeshed says otherwise
        if line is None:
            line = entry.tb_frame.f_code.co_firstlineno
        rebuilt = types.TracebackType(rebuilt, entry.tb_frame, entry.tb_lasti, line)
    return rebuilt


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_keyboard_interrupt(
    excinfo: pytest.ExceptionInfo[BaseException],
) -> Generator[None, object, object]:
    """Give the interruption's traceback, and those it was raised from, a line in every entry."""
    seen: set[int] = set()
    exc: BaseException | None = excinfo.value
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        exc.__traceback__ = lined(exc.__traceback__)
        exc = exc.__cause__ or exc.__context__
    fixed = excinfo.value.__traceback__
    if fixed is not None:
        excinfo.traceback = Traceback(fixed)
    return (yield)
