"""SPEC §2.2–§2.3: session events on the wire, the JSON Lines log file, history, turns."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from reference import derive_messages, open_workspace
from reference.loop import AgentLoop
from reference.model import ScriptedModel
from reference.session import (
    AssistantMessage,
    ErrorEvent,
    Event,
    SessionLog,
    ToolCall,
    ToolResult,
    ToolUseBlock,
    TurnEnd,
    UserMessage,
    event_from_wire,
    event_to_wire,
)
from reference.tools.registry import TextBlock, ToolErrorInfo, ToolExecutionResult

HEADER = '{"type": "session", "version": 1, "id": "s-1", "cwd": "/w"}'

# Turn 2, step 3: a field read from the wrong place, or not at all, cannot pass for the right one.
EVENTS: list[Event] = [
    UserMessage(2, (TextBlock("hi"), TextBlock("there"))),
    AssistantMessage(
        2, 3, (TextBlock("let me look"), ToolUseBlock("call_7", "read", {"file_path": "a"}))
    ),
    AssistantMessage(2, 4, (ToolUseBlock("call_8", "edit", "{broken"),)),
    ToolCall(2, 3, "call_7", "read", '{"file_path":"a"}'),
    ToolResult(
        2,
        3,
        ToolExecutionResult(
            "call_7", (TextBlock("Error: gone"),), True, ToolErrorInfo("FsError", "FS_NOT_FOUND")
        ),
    ),
    ToolResult(2, 3, ToolExecutionResult("call_9", (TextBlock("Error: odd"),), True)),
    ToolResult(2, 3, ToolExecutionResult("call_10", (TextBlock("fine"),), False)),
    ErrorEvent(2, 5, "slow down", "RATE_LIMIT"),
    ErrorEvent(2, 5, "odd"),
    TurnEnd(2),
    TurnEnd(2, "slow down", "RATE_LIMIT"),
    TurnEnd(2, "odd"),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_every_event_reads_back_from_its_json_wire_form(event: Event) -> None:
    wire = json.loads(json.dumps(event_to_wire(event)))
    assert event_from_wire(wire) == event


def test_the_wire_form_of_each_event_is_the_specified_one() -> None:
    assert [event_to_wire(e)["data"] for e in EVENTS] == [
        {"turn": 2, "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "there"}]},
        {
            "turn": 2,
            "step": 3,
            "content": [
                {"type": "text", "text": "let me look"},
                {"type": "tool_use", "id": "call_7", "name": "read", "input": {"file_path": "a"}},
            ],
        },
        {
            "turn": 2,
            "step": 4,
            "content": [{"type": "tool_use", "id": "call_8", "name": "edit", "input": "{broken"}],
        },
        {
            "turn": 2,
            "step": 3,
            "callId": "call_7",
            "name": "read",
            "arguments": '{"file_path":"a"}',
        },
        {
            "turn": 2,
            "step": 3,
            "callId": "call_7",
            "content": [{"type": "text", "text": "Error: gone"}],
            "isError": True,
            "error": {"name": "FsError", "code": "FS_NOT_FOUND"},
        },
        {
            "turn": 2,
            "step": 3,
            "callId": "call_9",
            "content": [{"type": "text", "text": "Error: odd"}],
            "isError": True,
        },
        {
            "turn": 2,
            "step": 3,
            "callId": "call_10",
            "content": [{"type": "text", "text": "fine"}],
            "isError": False,
        },
        {"turn": 2, "step": 5, "message": "slow down", "code": "RATE_LIMIT"},
        {"turn": 2, "step": 5, "message": "odd"},
        {"turn": 2, "reason": {"kind": "completed"}},
        {"turn": 2, "reason": {"kind": "error", "message": "slow down", "code": "RATE_LIMIT"}},
        {"turn": 2, "reason": {"kind": "error", "message": "odd"}},
    ]


def _result(**data: object) -> dict[str, object]:
    base = {"turn": 1, "step": 1, "callId": "c", "content": [], "isError": True}
    return {"type": "tool/result", "data": {**base, **data}}


def _user(content: list[object]) -> dict[str, object]:
    return {"type": "user/message", "data": {"turn": 1, "content": content}}


def _assistant(content: list[object]) -> dict[str, object]:
    return {"type": "assistant/message", "data": {"turn": 1, "step": 1, "content": content}}


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        ({"type": "user/message"}, "event 'user/message' has no data object"),
        ({"type": "error", "data": []}, "event 'error' has no data object"),
        (
            {"type": "user/message", "data": {"turn": "1", "content": []}},
            "user/message: 'turn' must be int, got '1'",
        ),
        (
            {"type": "user/message", "data": {"turn": True, "content": []}},
            "user/message: 'turn' must be int, got True",
        ),
        (
            {"type": "tool/call", "data": {"turn": 1, "step": 1, "callId": "c", "name": "read"}},
            "tool/call: 'arguments' must be str, got None",
        ),
        (_result(isError=1), "tool/result: 'isError' must be bool, got 1"),
        (_result(error="oops"), "tool/result error must be an object"),
        (_result(error={"code": "C"}), "tool/result error: 'name' must be str, got None"),
        (_result(error={"name": "FsError"}), "tool/result error: 'code' must be str, got None"),
        (
            {"type": "error", "data": {"turn": 1, "step": 1, "message": "m", "code": 5}},
            "error: 'code' must be str, got 5",
        ),
        ({"type": "turn/end", "data": {"turn": 1}}, "turn/end reason must be an object"),
        (
            {"type": "turn/end", "data": {"turn": 1, "reason": {}}},
            "turn/end reason: 'kind' must be str, got None",
        ),
        (
            {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "error", "code": "C"}}},
            "turn/end reason: 'message' must be str, got None",
        ),
        (
            {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "error", "message": 3}}},
            "turn/end reason: 'message' must be str, got 3",
        ),
        (_user([5]), "content block must be an object"),
        (_user([{"type": "text"}]), "text block: 'text' must be str, got None"),
        (_user([{"text": "x"}]), "text block: 'type' must be str, got None"),
        (
            _user([{"type": "image", "text": "x"}]),
            "expected a text block, got {'type': 'image', 'text': 'x'}",
        ),
        (_assistant(["x"]), "content block must be an object"),
        (
            _assistant([{"type": "tool_use", "name": "read"}]),
            "tool_use block: 'id' must be str, got None",
        ),
        (
            _assistant([{"type": "tool_use", "id": "c"}]),
            "tool_use block: 'name' must be str, got None",
        ),
        ({"type": "x", "data": {}}, "unknown event type 'x'"),
    ],
)
def test_a_malformed_wire_event_is_refused_naming_the_field(
    wire: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        event_from_wire(wire)


def test_derive_messages_reads_wire_events_as_it_reads_typed_ones() -> None:
    wire = [event_to_wire(e) for e in EVENTS]
    assert derive_messages(wire) == derive_messages(EVENTS)
    assert derive_messages(wire[:2]) == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "there"}],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "let me look"},
                {"type": "tool_use", "id": "call_7", "name": "read", "input": {"file_path": "a"}},
            ],
        },
    ]


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (42, "derive_messages takes session events, not int"),
        (["user/message"], "derive_messages takes session events, not list"),
        (TextBlock("hi"), "derive_messages takes session events, not TextBlock"),
    ],
)
def test_derive_messages_refuses_what_is_not_an_event_naming_its_type(
    item: object, message: str
) -> None:
    with pytest.raises(TypeError) as info:
        derive_messages([UserMessage(1, (TextBlock("hi"),)), item])  # type: ignore[list-item]
    assert str(info.value) == message


def _log() -> SessionLog:
    log = SessionLog(cwd="/w", id="s-1")
    log.append(UserMessage(1, (TextBlock("café ✓ <&>"),)))
    log.append(TurnEnd(1))
    return log


def test_the_log_file_holds_utf8_json_lines_exactly(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    _log().write_jsonl(path)
    assert path.read_bytes() == (
        HEADER.encode()
        + b'\n{"type": "user/message", "data": {"turn": 1, "content": '
        + '[{"type": "text", "text": "café ✓ <&>"}]}}\n'.encode()
        + b'{"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}}\n'
    )


@pytest.mark.usefixtures("ascii_locale")
def test_a_log_reads_back_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    _log().write_jsonl(path)
    assert SessionLog.read_jsonl(path) == _log()


def test_a_log_with_crlf_line_ends_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    _log().write_jsonl(path)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert SessionLog.read_jsonl(path) == _log()


def test_a_bare_carriage_return_does_not_end_a_record(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text(
        HEADER + '\r{"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}}\n',
        newline="",
    )
    message = f"{path}:1: not JSON: Extra data: line 1 column 61 (char 60)"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        SessionLog.read_jsonl(path)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["[1]"], "{path}:1: session header must be an object"),
        (
            ['{"type": "session", "version": 1, "id": "s-1", "cwd": 5}'],
            "{path}:1: session header: 'cwd' must be str, got 5",
        ),
        (
            ['{"type": "session", "version": 1, "cwd": "/w"}'],
            "{path}:1: session header: 'id' must be str, got None",
        ),
        (
            ["", "   ", '{"type": "session", "version": 2}'],
            "{path}:3: not a version 1 session header",
        ),
        ([HEADER, "", '{"type": "turn/end"}'], "{path}:3: event 'turn/end' has no data object"),
        ([HEADER, '"user/message"'], "{path}:2: event must be an object"),
        ([HEADER, '{"type": "turn/end"}'], "{path}:2: event 'turn/end' has no data object"),
    ],
)
def test_reading_a_malformed_log_says_what_is_wrong(
    tmp_path: Path, lines: list[str], message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=f"^{re.escape(message.format(path=path))}$"):
        SessionLog.read_jsonl(path)


def _spy_replace(
    monkeypatch: pytest.MonkeyPatch, then: Callable[[], None] = lambda: None
) -> list[str]:
    """Record the source of every ``os.replace`` (doing the real one), then run ``then``."""
    sources: list[str] = []
    real = os.replace

    def replace(src: str, dst: str) -> None:
        sources.append(src)
        real(src, dst)
        then()

    monkeypatch.setattr(os, "replace", replace)
    return sources


def test_the_log_is_staged_in_a_hidden_temp_file_beside_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sources = _spy_replace(monkeypatch)
    _log().write_jsonl(tmp_path / "session.jsonl")
    assert len(sources) == 1
    staged = Path(sources[0])
    assert staged.parent == tmp_path
    assert re.fullmatch(r"\.session-\w+\.jsonl\.tmp", staged.name), staged.name
    assert os.listdir(tmp_path) == ["session.jsonl"]


def test_a_write_that_fails_after_the_rename_raises_its_own_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail() -> None:
        raise OSError("rename reported failure")

    _spy_replace(monkeypatch, fail)
    with pytest.raises(OSError, match="rename reported failure"):
        _log().write_jsonl(tmp_path / "session.jsonl")
    assert os.listdir(tmp_path) == ["session.jsonl"]


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


class _RaisingModel:
    api_key: str | None = None

    def respond(self, messages: list[dict[str, object]], tools: list[dict[str, object]]) -> object:
        raise _Unprintable


def _records(log: SessionLog) -> list[Mapping[str, object]]:
    return [event_to_wire(e) for e in log.events]


def test_a_failure_whose_text_cannot_be_rendered_is_recorded_as_unprintable(
    tmp_path: Path,
) -> None:
    loop = AgentLoop(open_workspace(tmp_path), _RaisingModel(), environ={})
    loop.run_turn("go")
    assert _records(loop.log)[-2:] == [
        {"type": "error", "data": {"turn": 1, "step": 1, "message": "<unprintable thrown value>"}},
        {
            "type": "turn/end",
            "data": {
                "turn": 1,
                "reason": {"kind": "error", "message": "<unprintable thrown value>"},
            },
        },
    ]


def test_turns_count_from_one_across_the_session(tmp_path: Path) -> None:
    model = ScriptedModel([{"text": "A"}, {"text": "B"}], root=str(tmp_path))
    loop = AgentLoop(open_workspace(tmp_path), model, environ={})
    loop.run_turn("one")
    loop.run_turn("two")
    assert [(e.type, e.turn) for e in loop.log.events] == [
        ("user/message", 1),
        ("assistant/message", 1),
        ("turn/end", 1),
        ("user/message", 2),
        ("assistant/message", 2),
        ("turn/end", 2),
    ]


def test_the_loop_appends_to_the_log_it_is_given(tmp_path: Path) -> None:
    log = SessionLog(cwd="/elsewhere", id="given")
    log.append(UserMessage(1, (TextBlock("earlier"),)))
    model = ScriptedModel([{"text": "A"}], root=str(tmp_path))
    loop = AgentLoop(open_workspace(tmp_path), model, log=log, environ={})
    loop.run_turn("now")
    assert loop.log is log
    assert log.header() == {"type": "session", "version": 1, "id": "given", "cwd": "/elsewhere"}
    assert [e.type for e in log.events] == [
        "user/message",
        "user/message",
        "assistant/message",
        "turn/end",
    ]


def test_a_fresh_loop_starts_a_log_in_the_workspace_root(tmp_path: Path) -> None:
    loop = AgentLoop(open_workspace(tmp_path), ScriptedModel([], root=str(tmp_path)))
    assert loop.log.cwd == str(tmp_path)
    assert loop.log.events == []
