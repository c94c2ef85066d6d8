"""SPEC §2.3: derive_messages folds the log into model history, and only text reaches the model."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from conformance.cases import case, needs
from conformance.causes import subject_signature
from conformance.client import Client
from conformance.display import show
from conformance.harness.contract import Json, JsonObject
from conformance.harness.transport import HarnessCallError, HarnessDead
from conformance.verdict import Judge

pytestmark = needs("loop")

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


def _leaks(derived: object, expected: list[JsonObject]) -> str | None:
    """The history as expected but for an ``error`` key on tool messages: the one defect both
    history cases show. Any other difference stays its case's."""
    messages = derived if isinstance(derived, list) else []
    bare = [{k: v for k, v in m.items() if k != "error"} if isinstance(m, dict) else m
            for m in messages]  # fmt: skip
    if bare == expected and bare != messages:
        return subject_signature("history.no-error", "history-error")
    return None


@case("DRV-001", rules=["history.fold"])
def test_history_shapes(client: Client, judge: Judge) -> None:
    """fold user, assistant and tool results into {role, …} messages, in order"""
    derived = client.derive([USER, ASSISTANT, CALL, RESULT])
    expected: list[JsonObject] = [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [USE]},
        {"role": "tool", "callId": "call_1", "content": FAILED_TEXT, "isError": True},
    ]  # fmt: skip
    judge.equal("derive_messages", derived, expected, rule="history.fold",
                signature=_leaks(derived, expected))  # fmt: skip


@case("DRV-002", rules=["history.no-error"])
def test_structured_error_never_reaches_the_model(client: Client, judge: Judge) -> None:
    """never surface the structured error in history: the model sees only the text"""
    derived = client.derive([RESULT])
    expected: list[JsonObject] = [
        {"role": "tool", "callId": "call_1", "content": FAILED_TEXT, "isError": True}
    ]
    judge.equal("derive_messages of a failed result", derived, expected, rule="history.no-error",
                signature=_leaks(derived, expected))  # fmt: skip


@case("DRV-003", rules=["history.empty"])
def test_empty_assistant_messages_are_skipped(client: Client, judge: Judge) -> None:
    """skip assistant messages whose content is empty"""
    judge.equal("derive_messages", client.derive([USER, EMPTY]),
                [{"role": "user", "content": [{"type": "text", "text": "go"}]}], rule="history.empty")  # fmt: skip


@case("DRV-004", rules=["history.others"])
def test_other_events_are_not_history(client: Client, judge: Judge) -> None:
    """leave tool/call, error and turn/end events out of history"""
    judge.equal("derive_messages", client.derive([CALL, ERROR, END]), [], rule="history.others")


@case("DRV-005", rules=["history.input"])
def test_the_events_of_a_run_fold_into_history(client: Client, root: Path, judge: Judge) -> None:
    """fold the very events run_scenario returned, never silently to []"""
    scenario = {"name": "h", "workspace": {"a.txt": "a\n"}, "prompt": "go",
                "steps": [{"tool_calls": [{"name": "read", "arguments": {"file_path": "nope"}}]}, {"text": "DONE"}]}  # fmt: skip
    events = client.scenario(str(root), scenario)[1:]
    messages = client.derive(events)
    judge.equal("the roles of derive_messages over a run's own events", [m.get("role") for m in messages],
                ["user", "assistant", "tool", "assistant"], rule="history.input")  # fmt: skip


NOT_EVENTS: list[tuple[str, list[Json]]] = [
    ("an object with no type", [{"foo": 1}]),
    ("a string", ["x"]),
    ("an object of a type no event has", [{"type": "no/such-event", "data": {"turn": 1}}]),
    ("a user message, then an object with no type", [USER, {"foo": 1}]),
]
"""Lists holding something that is not an event, each with what it holds in words."""


@case("DRV-006", rules=["history.input"])
def test_what_is_not_an_event_is_refused(client: Client, judge: Judge) -> None:
    """refuse what is not an event (an untyped object, a string, an unknown type), never fold it"""
    # A refusal is the call failing in the harness, whatever the language's error: over the
    # protocol an answer {"error": …}. A harness that dies, or whose process ends, hangs or
    # breaks the protocol on the call (it is stopped), refused nothing, and is not caught.
    for what, events in NOT_EVENTS:
        try:
            derived = client.derive(cast(list[JsonObject], events))
        except HarnessDead:
            raise
        except HarnessCallError as exc:
            if exc.stopped:
                raise
            judge.true(True, "", rule="history.input")
            continue
        judge.true(False, f"derive_messages of {show(events)} ({what}) answered {show(derived)} "
                   "instead of refusing it with an error", rule="history.input")  # fmt: skip
