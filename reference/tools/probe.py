"""The probe tools (SPEC §2.1c): exercise the registry in any harness.

``probe_raise`` raises a chosen kind of error; ``probe_echo`` takes nested arguments and returns
them validated, so violation paths (``todos[1].title``) and integer values can be observed.
"""

from __future__ import annotations

import json
from typing import Final

from reference.errors import HarnessError, LlmError
from reference.fs.types import FsError
from reference.tools.registry import Tool, define_tool

PROBE_KINDS: Final = ("HarnessError", "FsError", "LlmError", "Exception")
INTERRUPT_SCHEMA: Final = {
    "type": "object",
    "properties": {"message": {"type": "string"}},
    "required": ["message"],
    "additionalProperties": False,
}
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
ECHO_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "todos": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"title": {"type": "string"}, "done": {"type": "boolean"}},
                "required": ["title"],
                "additionalProperties": False,
            },
        },
        "count": {"type": "integer"},
        "meta": {
            "type": "object",
            "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
            "additionalProperties": False,
        },
    },
    "required": ["todos"],
    "additionalProperties": False,
}
CODE_REQUIRED: Final = 'code is required for kind "{kind}"'


def _probe_raise(args: dict[str, object]) -> str:
    kind, message, code = args["kind"], args["message"], args.get("code")
    assert isinstance(message, str)
    if kind == "Exception":
        raise ValueError(message)
    if not isinstance(code, str):
        raise ValueError(CODE_REQUIRED.format(kind=kind))
    if kind == "FsError":
        raise FsError(message, code)
    if kind == "LlmError":
        raise LlmError(message, code)
    raise HarnessError(message, code)


def _probe_echo(args: dict[str, object]) -> str:
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _probe_interrupt(args: dict[str, object]) -> str:
    raise KeyboardInterrupt(args["message"])


def probe_tools() -> tuple[Tool, Tool, Tool]:
    """``probe_raise``, ``probe_echo`` and ``probe_interrupt``."""
    return (
        define_tool(
            name="probe_raise",
            description="Raise an error of the given kind (conformance probe).",
            parameters=PROBE_SCHEMA,
            execute=_probe_raise,
        ),
        define_tool(
            name="probe_echo",
            description="Return the validated arguments as compact JSON (conformance probe).",
            parameters=ECHO_SCHEMA,
            execute=_probe_echo,
        ),
        define_tool(
            name="probe_interrupt",
            description="Raise KeyboardInterrupt, which must propagate (conformance probe).",
            parameters=INTERRUPT_SCHEMA,
            execute=_probe_interrupt,
        ),
    )
