"""The loop's tool/result events lose the structured error."""

from reference import session
from reference.adapter import ReferenceHarness

original = session.ToolResult.data


def data(self: session.ToolResult) -> dict[str, object]:
    wire = original(self)
    wire.pop("error", None)
    return wire


session.ToolResult.data = data  # type: ignore[method-assign]
harness = ReferenceHarness
