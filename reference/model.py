"""Model providers: the protocol the loop calls, and the keyless scripted model (SPEC §2.4).

A script is a list of steps, one per model response:

* ``{"text": "…"}`` — a final answer;
* ``{"tool_calls": [{"name", "arguments"}, …]}`` — an ``arguments`` object is sent as compact
  JSON, a string verbatim (so a script can send malformed JSON); both keys may appear together;
* ``{"fail": <value>}`` — the provider *returns* a failure value instead of a response;
* ``{"raise": {"message", "code", "status"?, "retryAfterMs"?, "requestId"?}}`` — it raises
  an ``LlmError``;
* ``{"external": [op, …]}`` — before its next response, the world changes the workspace:
  ``write`` (creates parents), ``delete``, ``touch`` (mtime moves one second later, same bytes)
  and ``same_size_rewrite`` (same byte length, mtime restored). Not a response: no step number.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from reference.errors import LlmError

STEP_KINDS: Final = ("text", "tool_calls", "fail", "raise", "external")
EXTERNAL_OPS: Final = ("write", "delete", "touch", "same_size_rewrite")
OUT_OF_STEPS: Final = "scripted model has no more steps"


class ScriptError(ValueError):
    """A script step that does not fit the format; the message names the step and the field."""


@dataclass(frozen=True)
class ToolCallRequest:
    """A tool call the model asked for; ``arguments`` is the raw JSON text it sent."""

    name: str
    arguments: str


@dataclass(frozen=True)
class ModelResponse:
    """One model response: optional text, then any tool calls."""

    text: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = ()


class ModelProvider(Protocol):
    """What the loop calls. Returning anything but a ``ModelResponse`` is a failure value."""

    api_key: str | None

    def respond(self, messages: list[dict[str, object]], tools: list[dict[str, object]]) -> object:
        """Produce the next response to ``messages``."""
        ...


class ScriptedModel:
    """Plays a script; has no API key, so no secret exists anywhere in a scripted run."""

    api_key: str | None = None

    def __init__(self, steps: Sequence[Mapping[str, object]], *, root: str) -> None:
        for index, step in enumerate(steps):
            check_step(step, f"steps[{index}]")
        self._steps = list(steps)
        self._root = root

    def respond(self, messages: list[dict[str, object]], tools: list[dict[str, object]]) -> object:
        """Apply pending external steps, then play the next response step."""
        while self._steps:
            step = self._steps.pop(0)
            if "external" in step:
                ops = step["external"]
                assert isinstance(ops, list)
                for op in ops:
                    apply_external(self._root, op)
                continue
            return _play(step)
        raise LlmError(OUT_OF_STEPS, "EMPTY_RESPONSE")


def _play(step: Mapping[str, object]) -> object:
    if "fail" in step:
        return step["fail"]
    if "raise" in step:
        spec = step["raise"]
        assert isinstance(spec, Mapping)
        raise LlmError(
            str(spec["message"]),
            str(spec["code"]),
            status=_opt_int(spec.get("status")),
            retry_after_ms=_opt_number(spec.get("retryAfterMs")),
            request_id=_opt_str(spec.get("requestId")),
        )
    calls = step.get("tool_calls", [])
    assert isinstance(calls, list)
    text = step.get("text", "")
    assert isinstance(text, str)
    return ModelResponse(text, tuple(_call(c) for c in calls))


def _call(call: Mapping[str, object]) -> ToolCallRequest:
    arguments = call.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)
    return ToolCallRequest(str(call["name"]), arguments)


def check_step(step: object, where: str) -> None:
    """Raise ``ScriptError`` if ``step`` is not one of the step kinds above."""
    if not isinstance(step, Mapping):
        raise ScriptError(f"{where} must be an object")
    kinds = [k for k in step if k in STEP_KINDS]
    unknown = sorted(k for k in step if k not in STEP_KINDS)
    if unknown:
        raise ScriptError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}")
    if not kinds:
        raise ScriptError(f"{where}: needs one of {', '.join(STEP_KINDS)}")
    if len(kinds) > 1 and set(kinds) != {"text", "tool_calls"}:
        raise ScriptError(f"{where}: {' and '.join(kinds)} cannot be combined")
    if "text" in step and not isinstance(step["text"], str):
        raise ScriptError(f"{where}.text must be a string")
    if "tool_calls" in step:
        calls = step["tool_calls"]
        if not isinstance(calls, list):
            raise ScriptError(f"{where}.tool_calls must be a list")
        for index, call in enumerate(calls):
            at = f"{where}.tool_calls[{index}]"
            if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
                raise ScriptError(f"{at} must be an object with a string name")
            if set(call) - {"name", "arguments"}:
                raise ScriptError(f"{at}: only name and arguments are allowed")
    if "raise" in step:
        _check_raise(step["raise"], f"{where}.raise")
    if "external" in step:
        ops = step["external"]
        if not isinstance(ops, list):
            raise ScriptError(f"{where}.external must be a list")
        for index, op in enumerate(ops):
            _check_op(op, f"{where}.external[{index}]")


def _check_raise(spec: object, where: str) -> None:
    if not isinstance(spec, Mapping):
        raise ScriptError(f"{where} must be an object")
    for name in ("message", "code"):
        if not isinstance(spec.get(name), str) or not spec[name]:
            raise ScriptError(f"{where}.{name} must be a non-empty string")
    try:
        _play({"raise": spec})
    except LlmError:
        return
    except (TypeError, ValueError) as exc:
        raise ScriptError(f"{where}: {exc}") from exc


def _check_op(op: object, where: str) -> None:
    if not isinstance(op, Mapping) or op.get("op") not in EXTERNAL_OPS:
        raise ScriptError(f"{where}.op must be one of {', '.join(EXTERNAL_OPS)}")
    if not isinstance(op.get("path"), str) or not op["path"]:
        raise ScriptError(f"{where}.path must be a non-empty string")
    needs_content = op["op"] in ("write", "same_size_rewrite")
    if needs_content and not isinstance(op.get("content"), str):
        raise ScriptError(f"{where}.content must be a string")


def workspace_path(root: str, relpath: str) -> str:
    """``relpath`` joined to ``root``; refuses absolute paths and paths that climb out."""
    if os.path.isabs(relpath):
        raise ScriptError(f"{relpath!r} must be relative to the workspace")
    path = os.path.normpath(os.path.join(root, relpath))
    if os.path.commonpath([path, os.path.normpath(root)]) != os.path.normpath(root):
        raise ScriptError(f"{relpath!r} climbs out of the workspace")
    return path


def apply_external(root: str, op: Mapping[str, object]) -> None:
    """Change the workspace as a person or another program would."""
    kind, relpath = op["op"], op["path"]
    assert isinstance(relpath, str)
    path = workspace_path(root, relpath)
    if kind == "write":
        content = op["content"]
        assert isinstance(content, str)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as out:
            out.write(content.encode("utf-8"))
    elif kind == "delete":
        os.unlink(path)
    elif kind == "touch":
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    elif kind == "same_size_rewrite":
        content = op["content"]
        assert isinstance(content, str)
        data = content.encode("utf-8")
        st = os.stat(path)
        if len(data) != st.st_size:
            raise ScriptError(
                f"same_size_rewrite of {relpath!r}: {len(data)} bytes for a {st.st_size}-byte file"
            )
        with open(path, "r+b") as out:
            out.write(data)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _opt_int(value: object) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int):
        raise TypeError(f"expected an integer, got {value!r}")
    return value


def _opt_number(value: object) -> float | None:
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise TypeError(f"expected a number, got {value!r}")
    return value


def _opt_str(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {value!r}")
    return value
