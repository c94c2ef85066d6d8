"""derive_messages puts the structured error into model history."""

from collections.abc import Mapping

from reference import session
from reference.adapter import ReferenceHarness
from tests.mutants import rebind

original = session.derive_messages


def derive_messages(events: list[session.Event | Mapping[str, object]]) -> list[dict[str, object]]:
    typed = [session.event_from_wire(e) if isinstance(e, Mapping) else e for e in events]
    messages = original(typed)
    results = [e for e in typed if isinstance(e, session.ToolResult)]
    tool_messages = [m for m in messages if m["role"] == "tool"]
    for message, event in zip(tool_messages, results, strict=True):
        if event.result.error is not None:
            message["error"] = event.result.error.to_wire()
    return messages


rebind(original, derive_messages)
harness = ReferenceHarness
