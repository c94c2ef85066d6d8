"""A peer's recorded trace, as exchanges to replay through its adapter's translation.

``--conformance-trace`` records every request and answer between the suite and the adapter, and
the adapter's stderr, where it logs each raw exchange with the harness (``peers.common``). Joined
by session and call id, they give, per tool call: what the suite asked, what the adapter sent the
harness, what the harness answered, and what the adapter answered the suite.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from peers.common import RAW_PREFIX

_AMBIGUOUS: Any = {}


@dataclass(frozen=True)
class Exchange:
    """One tool call as the trace recorded it."""

    case: str | None
    session: str
    name: str
    arguments: Any
    result: dict[str, Any]
    sent: Any = None
    answer: Any = None

    @property
    def call_id(self) -> str:
        """The call id the adapter gave the result."""
        return str(self.result["callId"])


def exchanges(trace: Path) -> list[Exchange]:
    """Every answered ``call_tool`` of the trace, with its raw harness exchange when logged."""
    # A run may start the harness more than once (session handles start again at ws_1), so a
    # session is named by the start it belongs to as well; request ids are unique per run.
    start = 0
    requests: dict[int, tuple[str | None, int, dict[str, Any]]] = {}
    results: dict[int, dict[str, Any]] = {}
    raw: dict[tuple[int, str, str], dict[str, Any]] = {}
    starts: dict[str | None, int] = {}
    reused: set[int] = set()
    with gzip.open(trace, "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            kind, text = record["kind"], record["line"]
            if kind == "event" and text.startswith("started "):
                start += 1
                starts[record["case"]] = starts.get(record["case"], 0) + 1
            if kind == "stderr" and text.startswith(RAW_PREFIX):
                try:
                    logged = json.loads(text[len(RAW_PREFIX) :])
                except ValueError:
                    continue  # a line the trace cut at its length limit
                key = (start, logged["session"], logged["callId"])
                raw[key] = _AMBIGUOUS if key in raw else logged
                continue
            if kind not in ("send", "recv"):
                continue
            try:
                message = json.loads(text)
            except ValueError:
                continue
            if kind == "send" and message.get("method") == "call_tool":
                if message["id"] in requests:
                    reused.add(message["id"])  # another client's ids: which answer is whose?
                requests[message["id"]] = (record["case"], start, message["params"])
            elif kind == "recv" and isinstance(message.get("result"), dict):
                results[message["id"]] = message["result"]
    found = []
    for request_id, (case, started, params) in requests.items():
        if request_id in reused:
            continue
        result = results.get(request_id)
        if result is None or "callId" not in result:
            continue
        logged = raw.get((started, params["session"], result["callId"]), {})
        if logged is _AMBIGUOUS or (case is not None and starts.get(case, 0) > 1):
            # A case that ran harness processes side by side (the multi-process cases): their
            # sessions share names, so which process answered a call is not known.
            continue
        found.append(
            Exchange(
                case,
                params["session"],
                params["name"],
                params["arguments"],
                result,
                logged.get("sent"),
                logged.get("answer"),
            )
        )
    return found
