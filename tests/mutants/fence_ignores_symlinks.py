"""The sandbox fence judges the lexical display path, so a symlink inside can point outside.

One defect, two effects the suite names apart: a path through a symlink that leads outside is
let through (SBX-003, SBX-004), and a workspace opened through a symlink has its own files
refused (SBX-012), since their display path is not under the real root.
"""

import os

from reference.adapter import ReferenceHarness
from reference.fs import sandbox
from reference.fs.types import Target, fs_error


def authorize(self: sandbox.SandboxFs, target: Target, op: str) -> None:
    if self.mode == "danger-full-access":
        return
    roots = [os.path.normpath(r) for r in self._roots]
    path = target.display_path
    if self.mode == "workspace-write" and any(os.path.commonpath([path, r]) == r for r in roots):
        return
    raise fs_error("sandbox", op=op, p=path, mode=self.mode)


sandbox.SandboxFs.authorize = authorize  # type: ignore[method-assign]
harness = ReferenceHarness
