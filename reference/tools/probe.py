"""The probe tool (SPEC §2.1a): raises a chosen kind of error, to exercise the registry."""

from __future__ import annotations

from typing import Final

from reference.errors import HarnessError, LlmError
from reference.fs.types import FsError
from reference.tools.registry import Tool, define_tool

PROBE_KINDS: Final = ("HarnessError", "FsError", "LlmError", "Exception")
PROBE_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": list(PROBE_KINDS)},
        "message": {"type": "string"},
        "code": {"type": "string"},
    },
    "required": ["kind", "message"],
    "additionalProperties": False,
}


def _probe_raise(args: dict[str, object]) -> str:
    kind, message, code = args["kind"], args["message"], args.get("code")
    assert isinstance(message, str)
    if kind == "Exception":
        raise ValueError(message)
    if not isinstance(code, str):
        raise ValueError(f'code is required for kind "{kind}"')
    if kind == "FsError":
        raise FsError(message, code)
    if kind == "LlmError":
        raise LlmError(message, code)
    raise HarnessError(message, code)


def probe_tool() -> Tool:
    """``probe_raise {kind, message, code?}``: raise that kind of error with that message."""
    return define_tool(
        name="probe_raise",
        description="Raise an error of the given kind (conformance probe).",
        parameters=PROBE_SCHEMA,
        execute=_probe_raise,
    )
