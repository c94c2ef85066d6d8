"""The stdio protocol (SPEC §6.3): its JSON Schema, ``conformance.serve``, and the transport's
handling of children that break the protocol in every way."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
from jsonschema import Draft202012Validator

from conformance import display, speed
from conformance.harness import strays
from conformance.harness.batch import MAX_BATCH
from conformance.harness.schema import problem, protocol_schema
from conformance.harness.stdio import Stdio, Trace, _Child, _Pending
from conformance.harness.transport import HarnessCallError, HarnessDead, Transport
from conformance.rules import cite
from conformance.speed import poll_awake
from tests.suite import REPO, process_ends

ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def test_the_schema_is_valid_draft_2020_12() -> None:
    Draft202012Validator.check_schema(protocol_schema())


@pytest.fixture
def served(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """``python -m conformance.serve --harness reference`` with pipes."""
    child = subprocess.Popen(
        [sys.executable, "-m", "conformance.serve", "--harness", "tests.fixtures.hostile:prints"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=tmp_path, env=ENV,
    )  # fmt: skip
    yield child
    child.kill()
    child.wait()


def _exchange(child: subprocess.Popen[str], *requests: object) -> list[dict[str, object]]:
    assert child.stdin is not None
    assert child.stdout is not None
    for request in requests:
        child.stdin.write((request if isinstance(request, str) else json.dumps(request)) + "\n")
    child.stdin.flush()
    return [json.loads(child.stdout.readline()) for _ in requests]


def test_serve_answers_in_the_schema_and_keeps_prints_off_stdout(
    served: subprocess.Popen[str], tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    describe, opened = _exchange(
        served,
        {"id": 1, "method": "describe", "params": {}},
        {"id": 2, "method": "open_workspace", "params": {"root": str(root), "options": {}}},
    )
    assert problem("#/$defs/answer", describe) is None
    assert problem("#/$defs/results/describe", describe["result"]) is None
    assert describe["result"]["protocol"] == 1  # type: ignore[index]
    session = opened["result"]
    (read,) = _exchange(served, {"id": 3, "method": "call_tool",
                                 "params": {"session": session, "name": "read", "arguments": {"file_path": "a.txt"}}})  # fmt: skip
    assert read["id"] == 3
    assert problem("#/$defs/results/call_tool", read["result"]) is None
    assert "1: one" in read["result"]["content"][0]["text"]  # type: ignore[index]


def test_serve_answers_bad_requests_with_errors(served: subprocess.Popen[str]) -> None:
    not_json, unknown, missing = _exchange(
        served,
        "{nope",
        {"id": 5, "method": "teleport", "params": {}},
        {"id": 6, "method": "open_workspace", "params": {}},
    )
    assert not_json["id"] is None
    assert str(not_json["error"]["message"]).startswith("not JSON")  # type: ignore[index]
    assert unknown == {"id": 5, "error": {"message": "unknown method 'teleport'", "unknown": True}}
    assert missing == {"id": 6, "error": {"message": "KeyError: 'root'"}}


def test_serve_answers_concurrent_requests_each_by_its_id(
    served: subprocess.Popen[str], tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (opened,) = _exchange(
        served, {"id": 1, "method": "open_workspace", "params": {"root": str(root), "options": {}}}
    )
    requests = [{"id": 10 + i, "method": "call_tool", "params": {
        "session": opened["result"], "name": "write", "arguments": {"file_path": f"f{i}.txt", "content": str(i)}}}
        for i in range(8)]  # fmt: skip
    answers = _exchange(served, *requests)
    assert sorted(a["id"] for a in answers) == list(range(10, 18))  # type: ignore[type-var]
    assert all(a["result"]["isError"] is False for a in answers)  # type: ignore[index]


def test_serve_reports_an_interruption_as_propagated(
    served: subprocess.Popen[str], tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (opened,) = _exchange(served, {"id": 1, "method": "open_workspace",
                                   "params": {"root": str(root), "options": {"probe": True}}})  # fmt: skip
    (answer,) = _exchange(served, {"id": 2, "method": "call_tool", "params": {
        "session": opened["result"], "name": "probe_interrupt", "arguments": {"message": "stop"}}})  # fmt: skip
    assert answer == {"id": 2, "error": {"message": "stop", "propagated": "KeyboardInterrupt"}}


# -- the transport against children that break the protocol -----------------------------------


def _child(program: str, **options: object) -> Stdio:
    return Stdio([sys.executable, "-c", program], label="test child", env=ENV, **options)  # type: ignore[arg-type]


ANSWER_WITH = """
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    sys.stdout.write({answer!r}.replace("ID", str(request["id"])) + "\\n")
    sys.stdout.flush()
"""


@pytest.mark.parametrize(
    ("answer", "failure"),
    [
        ('{"result": 1}', "the harness sent an answer without an id"),
        ('{"id": 999999, "result": 1}', "the harness sent an answer with an unknown id 999999"),
        ('{"id": ID}', 'the harness sent an answer with neither "result" nor "error"'),
        ("not json at all", 'the harness answered with a line that is not JSON: "not json at all"'),
    ],
)
def test_an_answer_outside_the_protocol_fails_the_call(answer: str, failure: str) -> None:
    transport = _child(ANSWER_WITH.format(answer=answer), timeout_s=10)
    try:
        with pytest.raises(HarnessCallError) as info:
            transport.call("describe", {})
        assert str(info.value).startswith(f"describe failed: {failure}")
    finally:
        transport.close()


ANSWERS_TWICE = """
import json, sys
first = None
for line in sys.stdin:
    request = json.loads(line)
    answer = json.dumps({{"id": request["id"], "result": request["method"]}}) + "\\n"
    if request["method"] == "first":
        first = answer
        sys.stdout.write(answer if {late} else answer * 2)
    elif request["method"] == "second" and {late}:
        sys.stdout.write(first + answer)  # the first answer again, once the next request came
    else:
        sys.stdout.write(answer)
    sys.stdout.flush()
