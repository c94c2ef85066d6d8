"""The structured error taxonomy (SPEC §1): one base class, a code on every failure.

::

    Exception
     └── HarnessError          message + stable machine code + chained cause
          ├── LlmError          a model provider failure (status, retry hint, request id)
          ├── ToolArgsError     INVALID_ARGS: arguments that do not fit the tool's schema
          ├── ToolNotFoundError UNKNOWN_TOOL: the model asked for a tool nobody registered
          └── FsError           FS_*: a filesystem seam failure (defined in ``reference.fs``)

The code is for programs (retry, permission, UI layers route on it); the message is for people
and models. They never leak into each other: ``str(err)`` is exactly the message.

This module is the leaf of the package and imports nothing of ours.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final, TypeGuard

UNRENDERABLE: Final = "<unrenderable value>"
CIRCULAR: Final = "<circular cause>"
REDACTED: Final = "[REDACTED]"
SECRET_NAME_MARKERS: Final = ("KEY", "TOKEN", "SECRET", "PASSWORD")
MIN_SECRET_LENGTH: Final = 8


class _Unset:
    """Marks a ``cause`` argument that was not given (``None`` is a legitimate cause value)."""

    def __repr__(self) -> str:
        return "<unset>"


UNSET: Final = _Unset()


class HarnessError(Exception):
    """A failure with a stable machine-routable ``code`` and an optional chained ``cause``."""

    message: str
    code: str
    name: str

    def __init__(self, message: str, code: str, *, cause: object = UNSET) -> None:
        if not isinstance(message, str):
            raise TypeError(f"message must be a str, not {type(message).__name__}")
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, not {type(code).__name__}")
        if not code:
            raise ValueError("code must be a non-empty string")
        super().__init__(message)
        self.message = message
        self.code = code
        self.name = type(self).__name__
        self._cause_value: object = None
        if isinstance(cause, BaseException):
            self.__cause__ = cause
        elif cause is not UNSET:
            self._cause_value = cause

    @property
    def cause(self) -> object:
        """The chained cause: ``__cause__`` when set, else the non-exception value given."""
        if self.__cause__ is not None:
            return self.__cause__
        return self._cause_value

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, code={str(self.code)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Exception's default reduce replays ``cls(*args)``, which cannot rebuild a subclass
        # whose constructor takes other arguments, and it drops ``__cause__`` entirely.
        return (_restore, (type(self), self.args, dict(self.__dict__), self.__cause__))


def _restore(
    cls: type[HarnessError],
    args: tuple[object, ...],
    state: dict[str, object],
    cause: BaseException | None,
) -> HarnessError:
    """Rebuild a pickled or copied error without re-running its constructor's validation."""
    err = cls.__new__(cls)
    err.args = args
    err.__dict__.update(state)
    err.__cause__ = cause
    return err


def is_harness_error(value: object) -> TypeGuard[HarnessError]:
    """Whether ``value`` is a ``HarnessError`` (an isinstance check: look-alikes do not count)."""
    return isinstance(value, HarnessError)


def render_value(value: object) -> str:
    """Render a failure value as text: a str as itself, JSON compactly, anything else via str()."""
    if isinstance(value, str):
        return value
    try:
        # allow_nan=False: NaN and Infinity are not JSON, so they fall through to str().
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        pass
    try:
        return str(value)
    except Exception:
        return UNRENDERABLE


def to_error(value: object) -> BaseException:
    """Normalize a failure value: exceptions pass through, anything else becomes UNKNOWN."""
    if isinstance(value, BaseException):
        return value
    return HarnessError(render_value(value), "UNKNOWN", cause=value)


def cause_of(value: BaseException) -> object:
    """The cause ``error_chain`` follows: ``err.cause`` for ours, ``__cause__`` for the rest."""
    if isinstance(value, HarnessError):
        return value.cause
    return value.__cause__


def error_chain(value: object) -> str:
    """Render an error and its causes as one line: ``outer: middle: root``.

    A group lists its members in brackets; a cause whose rendering equals the message it
    would follow is omitted; a value already on the current path renders ``<circular cause>``;
    a node whose rendering raises becomes ``<unrenderable value>`` (its causes still follow).
    """
    return _chain(value, frozenset())


def _chain(value: object, above: frozenset[int]) -> str:
    # The cause chain is walked iteratively (chains can be deeper than the recursion limit);
    # only group members recurse, each with a copy of the path so far. The path grows in
    # place: copying it at every link made a deep chain cost the square of its length.
    path = set(above)
    heads: list[tuple[str, str]] = []  # (message, text shown before the cause)
    tail: str | None = None  # the rendered cause; None when there is no cause
    node: object = value
    while True:
        if id(node) in path:
            tail = CIRCULAR
            break
        if not isinstance(node, BaseException):
            tail = render_value(node)
            break
        path.add(id(node))
        message = _message_of(node)
        text = message
        if isinstance(node, BaseExceptionGroup):
            inside = frozenset(path)
            text += " [" + "; ".join(_chain(member, inside) for member in node.exceptions) + "]"
        heads.append((message, text))
        node = cause_of(node)
        if node is None:
            break
    for message, text in reversed(heads):
        tail = text if tail is None or tail == message else f"{text}: {tail}"
    assert tail is not None  # the loop either set it or added at least one head
    return tail


