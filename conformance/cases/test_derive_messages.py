"""SPEC §2.3: derive_messages folds the log into model history, and only text reaches the model."""

from __future__ import annotations

import pytest

from conformance.client import Client
from conformance.contract import JsonObject

USER: JsonObject = {
    "type": "user/message",
    "data": {"turn": 1, "content": [{"type": "text", "text": "go"}]},
}
USE = {"type": "tool_use", "id": "call_1", "name": "read", "input": {"file_path": "x"}}
ASSISTANT: JsonObject = {
    "type": "assistant/message",
    "data": {"turn": 1, "step": 1, "content": [USE]},
}
CALL: JsonObject = {
    "type": "tool/call",
    "data": {
        "turn": 1,
        "step": 1,
        "callId": "call_1",
        "name": "read",
        "arguments": '{"file_path":"x"}',
    },
}
FAILED_TEXT = [{"type": "text", "text": 'Error: cannot read "/w/x": not found'}]
RESULT: JsonObject = {
    "type": "tool/result",
    "data": {
        "turn": 1,
        "step": 1,
        "callId": "call_1",
        "content": FAILED_TEXT,
        "isError": True,
        "error": {"name": "FsError", "code": "FS_NOT_FOUND"},
    },
}
ERROR: JsonObject = {
    "type": "error",
    "data": {"turn": 1, "step": 2, "message": "boom", "code": "UNKNOWN"},
}
END: JsonObject = {
    "type": "turn/end",
    "data": {"turn": 1, "reason": {"kind": "error", "message": "boom", "code": "UNKNOWN"}},
}
EMPTY: JsonObject = {"type": "assistant/message", "data": {"turn": 1, "step": 2, "content": []}}


@pytest.mark.case("DRV-001")
def test_history_shapes(client: Client) -> None:
    """fold user, assistant and tool results into {role, …} messages, in order"""
    assert client.derive([USER, ASSISTANT, CALL, RESULT]) == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [USE]},
        {"role": "tool", "callId": "call_1", "content": FAILED_TEXT, "isError": True},
    ]


@pytest.mark.case("DRV-002")
def test_structured_error_never_reaches_the_model(client: Client) -> None:
    """never surface the structured error in history: the model sees only the text"""
    messages = client.derive([RESULT])
    assert messages == [
        {"role": "tool", "callId": "call_1", "content": FAILED_TEXT, "isError": True}
    ]
    assert "FS_NOT_FOUND" not in str(messages)


@pytest.mark.case("DRV-003")
def test_empty_assistant_messages_are_skipped(client: Client) -> None:
    """skip assistant messages whose content is empty"""
    assert client.derive([USER, EMPTY]) == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]}
    ]


@pytest.mark.case("DRV-004")
def test_other_events_are_not_history(client: Client) -> None:
    """leave tool/call, error and turn/end events out of history"""
    assert client.derive([CALL, ERROR, END]) == []
