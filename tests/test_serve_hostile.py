"""``conformance.serve`` against a harness that turns hostile inside a call (SPEC §6.3, §6.4).

Whatever a call raises or answers, its request is answered, by its id, and the server goes on
serving: a request left unanswered is a timeout the suite blames on the wrong thing, and a
server that dies takes the case's other calls with it. A harness that reads stdin reads
nothing (the protocol's input is private), and a pause fired where it is not expected can
still be resumed.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.suite import REPO

ENV = {**os.environ, "PYTHONPATH": str(REPO)}
PATIENCE_S = 20.0
"""How long a test waits for a line before it fails (a bound, never a synchronization)."""


class Served:
    """``python -m conformance.serve`` serving one harness, spoken to line by line."""

    def __init__(self, harness: str, cwd: Path) -> None:
        self.child = subprocess.Popen(
            [sys.executable, "-m", "conformance.serve", "--harness", harness],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=cwd, env=ENV, start_new_session=True,
        )  # fmt: skip
        self._pending = b""
        self.ids = iter(range(1, 1_000_000))

    def send(self, method: str, **params: Any) -> int:
        request_id = next(self.ids)
        assert self.child.stdin is not None
        self.child.stdin.write(
            json.dumps({"id": request_id, "method": method, "params": params}).encode() + b"\n"
        )
        self.child.stdin.flush()
        return request_id

    def line(self) -> dict[str, Any]:
        """The next line the server writes, as JSON."""
        assert self.child.stdout is not None
        fd = self.child.stdout.fileno()
        deadline = time.monotonic() + PATIENCE_S
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                pytest.fail(f"no line from conformance.serve within {PATIENCE_S} s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                pytest.fail(f"conformance.serve ended its output: {self.stderr()}")
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        answer: dict[str, Any] = json.loads(line)  # strict below: NaN is not JSON
        json.loads(line, parse_constant=_not_json)
        return answer

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        request_id = self.send(method, **params)
        answer = self.line()
        assert answer.get("id") == request_id, answer
        return answer

    def stderr(self) -> str:
        self.child.kill()
        self.child.wait()
        assert self.child.stderr is not None
        return self.child.stderr.read().decode(errors="replace")[-2000:]

    def close(self) -> None:
        self.child.kill()
        self.child.wait()
        for stream in (self.child.stdin, self.child.stdout, self.child.stderr):
            if stream is not None:
                stream.close()


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "f.txt").write_text("hello\n")
    return root


def _serve(harness: str, tmp_path: Path) -> Iterator[Served]:
    served = Served(f"tests.fixtures.serve_hostile:{harness}", tmp_path)
    try:
        assert "result" in served.call("describe")
        yield served
    finally:
        served.close()


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[Served]:
    yield from _serve("Hostile", tmp_path)


def _open(served: Served, root: Path) -> str:
    session = served.call("open_workspace", root=str(root), options={})["result"]
    assert isinstance(session, str)
    return session


def _read(served: Served, session: str) -> dict[str, Any]:
    answer = served.call(
        "call_tool", session=session, name="read", arguments={"file_path": "f.txt"}
    )
    assert answer["result"]["isError"] is False, answer
    return answer


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        ("x_unrenderable", "Unrenderable: <unprintable thrown value>"),
        ("x_unprintable_argument", "ValueError: <unprintable thrown value>"),
        ("x_interrupts_when_rendered", "InterruptsWhenRendered: <unprintable thrown value>"),
    ],
)
def test_an_exception_that_cannot_be_rendered_is_still_answered(
    hostile: Served, workspace: Path, tool: str, message: str
) -> None:
    # It used to leave the request unanswered (the suite then timed out the call), or, when
    # rendering it raised an interruption, to end the server.
    session = _open(hostile, workspace)
    answer = hostile.call("call_tool", session=session, name=tool, arguments={})
    assert answer["error"] == {"message": message}
    _read(hostile, session)


@pytest.mark.parametrize(
    ("tool", "propagated"),
    [
        ("x_unrenderable_interruption", "UnrenderableInterruption"),
        ("x_exit_unprintable", "SystemExit"),
    ],
)
def test_an_interruption_that_cannot_be_rendered_still_propagates(
    hostile: Served, workspace: Path, tool: str, propagated: str
) -> None:
    # SPEC {tool.base-exception}: it used to be answered as a RuntimeError of the server's.
    session = _open(hostile, workspace)
    answer = hostile.call("call_tool", session=session, name=tool, arguments={})
    assert answer["error"]["propagated"] == propagated
    assert answer["error"]["message"] == "<unprintable thrown value>"
    _read(hostile, session)


def _json_refuses(value: float) -> str:
    """What this Python's ``json`` says of ``value`` where only JSON is allowed."""
    try:
        json.dumps(value, allow_nan=False)
    except ValueError as exc:
        return str(exc)
    raise AssertionError(f"json wrote {value!r}")