"""


@pytest.mark.parametrize("late", [False, True], ids=["in-one-write", "with-the-next-answer"])
def test_a_second_answer_to_one_request_fails_the_next_call_in_the_same_words(
    late: bool,
) -> None:
    # Read with the first (one write) it was taken without a word, and the call judged by
    # whichever came last; read later it failed the next call: the same harness got two
    # verdicts, as the reader happened to wake. Now it fails the next call either way.
    transport = _child(ANSWERS_TWICE.format(late=late), timeout_s=10)
    try:
        assert transport.call("first", {}) == "first"
        with pytest.raises(HarnessCallError) as info:
            transport.call("second", {})
        assert str(info.value) == (
            'second failed: the harness sent a second answer to request 2: "{\\"id\\": 2, '
            f'\\"result\\": \\"first\\"}}"; {cite("proto.ids")}'
        )
        assert (info.value.rule, info.value.stopped) == ("proto.ids", True)
        assert transport.call("third", {}) == "third"  # a fresh process
    finally:
        transport.close()


def test_a_break_between_calls_is_told_to_the_next_call() -> None:
    # A line that is not JSON, written while no call waits: the child was replaced without a
    # word, and a call that carries no session met the fresh one as if nothing had happened.
    program = (
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    request = json.loads(line)\n"
        "    sys.stdout.write(json.dumps({'id': request['id'], 'result': 0}) + '\\n')\n"
        "    if request['method'] == 'first': sys.stdout.write('debug: ready\\n')\n"
        "    sys.stdout.flush()\n"
    )
    transport = _child(program, timeout_s=10)
    try:
        assert transport.call("first", {}) == 0
        with pytest.raises(HarnessCallError) as info:
            transport.call("second", {})
        assert str(info.value).startswith(
            'second failed: the harness answered with a line that is not JSON: "debug: ready"; '
            f"{cite('proto.ids')}"
        )
        assert info.value.rule == "proto.ids"
        assert transport.call("third", {}) == 0
    finally:
        transport.close()


def test_a_line_that_is_no_utf_8_is_shown_as_its_bytes() -> None:
    # not lost to U+FFFD: the verdict shows what the harness sent, as any value is shown
    program = "import sys; sys.stdin.readline(); sys.stdout.buffer.write(b'\\xff garbage\\n'); sys.stdout.flush(); sys.stdin.read()"
    transport = _child(program, timeout_s=10)
    try:
        with pytest.raises(HarnessCallError) as info:
            transport.call("describe", {})
        assert str(info.value).startswith(
            "describe failed: the harness answered with a line that is not JSON: "
            "<bytes ff2067617262616765>"
        )
    finally:
        transport.close()


def test_a_child_that_exits_names_its_status_and_stderr() -> None:
    transport = _child(
        "import sys; sys.stderr.write('boom: config missing\\n'); sys.exit(3)", timeout_s=10
    )
    with pytest.raises(HarnessCallError) as info:
        transport.call("describe", {})
    message = str(info.value)
    assert message.startswith(
        "describe failed: the harness exited with status 3; the last lines of its stderr:"
    )
    assert "boom: config missing" in message


def test_an_oversized_answer_fails_without_being_kept() -> None:
    program = "import sys; sys.stdin.readline(); sys.stdout.write('x' * 5_000_000 + '\\n'); sys.stdout.flush()"
    transport = _child(program, timeout_s=10, max_answer_bytes=1000)
    with pytest.raises(HarnessCallError, match="sent an answer of more than 1,000 bytes"):
        transport.call("describe", {})
    transport.close()


ANSWERS_THEN_EXITS = """
import json, sys
request = json.loads(sys.stdin.readline())
sys.stdout.write(json.dumps({"id": request["id"], "result": {"pid": __import__("os").getpid()}}) + "\\n")
"""


def test_a_child_that_exits_between_calls_is_replaced_before_the_next() -> None:
    # Nobody reads the child's stdout while no call waits: its end is still noticed first.
    transport = _child(ANSWERS_THEN_EXITS, timeout_s=10)
    try:
        first = transport.call("describe", {})
        while transport.generation == 0:
            pass  # until its end is noticed, with no call waiting
        second = transport.call("describe", {})
        assert first != second  # answered by a fresh process, not failed on the dead one
    finally:
        transport.close()


def test_an_answer_read_before_the_child_ended_is_kept() -> None:
    # The thread that watched the child exit read its last answer, then its end: the call that
    # answer was for gets it, not "the harness exited" (which answer came first was timing).
    transport = _child(ANSWER_WITH.format(answer='{"id": ID, "result": {}}'), timeout_s=10)
    try:
        transport.call("describe", {})
        child = transport._child
        assert child is not None
        answered = _Pending("describe", done=True, answer={"id": 99, "result": {}})
        waiting = _Pending("describe")
        transport._pending.update({99: answered, 100: waiting})
        transport._retire(child, "exited with status 0")
        assert (answered.failure, answered.answer) == (None, {"id": 99, "result": {}})
        assert waiting.failure == "exited with status 0"
    finally:
        transport.close()


ANSWERS_WITH_PID = """
import json, os, sys
for line in sys.stdin:
    request = json.loads(line)
    sys.stdout.write(json.dumps({"id": request["id"], "result": {"pid": os.getpid()}}) + "\\n")
    sys.stdout.flush()
