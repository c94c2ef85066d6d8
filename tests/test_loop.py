"""SPEC §2.2–§2.4: session events, derive_messages, the scripted model, secret redaction."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from reference import LlmError, derive_messages, open_workspace
from reference.loop import AgentLoop
from reference.model import ModelResponse, ScriptedModel, ScriptError, ToolCallRequest
from reference.session import SessionLog, event_from_wire, event_to_wire


def run(
    tmp_path: Path, steps: list[dict[str, object]], *, environ: Mapping[str, str] | None = None
) -> list[dict[str, object]]:
    ws = open_workspace(tmp_path)
    loop = AgentLoop(ws, ScriptedModel(steps, root=str(tmp_path)), environ=environ or {})
    loop.run_turn("go")
    return [event_to_wire(e) for e in loop.log.events]


def types(events: list[dict[str, object]]) -> list[str]:
    return [str(e["type"]) for e in events]


def data(event: dict[str, object]) -> dict[str, object]:
    value = event["data"]
    assert isinstance(value, dict)
    return value


def test_a_final_answer_completes_the_turn(tmp_path: Path) -> None:
    events = run(tmp_path, [{"text": "DONE"}])
    assert events == [
        {"type": "user/message", "data": {"turn": 1, "content": [{"type": "text", "text": "go"}]}},
        {
            "type": "assistant/message",
            "data": {"turn": 1, "step": 1, "content": [{"type": "text", "text": "DONE"}]},
        },
        {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ]


def test_several_calls_are_all_announced_then_run_in_order(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    events = run(
        tmp_path,
        [
            {
                "tool_calls": [
                    {"name": "read", "arguments": {"file_path": "a.txt"}},
                    {"name": "read", "arguments": '{"file_path": "missing"}'},
                    {"name": "read", "arguments": "{broken"},
                ]
            },
            {"tool_calls": [{"name": "read", "arguments": {"file_path": "a.txt"}}]},
            {"text": "DONE"},
        ],
    )
    assert types(events) == [
        "user/message",
        "assistant/message",
        "tool/call",
        "tool/call",
        "tool/call",
        "tool/result",
        "tool/result",
        "tool/result",
        "assistant/message",
        "tool/call",
        "tool/result",
        "assistant/message",
        "turn/end",
    ]
    calls = [data(e) for e in events if e["type"] == "tool/call"]
    results = [data(e) for e in events if e["type"] == "tool/result"]
    assert [c["callId"] for c in calls] == ["call_1", "call_2", "call_3", "call_4"]
    assert [r["callId"] for r in results] == ["call_1", "call_2", "call_3", "call_4"]
    assert [c["arguments"] for c in calls[:3]] == [
        '{"file_path":"a.txt"}',
        '{"file_path": "missing"}',
        "{broken",
    ]
    assert [c["step"] for c in calls] == [1, 1, 1, 2]
    uses = data(events[1])["content"]
    assert uses == [
        {"type": "tool_use", "id": "call_1", "name": "read", "input": {"file_path": "a.txt"}},
        {"type": "tool_use", "id": "call_2", "name": "read", "input": {"file_path": "missing"}},
        {"type": "tool_use", "id": "call_3", "name": "read", "input": "{broken"},
    ]
    assert results[1]["error"] == {"name": "FsError", "code": "FS_NOT_FOUND"}
    assert "error" not in results[0]


@pytest.mark.parametrize(
    ("step", "message", "code"),
    [
        ({"fail": {"code": 500}}, '{"code":500}', "UNKNOWN"),
        (
            {"raise": {"message": "slow down", "code": "RATE_LIMIT", "status": 429}},
            "slow down",
            "RATE_LIMIT",
        ),
    ],
    ids=["returned-failure-value", "raised-provider-error"],
)
def test_a_failed_step_ends_the_turn(
    tmp_path: Path, step: dict[str, object], message: str, code: str
) -> None:
    events = run(tmp_path, [step])
    assert events[-2:] == [
        {"type": "error", "data": {"turn": 1, "step": 1, "message": message, "code": code}},
        {
            "type": "turn/end",
            "data": {"turn": 1, "reason": {"kind": "error", "message": message, "code": code}},
        },
    ]


def test_running_out_of_script_is_an_empty_response(tmp_path: Path) -> None:
    events = run(tmp_path, [{"tool_calls": [{"name": "read", "arguments": {"file_path": "x"}}]}])
    assert data(events[-2]) == {
        "turn": 1,
        "step": 2,
        "message": "scripted model has no more steps",
        "code": "EMPTY_RESPONSE",
    }


class RaisingModel:
    api_key: str | None = None

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def respond(self, messages: list[dict[str, object]], tools: list[dict[str, object]]) -> object:
        raise self.exc


def test_a_failure_without_a_string_code_records_none(tmp_path: Path) -> None:
    loop = AgentLoop(open_workspace(tmp_path), RaisingModel(SystemError("odd")))
    loop.run_turn("go")
    assert [event_to_wire(e) for e in loop.log.events][-2:] == [
        {"type": "error", "data": {"turn": 1, "step": 1, "message": "odd"}},
        {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "error", "message": "odd"}}},
    ]


def test_an_interrupt_from_the_provider_propagates(tmp_path: Path) -> None:
    loop = AgentLoop(open_workspace(tmp_path), RaisingModel(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        loop.run_turn("go")


def test_external_steps_change_the_workspace_and_take_no_step_number(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("abc\n")
    (tmp_path / "b.txt").write_text("bbb\n")
    (tmp_path / "c.txt").write_text("ccc\n")
    before = os.stat(tmp_path / "c.txt")
    touched = os.stat(tmp_path / "b.txt")
    events = run(
        tmp_path,
        [
            {
                "external": [
                    {"op": "write", "path": "new/d.txt", "content": "d\n"},
                    {"op": "delete", "path": "a.txt"},
                    {"op": "touch", "path": "b.txt"},
                    {"op": "same_size_rewrite", "path": "c.txt", "content": "CCC\n"},
                ]
            },
            {"text": "DONE"},
        ],
    )
    assert data(events[1])["step"] == 1
    assert (tmp_path / "new" / "d.txt").read_text() == "d\n"
    assert not (tmp_path / "a.txt").exists()
    assert os.stat(tmp_path / "b.txt").st_mtime_ns == touched.st_mtime_ns + 1_000_000_000
    assert (tmp_path / "b.txt").read_text() == "bbb\n"
    after = os.stat(tmp_path / "c.txt")
    assert (tmp_path / "c.txt").read_text() == "CCC\n"
    assert (after.st_mtime_ns, after.st_size, after.st_ino) == (
        before.st_mtime_ns,
        before.st_size,
        before.st_ino,
    )


def test_a_same_size_rewrite_must_keep_the_size(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_text("ccc\n")
    events = run(
        tmp_path, [{"external": [{"op": "same_size_rewrite", "path": "c.txt", "content": "cc\n"}]}]
    )
    assert data(events[-2])["message"] == "same_size_rewrite of 'c.txt': 3 bytes for a 4-byte file"


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ({}, "steps[0]: needs one of text, tool_calls, fail, raise, external"),
        ({"text": 1}, "steps[0].text must be a string"),
        ({"say": "x"}, "steps[0]: unknown key(s) 'say'"),
        ({"text": "a", "fail": 1}, "steps[0]: text and fail cannot be combined"),
        (
            {"tool_calls": [{"arguments": {}}]},
            "steps[0].tool_calls[0] must be an object with a string name",
        ),
        ({"raise": {"message": "m"}}, "steps[0].raise.code must be a non-empty string"),
        ({"raise": {"message": "m", "code": "C", "status": 7}}, "steps[0].raise: status must be"),
        ({"external": [{"op": "chmod", "path": "a"}]}, "steps[0].external[0].op must be one of"),
        (
            {"external": [{"op": "write", "path": "a"}]},
            "steps[0].external[0].content must be a string",
        ),
    ],
)
def test_script_steps_are_validated(step: dict[str, object], message: str) -> None:
    with pytest.raises(ScriptError) as info:
        ScriptedModel([step], root="/nowhere")
    assert str(info.value).startswith(message)


def test_external_paths_stay_in_the_workspace(tmp_path: Path) -> None:
    events = run(
        tmp_path, [{"external": [{"op": "write", "path": "../escape.txt", "content": "x"}]}]
    )
    assert data(events[-2])["message"] == "'../escape.txt' climbs out of the workspace"
    assert not (tmp_path.parent / "escape.txt").exists()


def test_provider_errors_are_redacted_before_they_reach_the_log(tmp_path: Path) -> None:
    canary = "canary-0123456789abcdef"
    environ = {"MY_SERVICE_TOKEN": canary, "SHORT_KEY": "abc"}
    events = run(
        tmp_path,
        [
            {
                "raise": {
                    "message": f"bad key {canary} (abc)",
                    "code": "AUTH",
                    "requestId": f"r-{canary}",
                }
            }
        ],
        environ=environ,
    )
    assert canary not in json.dumps(events)
    assert data(events[-2])["message"] == "bad key [REDACTED] (abc)"


def test_the_provider_api_key_is_a_secret(tmp_path: Path) -> None:
    class KeyedModel(RaisingModel):
        api_key: str | None = "provider-key-42"

    loop = AgentLoop(
        open_workspace(tmp_path),
        KeyedModel(LlmError("rejected provider-key-42", "AUTH")),
        environ={},
    )
    loop.run_turn("go")
    assert "provider-key-42" not in json.dumps([event_to_wire(e) for e in loop.log.events])


def test_derive_messages_folds_the_log_and_never_surfaces_error(tmp_path: Path) -> None:
    events = run(
        tmp_path,
        [{"tool_calls": [{"name": "read", "arguments": {"file_path": "gone"}}]}, {"text": ""}],
    )
    log = [event_from_wire(e) for e in events]
    assert derive_messages(log) == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "call_1", "name": "read", "input": {"file_path": "gone"}}
            ],
        },
        {
            "role": "tool",
            "callId": "call_1",
            "content": [
                {"type": "text", "text": f'Error: cannot read "{tmp_path}/gone": not found'}
            ],
            "isError": True,
        },
    ]


def test_the_model_sees_the_history_so_far(tmp_path: Path) -> None:
    seen: list[list[dict[str, object]]] = []

    class Recorder:
        api_key: str | None = None

        def respond(
            self, messages: list[dict[str, object]], tools: list[dict[str, object]]
        ) -> object:
            seen.append(messages)
            assert [t["name"] for t in tools] == ["read", "write", "edit"]
            if len(seen) == 1:
                return ModelResponse("", (ToolCallRequest("read", '{"file_path":"x"}'),))
            return ModelResponse("done")

    AgentLoop(open_workspace(tmp_path), Recorder()).run_turn("hi")
    assert [m["role"] for m in seen[1]] == ["user", "assistant", "tool"]


def test_session_log_round_trips_through_json_lines(tmp_path: Path) -> None:
    ws_root = tmp_path / "ws"
    ws_root.mkdir()
    loop = AgentLoop(
        open_workspace(ws_root),
        ScriptedModel(
            [{"tool_calls": [{"name": "read", "arguments": {"file_path": "nope"}}]}, {"fail": "x"}],
            root=str(ws_root),
        ),
    )
    loop.run_turn("go")
    path = tmp_path / "session.jsonl"
    loop.log.write_jsonl(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {
        "type": "session",
        "version": 1,
        "id": loop.log.id,
        "cwd": str(ws_root),
    }
    back = SessionLog.read_jsonl(path)
    assert back.records() == loop.log.records()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty session log"),
        (
            '{"type": "session", "version": 2, "id": "i", "cwd": "/"}\n',
            "1: not a version 1 session header",
        ),
        ('{"type": "session", "version": 1, "id": "i", "cwd": "/"}\n{oops\n', "2: not JSON"),
        (
            '{"type": "session", "version": 1, "id": "i", "cwd": "/"}\n{"type": "x", "data": {}}\n',
            "2: unknown event type 'x'",
        ),
    ],
)
def test_reading_a_bad_log_names_the_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        SessionLog.read_jsonl(path)
