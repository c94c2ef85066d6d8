"""The harness contract (SPEC §6): everything the suite may ask of a harness, and nothing more.

Every value that crosses it is JSON-shaped, so the same calls can later travel over stdio to a
harness written in another language. Errors stay inside the harness and are named by opaque
*handles* (strings); asking twice about the same object must give the same handle, which is how
identity (``remediate(x) is x``, ``err.cause is original``) is expressed without sharing objects.

Shapes
------
``ErrorSpec`` (``make_error``)::

    {"kind": "HarnessError" | "FsError" | "LlmError" | "ToolArgsError" | "ToolNotFoundError"
             | "Exception" | "ExceptionGroup",
     "message": str, "code"?: str, "cause"?: Ref,
     "status"?, "retryAfterMs"?, "requestId"?     # LlmError
     "violations"?: [str]                          # ToolArgsError
     "toolName"?: str                              # ToolNotFoundError
     "members"?: [handle]}                         # ExceptionGroup

``Ref`` — a value to hand to the harness: ``{"handle": str}`` for one of its errors, or
``{"value": <JSON>}`` for a plain (non-exception) value.

``ErrorDescription`` (``inspect_error``)::

    {"handle": str, "name": str, "code": str | null, "message": str, "text": str,
     "isHarnessError": bool, "cause": ErrorDescription | {"value": <JSON>} | null,
     "failure"?: {...}, "violations"?: [str]}

``text`` is the language's own string form of the error (``str(err)``); a cause already
described higher up the same chain is given as ``{"handle": str}`` alone.

``WorkspaceOptions``: ``{"policy": bool, "sandbox": str, "maxReadBytes": int | null,
"probe": bool, "writableRoots": [str]}``.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeAlias, runtime_checkable

# JSON-shaped: None, bool, int, float, str, lists and str-keyed dicts of those. Spelled Any
# because a recursive alias makes every literal in the cases fight list/dict invariance.
Json: TypeAlias = Any
JsonObject: TypeAlias = dict[str, Any]


class Harness(Protocol):
    """The calls the suite makes. Raise ``ContractError`` (or any exception) to refuse one."""

    def describe(self) -> JsonObject:
        """``{"name", "version", "language"}``."""
        ...

    def make_error(self, spec: JsonObject) -> JsonObject:
        """Build a native error: ``{"handle"}``, or ``{"rejected": why}`` if construction fails."""
        ...

    def inspect_error(self, handle: str) -> JsonObject:
        """Describe one of the harness's errors (an ``ErrorDescription``)."""
        ...

    def set_cause(self, handle: str, cause: JsonObject | None) -> None:
        """Re-chain an error's cause, as ``raise … from cause`` would (used to build cycles)."""
        ...

    def remediate(self, ref: JsonObject) -> JsonObject:
        """Apply ``remediate_fs_error``: ``{"handle" | "value", "same": bool}``."""
        ...

    def to_error(self, ref: JsonObject) -> JsonObject:
        """Apply ``to_error``: ``{"handle", "same": bool}``."""
        ...

    def error_chain(self, ref: JsonObject) -> str:
        """Apply ``error_chain``."""
        ...

    def open_workspace(self, root: str, options: JsonObject) -> str:
        """Open a session over ``root`` (a directory the suite owns); return its handle."""
        ...

    def call_tool(self, session: str, name: str, arguments: Json) -> JsonObject:
        """Call a tool; a ``str`` is the raw JSON text the model sent. Returns the wire result."""
        ...

    def close_workspace(self, session: str) -> None:
        """Forget a session."""
        ...

    def run_scenario(self, root: str, scenario: JsonObject) -> list[JsonObject]:
        """Run a scenario through the real loop; return the session log (header, then events)."""
        ...

    def derive_messages(self, events: list[JsonObject]) -> list[JsonObject]:
        """Apply ``derive_messages`` to wire events."""
        ...


CONTRACT_METHODS: tuple[str, ...] = (
    "describe",
    "make_error",
    "inspect_error",
    "set_cause",
    "remediate",
    "to_error",
    "error_chain",
    "open_workspace",
    "call_tool",
    "close_workspace",
    "run_scenario",
    "derive_messages",
)


@runtime_checkable
class NativeHarness(Protocol):
    """Optional, Python only: hand over the error objects themselves (identity, pickling)."""

    def native_error(self, handle: str) -> BaseException:
        """The object behind ``handle``."""
        ...

    def adopt_error(self, error: BaseException) -> str:
        """A handle for ``error`` (the same handle every time for the same object)."""
        ...


def missing_methods(candidate: object) -> list[str]:
    """The contract methods ``candidate`` does not provide as callables."""
    return [name for name in CONTRACT_METHODS if not callable(getattr(candidate, name, None))]


class ContractError(Exception):
    """A harness answered outside the contract; the message names the call and what was wrong."""