"""


def test_an_ended_harness_still_answers_but_starts_no_process() -> None:
    transport = _child(ANSWERS_WITH_PID, timeout_s=10)
    twin = _child(ANSWERS_WITH_PID, timeout_s=10)
    twin.ended = transport.ended  # as a run's second instance shares it
    try:
        first = transport.call("describe", {})
        transport.ended.why = "the run was interrupted"
        assert transport.call("describe", {}) == first  # the running child still answers
        transport.close()
        twin.start()  # starts nothing
        for ended in (transport, twin):
            with pytest.raises(HarnessDead) as info:
                ended.call("describe", {})
            assert str(info.value) == "describe not made: the run was interrupted"
    finally:
        transport.close()
        twin.close()


STOPS_READING = """
import json, os, sys, time
request = json.loads(sys.stdin.readline())
os.close(0)  # before answering: the next request finds nobody reading
sys.stdout.write(json.dumps({"id": request["id"], "result": {}}) + "\\n")
sys.stdout.flush()
time.sleep(3600)
"""


def test_a_child_that_stops_reading_its_stdin_fails_the_call_at_once() -> None:
    transport = _child(STOPS_READING, timeout_s=3600)
    try:
        transport.call("describe", {})
        with pytest.raises(HarnessCallError) as info:
            transport.call("describe", {})
        assert str(info.value).startswith("describe failed: the harness stopped reading its stdin")
    finally:
        transport.close()


GREETS_THEN_HANGS = """
import json, sys, time
for line in sys.stdin:
    request = json.loads(line)
    if request["method"] != "describe":
        time.sleep(3600)
    sys.stdout.write(json.dumps({"id": request["id"], "result": {}}) + "\\n")
    sys.stdout.flush()
"""


def test_three_timeouts_in_a_row_declare_the_harness_dead() -> None:
    # Each restarted child answers the handshake, then hangs on its first tool call.
    transport = _child(GREETS_THEN_HANGS, timeout_s=0.2, handshake_timeout_s=10)
    for _ in range(2):
        with pytest.raises(HarnessCallError, match=r"did not answer within 0\.2 s"):
            transport.call("call_tool", {"name": "read"})
    with pytest.raises(HarnessDead, match="the harness is dead: 3 calls in a row timed out"):
        transport.call("call_tool", {"name": "read"})
    generation = transport.generation
    with pytest.raises(HarnessDead, match="not made: the harness is dead"):
        transport.call("describe", {})
    assert transport.generation == generation  # failed at once: no child started, none waited on
    transport.close()


def test_a_fresh_child_serves_after_one_died() -> None:
    transport = Stdio([sys.executable, "-m", "conformance.serve", "--harness", "tests.fixtures.hostile:exits_zero"],
                      label="exits", env=ENV, timeout_s=30)  # fmt: skip
    try:
        transport.call("describe", {})
        first = transport.generation
        transport.close()  # its sessions are gone at once, before a fresh child starts
        assert transport.generation == first + 1
        transport.call("describe", {})
        assert transport.generation == first + 1
    finally:
        transport.close()


def test_a_paused_mutation_lets_the_suite_act_then_resumes(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    transport = Stdio([sys.executable, "-m", "conformance.serve", "--harness", "reference"],
                      label="reference", env=ENV, timeout_s=30)  # fmt: skip
    seen: list[tuple[str, str, bool]] = []
    transport.add_pause_handler(
        lambda session, point: seen.append((session, point, (root / "new.txt").exists()))
    )
    try:
        session = transport.call("open_workspace", {"root": str(root), "options": {}})
        transport.call("arm_pause", {"session": session, "point": "staged"})
        result = transport.call("call_tool", {"session": session, "name": "write",
                                              "arguments": {"file_path": "new.txt", "content": "x"}})  # fmt: skip
    finally:
        transport.close()
    assert seen == [(session, "staged", False)]
    assert result["isError"] is False
    assert (root / "new.txt").read_text() == "x"


def test_serve_resumes_a_paused_call_when_its_input_ends(tmp_path: Path) -> None:
    # SPEC §6.4: "A harness whose input ends while a call is paused resumes it"; it used to wait
    # for a resume that could no longer come, and so never exited.
    root = tmp_path / "ws"
    root.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-m", "conformance.serve", "--harness", "reference"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        cwd=tmp_path, env=ENV,
    )  # fmt: skip
    try:
        assert child.stdin is not None
        assert child.stdout is not None
        (opened,) = _exchange(
            child,
            {"id": 1, "method": "open_workspace", "params": {"root": str(root), "options": {}}},
        )
        session = opened["result"]
        (armed,) = _exchange(child, {"id": 2, "method": "arm_pause",
                                     "params": {"session": session, "point": "staged"}})  # fmt: skip
        assert armed == {"id": 2, "result": None}
        (paused,) = _exchange(child, {"id": 3, "method": "call_tool", "params": {
            "session": session, "name": "write", "arguments": {"file_path": "new.txt", "content": "x"}}})  # fmt: skip
        assert paused == {"method": "paused", "params": {"session": session, "point": "staged"}}
        child.stdin.close()
        assert child.wait(timeout=20) == 0
        written = json.loads(child.stdout.readline())
    finally:
        child.kill()
        child.wait()
    assert written["id"] == 3
    assert written["result"]["isError"] is False
    assert (root / "new.txt").read_text() == "x"


def test_a_mutation_that_must_wait_for_another_says_so(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    transport = Stdio([sys.executable, "-m", "conformance.serve", "--harness", "reference"],
                      label="reference", env=ENV, timeout_s=30)  # fmt: skip
    seen: list[tuple[str, str]] = []
    waiting = threading.Event()
    answers: list[Any] = []

    def second_write() -> None:
        answers.append(transport.call("call_tool", {"session": second, "name": "write",
                                                    "arguments": {"file_path": "b.txt", "content": "b"}}))  # fmt: skip

    worker = threading.Thread(target=second_write)

    def on_pause(session: str, point: str) -> None:
        seen.append((session, point))
        if point == "checked":  # the first holds the directory: the second must wait for it
            worker.start()
            assert waiting.wait(30), "the second mutation never said it waits"
        elif point == "waiting":
            waiting.set()

    transport.add_pause_handler(on_pause)
    try:
        first = transport.call("open_workspace", {"root": str(root), "options": {}})
        second = transport.call("open_workspace", {"root": str(root), "options": {}})
        transport.call("arm_pause", {"session": first, "point": "checked"})
        transport.call("arm_pause", {"session": second, "point": "waiting"})
        result = transport.call("call_tool", {"session": first, "name": "write",
                                              "arguments": {"file_path": "a.txt", "content": "a"}})  # fmt: skip
        worker.join()
    finally:
        transport.close()
    assert seen == [(first, "checked"), (second, "waiting")]
    assert result["isError"] is False
    assert [answer["isError"] for answer in answers] == [False]
    assert (root / "a.txt").read_text() == "a"
    assert (root / "b.txt").read_text() == "b"


def test_lone_surrogates_cross_the_protocol_as_escapes(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    transport = Stdio([sys.executable, "-m", "conformance.serve", "--harness", "reference"],
                      label="reference", env=ENV, timeout_s=30)  # fmt: skip
    try:
        session = transport.call("open_workspace", {"root": str(root), "options": {}})
        result = transport.call("call_tool", {"session": session, "name": "write",
                                              "arguments": {"file_path": "a.txt", "content": "x\ud800"}})  # fmt: skip
    finally:
        transport.close()
    assert result["content"][0]["text"] == f'Error: cannot write "{root}/a.txt": invalid UTF-8 text'


def test_requests_from_many_threads_share_one_child() -> None:
    transport = Stdio([sys.executable, "-m", "conformance.serve", "--harness", "reference"],
                      label="reference", env=ENV, timeout_s=30)  # fmt: skip
    answers: list[object] = []
    try:
        threads = [
            threading.Thread(target=lambda: answers.append(transport.call("describe", {})))
            for _ in range(16)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        transport.close()
    assert len(answers) == 16
    assert transport.generation == 1


# -- batches (SPEC {proto.batch}) --------------------------------------------------------------

CHAIN_AND_A_BAD_REF: list[tuple[str, dict[str, Any]]] = [
    ("make_error", {"spec": {"kind": "Exception", "message": "root"}}),
    ("make_error", {"spec": {"kind": "HarnessError", "message": "outer", "code": "C", "cause": {"answer": 0}}}),
    ("make_error", {"spec": {"kind": "HarnessError", "message": "kept", "code": "C", "cause": {"value": {"answer": 0}}}}),
    ("error_chain", {"ref": {"answer": 1}}),
    ("error_chain", {"ref": {"answer": 2}}),
    ("error_chain", {"ref": {"answer": 3}}),  # a string, not a handle
    ("make_error", {"spec": {"kind": "Exception", "message": "never made"}}),
]  # fmt: skip


def test_a_batch_gets_what_its_requests_get_one_at_a_time() -> None:
    transport = Stdio([sys.executable, "-m", "conformance.serve", "--harness", "reference"],
                      label="reference", env=ENV, timeout_s=30)  # fmt: skip
    try:
        assert transport.call("describe", {})["batch"] is True
        assert transport.batches
        batched = transport.call_batch(CHAIN_AND_A_BAD_REF)
        alone = Transport.call_batch(transport, CHAIN_AND_A_BAD_REF)  # the one-at-a-time way
    finally:
        transport.close()
    for outcomes in (batched, alone):
        assert [type(o).__name__ for o in outcomes] == ["dict"] * 3 + ["str"] * 2 + [
            "HarnessCallError"
        ]
        assert outcomes[3:5] == ["outer: root", 'kept: {"answer":0}']
    assert str(batched[-1]) == (
        "error_chain failed in the harness: error_chain: request 3 of the batch answered no handle"
    )
    assert str(alone[-1]) == "error_chain not made: request 3 of the batch answered no handle"


RECORDS_MAKE_ERROR = """
import json, sys
made = 0
for line in sys.stdin:
    request = json.loads(line)
    method, params = request["method"], request["params"]
    sys.stderr.write(method + " " + json.dumps(params) + "\\n")
    sys.stderr.flush()
    if method == "describe":
        result = {"name": "n", "version": "1", "language": "python", "protocol": 1,
                  "capabilities": ["tools", "taxonomy"]}
    elif method == "make_error":
        made += 1
        result = {"handle": "h%d" % made}
    else:
        result = json.dumps(params["ref"])
    sys.stdout.write(json.dumps({"id": request["id"], "result": result}) + "\\n")
    sys.stdout.flush()
