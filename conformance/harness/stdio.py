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

A caller waiting for its answer reads the child's stdout itself while no other thread does, and
hands on what answers other calls, so a lone call costs no switch between threads; a watcher
notices a child that exits between calls, and what a child wrote while no call waited is
handled before the next call is made.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import math
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Final

from conformance.display import show, values
from conformance.encoding import json_text
from conformance.harness.batch import MAX_BATCH, Unresolved, rebase
from conformance.harness.contract import Json, JsonObject
from conformance.harness.strays import kill_tree
from conformance.harness.transport import HarnessCallError, HarnessDead, Transport
from conformance.rules import cite
from conformance.secrets import clean_cut, scrub
from conformance.speed import poll_awake

DEFAULT_TIMEOUT_S: Final = 30.0
DEFAULT_HANDSHAKE_TIMEOUT_S: Final = 60.0
HANDSHAKE: Final = "describe"
TIMEOUT_OPTION: Final = "--conformance-timeout"
HANDSHAKE_TIMEOUT_OPTION: Final = "--conformance-handshake-timeout"
DEADLINE_LIMIT: Final = "the run's deadline"
"""What a call cut by ``--conformance-deadline`` names as its limit."""
DEFAULT_MAX_ANSWER_BYTES: Final = 2 * 1024 * 1024
DEAD_AFTER_TIMEOUTS: Final = 3
STDERR_LINES: Final = 200
STDERR_TAIL: Final = 12
STDERR_GRACE_S: Final = 2.0  # how long an exited child's stderr may still be read
_READ_CHUNK: Final = 65536

Validator = Callable[[str, Json], str | None]


class Trace:
    """Every request, answer, notification and stderr line, as JSON Lines (for adapter authors).

    A value the run planted is named by its variable (``<$HARNESS_CONFORMANCE_CANARY_TOKEN>``),
    as verdicts name it, and a secret it found in its environment reads ``[REDACTED]``: a trace
    is a report, kept as a CI artifact, and a harness may log its own API key.
    """

    def __init__(self, path: str, header: JsonObject) -> None:
        self._lock = threading.Lock()
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)  # as the reports do
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
            "line": clean_cut(scrub(values(line)), 65536),
        }
        with self._lock:
            if not self._out.closed:
                self._out.write(json_text(record) + "\n")
                self._out.flush()

    def close(self) -> None:
        """Finish the trace file."""
        with self._lock:
            self._out.close()


PROTOCOL_BROKEN: Final = "proto.ids"
"""The rule an answer outside the protocol breaks: no id, an unknown id, not JSON, no result
or error (SPEC {proto.ids})."""


@dataclass
class _Pending:
    method: str
    done: bool = False
    answer: JsonObject | None = None
    failure: str | None = None
    rule: str | None = None

    def finished(self) -> bool:
        """Whether it was answered or failed (set by whichever thread read or failed it)."""
        return self.done


def _failed(what: _Call, method: str, error: Json) -> HarnessCallError:
    """The failure a request answered with ``{"error"}`` is."""
    message = error.get("message") if isinstance(error, dict) else None
    propagated = error.get("propagated") if isinstance(error, dict) else None
    said = message if isinstance(message, str) else repr(error)
    return HarnessCallError(
        f"{what} failed in the harness: {said}",
        method=method,
        propagated=propagated if isinstance(propagated, str) else None,
        unknown=isinstance(error, dict) and error.get("unknown") is True,
    )


