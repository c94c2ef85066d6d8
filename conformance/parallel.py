"""A run on two cores: a helper process runs the slowest modules' cases beside this one.

Why: a run's time is its cases', and one core does them all, in turns with the harness child.
The property, state-machine, publication and contract modules take about half of it
(hypothesis' engine, durable writes, concurrent calls) in a twelfth of the cases, so a second
process running them beside the rest takes a fifth to a third off a run (docs/numbers.md).

How it stays one run:

* The helper is forked when collection starts, before any harness or thread exists, and
  collects only those modules. This process collects them all, chooses the helper's cases
  (``helper_items``) and sends it their IDs: the cases each process runs, and their order,
  are the same on every run. The choice is a rule of each case alone (``_helpers``), so the
  helper starts on its own choice as soon as it has collected, and follows the list from
  when it comes (it is shorter only where a plugin selects by the whole collection).
* The helper has a harness instance of its own (its own child process, directories and
  secrets), as PUB-010 already has: SPEC §6.3 asks a harness to run as two instances.
* It reports nothing itself. Each of its cases' phase reports comes back through pytest's
  serialization hooks and is logged here, after this process's own cases, in collection
  order: the terminal, JUnit, ``--lf`` and the conformance report see every case once.
* A case the helper does not report (it ended first, or did not collect it) runs here, and
  the terminal summary says so: the run is whole either way.

Only where forking is safe and nothing needs one process (``why_one_process``): Linux, two
usable CPUs, a harness in a child process, pytest's default capture, and none of the options
that make the run interactive or cut it short. ``--conformance-jobs 1`` keeps it in one process.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import queue
import select
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any, Final

import pytest

from conformance.basetemp import RunBase
from conformance.secrets import scrub
from conformance.speed import usable_cpus

HELPER_MODULES: Final = frozenset(
    {"test_properties", "test_state_machine", "test_publication", "test_contract"}
)
"""The modules whose cases the helper runs (by a case's module name)."""
SNAPSHOT_FIXTURES: Final = frozenset({"snapshot", "transcript_snapshot"})
"""A case that compares snapshots stays here: syrupy counts what each case used."""
JOBS_CHOICES: Final = ("auto", "1")
STOP_S: Final = 10.0
"""How long the helper may take to close its harness before it is killed."""
_HEADER: Final = 8


def why_one_process(config: pytest.Config) -> str | None:
    """Why this run keeps every case in one process, or ``None`` when a helper may run some."""
    jobs = config.getoption("conformance_jobs") or config.getini("conformance_jobs") or "auto"
    capman = config.pluginmanager.getplugin("capturemanager")
    reasons = (
        (jobs == "1", "--conformance-jobs 1"),
        (not sys.platform.startswith("linux") or not hasattr(os, "fork"), "not Linux"),
        (usable_cpus() < 2, "one usable CPU"),
        (bool(config.getoption("maxfail")), "-x or --maxfail"),
        (
            bool(config.getoption("usepdb", None) or config.getoption("trace", None)),
            "--pdb or --trace",
        ),
        (config.getoption("capture", None) != "fd", "a capture method other than fd"),
        (bool(config.getoption("conformance_trace")), "--conformance-trace"),
        (config.getoption("conformance_deadline") is not None, "--conformance-deadline"),
        (bool(config.getoption("conformance_case")), "--conformance-case"),
        (bool(getattr(config.option, "update_snapshots", False)), "--snapshot-update"),
        (hasattr(config, "workerinput") or config.pluginmanager.has_plugin("dsession"), "xdist"),
        (
            bool(config.getoption("stepwise", False) or config.getoption("stepwise_skip", False)),
            "--stepwise",
        ),
        (not hasattr(capman, "_global_capturing"), "a pytest without the capture manager's state"),
        (threading.active_count() > 1, "a thread is running"),
    )
    return next((why for applies, why in reasons if applies), None)


def helper_items(
    items: list[pytest.Item], keep: Callable[[pytest.Item], bool]
) -> list[pytest.Item]:
    """The helper's cases among ``items``: none unless both processes get some.

    ``keep`` says which items must stay in this process whatever their module (not a case, or
    a case that races a second instance of its own).
    """
    chosen = [item for item in items if _helpers(item, keep)]
    return chosen if 0 < len(chosen) < len(items) else []


def _helpers(item: pytest.Item, keep: Callable[[pytest.Item], bool]) -> bool:
    """Whether ``item`` is one of the helper's cases (a rule of the item alone)."""
    module = str(getattr(getattr(item, "module", None), "__name__", ""))
    return (
        module.rsplit(".", 1)[-1] in HELPER_MODULES
        and not SNAPSHOT_FIXTURES & set(getattr(item, "fixturenames", ()))
        and not keep(item)
    )


class Split:
    """This process's side: which cases the helper runs, and their reports as they arrive."""

    def __init__(self, config: pytest.Config, pid: int, fds: tuple[int, int], base: RunBase, *,
                 keep: Callable[[pytest.Item], bool], notes: list[str]) -> None:  # fmt: skip
        self.config = config
        self.keep = keep
        self.notes = notes
        """Lines for the end of the terminal summary."""
        self.pid = pid
        self.base = base
        """The helper's run directory, made here so it is removed here whatever becomes of it."""
        self._reader = os.fdopen(fds[0], "rb")
        self._writer: int | None = fds[1]
        self._inbox: queue.Queue[tuple[Any, ...] | None] = queue.Queue()
        self._drain: threading.Thread | None = None
        self.nodeids: set[str] = set()
        self._received: dict[str, tuple[Any, ...]] = {}
        self._ended: str | None = None
        """Set when the helper will send nothing more: why, for the note."""
        self._status: int | None = None
        self._said = False
        self._pending: set[str] = set()
        """The helper's cases not yet logged: while there are, it is still at work."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Hand the helper its cases; here they are logged last, as their reports come."""
        chosen = helper_items(session.items, self.keep)
        try:
            _write(self._writer, pickle.dumps([item.nodeid for item in chosen]))
        except OSError:  # it ended before the list came: everything runs here
            chosen = []
            self.notes.append(f"the helper process ended{self._exit_words()} before it was "
                              "given its cases: they all ran in this process")  # fmt: skip
        self._close_writer()
        self.nodeids = {item.nodeid for item in chosen}
        self._pending = set(self.nodeids)
        if chosen:
            session.items[:] = [i for i in session.items if i.nodeid not in self.nodeids] + chosen
        else:  # it may have started on cases of its own choice: no use for them now
            self._signal(signal.SIGTERM)
        # Read as the helper writes: a pipe holds 64 KiB, and its reports wait for the end.
        self._drain = threading.Thread(target=self._read_all, name="helper-reports", daemon=True)
        self._drain.start()

    def _read_all(self) -> None:
        message = self._read_one()
        while message is not None:
            self._inbox.put(message)
            message = self._read_one()
        self._inbox.put(None)

    def _close_writer(self) -> None:
        if self._writer is not None:
            with contextlib.suppress(OSError):
                os.close(self._writer)
            self._writer = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> bool | None:
        """Log a helper's case from its reports; run it here if the helper does not send them."""
        if item.nodeid not in self.nodeids:
            return None
        message = self._wait_for(item.nodeid)
        self._pending.discard(item.nodeid)
        if message is None:
            if not self._said:
                self._said = True
                self.notes.append(f"{self._ended} {item.nodeid}: it, and any of the helper's "
                                  "cases after it, ran in this process")  # fmt: skip
            return None
        hook = item.ihook
        hook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        for data in message[2]:
            report = self.config.hook.pytest_report_from_serializable(config=self.config, data=data)
            hook.pytest_runtest_logreport(report=report)
        for warning in message[3]:
            self.config.hook.pytest_warning_recorded.call_historic(
                kwargs={"warning_message": _warning_from(warning), "when": "runtest",
                        "nodeid": item.nodeid, "location": item.location}
            )  # fmt: skip
        hook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    def _wait_for(self, nodeid: str) -> tuple[Any, ...] | None:
        """The helper's message about ``nodeid``, read as far as it takes; ``None``: it has none."""
        while nodeid not in self._received and self._ended is None:
            message = self._inbox.get()
            if message is None:
                self._ended = f"the helper process ended{self._exit_words()} before it reported"
            elif message[0] == "case" and len(message) == 4:
                self._received[str(message[1])] = message
            elif message[0] == "done":
                self._ended = "the helper process did not collect"
            else:
                self._ended = f"the helper process stopped ({message[-1]}) before it reported"
                # (its reason: an exception, or what made pytest stop the run)
        return self._received.pop(nodeid, None)

    def _read_one(self) -> tuple[Any, ...] | None:
        try:
            header = self._reader.read(_HEADER)
            if len(header) < _HEADER:
                return None
            size = int.from_bytes(header, "big")
            body = self._reader.read(size)
            message = pickle.loads(body) if len(body) == size else None
        except (OSError, pickle.PickleError, EOFError, AttributeError, ValueError):
            return None
        return message if isinstance(message, tuple) and message else None

    def _exit_words(self) -> str:
        # Its pipe ended, or carried what is not a message: then it may still run, and write.
        self._stop(signal.SIGTERM)
        status = self._status
        if status is None:
            return ""
        if os.WIFSIGNALED(status):
            return f" (killed by signal {os.WTERMSIG(status)})"
        return f" (exit {os.waitstatus_to_exitcode(status)})"

    def _reap(self, *, block: bool) -> int | None:
        if self._status is None:
            with contextlib.suppress(ChildProcessError):
                pid, status = os.waitpid(self.pid, 0 if block else os.WNOHANG)
                if pid == self.pid:
                    self._status = status
        return self._status

    def close(self) -> None:
        """Let the helper finish, or stop it if the run ended first; remove its directory."""
        self._close_writer()  # a helper still waiting for its cases gets none and ends
        # While cases are pending the run ended first: told to stop, it closes its harness.
        self._stop(signal.SIGTERM if self._pending or not self.nodeids else None)
        if self._drain is not None:
            self._drain.join(STOP_S)  # the helper is gone: its pipe has ended
        with contextlib.suppress(OSError):
            self._reader.close()
        self.base.remove()

    def _stop(self, first: signal.Signals | None) -> None:
        """Send ``first`` (if any), give the helper ``STOP_S`` to end, then kill it."""
        if first is not None:
            self._signal(first)
        if not self._wait_exit(STOP_S):
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self._reap(block=True)

    def _signal(self, signum: signal.Signals) -> None:
        if self._reap(block=False) is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def _wait_exit(self, seconds: float) -> bool:
        """Whether the helper has ended within ``seconds``."""
        if self._reap(block=False) is not None:
            return True
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # no pidfd: look again every 10 ms
            until = time.monotonic() + seconds
            while self._reap(block=False) is None and time.monotonic() < until:
                time.sleep(0.01)
        else:
            try:
                select.select([pidfd], [], [], seconds)
            finally:
                os.close(pidfd)
        return self._reap(block=False) is not None


def _write(fd: int | None, body: bytes) -> None:
    if fd is None:
        raise OSError("closed")
    data = len(body).to_bytes(_HEADER, "big") + body
    while data:
        data = data[os.write(fd, data) :]


class Helper:
    """The helper process's side: it runs the cases it is given, sends back their reports, exits.

    It never leaves its run loop for pytest's end of session: no report, JUnit file or
    terminal line comes from it.
    """

    def __init__(
        self, config: pytest.Config, fds: tuple[int, int], keep: Callable[[pytest.Item], bool]
    ) -> None:
        self.config = config
        self.keep = keep
        self.cleanup: Callable[[], None] = lambda: None
        """Closes this process's harness; the plugin sets it."""
        self._reader = os.fdopen(fds[0], "rb")
        self._fd = fds[1]
        self._reports: list[Any] = []
        self._warnings: list[tuple[str, str, str, str, int]] = []
        self._given: list[str] | None = None
        """The main process's list of this one's cases, once read."""
        self._collected: dict[str, pytest.Item] = {}

    def exit(self, code: int) -> None:
        """Close this process's harness and leave at once (no atexit, no pytest teardown).

        Signals wait meanwhile: an interruption must not leave its harness running.
        """
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signum, signal.SIG_IGN)
        try:
            self.cleanup()
        finally:
            os._exit(code)

    def _send(self, message: tuple[Any, ...]) -> None:
        _write(self._fd, pickle.dumps(message))

    def _assigned(self) -> list[str]:
        """The IDs the main process gives this one (none if it ended first)."""
        header = self._reader.read(_HEADER)
        body = self._reader.read(int.from_bytes(header, "big")) if len(header) == _HEADER else b""
        with contextlib.suppress(Exception):
            found = pickle.loads(body)
            if isinstance(found, list):
                return [str(nodeid) for nodeid in found]
        return []

    def _plan(self, ran: set[str], *, wait: bool) -> list[pytest.Item] | None:
        """The cases still to run by the main process's list once it has come, else ``None``.

        ``wait``: wait for it. Until it comes this process runs its own choice, by the rule the
        main process chooses with (``_helpers``), so its cases start as soon as it has collected
        rather than when the main process has; the two lists differ only where a plugin
        selects by the whole collection (``--lf``), and then the main process's list wins: the
        cases not on it that ran here meanwhile are not reported (the main process runs them).
        """
        if self._given is None:
            if not wait and not select.select([self._reader], [], [], 0)[0]:
                return None
            self._given = self._assigned()
        return [self._collected[n] for n in self._given if n in self._collected and n not in ran]

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Start with this process's own choice of its cases; none: wait for the main's list."""
        self._collected = {item.nodeid: item for item in session.items}
        chosen = [item for item in session.items if _helpers(item, self.keep)]
        if not chosen:
            chosen = self._plan(set(), wait=True) or []
        if not chosen:
            with contextlib.suppress(OSError):
                self._send(("done",))
            self.exit(0)
        session.items[:] = chosen

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        """Run the cases one by one, sending each one's reports as soon as it is over."""
        code = 1
        try:
            todo, ran = list(session.items), set[str]()
            while todo:
                # The plan is final before its last case: ``nextitem`` decides what is torn down.
                plan = self._plan(ran, wait=len(todo) == 1)
                todo = todo if plan is None else plan
                if not todo:
                    continue  # the main process's list holds nothing more for this one
                item = todo.pop(0)
                ran.add(item.nodeid)
                nextitem = todo[0] if todo else None
                item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
                self._send(("case", item.nodeid, self._reports, self._warnings))
                self._reports, self._warnings = [], []
                if session.shouldfail or session.shouldstop:
                    self._send(("stopped", str(session.shouldfail or session.shouldstop)))
                    break
            else:
                self._send(("done",))
            code = 0
        except BaseException as exc:  # the main process says it, and runs the rest
            with contextlib.suppress(Exception):
                self._send(("failed", scrub(f"{type(exc).__name__}: {exc}")))
        self.exit(code)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        """Reached only when collection failed or was interrupted: the main process reports."""
        self.exit(1)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep each phase's report, as pytest serializes it, for the main process."""
        self._reports.append(
            self.config.hook.pytest_report_to_serializable(config=self.config, report=report)
        )

    def pytest_warning_recorded(self, warning_message: warnings.WarningMessage, when: str) -> None:
        """Keep a case's warnings for the main process's summary (collection's are its own)."""
        if when != "runtest":
            return
        category = warning_message.category
        self._warnings.append((str(warning_message.message), category.__module__,
                               category.__qualname__, warning_message.filename,
                               warning_message.lineno))  # fmt: skip


