"""Under xdist: what only a worker knows reaches the controller, which writes the reports.

A usage error a worker finds ends the run as one line and exit 4, as without it.

A worker finds what the controller cannot: it makes the run's directory and starts the harness
as it collects. Left to xdist, a worker that stops with a usage error before it has reported its
collection leaves the controller waiting for that collection for ever; one that stops after
becomes an internal error and a traceback. So the worker says why in its output and asks the
run to stop (xdist ends the others then), and the controller raises the worker's line as the
usage error it is.

The controller collects nothing either, so each worker also sends the cases it chose (after
``-k``, ``-m``, ``--conformance-case``, ``--lf``) out of how many: the report then records a
partial selection, and lists a chosen case no worker ran as not run, as it does without xdist.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import asdict, dataclass
from typing import Any, Final

import pytest

KEY: Final = "conformance_usage_error"
"""The key of a worker's usage error in its ``workeroutput``, sent to the controller."""
CONTROLLER: Final = "conformance-xdist-controller"
"""The name the controller's side is registered under."""
SELECTION: Final = "conformance_selection"
"""The key of a worker's choice of cases in its ``workeroutput``: a ``Selection``'s fields."""


@dataclass(frozen=True)
class Selection:
    """The cases a run chose, in order, out of how many it has, and each chosen case's rules."""

    cases: list[str]
    of: int
    partial: bool
    rules: dict[str, list[str]]


def share_selection(config: pytest.Config, selection: Selection) -> None:
    """A worker sends its choice of cases to the controller (every worker makes the same)."""
    output: dict[str, Any] | None = getattr(config, "workeroutput", None)
    if output is not None:
        output[SELECTION] = asdict(selection)


def received_selection(config: pytest.Config) -> Selection | None:
    """The choice of cases a worker sent to this controller, or None (no xdist, none came)."""
    controller = config.pluginmanager.get_plugin(CONTROLLER)
    return controller.selection if isinstance(controller, Controller) else None


class Worker:
    """An xdist worker's side: a usage error is stopped on, and handed to the controller."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.error: str | None = None

    def _stop(self, session: pytest.Session, exc: pytest.UsageError) -> None:
        self.error = line = str(exc)
        output: dict[str, Any] = getattr(self.config, "workeroutput", {})
        output[KEY] = line
        session.shouldstop = line  # xdist stops the run on it instead of waiting

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> Generator[None, object, object]:
        """A usage error while this worker collects stops the whole run."""
        try:
            return (yield)
        except pytest.UsageError as exc:
            if self.error is None:
                self._stop(session, exc)
            raise

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session
    ) -> Generator[None, object, object]:
        """A usage error as the cases are chosen, or the harness connected, stops it too."""
        try:
            return (yield)
        except pytest.UsageError as exc:
            self._stop(session, exc)
            raise

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> Generator[None, object, object]:
        """pytest finishes a collection that failed, too: xdist must not hear of this one.

        Sent, it is a collection before ``-k`` chose from it, which xdist compares with the other
        workers' and reports as a different one.
        """
        if self.error is not None:
            raise pytest.UsageError(self.error)
        return (yield)


class Controller:
    """xdist's controller: a worker's usage error becomes the run's, one line and exit 4."""

    def __init__(self) -> None:
        self.error: str | None = None
        self.selection: Selection | None = None

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """Keep the first usage error, and the first choice of cases, a finished worker sends."""
        output = getattr(node, "workeroutput", None) or {}
        if self.error is None and output.get(KEY):
            self.error = str(output[KEY])
        sent = output.get(SELECTION)
        if self.selection is None and isinstance(sent, dict):
            self.selection = Selection(**sent)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        """xdist ends its loop as interrupted by the worker's stop; it is a usage error."""
        try:
            result = yield
        except BaseException:
            if self.error is not None:
                raise pytest.UsageError(self.error) from None
            raise
        if self.error is not None:
            raise pytest.UsageError(self.error)
        return result


def register(config: pytest.Config) -> None:
    """Plug in the side this process is; a run without xdist is the controller of none.

    Registered as pytest configures, before xdist's own ``pytest_configure`` (``trylast``) has
    said whether this run is distributed; without workers the controller never hears of one.
    """
    if hasattr(config, "workerinput"):
        config.pluginmanager.register(Worker(config), "conformance-xdist-worker")
    else:
        config.pluginmanager.register(Controller(), CONTROLLER)