"""


def test_a_harness_that_takes_no_batches_gets_each_request_alone_with_refs_resolved() -> None:
    transport = _child(RECORDS_MAKE_ERROR, timeout_s=10)
    try:
        transport.call("describe", {})
        outcomes = transport.call_batch(CHAIN_AND_A_BAD_REF[:4])
        log = transport.log_lines() or []
    finally:
        transport.close()
    assert not transport.batches
    assert outcomes == [{"handle": "h1"}, {"handle": "h2"}, {"handle": "h3"}, '{"handle": "h2"}']
    sent = [line for line in log if not line.startswith("describe")]
    assert sent == [
        'make_error {"spec": {"kind": "Exception", "message": "root"}}',
        'make_error {"spec": {"kind": "HarnessError", "message": "outer", "code": "C", "cause": {"handle": "h1"}}}',
        'make_error {"spec": {"kind": "HarnessError", "message": "kept", "code": "C", "cause": {"value": {"answer": 0}}}}',
        'error_chain {"ref": {"handle": "h2"}}',
    ]  # fmt: skip


BATCH_ANSWERED_WITH = """
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if request["method"] == "describe":
        result = {"name": "n", "version": "1", "language": "python", "protocol": 1,
                  "capabilities": ["tools", "taxonomy"], "batch": True}
    else:
        result = json.loads(ANSWER)
    sys.stdout.write(json.dumps({"id": request["id"], "result": result}) + "\\n")
    sys.stdout.flush()
