"""An always-guarded harness whose edit never checks that its target is a regular file.

It has no unguarded mode, so before PRV-031 only an edit of a path never read reached a
directory or a FIFO, and the guard refused that edit first: the missing check was masked.
"""

import os
import stat
from typing import Any

from reference.adapter import ReferenceHarness
from reference.fs import local
from reference.fs.types import fs_error

_check = local._Place.check_writable_regular


def check_writable_regular(self: Any, op: str, name: str, st: os.stat_result, p: str) -> None:
    if op == "edit" and not stat.S_ISREG(st.st_mode) and not stat.S_ISLNK(st.st_mode):
        raise fs_error("io", op=op, p=p, reason="invalid argument")  # what reading it gave
    _check(self, op, name, st, p)


class Harness(ReferenceHarness):
    def describe(self) -> Any:
        described = super().describe()
        described["options"]["unguarded"] = False
        return described


local._Place.check_writable_regular = check_writable_regular  # type: ignore[method-assign]
harness = Harness
