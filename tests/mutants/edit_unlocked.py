"""An edit takes no lock: it reads, checks the version and publishes while another edit does too.

Writes keep their lock, so the write races (GRD-013) pass; two edits of one version both win
and one of them is lost.
"""

import fcntl
import os
import stat
import threading
from typing import Any

from reference.adapter import ReferenceHarness
from reference.fs import local

_editing = threading.local()
_edit = local.LocalFs.edit


class _Fcntl:
    """``fcntl`` with the directory lock of an edit left out."""

    def __getattr__(self, name: str) -> Any:
        return getattr(fcntl, name)

    @staticmethod
    def flock(fd: int, operation: int) -> None:
        # The directory lock, tried without blocking first, then waited for: both left out.
        locks_directory = operation & fcntl.LOCK_EX and stat.S_ISDIR(os.fstat(fd).st_mode)
        if getattr(_editing, "on", False) and locks_directory:
            return
        fcntl.flock(fd, operation)


def edit(self: local.LocalFs, *args: Any, **kwargs: Any) -> Any:
    _editing.on = True
    try:
        return _edit(self, *args, **kwargs)
    finally:
        _editing.on = False


local.fcntl = _Fcntl()  # type: ignore[assignment,attr-defined]
local.LocalFs.edit = edit  # type: ignore[method-assign]
harness = ReferenceHarness
