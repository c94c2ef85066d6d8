"""What every Python adapter shares: call ids, the wire result, and the record of raw answers.

Standard library only: it is imported inside each peer's own environment. An adapter logs each
raw answer of its harness on stderr (the harness's log, which ``--conformance-trace`` records),
so the project's tests can replay the translation against what the harness really answered.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any, Final, Generic, TypeVar

from peers.manifest import Manifest

Workspace = TypeVar("Workspace")

RAW_PREFIX: Final = "peers.raw "
"""Starts each stderr line that records one raw exchange with the harness."""


class CallIds:
    """``call_1``, ``call_2``, … per session (SPEC {tool.call-ids})."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: dict[str, int] = {}

    def next(self, session: str) -> str:
        """The next call id of ``session``."""
        with self._lock:
            number = self._next.get(session, 0) + 1
            self._next[session] = number
        return f"call_{number}"

    def forget(self, session: str) -> None:
        """Drop a closed session's counter."""
        with self._lock:
            self._next.pop(session, None)


def wire(call_id: str, text: str, is_error: bool) -> dict[str, Any]:
    """The wire result (SPEC {tool.result.wire}) of one text the harness answered."""
    return {"callId": call_id, "content": [{"type": "text", "text": text}], "isError": is_error}


def log_raw(session: str, call_id: str, sent: Any, answer: Any) -> None:
    """Record one exchange with the harness: what the adapter sent it and what it answered."""
    record = {"session": session, "callId": call_id, "sent": sent, "answer": answer}
    try:
        line = json.dumps(record, ensure_ascii=False, default=repr)
    except (RecursionError, ValueError) as exc:
        # Arguments nested past the encoder's limit: the call was answered, only the record is not.
        record["sent"] = {"unrecorded": f"{type(exc).__name__}: {exc}"}
        line = json.dumps(record, ensure_ascii=False, default=repr)
    sys.stderr.write(RAW_PREFIX + line + "\n")
    sys.stderr.flush()


class Sessions(Generic[Workspace]):
    """The harness object every Python adapter shares: its manifest, its sessions, call ids.

    A subclass sets ``MANIFEST`` and builds the harness's own object per workspace; the table
    and its lock hold only that object (the adapter keeps no file, lock or state of a file).
    """

    MANIFEST: Manifest

    def __init__(self) -> None:
        self._workspaces: dict[str, Workspace] = {}
        self._lock = threading.Lock()
        self._ids = CallIds()
        self._opened = 0

    def describe(self) -> dict[str, Any]:
        """Name, version and what it declares, from the manifest."""
        return self.MANIFEST.describe()

    def _add_session(self, workspace: Workspace) -> str:
        """A new session id for the harness's object of one workspace."""
        with self._lock:
            self._opened += 1
            session = f"ws_{self._opened}"
            self._workspaces[session] = workspace
        return session

    def _workspace(self, session: str) -> Workspace:
        return self._workspaces[session]

    def close_workspace(self, session: str) -> None:
        """Forget the session."""
        with self._lock:
            self._workspaces.pop(session, None)
        self._ids.forget(session)