class _Call:
    """A call as verdicts name it, worded only when one does (most calls never need it)."""

    __slots__ = ("method", "params")

    def __init__(self, method: str, params: JsonObject) -> None:
        self.method = method
        self.params = params

    def __str__(self) -> str:
        return _describe_call(self.method, self.params)


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
        self._reap_lock = threading.Lock()
        self._exit_seen = threading.Event()
        """Set once the process has ended and before it is reaped (where ``os.waitid`` can
        wait without reaping): its pid then still names its group, and nothing else's."""
        self.generation = 0
        self.greeted = False
        """Whether it has answered the handshake (a fresh child must, before anything else)."""
        self.reader = threading.Lock()
        """Held by the one thread reading stdout: a caller waiting for its answer, or the
        watcher of an exited child. Nobody reads while no call waits, so an answer reaches its
        caller without a thread handoff."""
        self.buffer = bytearray()  # the start of a line not yet ended (kept between readers)
        self.oversized = False  # the line being read is past the size limit (being discarded)
        self.stdout_ended = False
        assert self.process.stdout is not None
        self.stdout = self.process.stdout.fileno()
        self._wake_lock = threading.Lock()
        self._wake_read, self._wake_write = os.pipe()  # interrupts a reader when it is retired
        self.poller = select.poll()
        self.poller.register(self.stdout, select.POLLIN)
        self.poller.register(self._wake_read, select.POLLIN)
        self._stderr_reader = threading.Thread(
            target=self._drain_stderr, daemon=True, name="harness-stderr"
        )
        self._stderr_reader.start()
        threading.Thread(target=self._watch_exit, daemon=True, name="harness-exit").start()

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode("utf-8") + b"\n")
        self.process.stdin.flush()

    def wake(self) -> None:
        """Make the thread reading stdout (if any) look up: its call may have been failed."""
        with self._wake_lock, contextlib.suppress(OSError):
            if self._wake_write >= 0:
                os.write(self._wake_write, b"!")

    def stop(self) -> None:
        """Stop the child and everything it started."""
        self.stopping = True
        self.wake()
        self.reap()
        # Its stdout and the wake pipe are closed once no thread reads them (a reader that
        # never lets go, stuck on a pipe something else holds open, keeps them).
        readers_gone = self.reader.acquire(timeout=STDERR_GRACE_S)
        streams = [self.process.stdin, self.process.stderr]
        if readers_gone:
            streams.append(self.process.stdout)
        for stream in streams:
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        if readers_gone:
            with self._wake_lock:
                for fd in (self._wake_read, self._wake_write):
                    with contextlib.suppress(OSError):
                        if fd >= 0:
                            os.close(fd)
                self._wake_read = self._wake_write = -1
            self.reader.release()

    def reap(self) -> int:
        """Kill the child and everything it started (its group, and on Linux what it started
        outside it), then reap it.

        The group even when the child itself has ended, as what it started lives on
        otherwise; and only before the child is reaped, while its pid still names the group:
        once reaped, a group with none of them left frees that ID for another program's.
        """
        with self._reap_lock:
            if self.process.returncode is None:
                # What it started in a session of its own (an MCP server) is not in its
                # group: found while the tree still hangs from the child (``strays``).
                kill_tree(self.process.pid, self._kill_group)
            return self.process.wait()

    def _kill_group(self) -> None:
        """Kill the child's process group (the child alone where its group is gone)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            if self.process.poll() is None:
                self.process.kill()

    def status(self) -> str:
        """How the process ended, in words (it is reaped, what it started stopped first)."""
        if self.process.returncode is None and not self._exit_seen.wait(timeout=2):
            return "closed its stdout but is still running"
        code = self.reap()
        if code < 0:
            return f"was killed by signal {-code}"
        return f"exited with status {code}"

    def tail(self) -> str:
        """The last lines of its stderr, ready to append to a verdict."""
        lines = list(self.stderr)[-STDERR_TAIL:]
        if not lines:
            return "; it wrote nothing to stderr"
        # Cut where no secret is split: a verdict scrubs whole secrets, never the start of one.
        shown = "\n".join(f"    {clean_cut(line, 300)}" for line in lines)
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

    def input_closed(self) -> None:
        """Its stdin took no more: a child that exited says so in the words its stdout's end
        would have (which of the two the suite notices first depends on timing)."""
        status = self.status()
        if status.startswith(("exited", "was killed")):
            self._stderr_reader.join(timeout=STDERR_GRACE_S)
            self.transport._broken(self, status, with_tail=True)
        else:
            self.transport._broken(self, f"stopped reading its stdin ({status})", with_tail=True)

    def stdout_closed(self) -> None:
        """Its stdout ended: unless the suite stopped it, say how it ended, stderr read first."""
        if self.stopping:
            return
        status = self.status()
        # What it wrote to stderr before exiting is the useful part of the verdict: read it
        # all first (bounded, in case something it started still holds the pipe open).
        self._stderr_reader.join(timeout=STDERR_GRACE_S)
        self.transport._broken(self, status, with_tail=True)

    @property
    def exited(self) -> bool:
        """Whether the process has ended (seen by its watcher): its stdout may not, when
        something it started holds the pipe open, so readers stop waiting for that."""
        return self._exit_seen.is_set()

    def _watch_exit(self) -> None:
        """When the process ends while no call waits, read what it left and say how it ended."""
        try:
            if hasattr(os, "waitid"):  # waits without reaping: status() still gets the code
                os.waitid(os.P_PID, self.process.pid, os.WEXITED | os.WNOWAIT)
            else:  # macOS before Python 3.13
                self.process.wait()
        except ChildProcessError:  # already reaped: the suite stopped it
            return
        finally:
            self._exit_seen.set()
        if self.stopping:
            return
        self.wake()  # a caller reading stdout for its answer hears of it now
        with self.reader:
            self.transport._read(self, until=None, deadline=None)

    def drain_wake(self) -> None:
        """Forget the wake-ups seen so far."""
        with contextlib.suppress(OSError):
            os.read(self._wake_read, 4096)

    def take(self, chunk: bytes) -> list[bytes] | None:
        """The whole lines ``chunk`` completes; None once a line is past the size limit."""
        limit = self.transport.max_answer_bytes
        lines: list[bytes] = []
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            piece = chunk[start:] if newline < 0 else chunk[start:newline]
            if not self.oversized:
                self.buffer += piece
                if len(self.buffer) > limit:
                    self.oversized = True
                    self.buffer.clear()  # the rest of this line is discarded unread into memory
            if newline < 0:
                return lines
            if self.oversized:
                return None
            line = bytes(self.buffer)
            self.buffer.clear()
            start = newline + 1
            if line.strip():
                lines.append(line)


class Ended:
    """Why no instance of a harness may start a process any more, once that is so.

    Shared by a run's instances of one harness (``Stdio.ended``). A case's threads can outlive
    it when the run is interrupted (a racer between its barrier and its call, while the case's
    own thread takes the interruption): its instance was stopped meanwhile, and the racer's
    next call would start a fresh process the run never stops.
    """

    def __init__(self) -> None:
        self.why: str | None = None


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
        self._retired: list[_Child] = []
        """Children stopped by a thread of their own (``_retire``), reaped again by ``close``:
        a daemon thread is cut off when the interpreter exits, and what it had not yet killed
        outlived the run."""
        self._generation = 0
        self._session_owner: dict[str, int] = {}  # session handle -> generation that opened it
        self._stopped_because = ""
        self._stopped_rule: str | None = None
        self._untold: str | None = None
        """A protocol break that stopped the child while no call waited: the next call's."""
        self._answered: set[int] = set()  # a second answer to one of them breaks the protocol
        self._pending: dict[int, _Pending] = {}
        self._turn = threading.Condition()  # notified when a call ends or the reader lets go
        self._waiting = 0  # callers waiting on _turn
        self._ids = itertools.count(1)
        self._timeouts_in_a_row = 0
        self._dead: str | None = None
        self.deadline_cuts = 0
        """Calls the run's deadline ended (and the child with them): the suite's doing, so the
        case they were made in is not run, whatever it found (``conformance.plugin``)."""
        self.deadline: float | None = None
        """A monotonic time no call may wait past (the run's deadline), if any."""
        self._batches = False  # the harness said it takes batches (describe.batch)
        self.ended = Ended()
        """Once its ``why`` is set, no call starts a process; a running one still answers."""

    @property
    def generation(self) -> int:
        """Bumped whenever the child restarts; what it wrote meanwhile is taken in first."""
        self._take_in()
        return self._generation

    @property
    def batches(self) -> bool:
        """Whether the harness's ``describe`` said it takes batches (``batch: true``)."""
        return self._batches

    def log_lines(self) -> list[str] | None:
        """The harness's stderr (its log) so far, the last lines of it."""
        child = self._child
        return [] if child is None else child.log_so_far()

    # -- calls ----------------------------------------------------------------------------------

    def call(self, method: str, params: JsonObject) -> Json:
        """Send one request and wait for its answer, within the timeout."""
        what = _Call(method, params)
        self._take_in()
        child = self._current(what, method, params)
        answer = self._exchange(child, method, params, what)
        if method == "call_tool":
            # Only a tool answering proves the harness alive: a harness that opens sessions
            # but hangs on every tool call must still be declared dead.
            with self._lock:
                self._timeouts_in_a_row = 0
        if "error" in answer:
            raise _failed(what, method, answer["error"])
        result = answer.get("result")
        self._validate(what, method, result)
        with self._lock:
            if method == "open_workspace" and isinstance(result, str):
                self._session_owner[result] = child.generation
            elif method == "close_workspace" and isinstance(params.get("session"), str):
                self._session_owner.pop(params["session"], None)
            elif method == HANDSHAKE and isinstance(result, dict):
                self._batches = result.get("batch") is True
        return result

    def call_batch(self, requests: Sequence[tuple[str, JsonObject]]) -> list[Json]:
        """Several requests a round trip when the harness takes batches (SPEC {proto.batch}),
        at most ``MAX_BATCH`` at a time; each answer is checked as the request sent alone
        would be, and a failure ends the list in its place (what came before it is kept)."""
        if not self._batches or len(requests) < 2:  # one request needs no batch
            return super().call_batch(requests)
        outcomes: list[Json] = []
        for start in range(0, len(requests), MAX_BATCH):
            chunk = requests[start : start + MAX_BATCH]
            sent: list[tuple[str, JsonObject]] = []
            unresolved: HarnessCallError | None = None
            for method, params in chunk:
                try:
                    sent.append((method, rebase(method, params, outcomes, start)))
                except Unresolved as exc:  # names an earlier batch's answer without a handle
                    # the requests before it are still made; it fails as alone it would
                    unresolved = HarnessCallError(f"{method} not made: {exc}", method=method)
                    break
            if sent and self._one_batch(sent, outcomes):
                return outcomes
            if unresolved is not None:
                outcomes.append(unresolved)
                return outcomes
        return outcomes

    def _one_batch(self, requests: Sequence[tuple[str, JsonObject]], outcomes: list[Json]) -> bool:
        """Send one batch; add its outcomes to ``outcomes``; whether one of them failed."""
        wire = [{"method": method, "params": params} for method, params in requests]
        try:
            answer = self.call("batch", {"requests": wire})
        except HarnessCallError as exc:
            outcomes.append(exc)
            return True
        answers = answer.get("answers") if isinstance(answer, dict) else None
        if not isinstance(answers, list) or not 0 < len(answers) <= len(requests):
            outcomes.append(HarnessCallError(
                f"batch of {len(requests)} requests: the answer is not {{answers: [one per "
                f"request run]}}: {show(answer, 200)}",
                method="batch",
            ))  # fmt: skip
            return True
        answered = 0
        for (method, params), one in zip(requests, answers, strict=False):
            what = _Call(method, params)  # a taxonomy call is named by its method alone
            if not isinstance(one, dict) or ("result" in one) == ("error" in one):
                outcomes.append(HarnessCallError(
                    f"{what} in a batch: its answer is neither {{result}} nor {{error}}: "
                    f"{show(one, 200)}",
                    method=method,
                ))  # fmt: skip
                return True
            if "error" in one:
                failed = _failed(what, method, one["error"])
                after = len(answers) - answered - 1
                if after:  # it ran on past a failure: the batch's answer is not the spec's
                    failed = HarnessCallError(
                        f"{what} in a batch failed, and the batch answered {after} more request"
                        f"{'s' if after != 1 else ''} after it (a batch stops after the first "
                        f"request that fails: its answer is the last); it said: {failed}",
                        method=method,
                    )  # fmt: skip
                outcomes.append(failed)
                return True
            try:
                self._validate(what, method, one["result"])
            except HarnessCallError as exc:
                outcomes.append(exc)
                return True
            outcomes.append(one["result"])
            answered += 1
        if answered < len(requests):
            outcomes.append(HarnessCallError(
                f"batch of {len(requests)} requests: {answered} answered, and none of them "
                "failed (a batch stops only after a request that fails)",
                method="batch",
            ))  # fmt: skip
            return True
        return False

    def _validate(self, what: _Call, method: str, result: Json) -> None:
        if self.validator is not None:
            problem = self.validator(method, result)
            if problem is not None:
                raise HarnessCallError(
                    f"{what}: the answer does not fit the protocol schema: {problem}",
                    method=method,
                )

    def start(self) -> None:
        """Start the child now, ahead of the first call (which still greets it first).

        A command that cannot start fails that first call, in its words, as it would have.
        """
        with self._start_lock, contextlib.suppress(HarnessCallError):
            if self._child is None and self._dead is None:
                self._start(_Call(HANDSHAKE, {}), HANDSHAKE)

    def abandon(self, reason: str) -> bool:
        """Stop the child if a call is still waiting on it; ``reason`` says whose call it was."""
        with self._lock:
            child = self._child
            waiting = [p.method for p in self._pending.values() if not p.done]
        if child is None or not waiting:
            return False
        self._retire(child, f"was stopped: {reason}")
        return True

    def _current(self, what: _Call, method: str, params: JsonObject) -> _Child:
        """The running child (started and greeted if need be) that may be sent this call."""
        session = params.get("session")
        with self._lock:
            if self._dead is not None:
                raise HarnessDead(f"{what} not made: {self._dead}", method=method)
            untold, self._untold = self._untold, None
            if untold is not None:
                # Worded as if the break had come while this call waited, which it may have
                # (an answer read a moment later): the same harness, the same words.
                raise HarnessCallError(
                    f"{what} failed: the harness {untold}",
                    method=method,
                    stopped=True,
                    rule=self._stopped_rule,
                )
            owner = self._session_owner.get(session) if isinstance(session, str) else None
            if owner is not None and owner != self._generation:
                raise HarnessCallError(
                    f"{what} not made: session {session!r} belonged to a harness process that "
                    f"{self._stopped_because or 'was stopped'}",
                    method=method,
                    stopped=True,
                    rule=self._stopped_rule,
                )
        with self._start_lock:
            with self._lock:
                child = self._child
            if child is None:
                child = self._start(what, method)
            if not child.greeted and method != HANDSHAKE:
                self._greet(child, what, method)
            return child

    def _greet(self, child: _Child, what: _Call, method: str) -> None:
        """The handshake a restarted child owes before its first real call."""
        try:
            self._exchange(child, HANDSHAKE, {}, _Call(HANDSHAKE, {}))
        except HarnessCallError as exc:
            with self._lock:
                self._dead = f"the harness is dead: a fresh process did not start: {exc}"
                dead = self._dead
            raise HarnessDead(f"{what} not made: {dead}", method=method) from None

    def _exchange(self, child: _Child, method: str, params: JsonObject, what: _Call) -> JsonObject:
        """Send one request to ``child`` and wait for its answer (raw), within the timeout."""
        with self._lock:
            if self._child is not child:  # stopped since it was chosen: its pending were failed
                raise HarnessCallError(
                    f"{what} failed: the harness {self._stopped_because}",
                    method=method,
                    stopped=True,
                    rule=self._stopped_rule,
                )
            request_id = next(self._ids)
            pending = self._pending[request_id] = _Pending(method)
        line = json_text({"id": request_id, "method": method, "params": params})
        try:
            if self.trace is not None:
                self.trace.write("send", line)
            child.send(line)
        except (BrokenPipeError, OSError, UnicodeEncodeError) as exc:
            if isinstance(exc, UnicodeEncodeError):
                self._forget(request_id)
                raise HarnessCallError(
                    f"{what}: the request cannot be sent as UTF-8 JSON ({exc.reason})",
                    method=method,
                ) from None
            # Failed with the others that wait on it (forgotten first, it waited out its timeout).
            child.input_closed()
        handshake = method == HANDSHAKE
        timeout = self.handshake_timeout_s if handshake else self.timeout_s
        limit = (
            f"the handshake timeout, {HANDSHAKE_TIMEOUT_OPTION}" if handshake else TIMEOUT_OPTION
        )
        if self.deadline is not None and self.deadline - time.monotonic() < timeout:
            timeout, limit = max(0.0, self.deadline - time.monotonic()), DEADLINE_LIMIT
        if not self._await(child, pending, timeout):
            self._timed_out(child, request_id, what, method, waited=timeout, limit=limit)
        self._forget(request_id)
        if pending.failure is not None:
            raise HarnessCallError(
                f"{what} failed: the harness {pending.failure}",
                method=method,
                stopped=True,
                rule=pending.rule,
            )
        answer = pending.answer
        assert answer is not None
        if handshake:
            child.greeted = True
        return answer

    def take_untold(self) -> HarnessCallError | None:
        """A protocol break no call has been failed for yet (the child broke it after the last
        answer was read), taken: the case that made that call ends on it, not the next one."""
        self._take_in()
        with self._lock:
            untold, self._untold = self._untold, None
            rule = self._stopped_rule
        if untold is None:
            return None
        return HarnessCallError(
            f"after the last call: the harness {untold}", method="", stopped=True, rule=rule
        )

    def close(self) -> None:
        """Stop the child; the next call starts a fresh one (unless ``ended`` says why not)."""
        with self._lock:
            child = self._child
        if child is not None:
            self._retire(child, "was stopped by the suite")
            child.stop()
        with self._lock:
            retired, self._retired = self._retired, []
        for earlier in retired:
            earlier.reap()  # (waits for a stop under way, or does it)

    # -- internals --------------------------------------------------------------------------

    def _start(self, what: _Call, method: str) -> _Child:
        if (ended := self.ended.why) is not None:
            raise HarnessDead(f"{what} not made: {ended}", method=method)
        try:
            child = _Child(self)
        except OSError as exc:
            command = " ".join(self.command)
            raise HarnessCallError(
                f"{what} not made: the harness command {command!r} cannot start: {exc}",
                method=method,
            ) from None
        with self._lock:
            ended = self.ended.why
            if ended is None:
                child.generation = self._generation
                self._child = child
        if ended is not None:  # ended while it started: nobody would stop it later
            child.stop()
            raise HarnessDead(f"{what} not made: {ended}", method=method)
        if self.trace is not None:
            self.trace.write("event", f"started {' '.join(self.command)} (pid {child.process.pid})")
        return child

    def _await(self, child: _Child, pending: _Pending, timeout: float) -> bool:
        """Wait until ``pending`` is answered or failed; whether it was, within ``timeout``.

        The waiting caller reads the child's stdout itself when no other thread does, handing
        on whatever answers other calls, so a lone call costs no thread switch; callers waiting
        meanwhile are woken when their answer comes or when the reader lets go.
        """
        deadline = time.monotonic() + timeout
        while not pending.finished():
            if self._child is child and child.reader.acquire(blocking=False):
                try:
                    self._read(child, until=pending, deadline=deadline)
                finally:
                    child.reader.release()
                    self._notify()
                if not pending.finished() and time.monotonic() >= deadline:
                    return False
                continue
            with self._turn:
                self._waiting += 1  # before looking: a notifier that sees 0 changed it already
                try:
                    if pending.finished():
                        return True
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return False
                    if child.reader.locked() or self._child is not child:
                        self._turn.wait(remaining)
                finally:
                    self._waiting -= 1
        return True

    def _notify(self) -> None:
        """Wake the callers waiting on another thread's reading, if there are any."""
        if self._waiting:
            with self._turn:
                self._turn.notify_all()

    def _read(self, child: _Child, *, until: _Pending | None, deadline: float | None) -> None:
        """Read and handle ``child``'s output (holding ``child.reader``) until ``until`` is done,
        ``deadline`` (monotonic) passes — None: until its stdout ends — or it is retired."""
        while not child.stdout_ended and self._child is child:
            if until is not None and until.done:
                return
            # Read before polling: once it is set, all the process wrote is in the pipe.
            exited = child.exited
            ready = poll_awake(child.poller) if until is not None and self._lone(until) else []
            if not ready:
                wait_ms = None
                if exited:
                    wait_ms = 0
                elif deadline is not None:
                    wait_ms = max(0, math.ceil((deadline - time.monotonic()) * 1000))
                ready = child.poller.poll(wait_ms)
            if not ready and exited:
                # Its stdout has not ended, held open by something it started: nothing more
                # of the child's own is coming, so it ended now, in the words of its exit.
                child.stdout_ended = True
                child.stdout_closed()
                return
            if not ready:
                return
            if any(fd != child.stdout for fd, _ in ready):
                child.drain_wake()
                if len(ready) == 1:
                    continue
            try:
                chunk = os.read(child.stdout, _READ_CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                child.stdout_ended = True
                child.stdout_closed()
                return
            lines = child.take(chunk)
            if lines is None:
                limit = self.max_answer_bytes
                self._broken(child, f"sent an answer of more than {limit:,} bytes (the size limit)")
                return
            for line in lines:
                self._received(child, line)

    def _lone(self, pending: _Pending) -> bool:
        """Whether ``pending`` is the only call waiting (no other thread to keep from the GIL)."""
        with self._lock:
            return len(self._pending) == 1 and not self._waiting

    def _take_in(self) -> None:
        """Handle what the child wrote while no call waited (it exited, or broke the protocol)
        before anything looks at it, as if it had been read when it came."""
        child = self._child
        if child is None or not child.reader.acquire(blocking=False):
            return
        try:
            self._read(child, until=None, deadline=0.0)
        finally:
            child.reader.release()
            self._notify()

    def _forget(self, request_id: int) -> None:
        with self._lock:
            self._pending.pop(request_id, None)

    def _timed_out(
        self, child: _Child, request_id: int, what: _Call, method: str, *, waited: float, limit: str
    ) -> None:
        self._forget(request_id)
        if limit == DEADLINE_LIMIT:
            with self._lock:
                self.deadline_cuts += 1
            self._retire(child, f"was stopped: {what} reached the run's deadline")
            raise HarnessCallError(
                f"{what} did not answer within {waited:.1f} s ({limit})",
                method=method,
                stopped=True,
            )
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
        raise HarnessCallError(message, method=method, stopped=True)

    def _broken(
        self, child: _Child, what: str, *, with_tail: bool = False, rule: str | None = None
    ) -> None:
        """The child can no longer be trusted: fail every pending call (under ``rule``, where it
        broke one, cited before its stderr) and stop it."""
        cited = f"; {cite(rule)}" if rule is not None else ""
        self._retire(child, what + cited + (child.tail() if with_tail else ""), rule)

    def _retire(self, child: _Child, reason: str, rule: str | None = None) -> None:
        """Stop ``child`` (if it is still the current one) and fail what waits on it."""
        with self._lock:
            if self._child is not child:
                return
            self._child = None
            # Its sessions are gone with it: nothing opened there may be sent to a successor.
            self._generation += 1
            self._stopped_because = reason.splitlines()[0]
            self._stopped_rule = rule
            pending = list(self._pending.values())
            self._pending.clear()
            if rule is not None and all(waiting.done for waiting in pending):
                self._untold = reason
        if self.trace is not None:
            self.trace.write("event", f"harness stopped: {reason.splitlines()[0]}")
        for waiting in pending:
            if waiting.done:
                # Answered before the end was seen (a child that answers and exits at once,
                # read by the thread that watched it exit): its caller takes the answer.
                continue
            waiting.failure, waiting.rule = reason, rule
            waiting.done = True
        child.wake()
        with self._turn:
            self._turn.notify_all()
        child.stopping = True
        with self._lock:
            self._retired = [c for c in self._retired if c.process.returncode is None]
            self._retired.append(child)
        threading.Thread(target=child.stop, daemon=True).start()

    def _received(self, child: _Child, line: bytes) -> None:
        if self.trace is not None:
            self.trace.write("recv", line.decode("utf-8", errors="replace"))
        try:
            message = json.loads(line)
        except ValueError:
            # shown as any value is: a JSON string, or <bytes …> where it is not UTF-8
            self._broken(
                child,
                f"answered with a line that is not JSON: {show(line, 200)}",
                with_tail=True,
                rule=PROTOCOL_BROKEN,
            )
            return
        if isinstance(message, dict) and "id" not in message and message.get("method") == "paused":
            params = message.get("params")
            threading.Thread(
                target=self._resume_after, args=(params,), daemon=True, name="harness-pause"
            ).start()
            return
        request_id = message.get("id") if isinstance(message, dict) else None
        number = request_id if isinstance(request_id, int) else None
        with self._lock:
            pending = self._pending.get(number) if number is not None else None
            again = number is not None and number in self._answered
            fits = pending is not None and ("result" in message or "error" in message)
            if fits and not again and pending is not None and number is not None:
                self._answered.add(number)
                pending.answer = message
                pending.done = True
        if fits and not again:
            self._notify()
            return
        problem = (
            "an answer without an id"
            if not isinstance(message, dict) or "id" not in message
            else f"a second answer to request {request_id}"
            if again
            else f"an answer with an unknown id {request_id!r}"
            if pending is None
            else 'an answer with neither "result" nor "error"'
        )
        self._broken(child, f"sent {problem}: {show(line, 200)}", rule=PROTOCOL_BROKEN)

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
    requests = params.get("requests") if method == "batch" else None
    if isinstance(requests, list):
        return f"batch of {len(requests)} requests"
    return method
