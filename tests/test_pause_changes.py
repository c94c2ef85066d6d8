"""What a pause action changes is the paused call's to leave out, whichever racer ends first.

Driven with a transport of the test's own, so the order that once depended on timing (the
other session's call ending before the paused one takes the action's changes) is fixed.
"""

from __future__ import annotations

import threading
from pathlib import Path

from conformance.client import Client, Result, Session
from conformance.harness.contract import Json, JsonObject, parse_profile
from conformance.harness.transport import Transport
from conformance.spec import Wording
from conformance.watch import Watch
from reference.adapter import ReferenceHarness


class _Race(Transport):
    """Session 1's call pauses; the action starts session 2's call, which ends first."""

    label = "race"

    def __init__(self) -> None:
        super().__init__()
        self.sessions = 0
        self.go = threading.Event()
        self.second: threading.Thread | None = None

    def call(self, method: str, params: JsonObject) -> Json:
        if method == "open_workspace":
            self.sessions += 1
            return f"s{self.sessions}"
        if method != "call_tool":
            return None
        if params["session"] == "s1":
            self._paused("s1", "checked")  # runs the action: it starts the other racer
            self.go.set()
            assert self.second is not None
            self.second.join()  # the racer has ended (and taken what it takes) before this call
        else:
            self.go.wait()
        return {"callId": "c", "content": [{"type": "text", "text": "ok"}], "isError": False}


def test_the_paused_calls_exclusion_is_never_taken_by_the_other_racer(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    transport = _Race()
    profile = parse_profile({**ReferenceHarness().describe(), "protocol": 1}, "race")
    client = Client(transport, profile, Wording())
    client.watch = Watch(tmp_path, root)
    first, second = Session(client, str(root), {}), Session(client, str(root), {})
    results: list[Result] = []

    def action() -> None:
        (root / "put-there-by-the-suite.txt").write_text("x")
        transport.second = threading.Thread(target=lambda: results.append(second.read("a.txt")))
        transport.second.start()

    with first.paused("checked", action) as pause:
        mine = first.read("a.txt")
    assert pause.fired
    assert mine.record.changes == []  # the suite's file is no change of the paused call's
    assert results[0].record.changes == []  # nor of the racer's: it was there before it began
