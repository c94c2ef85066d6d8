"""The session log (SPEC §2.2–§2.3): typed events, their one wire form, and model history.

Wire form of an event: ``{"type": "<type>", "data": {…}}``. A log file is JSON Lines: a header
``{"type": "session", "version": 1, "id", "cwd"}`` and then one event per line.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Final, TypeAlias

from reference.tools.registry import TextBlock, ToolErrorInfo, ToolExecutionResult

LOG_VERSION: Final = 1
Wire: TypeAlias = dict[str, object]


@dataclass(frozen=True)
class ToolUseBlock:
    """A tool call inside an assistant message; ``input`` is parsed, or the raw text if invalid."""

    id: str
    name: str
    input: object

    def to_wire(self) -> Wire:
        """``{"type": "tool_use", "id", "name", "input"}``."""
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": self.input}


ContentBlock: TypeAlias = TextBlock | ToolUseBlock


@dataclass(frozen=True)
class UserMessage:
    """The user's prompt opening a turn."""

    turn: int
    content: tuple[TextBlock, ...]
    type: ClassVar[str] = "user/message"

    def data(self) -> Wire:
        """The event's ``data``."""
        return {"turn": self.turn, "content": [b.to_wire() for b in self.content]}


@dataclass(frozen=True)
class AssistantMessage:
    """One model response: text blocks, then tool-use blocks."""

    turn: int
    step: int
    content: tuple[ContentBlock, ...]
    type: ClassVar[str] = "assistant/message"

    def data(self) -> Wire:
        """The event's ``data``."""
        content = [b.to_wire() for b in self.content]
        return {"turn": self.turn, "step": self.step, "content": content}


@dataclass(frozen=True)
class ToolCall:
    """A tool call about to run; ``arguments`` is the raw JSON text the model sent."""

    turn: int
    step: int
    call_id: str
    name: str
    arguments: str
    type: ClassVar[str] = "tool/call"

    def data(self) -> Wire:
        """The event's ``data``."""
        return {
            "turn": self.turn,
            "step": self.step,
            "callId": self.call_id,
            "name": self.name,
            "arguments": self.arguments,
        }


@dataclass(frozen=True)
class ToolResult:
    """A tool call's result, with the structured error copied when there is one."""

    turn: int
    step: int
    result: ToolExecutionResult
    type: ClassVar[str] = "tool/result"

    def data(self) -> Wire:
        """The event's ``data``."""
        return {"turn": self.turn, "step": self.step, **self.result.to_wire()}


@dataclass(frozen=True)
class ErrorEvent:
    """A step failed; ``code`` when the failure had a string code."""

    turn: int
    step: int
    message: str
    code: str | None = None
    type: ClassVar[str] = "error"

    def data(self) -> Wire:
        """The event's ``data``."""
        data: Wire = {"turn": self.turn, "step": self.step, "message": self.message}
        if self.code is not None:
            data["code"] = self.code
        return data


@dataclass(frozen=True)
class TurnEnd:
    """A turn ended: completed, or failed with the step's error message and code."""

    turn: int
    error_message: str | None = None
    error_code: str | None = None
    type: ClassVar[str] = "turn/end"

    def data(self) -> Wire:
        """The event's ``data``."""
        if self.error_message is None:
            return {"turn": self.turn, "reason": {"kind": "completed"}}
        reason: Wire = {"kind": "error", "message": self.error_message}
        if self.error_code is not None:
            reason["code"] = self.error_code
        return {"turn": self.turn, "reason": reason}


Event: TypeAlias = UserMessage | AssistantMessage | ToolCall | ToolResult | ErrorEvent | TurnEnd


def event_to_wire(event: Event) -> Wire:
    """``{"type": …, "data": …}``."""
    return {"type": event.type, "data": event.data()}


def event_from_wire(wire: Mapping[str, object]) -> Event:
    """Parse one wire event; raise ValueError naming what does not fit."""
    kind, data = wire.get("type"), wire.get("data")
    if not isinstance(data, Mapping):
        raise ValueError(f"event {kind!r} has no data object")
    d = _Fields(data, str(kind))
    if kind == "user/message":
        return UserMessage(d.integer("turn"), tuple(_text(b) for b in d.array("content")))
    if kind == "assistant/message":
        blocks = tuple(_block(b) for b in d.array("content"))
        return AssistantMessage(d.integer("turn"), d.integer("step"), blocks)
    if kind == "tool/call":
        return ToolCall(
            d.integer("turn"),
            d.integer("step"),
            d.text("callId"),
            d.text("name"),
            d.text("arguments"),
        )
    if kind == "tool/result":
        error = data.get("error")
        info = None
        if error is not None:
            e = _Fields(_mapping(error, "tool/result error"), "tool/result error")
            info = ToolErrorInfo(e.text("name"), e.text("code"))
        result = ToolExecutionResult(
            d.text("callId"),
            tuple(_text(b) for b in d.array("content")),
            d.boolean("isError"),
            info,
        )
        return ToolResult(d.integer("turn"), d.integer("step"), result)
    if kind == "error":
        return ErrorEvent(
            d.integer("turn"), d.integer("step"), d.text("message"), d.optional_text("code")
        )
    if kind == "turn/end":
        reason = _Fields(_mapping(data.get("reason"), "turn/end reason"), "turn/end reason")
        if reason.text("kind") == "completed":
            return TurnEnd(d.integer("turn"))
        return TurnEnd(d.integer("turn"), reason.text("message"), reason.optional_text("code"))
    raise ValueError(f"unknown event type {kind!r}")


