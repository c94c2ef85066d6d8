"""The suite's side of the contract: typed helpers that check every answer's shape.

Cases never call a harness directly; they go through ``Client``, so an answer outside the
contract fails with a ``ContractError`` that names the call, instead of a confusing
``KeyError`` deep inside a case.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import cast

from conformance.contract import ContractError, Harness, Json, JsonObject, NativeHarness


def _require(condition: bool, call: str, problem: str, got: object) -> None:
    if not condition:
        raise ContractError(f"{call}: {problem} (got {got!r})")


@dataclass(frozen=True)
class ToolOutcome:
    """One wire tool result, unpacked."""

    wire: JsonObject
    call_id: str
    text: str
    is_error: bool
    error: tuple[str, str] | None


def tool_outcome(wire: object, call: str = "call_tool") -> ToolOutcome:
    """Validate a wire result (SPEC §2.1) and unpack it."""
    _require(isinstance(wire, dict), call, "the result must be an object", wire)
    result = cast(JsonObject, wire)
    allowed = {"callId", "content", "isError", "error"}
    _require(set(result) <= allowed, call, f"result keys must be within {sorted(allowed)}", result)
    content = result.get("content")
    _require(isinstance(content, list) and len(content) == 1, call, "one content block", content)
    block = cast(list[Json], content)[0]
    _require(
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str),
        call,
        'the block must be {"type": "text", "text": str}',
        block,
    )
    _require(isinstance(result.get("callId"), str), call, "callId must be a string", result)
    _require(isinstance(result.get("isError"), bool), call, "isError must be a boolean", result)
    error = result.get("error")
    info: tuple[str, str] | None = None
    if "error" in result:
        _require(
            isinstance(error, dict)
            and set(error) == {"name", "code"}
            and all(type(v) is str for v in error.values()),
            call,
            'error must be {"name": str, "code": str} (or absent)',
            error,
        )
        err = cast(dict[str, str], error)
        info = (err["name"], err["code"])
    text = cast(dict[str, str], block)["text"]
    return ToolOutcome(result, str(result["callId"]), text, bool(result["isError"]), info)


class Session:
    """One open workspace session of the harness."""

    def __init__(self, client: Client, handle: str, root: str) -> None:
        self._client = client
        self.handle = handle
        self.root = root

    def call(self, name: str, arguments: Json) -> ToolOutcome:
        """Call any tool with any arguments (a ``str`` is raw JSON text)."""
        wire = self._client.harness.call_tool(self.handle, name, arguments)
        return tool_outcome(wire, f"call_tool({name!r})")

    def read(self, path: str, **extra: Json) -> ToolOutcome:
        """``read``."""
        return self.call("read", {"file_path": path, **extra})

    def write(self, path: str, content: str) -> ToolOutcome:
        """``write``."""
        return self.call("write", {"file_path": path, "content": content})

    def edit(self, path: str, old: str, new: str, **extra: Json) -> ToolOutcome:
        """``edit``."""
        return self.call("edit", {"file_path": path, "old_string": old, "new_string": new, **extra})

    def probe(self, kind: str, message: str, code: str | None = None) -> ToolOutcome:
        """The probe tool (SPEC §2.1a)."""
        args: JsonObject = {"kind": kind, "message": message}
        if code is not None:
            args["code"] = code
        return self.call("probe_raise", args)

    def close(self) -> None:
        """Forget the session."""
        self._client.harness.close_workspace(self.handle)


class Client:
    """Contract calls with their answers checked."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness

    @property
    def native(self) -> NativeHarness | None:
        """The optional native layer (Python harnesses that hand over their objects)."""
        return self.harness if isinstance(self.harness, NativeHarness) else None

    # -- errors -------------------------------------------------------------------------------

    def try_error(self, kind: str, message: Json = "m", **spec: Json) -> JsonObject:
        """``make_error``'s raw answer: ``{"handle"}`` or ``{"rejected"}``."""
        answer = self.harness.make_error({"kind": kind, "message": message, **spec})
        _require(
            isinstance(answer, dict)
            and (isinstance(answer.get("handle"), str) or isinstance(answer.get("rejected"), str)),
            "make_error",
            'answer {"handle": str} or {"rejected": str}',
            answer,
        )
        return answer

    def error(self, kind: str, message: Json = "m", **spec: Json) -> str:
        """Build an error the harness must accept; return its handle."""
        answer = self.try_error(kind, message, **spec)
        if "rejected" in answer:
            raise AssertionError(f"the harness rejected a valid {kind}: {answer['rejected']}")
        return str(answer["handle"])

    def inspect(self, handle: str) -> JsonObject:
        """``inspect_error``, checked for the description's shape."""
        described = self.harness.inspect_error(handle)
        call = f"inspect_error({handle!r})"
        _require(isinstance(described, dict), call, "a description object", described)
        for key, kind in (("handle", str), ("name", str), ("message", str), ("text", str)):
            _require(
                isinstance(described.get(key), kind), call, f"{key} must be a string", described
            )
        _require(
            isinstance(described.get("isHarnessError"), bool), call, "isHarnessError", described
        )
        _require(described.get("handle") == handle, call, "handle must echo the handle", described)
        code = described.get("code")
        _require(code is None or isinstance(code, str), call, "code must be a string or null", code)
        _require("cause" in described, call, "cause must be present (null if none)", described)
        return described

    def set_cause(self, handle: str, cause: str | None) -> None:
        """Chain ``cause`` (a handle) as the cause of ``handle``."""
        self.harness.set_cause(handle, None if cause is None else {"handle": cause})

    def remediate(self, ref: JsonObject) -> tuple[JsonObject, bool]:
        """``remediate``: the result ref and whether the same object came back."""
        answer = self.harness.remediate(ref)
        _require(
            isinstance(answer, dict) and isinstance(answer.get("same"), bool),
            "remediate",
            "same: bool",
            answer,
        )
        return {k: v for k, v in answer.items() if k != "same"}, bool(answer["same"])

    def to_error(self, ref: JsonObject) -> tuple[str, bool]:
        """``to_error``: the result's handle and whether the same object came back."""
        answer = self.harness.to_error(ref)
        _require(
            isinstance(answer, dict)
            and isinstance(answer.get("handle"), str)
            and isinstance(answer.get("same"), bool),
            "to_error",
            '{"handle": str, "same": bool}',
            answer,
        )
        return str(answer["handle"]), bool(answer["same"])

    def chain(self, ref: JsonObject) -> str:
        """``error_chain``."""
        text = self.harness.error_chain(ref)
        _require(isinstance(text, str), "error_chain", "a string", text)
        return text

    # -- sessions, scenarios, history ---------------------------------------------------------

    def open(self, root: str, **options: Json) -> Session:
        """Open a session over ``root`` (defaults: policy on, danger-full-access, no probe)."""
        handle = self.harness.open_workspace(root, options)
        _require(isinstance(handle, str), "open_workspace", "a session handle string", handle)
        return Session(self, handle, root)

    @contextmanager
    def session(self, root: str, **options: Json) -> Iterator[Session]:
        """A session that is closed afterwards."""
        session = self.open(root, **options)
        try:
            yield session
        finally:
            session.close()

    def scenario(self, root: str, scenario: Mapping[str, Json]) -> list[JsonObject]:
        """Run a scenario; return the session log (header, then events)."""
        records = self.harness.run_scenario(root, dict(scenario))
        _require(
            isinstance(records, list) and bool(records), "run_scenario", "a non-empty list", records
        )
        header = records[0]
        _require(
            isinstance(header, dict)
            and header.get("type") == "session"
            and header.get("version") == 1,
            "run_scenario",
            'the log must start with {"type": "session", "version": 1, …}',
            header,
        )
        for record in records[1:]:
            _require(
                isinstance(record, dict)
                and isinstance(record.get("type"), str)
                and isinstance(record.get("data"), dict),
                "run_scenario",
                'every event must be {"type": str, "data": {…}}',
                record,
            )
        return records

    def derive(self, events: list[JsonObject]) -> list[JsonObject]:
        """``derive_messages``."""
        messages = self.harness.derive_messages(events)
        _require(isinstance(messages, list), "derive_messages", "a list of messages", messages)
        return messages