"""


@pytest.mark.parametrize(
    ("answer", "failure"),
    [
        ('{"answers": []}', "batch of 4 requests: the answer is not {answers: [one per request run]}"),
        ('[1, 2]', "batch of 4 requests: the answer is not {answers: [one per request run]}"),
        ('{"answers": [{"result": {"handle": "h1"}}]}',
         "batch of 4 requests: 1 answered, and none of them failed (a batch stops only after a "
         "request that fails)"),
        ('{"answers": [{"handle": "h1"}]}',  # a handle in a sentence is named (display.py)
         'make_error in a batch: its answer is neither {result} nor {error}: '
         '{"handle": "<handle 1>"}'),
        ('{"answers": [{"result": {"handle": "h1"}}, {"error": {"message": "no"}}, '
         '{"result": {"handle": "h3"}}]}',
         "make_error in a batch failed, and the batch answered 1 more request after it (a batch "
         "stops after the first request that fails: its answer is the last); it said: "
         "make_error failed in the harness: no"),
    ],
)  # fmt: skip
def test_a_batch_answered_outside_the_protocol_fails_naming_the_batch(
    answer: str, failure: str
) -> None:
    display.PLACES.forget_case()  # handles are numbered per case, from 1
    transport = _child(f"ANSWER = {answer!r}\n" + BATCH_ANSWERED_WITH, timeout_s=10)
    try:
        transport.call("describe", {})
        outcomes = transport.call_batch(CHAIN_AND_A_BAD_REF[:4])
    finally:
        transport.close()
    # The failure ends the outcomes in its place: what was answered before it is kept, as one
    # request at a time would have had it.
    failed = outcomes[-1]
    assert isinstance(failed, HarnessCallError)
    assert str(failed).startswith(failure)
    assert not any(isinstance(o, HarnessCallError) for o in outcomes[:-1])


def test_serve_runs_a_batch_until_a_request_fails(served: subprocess.Popen[str]) -> None:
    make = [{"method": "make_error", "params": {"spec": {"kind": "Exception", "message": "a"}}}]
    answers = _exchange(
        served,
        {"id": 1, "method": "batch", "params": {"requests": [
            *make, {"method": "call_tool", "params": {}}, *make]}},
        {"id": 2, "method": "batch", "params": {"requests": [
            *make, {"method": "error_chain", "params": {"ref": {"answer": 5}}}, *make]}},
        {"id": 3, "method": "batch", "params": {"requests": [*make, {"method": "make_error", "params": [1]}]}},
        {"id": 4, "method": "batch", "params": {"requests": "all"}},
        {"id": 5, "method": "batch", "params": {"requests": [None]}},
    )  # fmt: skip
    for answer in answers:
        assert problem("#/$defs/answer", answer) is None
    errors = [a["result"]["answers"][-1]["error"]["message"] for a in answers[:3]]  # type: ignore[index]
    assert errors == [
        'batch: "call_tool" cannot be batched (only make_error, error_chain)',
        "error_chain: request 5 of the batch answered no handle",
        "make_error: params must be an object",
    ]
    assert [len(a["result"]["answers"]) for a in answers[:3]] == [2, 2, 2]  # type: ignore[index]
    assert answers[3] == {"id": 4, "error": {"message": "batch: params.requests must be a list"}}
    assert answers[4]["result"] == {
        "answers": [
            {"error": {"message": "batch: null cannot be batched (only make_error, error_chain)"}}
        ]
    }


def test_a_long_batch_is_sent_in_parts_each_within_the_timeout(tmp_path: Path) -> None:
    trace_path = tmp_path / "t.jsonl"
    trace = Trace(str(trace_path), {})
    transport = Stdio([sys.executable, "-m", "conformance.serve", "--harness", "reference"],
                      label="reference", env=ENV, timeout_s=30, trace=trace)  # fmt: skip
    links = 2 * MAX_BATCH + 10
    requests: list[tuple[str, dict[str, Any]]] = [
        ("make_error", {"spec": {"kind": "Exception", "message": "e0"}})
    ]
    requests += [
        ("make_error", {"spec": {"kind": "HarnessError", "message": f"e{i}", "code": "C",
                                 "cause": {"answer": i - 1}}})
        for i in range(1, links)
    ]  # fmt: skip
    requests.append(("error_chain", {"ref": {"answer": links - 1}}))
    try:
        transport.call("describe", {})
        outcomes = transport.call_batch(requests)
    finally:
        transport.close()
        trace.close()
    assert outcomes[-1] == ": ".join(f"e{i}" for i in reversed(range(links)))
    sent = trace_path.read_text(encoding="utf-8").count('"method\\": \\"batch\\"')
    assert sent == 3


def test_a_served_harness_that_says_batch_false_is_sent_each_request_alone() -> None:
    transport = Stdio([sys.executable, "-m", "conformance.serve", "--harness", "tests.fixtures.grain:NoBatches"],
                      label="no batches", env=ENV, timeout_s=30)  # fmt: skip
    try:
        assert transport.call("describe", {})["batch"] is False
        assert not transport.batches
    finally:
        transport.close()


def test_a_split_run_waits_asleep_and_so_do_the_children_it_starts() -> None:
    """``wait_asleep`` (conformance.parallel): no looking awake here or in a child started after;
    ``wait_as_before`` gives both back."""
    assert os.environ.get(speed.ASLEEP_VARIABLE) is None
    child = [sys.executable, "-c", "from conformance import speed; print(speed._awake)"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    awake = subprocess.run(child, env=env, capture_output=True, text=True, check=True).stdout
    speed.wait_asleep()
    try:
        assert speed._awake is False
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        asleep = subprocess.run(child, env=env, capture_output=True, text=True, check=True).stdout
        assert (awake.strip(), asleep.strip()) == (str(speed.usable_cpus() > 1), "False")
    finally:
        speed.wait_as_before()
    assert os.environ.get(speed.ASLEEP_VARIABLE) is None
    assert speed._awake is (speed.usable_cpus() > 1)


def test_poll_awake_finds_what_is_ready_and_otherwise_gives_up_without_sleeping() -> None:
    """The transport's and serve's way of waiting (conformance.speed): it never blocks, so a
    caller that finds nothing sleeps in its own poll, with its own timeout."""
    read, write = os.pipe()
    try:
        poller = select.poll()
        poller.register(read, select.POLLIN)
        assert poll_awake(poller) == []
        os.write(write, b"x")
        assert poll_awake(poller) == [(read, select.POLLIN)]
    finally:
        os.close(read)
        os.close(write)


def test_a_ref_to_an_earlier_batchs_rejected_answer_fails_in_its_place() -> None:
    """Requests before it in its part are still made, and it fails as it would alone."""
    fine = ("make_error", {"spec": {"kind": "Exception", "message": "fine"}})
    rejected = (
        "make_error",
        {"spec": {"kind": "Exception", "message": "m", "cause": {"value": 1}}},
    )
    late = ("make_error", {"spec": {"kind": "HarnessError", "message": "late", "code": "C",
                                    "cause": {"answer": MAX_BATCH - 1}}})  # fmt: skip
    requests: list[tuple[str, dict[str, Any]]] = [
        *[fine] * (MAX_BATCH - 1),
        rejected,
        *[fine] * 10,
        late,
        fine,
    ]
    transport = Stdio([sys.executable, "-m", "conformance.serve", "--harness", "reference"],
                      label="reference", env=ENV, timeout_s=30)  # fmt: skip
    try:
        transport.call("describe", {})
        batched = transport.call_batch(requests)
        alone = Transport.call_batch(transport, requests)
    finally:
        transport.close()
    for outcomes in (batched, alone):
        assert len(outcomes) == MAX_BATCH + 11
        assert "rejected" in outcomes[MAX_BATCH - 1]
        assert all("handle" in o for o in outcomes[MAX_BATCH : MAX_BATCH + 10])
        assert str(outcomes[-1]) == (
            f"make_error not made: request {MAX_BATCH - 1} of the batch answered no handle"
        )


LEAVES_A_GRANDCHILD = """
import subprocess, sys
sys.stdin.readline()
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
sys.stderr.write(f"grandchild {grandchild.pid}\\n")
sys.exit(5)
"""


def _grandchild_of(failure: HarnessCallError) -> int:
    """The pid a ``LEAVES_A_GRANDCHILD`` child wrote to its stderr (the verdict shows it)."""
    return int(str(failure).rsplit("grandchild ", 1)[1].split()[0])


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs pidfd_open (Linux)")
@pytest.mark.parametrize(
    "its_stdout",
    [
        # The child is gone before the suite stops it: its process group still is not.
        "subprocess.DEVNULL",
        # Its stdout never ends while the grandchild lives: the call fails at once, in the words
        # of the exit, not after the timeout (as a timeout, counted towards a dead harness).
        "sys.stdout",
    ],
    ids=["apart", "holding-its-stdout"],
)
def test_a_child_that_exits_on_its_own_is_named_by_its_exit_and_what_it_started_stops(
    its_stdout: str,
) -> None:
    program = LEAVES_A_GRANDCHILD.replace("stdout=subprocess.DEVNULL", f"stdout={its_stdout}")
    transport = _child(program, timeout_s=60)
    try:
        with pytest.raises(HarnessCallError) as info:
            transport.call("describe", {})
        assert str(info.value).startswith("describe failed: the harness exited with status 5")
        assert process_ends(_grandchild_of(info.value))
    finally:
        transport.close()


DETACHES_A_TREE = """
import json, subprocess, sys
sleep = "import time; time.sleep(3600)"
nest = ("import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', %r], "
        "start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL); "
        "print(p.pid, flush=True); import time; time.sleep(3600)") % sleep
