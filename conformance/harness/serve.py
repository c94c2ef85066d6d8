"""A Python harness behind the stdio protocol: ``python -m conformance.serve --harness M:A``.

This is how the suite isolates a Python harness by default: it runs this module as the child
process, so a harness that hangs, exits or floods its output never takes the suite down. Stray
``print`` output (and anything else written to file descriptor 1) goes to stderr, which is the
harness's log; the protocol has a private copy of the original stdout. Requests are served
concurrently (SPEC §6.3), so two sessions can race: on a pool of threads, except a request that
arrives while nothing else runs and whose session was never armed to pause, which is served
on the reading thread (it cannot wait for anything the suite has yet to send, and a thread
handoff costs more than most calls). A ``batch`` (SPEC {proto.batch}) is run here, one
request after another, for any harness object.

Every request is answered, whatever the harness does in the call: an exception whose string
form raises, an interruption (SPEC {tool.base-exception}), a result that cannot be written as
JSON. The requests come on a private copy of stdin too, and file descriptor 0 reads nothing
(``/dev/null``): a harness that reads stdin, or a program it starts that inherits it, would
otherwise take the suite's requests.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import select
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any, Final

from conformance.encoding import json_text
from conformance.harness.batch import BATCHABLE, Unresolved, resolve
from conformance.harness.contract import PROTOCOL_VERSION, Json, JsonObject
from conformance.harness.dispatch import (
    Propagated,
    UnknownMethod,
    described,
    dispatch,
    message_of,
)
from conformance.harness.objects import load_python_harness
from conformance.speed import poll_awake

SERVE_PREFIX: Final = "conformance.serve: "
"""Starts the one line this module writes to stderr when it cannot serve at all."""
_WORKERS: Final = 8
_READ_CHUNK: Final = 1 << 16


class Server:
    """Reads requests, runs them on a pool, writes answers; one instance per process."""

    def __init__(self, harness: Any, out: IO[bytes], label: str = "the harness") -> None:
        self.harness = harness
        self.label = label
        self._out = out
        self._write_lock = threading.Lock()
        # Each session's paused calls, oldest first: a resume releases the oldest (a harness
        # that never disarms pauses a second write of the session before the first resumes).
        self._pauses: dict[str, collections.deque[threading.Event]] = {}
        self._pauses_lock = threading.Lock()
        self._input_ended = False  # once True, no resume can come: nothing pauses any more
        self._armed: set[str | None] = set()  # sessions that were ever armed (until closed)
        self._running = 0  # requests on the pool not yet answered
        self._running_lock = threading.Lock()
        self._lone = False  # a request is being served on the reading thread
        self._reader: int | None = None  # the reading thread, while serve() runs
        self._requests: Iterator[bytes] = iter(())
        self._pool: ThreadPoolExecutor | None = None

    def serve(self, source: IO[bytes]) -> None:
        """Answer every request until stdin ends."""
        with ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="serve") as pool:
            self._pool, self._reader = pool, threading.get_ident()
            # One iterator: a call paused on this thread reads on from it (``_pause``).
            self._requests = self._lines(source)
            for raw in self._requests:
                self._take(raw)
            # SPEC §6.4: with the input ended no resume can come, so a paused call goes on (the
            # pool is waited for on the way out of the block, and would wait for it forever).
            self._release_pauses()

    def _take(self, raw: bytes) -> None:
        """Handle one request line: a resume at once, a request here or on the pool."""
        if not raw.strip():
            return
        try:
            request = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            self._answer({"id": None, "error": {"message": f"not JSON: {exc}"}})
            return
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            self._answer({"id": _id_of(request), "error": {"message": "not a request"}})
            return
        if request["method"] == "resume":
            self._resume(request)
            return
        if self._alone(request):
            self._lone = True
            try:
                # As on the pool, where a failure to write the answer is kept by an unread
                # future (``_run`` answers whatever the call does).
                with contextlib.suppress(Exception):
                    self._run(request)
            finally:
                self._lone = False
        else:
            with self._running_lock:
                self._running += 1
            assert self._pool is not None
            self._pool.submit(self._run_on_pool, request)

    def _release_pauses(self) -> None:
        with self._pauses_lock:
            self._input_ended = True
            waiting = [event for queue in self._pauses.values() for event in queue]
            self._pauses.clear()
        for event in waiting:
            event.set()

    def _lines(self, source: IO[bytes]) -> Iterator[bytes]:
        """The request lines of ``source``; while nothing runs, the next is waited for awake
        (``conformance.speed.poll_awake``): it usually comes within a millisecond."""
        try:
            fd = source.fileno()
        except (AttributeError, OSError, ValueError):  # not a file (a test's BytesIO)
            yield from source
            return
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        pending = b""
        while True:
            newline = pending.find(b"\n")
            if newline >= 0:
                yield pending[: newline + 1]
                pending = pending[newline + 1 :]
                continue
            with self._running_lock:
                idle = self._running == 0
            if idle:
                poll_awake(poller)
            chunk = os.read(fd, _READ_CHUNK)
            if not chunk:
                if pending:
                    yield pending
                return
            pending += chunk

    def _alone(self, request: JsonObject) -> bool:
        """Whether the request may run right here, on the reading thread (no thread handoff).

        Only when nothing else is running and its session cannot pause: then it cannot wait
        for anything the suite has still to send (a resume, or another call it races), so
        serving it before reading on delays nothing. Everything else goes to the pool.
        """
        params = request.get("params")
        session = params.get("session") if isinstance(params, dict) else None
        if not isinstance(session, str):
            session = None
        if request["method"] == "arm_pause":
            self._armed.add(session)
        elif request["method"] == "close_workspace":
            self._armed.discard(session)  # a call of it still paused is running: the pool
        if session in self._armed or self._lone:  # (a lone call paused: ``_pause``)
            return False
        with self._running_lock:
            return self._running == 0

    def _run_on_pool(self, request: JsonObject) -> None:
        try:
            self._run(request)
        finally:
            with self._running_lock:
                self._running -= 1

    def _run(self, request: JsonObject) -> None:
        request_id = request.get("id")
        try:
            method, params = request["method"], request.get("params") or {}
            answer = self._batch(params) if method == "batch" else self._outcome(method, params)
        except BaseException as exc:  # every request is answered
            answer = {"error": {"message": f"the answer could not be made: {described(exc)}"}}
        self._answer({"id": request_id, **answer})

    def _outcome(self, method: str, params: JsonObject) -> JsonObject:
        """``{"result"}`` or ``{"error"}`` of one request, as the protocol answers it."""
        try:
            result = dispatch(self.harness, method, params, self._pause)
            if method == "describe":
                result = self._describe(result)
                problem = _undeclarable(self.harness, result, self.label)
                if problem is not None:  # one line before the first case ({contract.declared})
                    return {"error": {"message": SERVE_PREFIX + problem}}
        except Propagated as exc:
            return {"error": {"message": str(exc) or exc.name, "propagated": exc.name}}
        except UnknownMethod as exc:
            return {"error": {"message": str(exc), "unknown": True}}
        except BaseException as exc:  # an Exception, or one raised out of dispatch
            if not isinstance(exc, Exception):  # by what describe's answer asked of the object
                name = type(exc).__name__
                return {"error": {"message": message_of(exc) or name, "propagated": name}}
            return {"error": {"message": described(exc)}}
        return {"result": result}

    def _batch(self, params: JsonObject) -> JsonObject:
        """Run a batch's requests in order, resolving ``{"answer": k}`` refs, until one fails
        (SPEC {proto.batch}): any harness object gets batches from this module."""
        requests = params.get("requests") if isinstance(params, dict) else None
        if not isinstance(requests, list):
            return {"error": {"message": "batch: params.requests must be a list"}}
        answers: list[JsonObject] = []
        results: list[Json] = []
        for request in requests:
            method = request.get("method") if isinstance(request, dict) else None
            if method not in BATCHABLE:
                shown = json.dumps(method)
                message = f"batch: {shown} cannot be batched (only {', '.join(BATCHABLE)})"
                answers.append({"error": {"message": message}})
                break
            given = request.get("params") or {}
            if not isinstance(given, dict):
                answers.append({"error": {"message": f"{method}: params must be an object"}})
                break
            try:
                resolved = resolve(method, given, results)
            except Unresolved as exc:
                answers.append({"error": {"message": f"{method}: {exc}"}})
                break
            answer = self._outcome(method, resolved)
            answers.append(answer)
            if "error" in answer:
                break
            results.append(answer["result"])
        return {"result": {"answers": answers}}

    def _describe(self, answer: Json) -> Json:
        """Add the protocol version, that batches are taken (this module runs them), and the
        capabilities inferred from the object if undeclared."""
        from conformance.harness.contract import infer_capabilities  # noqa: PLC0415

        if not isinstance(answer, dict):
            return answer
        # A harness that says batch: false itself is sent each request alone.
        described = {"batch": True, **answer, "protocol": PROTOCOL_VERSION}
        if "capabilities" not in described:
            described["capabilities"] = sorted(infer_capabilities(self.harness))
            described["inferred"] = True
        return described

    def _pause(self, session: str, point: str) -> None:
        """Tell the suite the mutation reached ``point``; wait until it says resume."""
        resumed = threading.Event()
        with self._pauses_lock:
            if self._input_ended:
                return  # nobody is left to say resume: go on at once
            self._pauses.setdefault(session, collections.deque()).append(resumed)
        self._answer({"method": "paused", "params": {"session": session, "point": point}})
        if threading.get_ident() != self._reader:
            resumed.wait()
            return
        # Paused on the reading thread (a lone call, where a harness fired a pause it was not
        # armed for): nothing else would read the resume, so read on here, every request but
        # resumes going to the pool, until it comes or the input ends.
        for raw in self._requests:
            self._take(raw)
            if resumed.is_set():
                return
        self._release_pauses()

    def _resume(self, request: JsonObject) -> None:
        params = request.get("params")
        session = params.get("session") if isinstance(params, dict) else None
        waiting = None
        with self._pauses_lock:
            queue = self._pauses.get(session) if isinstance(session, str) else None
            if queue:
                waiting = queue.popleft()
                if not queue:
                    del self._pauses[session]  # type: ignore[arg-type]
        if waiting is None:
            self._answer(
                {"id": request.get("id"), "error": {"message": f"nothing paused in {session!r}"}}
            )
            return
        self._answer({"id": request.get("id"), "result": None})
        waiting.set()

    def _answer(self, message: JsonObject) -> None:
        try:
            line = json_text(message, allow_nan=False).encode("utf-8")
        except BaseException as exc:  # too deep, or the harness's own types raise
            why = f"the harness answered a value that is not JSON: {message_of(exc)}"
            line = json.dumps({"id": message.get("id"), "error": {"message": why}}).encode("utf-8")
        with self._write_lock:
            self._out.write(line + b"\n")
            self._out.flush()


def _undeclarable(harness: Any, described: Json, label: str) -> str | None:
    """Why the object cannot back a well-formed ``describe`` answer (a declared method is
    missing), or None; a malformed answer is left to the suite to word."""
    from conformance.harness.contract import ContractError, parse_profile  # noqa: PLC0415

    try:
        parse_profile(described, label)
    except ContractError:
        return None
    try:
        parse_profile(described, label, methods_of=harness)
    except ContractError as exc:
        return str(exc)
    return None


def _id_of(request: object) -> Json:
    return request.get("id") if isinstance(request, dict) else None


def main(argv: Sequence[str] | None = None) -> int:
    """Serve one harness over stdin/stdout."""
    parser = argparse.ArgumentParser(prog="python -m conformance.serve", description=__doc__)
    parser.add_argument("--harness", help="module:attr or a registered harness name")
    parser.add_argument("--mcp", metavar="CMD", help="bridge to the file tools of an MCP server")
    parser.add_argument("--mcp-map", metavar="FILE", help="TOML mapping of spec tools to MCP tools")
    parser.add_argument("--wording", metavar="FILE", help="the words of the bridge's own refusals")
    args = parser.parse_args(argv)
    # The protocol keeps private copies of stdin and stdout (not inherited by what the harness
    # starts); fd 1 (print, C extensions) becomes stderr, and fd 0 reads nothing.
    protocol = os.fdopen(os.dup(1), "wb")
    requests = os.fdopen(os.dup(0), "rb", buffering=0)
    os.dup2(2, 1)
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.close(nothing)
    sys.stdout = sys.stderr
    label = f'harness "{args.harness}"' if args.harness else f"--harness-mcp {args.mcp!r}"
    try:
        harness = _load(args)
    except Exception as exc:
        print(f"{SERVE_PREFIX}{exc}", file=sys.stderr, flush=True)
        return 2
    except BaseException as exc:  # sys.exit() at import says so in one line too
        print(
            f"{SERVE_PREFIX}{label} cannot be loaded: {described(exc)}", file=sys.stderr, flush=True
        )
        return 2
    Server(harness, protocol, label).serve(requests)
    return 0


def _load(args: argparse.Namespace) -> Any:
    if args.mcp:
        from conformance.harness.mcp import McpBridge  # noqa: PLC0415 - an optional extra

        return McpBridge.from_command(args.mcp, args.mcp_map, args.wording)
    if not args.harness:
        raise ValueError("--harness module:attr (or --mcp CMD) is required")
    return load_python_harness(args.harness)


if __name__ == "__main__":
    sys.exit(main())
