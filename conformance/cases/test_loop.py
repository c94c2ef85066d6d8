"""SPEC §2.2 and §2.4: the session log a harness's real loop writes for a scripted model."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import spec
from conformance.client import Client
from conformance.contract import Json, JsonObject

READ_A = {"name": "read", "arguments": {"file_path": "a.txt"}}


def play(
    client: Client,
    root: Path,
    steps: list[Json],
    *,
    workspace: dict[str, str] | None = None,
    prompt: str = "go",
) -> list[JsonObject]:
    """Run an inline scenario; return its events (the log without the header)."""
    scenario: JsonObject = {
        "name": "inline",
        "workspace": dict(workspace or {"a.txt": "alpha\n"}),
        "prompt": prompt,
        "steps": steps,
    }
    return client.scenario(str(root), scenario)[1:]


def of(events: list[JsonObject], kind: str) -> list[JsonObject]:
    """The data of every event of one type."""
    return [e["data"] for e in events if e["type"] == kind]


@pytest.mark.case("LOOP-001")
def test_prompt_opens_the_turn(client: Client, root: Path) -> None:
    """record the prompt as a user/message of text blocks, in turn 1"""
    events = play(client, root, [{"text": "DONE"}], prompt="Do the thing.")
    assert events[0] == {
        "type": "user/message",
        "data": {"turn": 1, "content": [{"type": "text", "text": "Do the thing."}]},
    }


@pytest.mark.case("LOOP-002")
def test_final_answer_completes_the_turn(client: Client, root: Path) -> None:
    """end a turn with a text answer: assistant/message then turn/end completed"""
    events = play(client, root, [{"text": "DONE"}])
    assert events[1:] == [
        {
            "type": "assistant/message",
            "data": {"turn": 1, "step": 1, "content": [{"type": "text", "text": "DONE"}]},
        },
        {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ]


@pytest.mark.case("LOOP-003")
def test_calls_then_results_in_order(client: Client, root: Path) -> None:
    """append the assistant/message, every tool/call in order, then each tool/result in order"""
    calls = [
        READ_A,
        {"name": "read", "arguments": {"file_path": "missing"}},
        {"name": "nope", "arguments": {}},
    ]
    events = play(client, root, [{"tool_calls": calls}, {"text": "DONE"}])
    assert [e["type"] for e in events] == [
        "user/message",
        "assistant/message",
        "tool/call",
        "tool/call",
        "tool/call",
        "tool/result",
        "tool/result",
        "tool/result",
        "assistant/message",
        "turn/end",
    ]
    assert [c["name"] for c in of(events, "tool/call")] == ["read", "read", "nope"]
    assert [r["callId"] for r in of(events, "tool/result")] == ["call_1", "call_2", "call_3"]


@pytest.mark.case("LOOP-004")
def test_call_ids_count_across_the_run(client: Client, root: Path) -> None:
    """number calls call_1, call_2, … across the whole run, and steps from 1 per response"""
    steps: list[Json] = [
        {"tool_calls": [READ_A, READ_A]},
        {"tool_calls": [READ_A]},
        {"text": "DONE"},
    ]
    events = play(client, root, steps)
    calls = of(events, "tool/call")
    assert [(c["callId"], c["step"], c["turn"]) for c in calls] == [
        ("call_1", 1, 1),
        ("call_2", 1, 1),
        ("call_3", 2, 1),
    ]
    assert [m["step"] for m in of(events, "assistant/message")] == [1, 2, 3]


@pytest.mark.case("LOOP-005")
def test_raw_arguments_and_parsed_input(client: Client, root: Path) -> None:
    """record the raw argument text in tool/call, and the parsed input (or raw text) in tool_use"""
    calls = [
        {"name": "read", "arguments": {"file_path": "a.txt", "limit": 5}},
        {"name": "read", "arguments": '{"file_path":  "a.txt"}'},
        {"name": "read", "arguments": "{broken"},
    ]
    events = play(client, root, [{"tool_calls": calls}, {"text": "DONE"}])
    assert [c["arguments"] for c in of(events, "tool/call")] == [
        '{"file_path":"a.txt","limit":5}',
        '{"file_path":  "a.txt"}',
        "{broken",
    ]
    assert of(events, "assistant/message")[0]["content"] == [
        {
            "type": "tool_use",
            "id": "call_1",
            "name": "read",
            "input": {"file_path": "a.txt", "limit": 5},
        },
        {"type": "tool_use", "id": "call_2", "name": "read", "input": {"file_path": "a.txt"}},
        {"type": "tool_use", "id": "call_3", "name": "read", "input": "{broken"},
    ]


@pytest.mark.case("LOOP-006")
def test_results_carry_the_structured_error(client: Client, root: Path) -> None:
    """copy the structured error into tool/result, and omit it when there is none"""
    events = play(
        client,
        root,
        [
            {"tool_calls": [READ_A, {"name": "read", "arguments": {"file_path": "x"}}]},
            {"text": "D"},
        ],
    )
    ok, failed = of(events, "tool/result")
    assert "error" not in ok
    assert failed["error"] == {"name": "FsError", "code": "FS_NOT_FOUND"}
    assert failed["isError"] is True
    assert failed["content"] == [
        {"type": "text", "text": spec.error_text(spec.read_missing(f"{root}/x"))}
    ]


@pytest.mark.case("LOOP-007")
def test_returned_failure_value(client: Client, root: Path) -> None:
    """turn a returned failure value into an error event with code UNKNOWN, ending the turn"""
    events = play(client, root, [{"tool_calls": [READ_A]}, {"fail": {"code": 500, "detail": "no"}}])
    message = '{"code":500,"detail":"no"}'
    assert events[-2:] == [
        {"type": "error", "data": {"turn": 1, "step": 2, "message": message, "code": "UNKNOWN"}},
        {
            "type": "turn/end",
            "data": {"turn": 1, "reason": {"kind": "error", "message": message, "code": "UNKNOWN"}},
        },
    ]


@pytest.mark.case("LOOP-008")
def test_raised_provider_error(client: Client, root: Path) -> None:
    """record a raised LlmError with its message and code, ending the turn"""
    events = play(
        client, root, [{"raise": {"message": "slow down", "code": "RATE_LIMIT", "status": 429}}]
    )
    assert events[-2:] == [
        {
            "type": "error",
            "data": {"turn": 1, "step": 1, "message": "slow down", "code": "RATE_LIMIT"},
        },
        {
            "type": "turn/end",
            "data": {
                "turn": 1,
                "reason": {"kind": "error", "message": "slow down", "code": "RATE_LIMIT"},
            },
        },
    ]


@pytest.mark.case("LOOP-009")
def test_script_runs_out(client: Client, root: Path) -> None:
    """fail with EMPTY_RESPONSE 'scripted model has no more steps' when the script runs out"""
    events = play(client, root, [{"tool_calls": [READ_A]}])
    assert of(events, "error") == [
        {
            "turn": 1,
            "step": 2,
            "message": "scripted model has no more steps",
            "code": "EMPTY_RESPONSE",
        }
    ]


@pytest.mark.case("LOOP-010")
def test_external_steps_take_no_step(client: Client, root: Path) -> None:
    """apply external steps between responses without giving them a step number"""
    steps: list[Json] = [
        {"tool_calls": [READ_A]},
        {"external": [{"op": "write", "path": "a.txt", "content": "changed!\n"}]},
        {
            "tool_calls": [
                {
                    "name": "edit",
                    "arguments": {"file_path": "a.txt", "old_string": "alpha", "new_string": "x"},
                }
            ]
        },
        {"text": "DONE"},
    ]
    events = play(client, root, steps)
    assert [m["step"] for m in of(events, "assistant/message")] == [1, 2, 3]
    assert of(events, "tool/result")[1]["error"] == {"name": "FsError", "code": "FS_STALE_VERSION"}
    assert (root / "a.txt").read_bytes() == b"changed!\n"


@pytest.mark.case("LOOP-011")
def test_session_header(client: Client, root: Path) -> None:
    """start the log with {"type": "session", "version": 1, "id", "cwd": <root>}"""
    header = client.scenario(
        str(root), {"name": "h", "workspace": {}, "prompt": "p", "steps": [{"text": "ok"}]}
    )[0]
    assert set(header) == {"type", "version", "id", "cwd"}
    assert isinstance(header["id"], str)
    assert header["id"]
    assert header["cwd"] in (str(root), str(root.resolve()))


@pytest.mark.case("LOOP-012")
def test_external_operations(client: Client, root: Path) -> None:
    """apply external write, delete, touch and same_size_rewrite to the workspace"""
    steps: list[Json] = [
        {
            "external": [
                {"op": "write", "path": "sub/new.txt", "content": "new\n"},
                {"op": "delete", "path": "gone.txt"},
                {"op": "touch", "path": "touched.txt"},
                {"op": "same_size_rewrite", "path": "same.txt", "content": "BBB\n"},
            ]
        },
        {"text": "DONE"},
    ]
    before = root / "same.txt"
    workspace = {"gone.txt": "x\n", "touched.txt": "t\n", "same.txt": "bbb\n", "a.txt": "a\n"}
    events = play(client, root, steps, workspace=workspace)
    assert of(events, "turn/end") == [{"turn": 1, "reason": {"kind": "completed"}}]
    assert (root / "sub" / "new.txt").read_bytes() == b"new\n"
    assert not (root / "gone.txt").exists()
    assert (root / "touched.txt").read_bytes() == b"t\n"
    assert before.read_bytes() == b"BBB\n"
