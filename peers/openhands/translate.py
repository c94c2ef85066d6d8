"""The spec's tool calls as OpenHands ``file_editor`` calls, and its observations as wire results.

Pure functions of JSON values: no import of OpenHands, no disk. The adapter wraps them around the
real tool; the project's tests replay them against recorded answers.
"""

from __future__ import annotations

from typing import Any, Final

from peers.common import wire

TOOL: Final = "file_editor"
COMMANDS: Final = {"read": "view", "write": "create", "edit": "str_replace"}
"""The spec's tools → the editor's commands: one tool, the command picks the operation."""
RENAMED: Final = {"file_path": "path", "content": "file_text", "old_string": "old_str",
                  "new_string": "new_str"}  # fmt: skip


def tool_call(name: str, arguments: Any) -> tuple[str, Any]:
    """(tool name, arguments) as a model would call the editor for the spec's ``name``.

    ``read``'s ``offset``/``limit`` become ``view_range`` ``[offset, offset + limit - 1]`` (``-1``
    for "to the end"); other arguments keep their names after the renames above, so the editor's
    own validation judges whatever the spec's call held. A name that is not one of the spec's tools
    is sent as it came, for the agent to refuse.
    """
    command = COMMANDS.get(name)
    if command is None or not isinstance(arguments, dict):
        return name, arguments
    sent: dict[str, Any] = {"command": command}
    window = {k: arguments[k] for k in ("offset", "limit") if k in arguments and name == "read"}
    for key, value in arguments.items():
        if key not in window:
            sent[str(RENAMED.get(key, key))] = value
    if name == "read" and window:
        sent["view_range"] = _view_range(window.get("offset", 1), window.get("limit"))
    return TOOL, sent


def _view_range(offset: Any, limit: Any) -> Any:
    if not (_whole(offset) and (limit is None or _whole(limit))):
        return [offset, limit]  # not integers: the editor's schema answers for them
    start = int(offset)  # an integer may be spelled 2.0 (SPEC {args.integer-value})
    return [start, -1 if limit is None else start + int(limit) - 1]


def _whole(value: Any) -> bool:
    """Whether ``value`` is a JSON integer (``2`` or ``2.0``, never a boolean)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def result(call_id: str, answer: dict[str, Any]) -> dict[str, Any]:
    """The wire result of an observation: its LLM text blocks joined, and its ``is_error``."""
    return wire(call_id, "".join(answer["texts"]), bool(answer["isError"]))
