"""The spec's tool calls as deepagents tool calls, and deepagents' answers as wire results.

Pure functions of JSON values: no import of deepagents, no disk. The adapter wraps them around
the real harness; the project's tests replay them against recorded answers.
"""

from __future__ import annotations

from typing import Any, Final

from peers.common import wire

TOOLS: Final = {"read": "read_file", "write": "write_file", "edit": "edit_file"}
"""The spec's tools → deepagents' FilesystemMiddleware tools (the argument names are the same)."""


def tool_call(name: str, arguments: Any, call_id: str) -> dict[str, Any]:
    """The langchain tool call a model would send: the spec's arguments under their own names.

    One unit differs: the spec counts ``offset`` from line 1, ``read_file`` from line 0
    (``middleware/filesystem.py@0.7.32:1377``). Anything but an integer offset goes as it came,
    for deepagents to judge.
    """
    if name == "read" and isinstance(arguments, dict) and _whole(arguments.get("offset")):
        # An integer may be spelled 2.0 (SPEC {args.integer-value}): it is line 2 all the same.
        arguments = {**arguments, "offset": int(arguments["offset"]) - 1}
    return {"name": TOOLS.get(name, name), "args": arguments, "id": call_id, "type": "tool_call"}


def _whole(value: Any) -> bool:
    """Whether ``value`` is a JSON integer (``2`` or ``2.0``, never a boolean)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def message_of(content: Any, status: str) -> dict[str, Any]:
    """The parts of a ToolMessage the model sees: its content and its status."""
    return {"content": content, "status": status}


def result(call_id: str, message: dict[str, Any]) -> dict[str, Any]:
    """The wire result of a ToolMessage: its text, and the error flag its status carries."""
    content = message["content"]
    if isinstance(content, str):
        text = content
    else:
        text = "\n".join(
            str(block.get("text", "")) if isinstance(block, dict) else str(block)
            for block in content
        )
    return wire(call_id, text, message["status"] == "error")
