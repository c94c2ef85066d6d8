"""A provider that fences mutations; reads are never fenced.

Modes: ``read-only`` (no mutation anywhere), ``workspace-write`` (mutations only under the
workspace root and any extra writable roots) and ``danger-full-access`` (no fence). The fence is
judged on the target's realpath'd key, so a symlink inside the workspace that points outside is
outside, however the path was spelled (``..``, absolute, or through a link).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Final

from reference.fs.types import (
    EditIntent,
    EditOutcome,
    EditRequest,
    FsProvider,
    Target,
    TextSink,
    Version,
    WriteIntent,
    WriteOutcome,
    fs_error,
)

SANDBOX_MODES: Final = ("read-only", "workspace-write", "danger-full-access")


def check_sandbox_mode(mode: object) -> str:
    """Return ``mode`` if it names a sandbox mode; otherwise raise a ValueError listing them."""
    if not isinstance(mode, str) or mode not in SANDBOX_MODES:
        allowed = ", ".join(SANDBOX_MODES)
        raise ValueError(f"unknown sandbox mode {mode!r}; expected one of {allowed}")
    return mode


class SandboxFs:
    """Wraps another provider and refuses mutations outside the writable roots."""

    def __init__(self, inner: FsProvider, mode: str, writable_roots: Sequence[str]) -> None:
        self.mode = check_sandbox_mode(mode)
        self._inner = inner
        self._roots = tuple(os.path.realpath(root) for root in writable_roots)

    def resolve(self, path: str, cwd: str) -> Target:
        """Resolution is the inner provider's."""
        return self._inner.resolve(path, cwd)

    def authorize(self, target: Target, op: str) -> None:
        """Raise ``FS_SANDBOX_DENIED`` unless the mode lets ``op`` change ``target``."""
        if self.mode == "danger-full-access":
            return
        if self.mode == "workspace-write" and any(_within(target.key, r) for r in self._roots):
            return
        raise fs_error("sandbox", op=op, p=target.display_path, mode=self.mode)

    def read_text(self, target: Target, sink: TextSink) -> Version:
        """Reads pass straight through."""
        return self._inner.read_text(target, sink)

    def write(self, target: Target, content: str, intent: WriteIntent) -> WriteOutcome:
        """Write if the fence allows it."""
        self.authorize(target, "write")
        return self._inner.write(target, content, intent)

    def edit(self, target: Target, request: EditRequest, intent: EditIntent) -> EditOutcome:
        """Edit if the fence allows it."""
        self.authorize(target, "edit")
        return self._inner.edit(target, request, intent)


def _within(key: str, root: str) -> bool:
    try:
        return os.path.commonpath([key, root]) == root
    except ValueError:
        return False