request = json.loads(sys.stdin.readline())
grandchild = subprocess.Popen([sys.executable, "-c", nest], start_new_session=True,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
below = int(grandchild.stdout.readline())
print(json.dumps({"id": request["id"], "result": {"pids": [grandchild.pid, below]}}), flush=True)
sys.stdin.readline()
"""


@pytest.mark.skipif(not strays.supported(), reason="finds what a child started via /proc (Linux)")
def test_what_a_child_started_in_sessions_of_their_own_stops_with_it() -> None:
    # Outside the child's process group, which is all that killing the group reaches: the MCP
    # SDK starts its servers so, and one stuck in a call outlived the run.
    transport = _child(DETACHES_A_TREE, timeout_s=60)
    try:
        answer = transport.call("describe", {})
    finally:
        transport.close()
    pids = answer["pids"]
    assert isinstance(pids, list)
    assert [process_ends(int(pid)) for pid in pids] == [True, True]


@pytest.mark.skipif(not strays.supported(), reason="finds what a child started via /proc (Linux)")
def test_the_childs_group_is_killed_before_what_it_started_outside_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A bridge that saw its server die before it was killed itself started it again, and what
    # it started after the look was never found.
    transport = _child(DETACHES_A_TREE, timeout_s=60)
    order: list[str] = []
    pids: list[int] = []
    try:
        pids.extend(int(pid) for pid in transport.call("describe", {})["pids"])
        child = transport._child
        assert child is not None
        kill_group, send = child._kill_group, signal.pidfd_send_signal

        def group() -> None:
            order.append("group")
            kill_group()

        def one(handle: int, signum: int) -> None:
            order.append(f"one with {signum}")
            send(handle, signum)

        monkeypatch.setattr(child, "_kill_group", group)
        monkeypatch.setattr(signal, "pidfd_send_signal", one)
        child.stop()
    finally:
        monkeypatch.undo()
        transport.close()
    ended = [process_ends(pid) for pid in pids]  # (one the stop missed is killed)
    # Each detached process leads a group of its own: checked (0) before that is killed.
    assert order == ["group", *[f"one with {signum}" for signum in (0, signal.SIGKILL)] * 2]
    assert ended == [True, True]


RESTARTS_ITS_SERVER = """
import json, subprocess, sys
request = json.loads(sys.stdin.readline())
with open(sys.argv[1], "a") as started:
    for n in range(100):  # a bridge that starts its server again whenever it ends
        server = subprocess.Popen(["sleep", "3600"], start_new_session=True,
                                  stdin=subprocess.DEVNULL)
        started.write(f"{server.pid}\\n")
        started.flush()
        if n == 0:
            print(json.dumps({"id": request["id"], "result": {}}), flush=True)
        server.wait()
"""


@pytest.mark.skipif(not strays.supported(), reason="finds what a child started via /proc (Linux)")
def test_a_bridge_that_restarts_its_server_leaves_none_running(tmp_path: Path) -> None:
    # Every server it started is found and killed. (That none is restarted once the look is
    # over rests on the order above; this bridge rarely restarts fast enough to show it.)
    started = tmp_path / "started"
    command = [sys.executable, "-c", RESTARTS_ITS_SERVER, str(started)]
    transport = Stdio(command, label="test child", env=ENV, timeout_s=60)
    try:
        transport.call("describe", {})
    finally:
        transport.close()
    pids = [int(line) for line in started.read_text().split()]
    assert pids
    assert [process_ends(pid) for pid in pids] == [True] * len(pids)


ORPHANS_IN_ITS_GROUP = """
import json, subprocess, sys
leaf = "import subprocess; print(subprocess.Popen(['sleep', '3600']).pid, flush=True)"
server = ("import subprocess, sys, time; "
          "c = subprocess.Popen([sys.executable, '-c', %r], stdout=subprocess.PIPE); "
          "line = c.stdout.readline(); c.wait(); print(int(line), flush=True); "
          "time.sleep(3600)") % leaf
request = json.loads(sys.stdin.readline())
started = subprocess.Popen([sys.executable, "-c", server], start_new_session=True,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
orphan = int(started.stdout.readline())
print(json.dumps({"id": request["id"], "result": {"pids": [started.pid, orphan]}}), flush=True)
sys.stdin.readline()
"""


@pytest.mark.skipif(not strays.supported(), reason="finds what a child started via /proc (Linux)")
def test_what_a_detached_process_left_in_its_group_stops_with_it() -> None:
    # A process whose parent exited has no link to the child any more: a server that forks
    # while it is being killed leaves such orphans. Killing the group it leads reaches them.
    transport = _child(ORPHANS_IN_ITS_GROUP, timeout_s=60)
    try:
        pids = transport.call("describe", {})["pids"]
    finally:
        transport.close()
    assert isinstance(pids, list)
    assert [process_ends(int(pid)) for pid in pids] == [True, True]


def test_a_harness_stopped_by_a_thread_the_exit_cut_off_is_stopped_by_close(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A child that failed a call is stopped by a daemon thread: a run that ended right after
    # (a handshake that timed out) exited before that thread killed it, and it outlived the run.
    transport = _child("import time\ntime.sleep(3600)\n", timeout_s=0.5)
    monkeypatch.setattr(_Child, "stop", lambda self: None)  # cut off before it killed anything
    retired: list[_Child] = []
    try:
        with pytest.raises(HarnessCallError, match=r"did not answer within 0\.5 s"):
            transport.call("describe", {})
        retired.extend(transport._retired)
        assert len(retired) == 1
        transport.close()
        assert retired[0].process.returncode == -signal.SIGKILL
    finally:
        monkeypatch.undo()
        for child in retired:
            child.reap()
        transport.close()


SPARED: Final = {
    "looking": [0, 1],  # interrupted before anything outside the group was found
    "opening a pidfd": [1],  # the second found: not yet held, so not killed
    "killing the group": [],
}
"""Which of a ``DETACHES_A_TREE`` child's two detached descendants a stop cut short where it
was interrupted has not reached (by their place in its answer)."""


@pytest.mark.skipif(not strays.supported(), reason="finds what a child started via /proc (Linux)")
@pytest.mark.parametrize("where", list(SPARED))
def test_a_stop_cut_short_still_kills_the_child_and_what_it_reached(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Ctrl-C inside the stop: the child's group is killed on the way out, and every
    # descendant the stop had found and held.
    transport = _child(DETACHES_A_TREE, timeout_s=60)
    held: list[int] = []
    try:
        pids = transport.call("describe", {})["pids"]
        assert isinstance(pids, list)
        held.extend(os.pidfd_open(int(pid)) for pid in pids)
        child = transport._child
        assert child is not None
        opened, signalled = strays._handle, os.killpg
        calls: list[int] = []

        def interrupted_look(root: int) -> dict[int, int]:
            raise KeyboardInterrupt

        def interrupted_open(pid: int, start: int) -> tuple[int, int] | None:
            calls.append(pid)
            if len(calls) == 2:
                raise KeyboardInterrupt
            return opened(pid, start)

        def interrupted_signal(pgid: int, signum: int) -> None:
            signalled(pgid, signum)  # sent, and the interrupt comes right after
            if pgid == child.process.pid:
                raise KeyboardInterrupt

        if where == "looking":
            monkeypatch.setattr(strays, "descendants", interrupted_look)
        elif where == "opening a pidfd":
            monkeypatch.setattr(strays, "_handle", interrupted_open)
        else:
            monkeypatch.setattr(os, "killpg", interrupted_signal)
        with pytest.raises(KeyboardInterrupt):
            child.reap()
        monkeypatch.undo()
        assert child.process.wait(timeout=60) == -signal.SIGKILL
        for place in SPARED[where]:
            assert _state(int(pids[place])) not in ("", "T")  # running on, as before
            signal.pidfd_send_signal(held[place], signal.SIGKILL)  # (the test's clean-up)
        assert [process_ends(int(pid)) for pid in pids] == [True, True]
    finally:
        monkeypatch.undo()
        transport.close()
        for handle in held:
            os.close(handle)


KILLED_WHILE_STOPPING = """
import os, signal, sys
from conformance.harness import strays
from conformance.harness.stdio import Stdio

transport = Stdio([sys.executable, "-c", sys.argv[1]], label="test child", timeout_s=60)
pids = transport.call("describe", {})["pids"]
child = transport._child
print(child.process.pid, *pids, flush=True)

def killed_here(root):
    os.kill(os.getpid(), signal.SIGKILL)

strays.descendants = killed_here  # the suite is killed halfway through stopping its harness
child.stop()
"""


def _state(pid: int) -> str:
    """The one-letter state in ``/proc/PID/stat`` ("T": stopped), or "" once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return text[text.rfind(")") + 2 :].split()[0]


@pytest.mark.skipif(not strays.supported(), reason="finds what a child started via /proc (Linux)")
def test_a_suite_killed_while_stopping_its_harness_leaves_nothing_stopped() -> None:
    # A stop once began by stopping the child's group (SIGSTOP): a suite killed before the
    # SIGKILL that followed left the harness stopped for good, where one left running sees its
    # stdin end and exits.
    suite = subprocess.run([sys.executable, "-c", KILLED_WHILE_STOPPING, DETACHES_A_TREE],
                           check=False, capture_output=True, text=True, env=ENV,
                           timeout=120)  # fmt: skip
    child, *detached = (int(pid) for pid in suite.stdout.split())
    held: list[int] = []  # nobody is left to kill them but the test
    try:
        held.extend(os.pidfd_open(pid) for pid in detached)
        assert suite.returncode == -signal.SIGKILL, suite.stderr[-2000:]
        states = [_state(pid) for pid in (child, *detached)]
        ended = process_ends(child)  # its stdin ended with the suite (one stopped is killed)
        assert "T" not in states
        assert "" not in states[1:]
        assert ended
    finally:
        for handle in held:
            signal.pidfd_send_signal(handle, signal.SIGKILL)
            os.close(handle)
    assert [process_ends(pid) for pid in detached] == [True, True]


@pytest.mark.skipif(not strays.supported(), reason="finds what a child started via /proc (Linux)")
def test_a_pid_is_signalled_only_while_it_names_the_process_that_was_found() -> None:
    found = strays.descendants(os.getppid())
    assert os.getpid() in found  # this process, below its parent
    opened = strays._handle(os.getpid(), found[os.getpid()])
    assert opened is not None
    os.close(opened[0])
    assert opened[1] == os.getpgrp()
    # The same pid, started at another time: a freed pid given to another program.
    assert strays._handle(os.getpid(), found[os.getpid()] + 1) is None


@pytest.mark.skipif(not strays.supported(), reason="finds what a child started via /proc (Linux)")
def test_a_pidfd_opened_when_an_interrupt_lands_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    # The interrupt comes after the pidfd is open and before the stop holds it.
    def interrupted(pid: str) -> tuple[int, int, int] | None:
        raise KeyboardInterrupt

    def pidfds() -> int:  # only those: another thread may open and close files meanwhile
        count = 0
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):  # the listing's own descriptor, closed since
                count += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:[pidfd]"
        return count

    found = strays.descendants(os.getppid())
    before = pidfds()
    monkeypatch.setattr(strays, "_stat", interrupted)
    with pytest.raises(KeyboardInterrupt):
        strays._handle(os.getpid(), found[os.getpid()])
    assert pidfds() == before


IN_ANOTHER_PID_NAMESPACE = """
import subprocess, sys
from conformance.harness import strays
child = subprocess.Popen(["sleep", "60"], start_new_session=True)  # pid 2: the harness child
other = subprocess.Popen(["sleep", "60"], start_new_session=True)  # pid 3: started by the suite
strays.kill_tree(child.pid, lambda: None)
print(other.poll(), flush=True)
child.kill()
other.kill()
"""


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs pidfd_open (Linux)")
def test_no_process_is_signalled_where_proc_is_another_pid_namespaces() -> None:
    # In a pid namespace without a /proc of its own, /proc/2 is the outer namespace's (the
    # kernel's thread starter, say), and its "descendants" 3, 4, … were the suite's processes.
    try:
        made = subprocess.run(
            ["unshare", "-Urpf", "true"], check=False, capture_output=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        made = None
    if made is None or made.returncode != 0:
        pytest.skip("needs unshare and unprivileged user and pid namespaces")
    done = subprocess.run(["unshare", "-Urpf", sys.executable, "-c", IN_ANOTHER_PID_NAMESPACE],
                          check=False, capture_output=True, text=True, env=ENV,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["None"]  # still running: not the child's, never signalled


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs pidfd_open (Linux)")
def test_strays_are_looked_for_only_with_this_namespaces_proc_and_a_working_pidfd_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "self").symlink_to(str(os.getpid()))
    monkeypatch.setattr(strays, "_PROC", str(tmp_path))
    assert strays.supported()
    (tmp_path / "self").unlink()
    (tmp_path / "self").symlink_to(str(os.getpid() + 1))  # another namespace's number for it
    assert not strays.supported()
    (tmp_path / "self").unlink()
    (tmp_path / "self").symlink_to(str(os.getpid()))

    def refused(pid: int, flags: int = 0) -> int:
        raise OSError(38, "Function not implemented")  # a seccomp filter, an old kernel

    monkeypatch.setattr(os, "pidfd_open", refused)
    assert not strays.supported()
    looked = list[int]()

    def descendants(root: int) -> dict[int, int]:
        looked.append(root)
        return {}

    monkeypatch.setattr(strays, "descendants", descendants)
    group_killed: list[bool] = []
    strays.kill_tree(os.getppid(), lambda: group_killed.append(True))
    assert looked == []  # not even looked for
    assert group_killed == [True]  # the group, as everywhere else


def test_a_child_that_exited_before_its_request_is_named_by_its_exit() -> None:
    """Whether the suite first notices its stdin closed or its stdout ended is timing: the
    words are the exit's either way (a harness started early can be gone by its first call)."""
    transport = _child("import sys; sys.stderr.write('bye\\n'); sys.exit(1)", timeout_s=10)
    try:
        transport.start()
        child = transport._child  # the test waits for the exit it is about
        assert child is not None
        child.process.wait()
        with pytest.raises(HarnessCallError) as info:
            transport.call("describe", {})
    finally:
        transport.close()
    assert str(info.value) == (
        "describe failed: the harness exited with status 1; the last lines of its stderr:\n    bye"
    )