def derive_messages(events: Iterable[Event | Mapping[str, object]]) -> list[Wire]:
    """Fold the log into model history. The structured ``error`` never reaches the model.

    Takes typed events or their wire form (what ``run_scenario`` returns); anything else is
    refused with a ``TypeError`` naming it, never folded silently into nothing.
    """
    messages: list[Wire] = []
    for item in events:
        if isinstance(item, Mapping):
            event: object = event_from_wire(item)
        else:
            event = item
        if isinstance(event, UserMessage):
            messages.append({"role": "user", "content": [b.to_wire() for b in event.content]})
        elif isinstance(event, AssistantMessage) and event.content:
            messages.append({"role": "assistant", "content": [b.to_wire() for b in event.content]})
        elif isinstance(event, ToolResult):
            result = event.result
            messages.append(
                {
                    "role": "tool",
                    "callId": result.call_id,
                    "content": [b.to_wire() for b in result.content],
                    "isError": result.is_error,
                }
            )
        elif not isinstance(event, ToolCall | ErrorEvent | TurnEnd | AssistantMessage):
            raise TypeError(f"derive_messages takes session events, not {type(item).__name__}")
    return messages


@dataclass
class SessionLog:
    """The events of one session, in order, with the header that identifies it."""

    cwd: str
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    events: list[Event] = field(default_factory=list)

    def append(self, event: Event) -> None:
        """Add the next event."""
        self.events.append(event)

    def header(self) -> Wire:
        """The first line of the log file."""
        return {"type": "session", "version": LOG_VERSION, "id": self.id, "cwd": self.cwd}

    def records(self) -> list[Wire]:
        """The header, then every event in wire form: the lines of the log file."""
        return [self.header(), *(event_to_wire(e) for e in self.events)]

    def write_jsonl(self, path: str | os.PathLike[str]) -> None:
        """Write the log as JSON Lines (UTF-8), whole, or not at all.

        Every record is one line; text UTF-8 cannot carry (a lone surrogate) is written with
        JSON's ``\\uXXXX`` escapes and reads back the same. The lines go to a temp file that
        replaces ``path`` only once complete: a log that cannot be written raises, and the
        previous file stays byte-identical.
        """
        lines = [_line(record) for record in self.records()]
        target = os.fspath(path)
        directory = os.path.dirname(os.path.abspath(target))
        fd, temp = tempfile.mkstemp(prefix=".session-", suffix=".jsonl.tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as out:
                out.writelines(lines)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
            raise

    @classmethod
    def read_jsonl(cls, path: str | os.PathLike[str]) -> SessionLog:
        """Read a log written by ``write_jsonl``; raise ValueError naming the bad line."""
        where = os.fspath(path)
        with open(path, encoding="utf-8", newline="") as source:
            # Blank lines are skipped, but every record keeps the number of its line in the file.
            numbered = [(n, line) for n, line in enumerate(source.read().split("\n"), 1)]
        records: list[tuple[int, object]] = []
        for number, line in numbered:
            if not line.strip():
                continue
            try:
                records.append((number, json.loads(line)))
            except ValueError as exc:
                raise ValueError(f"{where}:{number}: not JSON: {exc}") from exc
        if not records:
            raise ValueError(f"{where}: empty session log")
        number, first = records[0]
        try:
            header = _mapping(first, "session header")
            if header.get("type") != "session" or header.get("version") != LOG_VERSION:
                raise ValueError(f"not a version {LOG_VERSION} session header")
            h = _Fields(header, "session header")
            log = cls(cwd=h.text("cwd"), id=h.text("id"))
        except ValueError as exc:
            raise ValueError(f"{where}:{number}: {exc}") from exc
        for number, record in records[1:]:
            try:
                log.append(event_from_wire(_mapping(record, "event")))
            except ValueError as exc:
                raise ValueError(f"{where}:{number}: {exc}") from exc
        return log


class _Fields:
    """Typed access to a wire object's fields, with errors that name the field."""

    def __init__(self, data: Mapping[str, object], where: str) -> None:
        self._data, self._where = data, where

    def _get(self, name: str, kind: type) -> object:
        value = self._data.get(name)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ValueError(f"{self._where}: {name!r} must be {kind.__name__}, got {value!r}")
        return value

    def integer(self, name: str) -> int:
        value = self._get(name, int)
        assert isinstance(value, int)
        return value

    def text(self, name: str) -> str:
        value = self._get(name, str)
        assert isinstance(value, str)
        return value

    def boolean(self, name: str) -> bool:
        return bool(self._get(name, bool))

    def array(self, name: str) -> list[object]:
        value = self._get(name, list)
        assert isinstance(value, list)
        return value

    def optional_text(self, name: str) -> str | None:
        return None if self._data.get(name) is None else self.text(name)


def _line(record: Wire) -> bytes:
    """One log line; ``\\uXXXX`` escapes where UTF-8 cannot carry the text."""
    text = json.dumps(record, ensure_ascii=False)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(record, ensure_ascii=True).encode("ascii") + b"\n"


def _mapping(value: object, where: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} must be an object")
    return value


def _text(block: object) -> TextBlock:
    b = _Fields(_mapping(block, "content block"), "text block")
    if b.text("type") != "text":
        raise ValueError(f"expected a text block, got {block!r}")
    return TextBlock(b.text("text"))


def _block(block: object) -> ContentBlock:
    data = _mapping(block, "content block")
    if data.get("type") == "tool_use":
        b = _Fields(data, "tool_use block")
        return ToolUseBlock(b.text("id"), b.text("name"), data.get("input"))
    return _text(data)
