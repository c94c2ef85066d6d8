"""The fence is checked only inside the provider call, after the policy's intent."""

from reference.adapter import ReferenceHarness
from reference.fs import sandbox
from reference.fs.types import (
    EditIntent,
    EditOutcome,
    EditRequest,
    Target,
    WriteIntent,
    WriteOutcome,
)

fence = sandbox.SandboxFs.authorize


def write(
    self: sandbox.SandboxFs, target: Target, content: str, intent: WriteIntent
) -> WriteOutcome:
    fence(self, target, "write")
    return self._inner.write(target, content, intent)


def edit(
    self: sandbox.SandboxFs, target: Target, request: EditRequest, intent: EditIntent
) -> EditOutcome:
    fence(self, target, "edit")
    return self._inner.edit(target, request, intent)


sandbox.SandboxFs.authorize = lambda self, target, op: None  # type: ignore[method-assign]
sandbox.SandboxFs.write = write  # type: ignore[method-assign]
sandbox.SandboxFs.edit = edit  # type: ignore[method-assign]
harness = ReferenceHarness
