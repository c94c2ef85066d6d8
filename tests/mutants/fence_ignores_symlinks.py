"""The sandbox fence judges the lexical display path, so a symlink inside can point outside."""

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
