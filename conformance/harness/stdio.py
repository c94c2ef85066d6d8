"""The stdio transport: a harness in its own process, speaking JSON Lines (SPEC §6.3).

The child can hang, exit, print garbage or answer with megabytes; none of it takes the suite
down. Every call has a timeout; an answer is read with a size limit (the rest of an oversized
line is discarded unread into memory); stderr is drained all the time so a full pipe never
blocks the child, and its last lines explain a failure. After a failure the child is stopped, and
the next call starts a fresh one — which, like the first, is greeted with ``describe`` (SPEC
{proto.handshake}) within the handshake's own timeout before it is sent anything else; a fresh
child that cannot answer it is dead. Sessions belong to the process that opened them: a call
naming a session of a stopped child is never sent to its successor. A harness that times out
several calls in a row is declared dead: every remaining call fails at once with that reason.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Final

from conformance.display import show
from conformance.encoding import json_text
from conformance.harness.contract import Json, JsonObject
from conformance.harness.transport import HarnessCallError, HarnessDead, Transport

DEFAULT_TIMEOUT_S: Final = 30.0
DEFAULT_HANDSHAKE_TIMEOUT_S: Final = 60.0
HANDSHAKE: Final = "describe"
TIMEOUT_OPTION: Final = "--conformance-timeout"
HANDSHAKE_TIMEOUT_OPTION: Final = "--conformance-handshake-timeout"
DEFAULT_MAX_ANSWER_BYTES: Final = 2 * 1024 * 1024
DEAD_AFTER_TIMEOUTS: Final = 3
STDERR_LINES: Final = 200
STDERR_TAIL: Final = 12
STDERR_GRACE_S: Final = 2.0  # how long an exited child's stderr may still be read
_READ_CHUNK: Final = 65536

Validator = Callable[[str, Json], str | None]


class Trace:
    """Every request, answer, notification and stderr line, as JSON Lines (for adapter authors)."""

    def __init__(self, path: str, header: JsonObject) -> None:
        self._lock = threading.Lock()
        self._out: IO[str] = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._start = time.monotonic()
        self.case: str | None = None
        self.write("run", json_text(header))

    def write(self, kind: str, line: str) -> None:
        """Record one line; ``kind`` is ``send``, ``recv``, ``stderr``, ``event`` or ``run``."""
        record = {
            "t": round(time.monotonic() - self._start, 4),
            "case": self.case,
            "kind": kind,
            "line": line[:65536],
        }
        with self._lock:
            if not self._out.closed:
                self._out.write(json_text(record) + "\n")
                self._out.flush()

    def close(self) -> None:
        """Finish the trace file."""
        with self._lock:
            self._out.close()


@dataclass
class _Pending:
    method: str
    done: threading.Event = field(default_factory=threading.Event)
    answer: JsonObject | None = None
    failure: str | None = None


class _Child:
    """One running harness process and the threads that drain it."""

    def __init__(self, transport: Stdio) -> None:
        self.transport = transport
        self.process = subprocess.Popen(
            list(transport.command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=transport.cwd,
            env=transport.env,
            start_new_session=True,  # so stopping it also stops what it started
        )
        self.stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._caught_up = threading.Condition()
        self._reading = False  # the drain is waiting in os.read with every line before handled
        self._ended = False
        self.stopping = False
        self.generation = 0
        self.greeted = False
        """Whether it has answered the handshake (a fresh child must, before anything else)."""
        self._stderr_reader = threading.Thread(
            target=self._drain_stderr, daemon=True, name="harness-stderr"
        )
        self._stderr_reader.start()
        threading.Thread(target=self._read_answers, daemon=True, name="harness-stdout").start()

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode("utf-8") + b"\n")
        self.process.stdin.flush()

    def stop(self) -> None:
        """Stop the child and everything it started."""
        self.stopping = True
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def status(self) -> str:
        """How the process ended, in words."""
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "closed its stdout but is still running"
        if code < 0:
            return f"was killed by signal {-code}"
        return f"exited with status {code}"

    def tail(self) -> str:
        """The last lines of its stderr, ready to append to a verdict."""
        lines = list(self.stderr)[-STDERR_TAIL:]
        if not lines:
            return "; it wrote nothing to stderr"
        shown = "\n".join(f"    {line[:300]}" for line in lines)
        return f"; the last lines of its stderr:\n{shown}"

    def log_so_far(self) -> list[str]:
        """Its stderr up to now: everything written before its last answer is in."""
        assert self.process.stderr is not None
        fd = self.process.stderr.fileno()

        def caught_up() -> bool:
            if self._ended:
                return True
            # Waiting in os.read on an empty pipe: every byte written so far has been handled.
            return self._reading and not select.select([fd], [], [], 0)[0]

        with self._caught_up:
            self._caught_up.wait_for(caught_up, timeout=STDERR_GRACE_S)
            return list(self.stderr)

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        fd = self.process.stderr.fileno()
        pending = b""
        while True:
            with self._caught_up:
                self._reading = True
                self._caught_up.notify_all()
            try:
                chunk = os.read(fd, _READ_CHUNK)
            except OSError:
                chunk = b""
            with self._caught_up:
                self._reading = False
            if not chunk:
                break
            *lines, pending = (pending + chunk).split(b"\n")
            for raw in lines:
                self._stderr_line(raw)
        if pending:
            self._stderr_line(pending)
        with self._caught_up:
            self._ended = True
            self._caught_up.notify_all()

    def _stderr_line(self, raw: bytes) -> None:
        line = raw.decode("utf-8", errors="replace")
        self.stderr.append(line)
        if self.transport.trace is not None:
            self.transport.trace.write("stderr", line)

    def _read_answers(self) -> None:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        limit = self.transport.max_answer_bytes
        buffer = bytearray()
        oversized = False
        while True:
            try:
                chunk = os.read(fd, _READ_CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                break
            start = 0
            while True:
                newline = chunk.find(b"\n", start)
                piece = chunk[start:] if newline < 0 else chunk[start:newline]
                if not oversized:
                    buffer += piece
                    if len(buffer) > limit:
                        oversized = True
                        buffer.clear()  # the rest of this line is discarded unread into memory
                if newline < 0:
                    break
                if oversized:
                    self.transport._broken(
                        self, f"sent an answer of more than {limit:,} bytes (the size limit)"
                    )
                    return
                line = bytes(buffer)
                buffer.clear()
                start = newline + 1
                if line.strip():
                    self.transport._received(self, line)
        if not self.stopping:
            status = self.status()
            # What it wrote to stderr before exiting is the useful part of the verdict: read it
            # all first (bounded, in case something it started still holds the pipe open).
            self._stderr_reader.join(timeout=STDERR_GRACE_S)
            self.transport._broken(self, status, with_tail=True)


class Stdio(Transport):
    """A harness command run as a child process."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        label: str,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        handshake_timeout_s: float | None = None,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        trace: Trace | None = None,
        validator: Validator | None = None,
    ) -> None:
        super().__init__()
        self.command = tuple(command)
        self.label = label
        self.timeout_s = timeout_s
        self.handshake_timeout_s = timeout_s if handshake_timeout_s is None else handshake_timeout_s
        """How long a fresh child may take to answer ``describe`` (start-up included)."""
        self.max_answer_bytes = max_answer_bytes
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.trace = trace
        self.validator = validator
        self._lock = threading.Lock()
        self._start_lock = threading.Lock()  # one child starts (and is greeted) at a time
        self._child: _Child | None = None
        self._session_owner: dict[str, int] = {}  # session handle -> generation that opened it
        self._stopped_because = ""
        self._pending: dict[int, _Pending] = {}
        self._ids = itertools.count(1)
        self._timeouts_in_a_row = 0
        self._dead: str | None = None
        self.deadline: float | None = None
        """A monotonic time no call may wait past (the run's deadline), if any."""

    def log_lines(self) -> list[str] | None:
        """The harness's stderr (its log) so far, the last lines of it."""
        child = self._child
        return [] if child is None else child.log_so_far()

    # -- calls ----------------------------------------------------------------------------------

    def call(self, method: str, params: JsonObject) -> Json:
        """Send one request and wait for its answer, within the timeout."""
        what = _describe_call(method, params)
        child = self._current(what, method, params)
        answer = self._exchange(child, method, params, what)
        if method == "call_tool":
            # Only a tool answering proves the harness alive: a harness that opens sessions
            # but hangs on every tool call must still be declared dead.
            with self._lock:
                self._timeouts_in_a_row = 0
        if "error" in answer:
            error = answer["error"]
            message = error.get("message") if isinstance(error, dict) else None
            propagated = error.get("propagated") if isinstance(error, dict) else None
            said = message if isinstance(message, str) else repr(error)
            raise HarnessCallError(
                f"{what} failed in the harness: {said}",
                method=method,
                propagated=propagated if isinstance(propagated, str) else None,
                unknown=isinstance(error, dict) and error.get("unknown") is True,
            )
        result = answer.get("result")
        if self.validator is not None:
            problem = self.validator(method, result)
            if problem is not None:
                raise HarnessCallError(
                    f"{what}: the answer does not fit the protocol schema: {problem}",
                    method=method,
                )
        with self._lock:
            if method == "open_workspace" and isinstance(result, str):
                self._session_owner[result] = child.generation
            elif method == "close_workspace" and isinstance(params.get("session"), str):
                self._session_owner.pop(params["session"], None)
        return result

    def abandon(self, reason: str) -> bool:
        """Stop the child if a call is still waiting on it; ``reason`` says whose call it was."""
        with self._lock:
            child = self._child
            waiting = [p.method for p in self._pending.values() if not p.done.is_set()]
        if child is None or not waiting:
            return False
        self._retire(child, f"was stopped: {reason}")
        return True

    def _current(self, what: str, method: str, params: JsonObject) -> _Child:
        """The running child (started and greeted if need be) that may be sent this call."""
        session = params.get("session")
        with self._lock:
            if self._dead is not None:
                raise HarnessDead(f"{what} not made: {self._dead}", method=method)
            owner = self._session_owner.get(session) if isinstance(session, str) else None
            if owner is not None and owner != self.generation:
                raise HarnessCallError(
                    f"{what} not made: session {session!r} belonged to a harness process that "
                    f"{self._stopped_because or 'was stopped'}",
                    method=method,
                )
        with self._start_lock:
            with self._lock:
                child = self._child
            if child is None:
                child = self._start(what, method)
            if not child.greeted and method != HANDSHAKE:
                self._greet(child, what, method)
            return child

    def _greet(self, child: _Child, what: str, method: str) -> None:
        """The handshake a restarted child owes before its first real call."""
        try:
            self._exchange(child, HANDSHAKE, {}, HANDSHAKE)
        except HarnessCallError as exc:
            with self._lock:
                self._dead = f"the harness is dead: a fresh process did not start: {exc}"
                dead = self._dead
            raise HarnessDead(f"{what} not made: {dead}", method=method) from None

    def _exchange(self, child: _Child, method: str, params: JsonObject, what: str) -> JsonObject:
        """Send one request to ``child`` and wait for its answer (raw), within the timeout."""
        with self._lock:
            if self._child is not child:  # stopped since it was chosen: its pending were failed
                raise HarnessCallError(
                    f"{what} failed: the harness {self._stopped_because}", method=method
                )
            request_id = next(self._ids)
            pending = self._pending[request_id] = _Pending(method)
        line = json_text({"id": request_id, "method": method, "params": params})
        try:
            if self.trace is not None:
                self.trace.write("send", line)
            child.send(line)
        except (BrokenPipeError, OSError, UnicodeEncodeError) as exc:
            self._forget(request_id)
            if isinstance(exc, UnicodeEncodeError):
                raise HarnessCallError(
                    f"{what}: the request cannot be sent as UTF-8 JSON ({exc.reason})",
                    method=method,
                ) from None
            self._broken(child, f"stopped reading its stdin ({child.status()})", with_tail=True)
        handshake = method == HANDSHAKE
        timeout = self.handshake_timeout_s if handshake else self.timeout_s
        limit = (
            f"the handshake timeout, {HANDSHAKE_TIMEOUT_OPTION}" if handshake else TIMEOUT_OPTION
        )
        if self.deadline is not None and self.deadline - time.monotonic() < timeout:
            timeout, limit = max(0.0, self.deadline - time.monotonic()), "the run's deadline"
        if not pending.done.wait(timeout):
            self._timed_out(child, request_id, what, method, waited=timeout, limit=limit)
        self._forget(request_id)
        if pending.failure is not None:
            raise HarnessCallError(f"{what} failed: the harness {pending.failure}", method=method)
        answer = pending.answer
        assert answer is not None
        if handshake:
            child.greeted = True
        return answer

    def close(self) -> None:
        """Stop the child; the next call starts a fresh one."""
        with self._lock:
            child = self._child
        if child is not None:
            self._retire(child, "was stopped by the suite")
            child.stop()

    # -- internals --------------------------------------------------------------------------

    def _start(self, what: str, method: str) -> _Child:
        try:
            child = _Child(self)
        except OSError as exc:
            command = " ".join(self.command)
            raise HarnessCallError(
                f"{what} not made: the harness command {command!r} cannot start: {exc}",
                method=method,
            ) from None
        with self._lock:
            child.generation = self.generation
            self._child = child
        if self.trace is not None:
            self.trace.write("event", f"started {' '.join(self.command)} (pid {child.process.pid})")
        return child

    def _forget(self, request_id: int) -> None:
        with self._lock:
            self._pending.pop(request_id, None)

    def _timed_out(
        self, child: _Child, request_id: int, what: str, method: str, *, waited: float, limit: str
    ) -> None:
        self._forget(request_id)
        with self._lock:
            self._timeouts_in_a_row += 1
            if self._timeouts_in_a_row >= DEAD_AFTER_TIMEOUTS and self._dead is None:
                # The limit, not the count: two calls timing out at once (CON-002) must not
                # change the words from one run to the next.
                self._dead = f"the harness is dead: {DEAD_AFTER_TIMEOUTS} calls in a row timed out"
            dead = self._dead
        message = f"{what} did not answer within {waited:.1f} s ({limit}){child.tail()}"
        self._retire(child, f"was stopped: {what} timed out")
        if dead is not None:
            raise HarnessDead(f"{message}\n{dead}", method=method)
        raise HarnessCallError(message, method=method)

    def _broken(self, child: _Child, what: str, *, with_tail: bool = False) -> None:
        """The child can no longer be trusted: fail every pending call and stop it."""
        self._retire(child, what + (child.tail() if with_tail else ""))

    def _retire(self, child: _Child, reason: str) -> None:
        """Stop ``child`` (if it is still the current one) and fail what waits on it."""
        with self._lock:
            if self._child is not child:
                return
            self._child = None
            # Its sessions are gone with it: nothing opened there may be sent to a successor.
            self.generation += 1
            self._stopped_because = reason.splitlines()[0]
            pending = list(self._pending.values())
            self._pending.clear()
        if self.trace is not None:
            self.trace.write("event", f"harness stopped: {reason.splitlines()[0]}")
        for waiting in pending:
            waiting.failure = reason
            waiting.done.set()
        child.stopping = True
        threading.Thread(target=child.stop, daemon=True).start()

    def _received(self, child: _Child, line: bytes) -> None:
        text = line.decode("utf-8", errors="replace")
        if self.trace is not None:
            self.trace.write("recv", text)
        try:
            message = json.loads(line)
        except ValueError:
            self._broken(
                child, f"answered with a line that is not JSON: {text[:200]!r}", with_tail=True
            )
            return
        if isinstance(message, dict) and "id" not in message and message.get("method") == "paused":
            params = message.get("params")
            threading.Thread(
                target=self._resume_after, args=(params,), daemon=True, name="harness-pause"
            ).start()
            return
        request_id = message.get("id") if isinstance(message, dict) else None
        with self._lock:
            pending = self._pending.get(request_id) if isinstance(request_id, int) else None
        if pending is None or not ("result" in message or "error" in message):
            problem = (
                "an answer without an id"
                if not isinstance(message, dict) or "id" not in message
                else f"an answer with an unknown id {request_id!r}"
                if pending is None
                else 'an answer with neither "result" nor "error"'
            )
            self._broken(child, f"sent {problem}: {text[:200]!r}")
            return
        pending.answer = message
        pending.done.set()

    def _resume_after(self, params: object) -> None:
        session = params.get("session") if isinstance(params, dict) else None
        point = params.get("point") if isinstance(params, dict) else None
        try:
            self._paused(str(session), str(point))
        finally:
            # If resuming fails, the tool call that paused fails on its own and says why.
            with contextlib.suppress(HarnessCallError):
                self.call("resume", {"session": session, "point": point})


def _describe_call(method: str, params: JsonObject) -> str:
    """The call in a verdict: a tool call names its tool and arguments (which call blocked?)."""
    if method == "call_tool":
        return f"call_tool({show(params.get('name'))}, {show(params.get('arguments'), 200)})"
    return method
