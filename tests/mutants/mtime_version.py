"""The version is the mtime alone (no inode, size, ctime, nor racy content hash)."""

import os

from reference.adapter import ReferenceHarness
from reference.fs import local
from tests.mutants import rebind


def stamp(st: os.stat_result) -> str:
    return str(st.st_mtime_ns)


rebind(local._stamp, stamp)
local.LocalFs._is_racy = lambda self, st: False  # type: ignore[method-assign]
harness = ReferenceHarness
