"""One protocol method → one call on a Python harness object, in one place.

The in-process transport and ``conformance.serve`` (which puts a Python harness behind the
stdio protocol) both go through ``dispatch``, so a Python harness behaves the same either way.
The ``native`` capability is defined here once, as protocol methods that run the Python-only
checks (pickling, ``repr``, ``raise … from``) next to the objects, using the harness's own
``native_error``/``adopt_error``.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any, Final

from conformance.harness.contract import Json, JsonObject

PauseHook = Callable[[str, str], None]
"""Called with ``(session, point)`` when an armed mutation reaches its pause point."""

ROUND_TRIPS: Final[dict[str, Callable[[BaseException], BaseException]]] = {
    "pickle": lambda error: pickle.loads(pickle.dumps(error)),
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
}


UNPRINTABLE: Final = "<unprintable thrown value>"
"""What stands for the message of an exception whose string form cannot be made (as the Node
kit says it, and SPEC {tool.error.text} for a tool's result)."""


def message_of(error: BaseException) -> str:
    """``str(error)``, or ``UNPRINTABLE`` when its ``__str__`` (or an argument's) raises.

    Whatever it raises, an interruption too: the error is being reported, and a report that
    raises would leave its request unanswered.
    """
    try:
        return str(error)
    except BaseException:  # see above
        return UNPRINTABLE


def described(error: BaseException) -> str:
    """``"<class name>: <message>"`` of an error, whatever its ``__str__`` does."""
    return f"{type(error).__name__}: {message_of(error)}"


class UnknownMethod(Exception):
    """The protocol has no such method, or the harness does not implement it."""


class Propagated(Exception):
    """A ``BaseException`` that is not an ``Exception`` escaped a call (SPEC §2.1)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


def dispatch(harness: Any, method: str, params: JsonObject, on_pause: PauseHook) -> Json:
    """Run ``method`` on ``harness`` with the protocol's ``params``; return its JSON answer."""
    handler = _METHODS.get(method)
    if handler is None:
        raise UnknownMethod(f"unknown method {method!r}")
    try:
        return handler(harness, params, on_pause)
    except BaseException as exc:
        if isinstance(exc, Exception):
            raise
        # KeyboardInterrupt, SystemExit, GeneratorExit, asyncio.CancelledError and the
        # harness's own: reported, never swallowed into a result, even when it cannot be
        # rendered (SPEC {tool.base-exception}).
        raise Propagated(type(exc).__name__, message_of(exc)) from exc


def _need(harness: Any, name: str) -> Callable[..., Any]:
    method = getattr(harness, name, None)
    if not callable(method):
        raise UnknownMethod(f"the harness does not implement {name}")
    return method  # type: ignore[no-any-return]


def _native_roundtrip(harness: Any, params: JsonObject) -> JsonObject:
    error = _need(harness, "native_error")(params["handle"])
    how = params["how"]
    if how not in ROUND_TRIPS:
        raise ValueError(f"unknown round trip {how!r}")
    return {"handle": _need(harness, "adopt_error")(ROUND_TRIPS[how](error))}


def _native_raise(harness: Any, params: JsonObject) -> JsonObject:
    """Raise the error as asked, catch it, and describe what it then holds as its cause."""
    error = _need(harness, "native_error")(params["handle"])
    cause_ref = params.get("cause")
    try:
        if cause_ref == "context":
            try:
                raise ValueError("during handling")
            except ValueError:
                raise error  # noqa: B904 - the implicit __context__ is the point
        cause = None if cause_ref is None else _need(harness, "native_error")(cause_ref)
        raise error from cause
    except BaseException as caught:
        if caught is not error:
            raise
    held = getattr(error, "cause", None)
    answer: JsonObject = {"context": error.__context__ is not None}
    if isinstance(held, BaseException):
        answer["cause"] = {"handle": _need(harness, "adopt_error")(held)}
    else:
        answer["cause"] = None if held is None else {"value": held}
    return answer


class _Unrenderable(Exception):
    """An exception whose string form cannot be made (SPEC {chain.unrenderable})."""

    def __str__(self) -> str:
        raise RuntimeError("this exception cannot be rendered")


def _native_unrenderable(harness: Any, params: JsonObject) -> JsonObject:
    return {"handle": _need(harness, "adopt_error")(_Unrenderable())}


def _native_repr(harness: Any, params: JsonObject) -> str:
    return repr(_need(harness, "native_error")(params["handle"]))


_METHODS: Final[dict[str, Callable[[Any, JsonObject, PauseHook], Json]]] = {
    "describe": lambda h, p, _: _need(h, "describe")(),
    "open_workspace": lambda h, p, _: _need(h, "open_workspace")(p["root"], p["options"]),
    "call_tool": lambda h, p, _: _need(h, "call_tool")(p["session"], p["name"], p["arguments"]),
    "close_workspace": lambda h, p, _: _need(h, "close_workspace")(p["session"]),
    "make_error": lambda h, p, _: _need(h, "make_error")(p["spec"]),
    "inspect_error": lambda h, p, _: _need(h, "inspect_error")(p["handle"]),
    "set_cause": lambda h, p, _: _need(h, "set_cause")(p["handle"], p["cause"]),
    "remediate": lambda h, p, _: _need(h, "remediate")(p["ref"]),
    "to_error": lambda h, p, _: _need(h, "to_error")(p["ref"]),
    "error_chain": lambda h, p, _: _need(h, "error_chain")(p["ref"]),
    "tool_error": lambda h, p, _: _need(h, "tool_error")(p["session"], p["callId"]),
    "run_scenario": lambda h, p, _: _need(h, "run_scenario")(p["root"], p["scenario"]),
    "derive_messages": lambda h, p, _: _need(h, "derive_messages")(p["events"]),
    "native_roundtrip": lambda h, p, _: _native_roundtrip(h, p),
    "native_repr": lambda h, p, _: _native_repr(h, p),
    "native_raise": lambda h, p, _: _native_raise(h, p),
    "native_unrenderable": lambda h, p, _: _native_unrenderable(h, p),
    "arm_pause": lambda h, p, hook: _need(h, "arm_pause")(
        p["session"], p["point"], lambda: hook(p["session"], p["point"])
    ),
}
PROTOCOL_METHODS: Final = tuple(_METHODS)
