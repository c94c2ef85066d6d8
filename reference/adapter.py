"""The reference harness, adapted to the harness-conformance contract (SPEC §6).

This is the suite's default harness, and a complete example of an adapter: copy it and replace
each ``reference`` call with your harness's own. It is loaded like any other harness (entry
point ``reference`` in the group ``harness_conformance.harnesses``), implements the contract
structurally, and so needs nothing from the ``conformance`` package.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from reference import (
    FsError,
    HarnessError,
    LlmError,
    ToolArgsError,
    ToolNotFoundError,
    __version__,
    error_chain,
    is_harness_error,
    open_workspace,
    remediate_fs_error,
    to_error,
)
from reference.errors import UNSET
from reference.scenarios import play_scenario
from reference.session import derive_messages
from reference.workspace import Workspace

Json = Any
_OPTIONS = {
    "policy": "policy",
    "sandbox": "sandbox",
    "maxReadBytes": "max_read_bytes",
    "probe": "probe",
    "writableRoots": "writable_roots",
}


class ReferenceHarness:
    """The reference harness behind the contract; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._objects: dict[str, object] = {}
        self._handles: dict[int, str] = {}
        self._sessions: dict[str, Workspace] = {}

    # -- identity -----------------------------------------------------------------------------

    def describe(self) -> dict[str, Json]:
        """Name, version and language of the harness, and everything it implements."""
        return {
            "name": "reference",
            "version": __version__,
            "language": "python",
            "capabilities": ["tools", "taxonomy", "loop", "native", "toolErrors", "pause"],
            "options": {
                "sandbox": ["read-only", "workspace-write", "danger-full-access"],
                "writableRoots": True,
                "maxReadBytes": True,
                "probe": True,
                "probeInterrupt": True,
                "replaceAll": True,
                "readWindow": True,
                "unguarded": True,
                "surrogates": True,
                "pausePoints": ["checked", "staged", "waiting"],
            },
            "paths": "any",
        }

    def adopt_error(self, error: BaseException) -> str:
        """The handle of ``error``; the same object always gets the same handle."""
        with self._lock:
            handle = self._handles.get(id(error))
            if handle is None:
                handle = f"err_{next(self._ids)}"
                self._handles[id(error)] = handle
                self._objects[handle] = error  # kept alive, so its id is never reused
            return handle

    def native_error(self, handle: str) -> BaseException:
        """The error object behind ``handle``."""
        with self._lock:
            error = self._objects.get(handle)
        if not isinstance(error, BaseException):
            raise KeyError(f"no error with handle {handle!r}")
        return error

    def _resolve(self, ref: Mapping[str, Json]) -> object:
        if "handle" in ref:
            return self.native_error(ref["handle"])
        if "value" in ref:
            return ref["value"]
        raise ValueError(f"a ref needs 'handle' or 'value': {ref!r}")

    def _ref(self, value: object) -> dict[str, Json]:
        if isinstance(value, BaseException):
            return {"handle": self.adopt_error(value)}
        return {"value": value}

    # -- errors -------------------------------------------------------------------------------

    def make_error(self, spec: Mapping[str, Json]) -> dict[str, Json]:
        """Build the error ``spec`` describes, or report why construction refused it."""
        try:
            error = self._build(spec)
        except (TypeError, ValueError, KeyError) as exc:
            return {"rejected": f"{type(exc).__name__}: {exc}"}
        return {"handle": self.adopt_error(error)}

    def _build(self, spec: Mapping[str, Json]) -> BaseException:
        # Construction validates its own arguments; a wrong type is a rejection, not a crash.
        kind: Any = spec["kind"]
        message: Any = spec.get("message")
        code: Any = spec.get("code")
        cause = self._resolve(spec["cause"]) if "cause" in spec else UNSET
        error: BaseException
        if kind == "HarnessError":
            return HarnessError(message, code, cause=cause)
        if kind == "FsError":
            return FsError(message, code, cause=cause)
        if kind == "LlmError":
            return LlmError(
                message,
                code,
                status=spec.get("status"),
                retry_after_ms=spec.get("retryAfterMs"),
                request_id=spec.get("requestId"),
                cause=cause,
            )
        if kind == "ToolArgsError":
            error = ToolArgsError(spec["violations"])
        elif kind == "ToolNotFoundError":
            error = ToolNotFoundError(spec["toolName"])
        elif kind == "Exception":
            error = ValueError(message)
        elif kind == "ExceptionGroup":
            members = [self.native_error(h) for h in spec.get("members", [])]
            if not all(isinstance(m, Exception) for m in members):
                raise TypeError("ExceptionGroup members must be Exceptions")
            error = ExceptionGroup(message, [m for m in members if isinstance(m, Exception)])
        else:
            raise ValueError(f"unknown error kind {kind!r}")
        if cause is not UNSET:
            if not isinstance(cause, BaseException | None):
                raise TypeError(f"a {kind} can only have an exception as its cause")
            error.__cause__ = cause
        return error

    def inspect_error(self, handle: str) -> dict[str, Json]:
        """Describe an error and, recursively, its causes."""
        return self._describe(self.native_error(handle), frozenset())

    def _describe(self, error: BaseException, path: frozenset[int]) -> dict[str, Json]:
        ours = is_harness_error(error)
        name: str
        code: str | None
        message: str
        cause: object
        if isinstance(error, HarnessError):
            name, code, message, cause = error.name, str(error.code), error.message, error.cause
        else:
            code_attr = getattr(error, "code", None)
            name, code = type(error).__name__, code_attr if isinstance(code_attr, str) else None
            message = error.message if isinstance(error, BaseExceptionGroup) else str(error)
            cause = error.__cause__
        described: dict[str, Json] = {
            "handle": self.adopt_error(error),
            "name": name,
            "code": code,
            "message": message,
            "text": str(error),
            "isHarnessError": ours,
        }
        if cause is None:
            described["cause"] = None
        elif isinstance(cause, BaseException):
            inner = path | {id(error)}
            described["cause"] = (
                {"handle": self.adopt_error(cause)}
                if id(cause) in inner
                else self._describe(cause, inner)
            )
        else:
            described["cause"] = {"value": _jsonable(cause)}
        if isinstance(error, LlmError):
            described["failure"] = dict(error.failure)
        if isinstance(error, ToolArgsError):
            described["violations"] = list(error.violations)
        return described

    def set_cause(self, handle: str, cause: Mapping[str, Json] | None) -> None:
        """Re-chain an error's cause, as ``raise … from cause`` would."""
        value = None if cause is None else self._resolve(cause)
        if not isinstance(value, BaseException | None):
            raise TypeError("set_cause takes an error handle or null")
        self.native_error(handle).__cause__ = value

    def remediate(self, ref: Mapping[str, Json]) -> dict[str, Json]:
        """``remediate_fs_error`` and whether the same object came back."""
        value = self._resolve(ref)
        result = remediate_fs_error(value)
        return {**self._ref(result), "same": result is value}

    def to_error(self, ref: Mapping[str, Json]) -> dict[str, Json]:
        """``to_error`` and whether the same object came back."""
        value = self._resolve(ref)
        result = to_error(value)
        return {"handle": self.adopt_error(result), "same": result is value}

    def error_chain(self, ref: Mapping[str, Json]) -> str:
        """``error_chain`` of a value or error."""
        return error_chain(self._resolve(ref))

    # -- workspaces, scenarios, history -------------------------------------------------------

    def open_workspace(self, root: str, options: Mapping[str, Json]) -> str:
        """Open a session over ``root``."""
        unknown = sorted(set(options) - set(_OPTIONS))
        if unknown:
            raise ValueError(f"unknown workspace option(s): {', '.join(unknown)}")
        kwargs = {_OPTIONS[k]: v for k, v in options.items() if v is not None}
        workspace = open_workspace(root, **kwargs)
        with self._lock:
            handle = f"ws_{next(self._ids)}"
            self._sessions[handle] = workspace
        return handle

    def call_tool(self, session: str, name: str, arguments: Json) -> dict[str, Json]:
        """Call a tool in a session; returns the wire result."""
        with self._lock:
            workspace = self._sessions[session]
        return workspace.call_tool(name, arguments).to_wire()

    def tool_error(self, session: str, call_id: str) -> dict[str, Json] | None:
        """The error behind a failed result of a session, by its call id."""
        with self._lock:
            workspace = self._sessions[session]
        error = workspace.failure(call_id)
        return None if error is None else {"handle": self.adopt_error(error)}

    def arm_pause(self, session: str, point: str, on_pause: Callable[[], None]) -> None:
        """Call ``on_pause`` when the session's next mutation reaches ``point``."""
        with self._lock:
            workspace = self._sessions[session]
        workspace.arm_pause(point, on_pause)

    def close_workspace(self, session: str) -> None:
        """Forget a session."""
        with self._lock:
            self._sessions.pop(session, None)

    def run_scenario(self, root: str, scenario: Mapping[str, Json]) -> list[dict[str, Json]]:
        """Run a scenario through the real loop; the log's header, then its events."""
        return play_scenario(root, scenario).records()

    def derive_messages(self, events: list[Mapping[str, Json]]) -> list[dict[str, Json]]:
        """``derive_messages`` over wire events, which it reads itself."""
        return derive_messages(events)


def _jsonable(value: object) -> Json:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value