def _message_of(error: BaseException) -> str:
    try:
        message = error.message if isinstance(error, BaseExceptionGroup) else str(error)
    except Exception:
        return UNRENDERABLE
    return message or type(error).__name__


class LlmError(HarnessError):
    """A model provider failure; ``failure`` is its wire-shaped summary."""

    status: int | None
    retry_after_ms: float | None
    request_id: str | None

    def __init__(
        self,
        message: str,
        code: str,
        *,
        status: int | None = None,
        retry_after_ms: float | None = None,
        request_id: str | None = None,
        cause: object = UNSET,
    ) -> None:
        if isinstance(message, str) and not message:
            raise ValueError("message must be a non-empty string")
        super().__init__(message, code, cause=cause)
        if status is not None and (
            not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599
        ):
            raise ValueError(f"status must be an HTTP status code (100-599), not {status!r}")
        if retry_after_ms is not None and (
            not isinstance(retry_after_ms, int | float)
            or isinstance(retry_after_ms, bool)
            or not math.isfinite(retry_after_ms)
            or retry_after_ms <= 0
        ):
            raise ValueError(f"retry_after_ms must be positive and finite, not {retry_after_ms!r}")
        if request_id is not None and (not isinstance(request_id, str) or not request_id):
            raise ValueError(f"request_id must be a non-empty string, not {request_id!r}")
        self.status = status
        self.retry_after_ms = retry_after_ms
        self.request_id = request_id

    @property
    def failure(self) -> Mapping[str, object]:
        """A read-only ``{message, code, status?, providerRetryAfterMs?, requestId?}``."""
        summary: dict[str, object] = {"message": self.message, "code": self.code}
        if self.status is not None:
            summary["status"] = self.status
        if self.retry_after_ms is not None:
            summary["providerRetryAfterMs"] = self.retry_after_ms
        if self.request_id is not None:
            summary["requestId"] = self.request_id
        return MappingProxyType(summary)

    def redacted(self, secrets: Iterable[str]) -> LlmError:
        """This error with every secret value in its message and failure replaced by [REDACTED].

        Returns ``self`` when nothing was secret. Otherwise the copy chains no cause: the
        original still holds the secret, and a traceback or log handler would print it.
        """
        scrub = redactor(secrets)
        message, code = scrub(self.message), scrub(self.code)
        request_id = None if self.request_id is None else scrub(self.request_id)
        if (message, code, request_id) == (self.message, self.code, self.request_id):
            return self
        return LlmError(
            message,
            code,
            status=self.status,
            retry_after_ms=self.retry_after_ms,
            request_id=request_id,
        )


def redactor(secrets: Iterable[str]) -> Callable[[str], str]:
    """A function replacing each secret in a text with ``[REDACTED]``, longest first."""
    ordered = sorted({s for s in secrets if s}, key=len, reverse=True)

    def scrub(text: str) -> str:
        for secret in ordered:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    return scrub


def secret_values(environ: Mapping[str, str], *, api_key: str | None = None) -> tuple[str, ...]:
    """The run's secret values (SPEC §1.3): the provider's API key and credential-like env vars."""
    found = {
        value
        for name, value in environ.items()
        if len(value) >= MIN_SECRET_LENGTH
        and any(marker in name.upper() for marker in SECRET_NAME_MARKERS)
    }
    if api_key:
        found.add(api_key)
    return tuple(sorted(found, key=len, reverse=True))


class ToolArgsError(HarnessError):
    """INVALID_ARGS: the arguments do not fit the tool's JSON schema; one violation each."""

    violations: tuple[str, ...]

    def __init__(self, violations: Sequence[str]) -> None:
        listed = tuple(violations)
        if not listed:
            raise ValueError("ToolArgsError needs at least one violation")
        if not all(isinstance(v, str) for v in listed):
            raise TypeError("violations must be strings")
        super().__init__("invalid arguments: " + "; ".join(listed), "INVALID_ARGS")
        self.violations = listed


class ToolNotFoundError(HarnessError):
    """UNKNOWN_TOOL: no tool of that name is registered."""

    tool_name: str

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"tool name must be a str, not {type(name).__name__}")
        super().__init__(f'unknown tool "{name}"', "UNKNOWN_TOOL")
        self.tool_name = name