@pytest.mark.parametrize(
    ("tool", "why"),
    [
        ("x_too_deep", "maximum recursion depth exceeded while encoding a JSON object"),
        ("x_exits_when_serialized", "7"),  # the SystemExit(7) raised while it was serialized
        ("x_not_a_number", _json_refuses(float("nan"))),  # 3.12 adds ": nan"
    ],
)
def test_a_result_that_cannot_be_written_as_json_is_answered_as_such(
    hostile: Served, workspace: Path, tool: str, why: str
) -> None:
    # Too deep: RecursionError left the request unanswered; an interruption while serializing
    # ended the server; NaN was written as NaN, which no JSON parser has to take.
    session = _open(hostile, workspace)
    answer = hostile.call("call_tool", session=session, name=tool, arguments={})
    assert answer["error"]["message"] == f"the harness answered a value that is not JSON: {why}"
    _read(hostile, session)


@pytest.mark.parametrize("tool", ["x_reads_stdin", "x_child_reads_stdin"])
def test_a_harness_that_reads_stdin_reads_nothing_of_the_protocol(
    hostile: Served, workspace: Path, tool: str
) -> None:
    # The harness (or a program it started) used to read the suite's requests: its call
    # waited for the next request and took it, which was then never answered.
    session = _open(hostile, workspace)
    answer = hostile.call("call_tool", session=session, name=tool, arguments={})
    assert answer["result"]["content"][0]["text"] == ""
    _read(hostile, session)


def test_a_pause_fired_in_a_lone_call_can_be_resumed(tmp_path: Path, workspace: Path) -> None:
    # A call with nothing else running is served on the thread that reads requests: a pause
    # fired there (a stray one, of another session) waited for a resume nobody could read.
    for served in _serve("StrayPause", tmp_path):
        armed, other = _open(served, workspace), _open(served, workspace)
        assert served.call("arm_pause", session=armed, point="checked")["result"] is None
        read = served.send(
            "call_tool", session=other, name="read", arguments={"file_path": "f.txt"}
        )
        assert served.line() == {
            "method": "paused",
            "params": {"session": armed, "point": "checked"},
        }
        assert served.call("resume", session=armed, point="checked") == {
            "id": read + 1,
            "result": None,
        }
        answer = served.line()
        assert answer["id"] == read
        assert answer["result"]["isError"] is False
        _read(served, other)


def test_a_pause_fired_in_a_lone_call_goes_on_when_the_input_ends(
    tmp_path: Path, workspace: Path
) -> None:
    # SPEC §6.4: "A harness whose input ends while a call is paused resumes it".
    for served in _serve("StrayPause", tmp_path):
        armed, other = _open(served, workspace), _open(served, workspace)
        served.call("arm_pause", session=armed, point="checked")
        read = served.send(
            "call_tool", session=other, name="read", arguments={"file_path": "f.txt"}
        )
        assert served.line()["method"] == "paused"
        assert served.child.stdin is not None
        served.child.stdin.close()
        assert served.line()["id"] == read
        assert served.child.wait(timeout=PATIENCE_S) == 0


def test_two_pauses_of_one_session_are_resumed_one_by_one(tmp_path: Path, workspace: Path) -> None:
    # The second pause of a session used to take the place of the first, which then waited
    # for ever: its call was never answered, and the server never ended.
    for served in _serve("PausesEveryWrite", tmp_path):
        session = _open(served, workspace)
        served.call("arm_pause", session=session, point="checked")
        writes = [
            served.send(
                "call_tool",
                session=session,
                name="write",
                arguments={"file_path": f"{name}.txt", "content": name},
            )
            for name in ("a", "b")
        ]
        assert served.line()["method"] == "paused"
        assert served.line()["method"] == "paused"
        answered: set[int] = set()
        for _ in writes:
            resume = served.send("resume", session=session, point="checked")
            while True:
                line = served.line()
                if line.get("id") == resume:
                    assert line == {"id": resume, "result": None}
                    break
                answered.add(line["id"])
        while answered != set(writes):
            answered.add(served.line()["id"])
        assert served.child.stdin is not None
        served.child.stdin.close()
        assert served.child.wait(timeout=PATIENCE_S) == 0


def test_a_harness_that_exits_while_loading_is_named_in_one_line(tmp_path: Path) -> None:
    # Only an Exception used to be: sys.exit() at import or in the constructor ended the
    # server with the harness's own words, and the run said the handshake was not completed.
    served = Served("tests.fixtures.serve_hostile:exits_when_made", tmp_path)
    try:
        assert served.child.wait(timeout=PATIENCE_S) == 2
        assert served.stderr().splitlines()[-1] == (
            'conformance.serve: harness "tests.fixtures.serve_hostile:exits_when_made" '
            "cannot be loaded: SystemExit: no configuration file"
        )
    finally:
        served.close()