def _warning_from(kept: tuple[str, str, str, str, int]) -> warnings.WarningMessage:
    text, module, name, filename, lineno = kept
    message: Warning = UserWarning(text)
    with contextlib.suppress(Exception):  # a class of its own that cannot be made again
        found: object = importlib.import_module(module)
        for part in name.split("."):
            found = getattr(found, part)
        if isinstance(found, type) and issubclass(found, Warning):
            message = found(text)
    return warnings.WarningMessage(message, type(message), filename, lineno)


def fork(
    config: pytest.Config,
    base: RunBase,
    *,
    modules: list[str],
    keep: Callable[[pytest.Item], bool],
    notes: list[str],
    become_helper: Callable[[RunBase, Helper], None],
) -> Split | Helper | None:
    """Fork the helper, which collects only ``modules`` (paths of ``HELPER_MODULES``).

    In it, ``become_helper`` gets its own run directory and side. ``keep`` says which items
    stay in this process whatever their module. Call it with nothing running but this
    thread, before any harness starts. ``None``: the helper could not be started (the run
    stays in one process).
    """
    helper_base = RunBase(base.base)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()  # what is buffered now must not be written twice
    fds: list[int] = []
    try:
        helper_base.create()
        for _ in range(2):
            fds += os.pipe()
        pid = os.fork()
    except (OSError, ValueError):  # no directory, pipe or process to spare: one process then
        for fd in fds:
            os.close(fd)
        helper_base.remove()
        return None
    down_read, down_write, up_read, up_write = fds
    if pid:
        os.close(down_read)
        os.close(up_write)
        split = Split(config, pid, (up_read, down_write), helper_base, keep=keep, notes=notes)
        config.pluginmanager.register(split, "conformance-split")
        return split
    try:
        os.close(down_write)
        os.close(up_read)
        _silence_and_capture_anew(config)
        helper = Helper(config, (down_read, up_write), keep)
        become_helper(helper_base, helper)
        config.args[:] = modules
        config.pluginmanager.register(helper, "conformance-helper")
    except BaseException:  # never run the main process's code twice
        os._exit(1)
    return helper


def _silence_and_capture_anew(config: pytest.Config) -> None:
    """The helper's stdout goes nowhere, and its captures into files of its own.

    The capture manager's files are the main process's too (the same open files): left
    shared, each process would read and truncate the other's output.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    capman: Any = config.pluginmanager.getplugin("capturemanager")
    capman._global_capturing = None  # dropped, not stopped: stopping reads them
    capman.start_global_capturing()
    capman.suspend_global_capture()
