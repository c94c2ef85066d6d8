"""Mutations are serialized per directory *as spelled*, not per real directory of the file.

Two writers through the same name exclude each other (GRD-013 passes); a writer through a
symlink alias in another directory takes another lock, and both win.
"""

import collections
import fcntl
import os
import stat
import threading
from typing import Any

from reference.adapter import ReferenceHarness
from reference.fs import local
from reference.fs.types import Target

_locks: collections.defaultdict[str, threading.Lock] = collections.defaultdict(threading.Lock)
_guard = threading.Lock()
_held = threading.local()
_reach = local.LocalFs._reach
_exit = local._Place.__exit__


class _Fcntl:
    """``fcntl`` without the blocking directory lock (the spelled-path lock replaces it)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(fcntl, name)

    @staticmethod
    def flock(fd: int, operation: int) -> None:
        # The directory lock, tried without blocking first, then waited for: both left out.
        if not (operation & fcntl.LOCK_EX and stat.S_ISDIR(os.fstat(fd).st_mode)):
            fcntl.flock(fd, operation)


def reach(self: local.LocalFs, target: Target, op: str, *, create: bool) -> Any:
    with _guard:
        lock = _locks[os.path.dirname(target.display_path)]
    lock.acquire()
    try:
        place = _reach(self, target, op, create=create)
    except BaseException:
        lock.release()
        raise
    if place is None:
        lock.release()
        return None
    place.spelled_lock = lock  # type: ignore[attr-defined]
    return place


def place_exit(self: Any, kind: object, *exc: object) -> None:
    try:
        _exit(self, kind, *exc)
    finally:
        lock = getattr(self, "spelled_lock", None)
        if lock is not None:
            self.spelled_lock = None
            lock.release()


local.fcntl = _Fcntl()  # type: ignore[assignment,attr-defined]
local.LocalFs._reach = reach  # type: ignore[method-assign]
local._Place.__exit__ = place_exit  # type: ignore[method-assign]
harness = ReferenceHarness
