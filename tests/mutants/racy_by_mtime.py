"""The version is the inode, the size and the mtime to the second, and an observation counts as
racy when the file's mtime (not its ctime) is less than two seconds old.

A same-size rewrite of a file last modified long ago, its mtime restored, then keeps the version
and is no racy observation either: the stale write is accepted.
"""

from __future__ import annotations

import os
import time

from reference.adapter import ReferenceHarness
from reference.fs import local
from tests.mutants import rebind

original = local._stamp


def _stamp(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{int(st.st_mtime)}"


def _is_racy(self: local.LocalFs, st: os.stat_result) -> bool:
    return time.time_ns() - st.st_mtime_ns < 2_000_000_000


rebind(original, _stamp)
local.LocalFs._is_racy = _is_racy  # type: ignore[method-assign]
harness = ReferenceHarness
