"""How the suite reaches a harness: one ``call(method, params)``, whatever is on the other side.

Two transports implement it: ``InProcess`` (a Python object in this process) and ``Stdio`` (a
child process speaking JSON Lines, any language). Every way a call can go wrong — the harness
raised, answered outside the contract, timed out, exited, or sent too much — surfaces as a
``HarnessCallError`` whose message says what happened in words a harness author acts on; the
case that made the call fails with it, and the suite goes on.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

from conformance.harness.batch import Unresolved, resolve
from conformance.harness.contract import Json, JsonObject
from conformance.harness.dispatch import Propagated, UnknownMethod, described, dispatch

PauseHandler = Callable[[str, str], None]


class HarnessCallError(Exception):
    """A call to the harness failed; the message says what happened."""

    def __init__(
        self,
        message: str,
        *,
        method: str,
        propagated: str | None = None,
        unknown: bool = False,
        stopped: bool = False,
        rule: str | None = None,
    ) -> None:
        super().__init__(message)
        self.method = method
        self.propagated = propagated
        self.unknown = unknown
        """The harness answered that it has no such method (SPEC {proto.unknown})."""
        self.stopped = stopped
        """The harness process was stopped under the call (it timed out, exited or broke the
        protocol): the same call again meets a fresh process, so it is no counterexample."""
        self.rule = rule
        """The rule the harness broke where the failure is one (an answer outside the
        protocol: {proto.ids}); None where no rule speaks (an exit, a timeout)."""


class HarnessDead(HarnessCallError):
    """The harness stopped answering for good; every remaining call fails at once."""


class Transport(ABC):
    """A connection to one harness."""

    label: str

    def __init__(self) -> None:
        self._pause_handlers: list[PauseHandler] = []
        self._pause_lock = threading.Lock()

    @property
    def generation(self) -> int:
        """Bumped whenever the harness behind the transport restarts (its sessions are gone)."""
        return 0

    @property
    def batches(self) -> bool:
        """Whether the harness takes several requests in one (SPEC {proto.batch})."""
        return False

    @abstractmethod
    def call(self, method: str, params: JsonObject) -> Json:
        """Make one call; raise ``HarnessCallError`` if it fails in any way."""

    def call_batch(self, requests: Sequence[tuple[str, JsonObject]]) -> list[Json]:
        """Make ``requests`` in order, where a ref ``{"answer": k}`` names request k's handle
        (SPEC {proto.batch}); each request's result, or the ``HarnessCallError`` of the first
        that failed, which ends the list.

        Here one at a time, each resolved from the results before it: the same requests the
        harness would get in one batch, for a harness that takes no batches.
        """
        outcomes: list[Json] = []
        results: list[Json] = []
        for method, params in requests:
            try:
                result = self.call(method, resolve(method, params, results))
            except Unresolved as exc:
                outcomes.append(HarnessCallError(f"{method} not made: {exc}", method=method))
                break
            except HarnessCallError as exc:
                outcomes.append(exc)
                break
            outcomes.append(result)
            results.append(result)
        return outcomes

    def close(self) -> None:  # noqa: B027 - most transports hold nothing to release
        """Release the harness (stop a child process)."""

    def log_lines(self) -> list[str] | None:
        """What the harness wrote to its log so far (a child's stderr); None if not observable."""
        return None

    def abandon(self, reason: str) -> bool:
        """Stop the harness if a call is still waiting on it (a case ended without its answer).

        Returns whether it did; a transport that cannot stop its harness returns False.
        """
        return False

    def add_pause_handler(self, handler: PauseHandler) -> None:
        """What the suite does when an armed mutation pauses (SPEC §6.4); one per armed point."""
        with self._pause_lock:
            self._pause_handlers.append(handler)

    def remove_pause_handler(self, handler: PauseHandler) -> None:
        """Forget a handler ``add_pause_handler`` installed."""
        with self._pause_lock:
            self._pause_handlers.remove(handler)

    def _paused(self, session: str, point: str) -> None:
        # Two sessions can be armed at once (a race): each handler picks its own session.
        with self._pause_lock:
            handlers = list(self._pause_handlers)
        for handler in handlers:
            handler(session, point)


class InProcess(Transport):
    """A Python harness object in this process: no isolation, no timeouts (debugging, mutmut)."""

    def __init__(self, harness: Any, label: str) -> None:
        super().__init__()
        self.harness = harness
        self.label = label

    def call(self, method: str, params: JsonObject) -> Json:
        """Dispatch to the object; its exceptions become ``HarnessCallError``."""
        try:
            return dispatch(self.harness, method, params, self._paused)
        except Propagated as exc:
            raise HarnessCallError(
                f"{method}: {exc.name} propagated out of the call",
                method=method,
                propagated=exc.name,
            ) from exc
        except UnknownMethod as exc:
            raise HarnessCallError(f"{method}: {exc}", method=method, unknown=True) from exc
        except Exception as exc:
            raise HarnessCallError(f"{method} raised {described(exc)}", method=method) from exc
