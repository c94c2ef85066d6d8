"""The pytest plugin: wiring only. It connects pytest to the parts that do the work.

* ``harness.loading`` — which harness, over which transport;
* ``verdict`` — each case's judge, settled when the case ends;
* ``report`` — outcomes per case and level, the summaries, the exit status;
* ``baseline`` — known failures;
* ``snapshots`` — pinned transcripts; ``snapshot_guard`` — who may rewrite which, and when.

It is loaded in every pytest run of an environment where harness-conformance is installed
(entry point ``pytest11``) and stays out of the way unless conformance cases are collected.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import itertools
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
import types
from collections.abc import Callable, Generator, Mapping
from pathlib import Path
from typing import Any, Final, cast

import pytest

import conformance
from conformance import (
    display,
    hookspecs,
    interrupt,
    outcomes,
    parallel,
    snapshot_guard,
    speed,
    workers,
)
from conformance.baseline import Baseline, BaselineError
from conformance.basetemp import (
    HARNESS_CWD,
    HARNESS_TMP,
    BaseTempError,
    RunBase,
    default_base,
    under_temp_note,
)
from conformance.causes import DECLARED, PASSES_AS_DECLARED, XPASS_LEAD, subject_signature
from conformance.client import Client, HarnessGone
from conformance.failures import OwnWords
from conformance.harness.contract import ContractError, Profile
from conformance.harness.loading import (
    DEFAULT_HARNESS,
    Choice,
    HarnessLoadError,
    Settings,
    handshake,
    instantiate,
    transport_for,
)
from conformance.harness.objects import HOOK_LABEL
from conformance.harness.stdio import (
    DEFAULT_HANDSHAKE_TIMEOUT_S,
    DEFAULT_MAX_ANSWER_BYTES,
    DEFAULT_TIMEOUT_S,
    Stdio,
    Trace,
)
from conformance.harness.transport import HarnessCallError, HarnessDead, Transport
from conformance.harvest import NoHarvest
from conformance.outcomes import DATA, NOT_APPLICABLE, NOT_RUN, Recorder, mark_known
from conformance.report import AREAS, Report, area_of, output_problem, plural, sort_key, terminal
from conformance.report import markdown as markdown_report
from conformance.rules import rule_book, spec_version
from conformance.secrets import (
    REDACTED,
    RunSecrets,
    plant_run_secrets,
    run_secrets,
    scrub,
    scrub_data,
    unplant,
)
from conformance.settings import LIST_FORMATS, user_cache_dir
from conformance.snapshots import ConformanceSnapshots, default_snapshot_dir
from conformance.spec import Wording, WordingError
from conformance.verdict import LEVELS, ConformanceFailure, Judge, Violation, verdict_text

CASES_PACKAGE: Final = "conformance.cases"
RECOMMENDED: Final = "recommended, never fails a run"
"""The expected-failure reason of a case whose every rule is recommended."""
NOTHING_SELECTED: Final = "no case was selected (-k or -m chose none); exit status 5"
"""Why a run whose selection matched no case has reports with no case in them."""
CASES_DIR: Final = Path(conformance.__file__).parent / "cases"
CASE_ID: Final = re.compile(r"^(?P<area>[A-Z]+)-\d{3}$")
LAST_FAILED_NARROWING: Final = "lfplugin-collwrapper"
"""The name pytest's cacheprovider registers its ``--lf`` collection filter under."""
LEVEL_CHOICES: Final = ("all", "behaviour")
OUTPUTS: Final = {"conformance_report": True, "conformance_report_md": True,
                  "conformance_trace": False}  # fmt: skip
"""The options naming a file the run writes, each with whether a temporary file goes beside it."""


def output_clash(outputs: Mapping[str, str | None], inputs: Mapping[str, str | None]) -> str | None:
    """Why two options (keyed as spelled) name one file: an output over an input or over
    another output; or None.

    Each output is written at the run's end: one named twice would lose a file the run read
    (a baseline, a wording file) or keep only the last of two outputs. A special file
    (``/dev/null``, ``/dev/stdout``) takes whatever is written into it, so it never clashes.
    """
    seen: dict[str, str] = {}
    for name, path in [*inputs.items(), *outputs.items()]:
        if not path or (os.path.exists(path) and not os.path.isfile(path)):
            continue
        real = os.path.realpath(path)
        if real in seen and name in outputs:
            lost = "the run would write over what it reads"
            if seen[real] in outputs:
                lost = "one would write over the other"
            return f"{name} {path}: is also {seen[real]}; {lost}: name another file"
        seen.setdefault(real, name)
    return None


class _State:
    """What one pytest run knows about the conformance suite."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.transport: Transport | None = None
        self.profile: Profile | None = None
        self.client: Client | None = None
        self.choice: Choice | None = None
        self.launched = False
        self.second_instances: list[Stdio] = []
        """The second instances cases took (``another_client``): their calls count too."""
        self.cuts_before: dict[str, int] = {}
        """Per case, the deadline's cuts before its set-up (``cut_by_deadline``)."""
        self.signalled = False
        """Interrupted: the run is ending, and a second SIGTERM must not cut its reports short."""
        self.ending = False
        """Unconfigured: the harness is being stopped, which a SIGTERM must not cut short."""
        self.term_before: Any = None
        """The SIGTERM handler the run replaced, put back when it ends."""
        self.int_before: Any = None
        """The SIGINT handler the run replaced, put back when it ends."""
        self.launch_failure: HarnessLoadError | None = None
        self.spare: Stdio | None = None
        """A second instance of the harness, started with the first for a case that needs one."""
        self.report = Report(
            suite={"name": "harness-conformance", "version": conformance.__version__},
            spec=spec_version(),
        )
        self.case_items: dict[str, pytest.Item] = {}
        self.selected: list[str] = []
        self.deselected = False
        self.refused_selection = False
        """The selection was refused (an unknown case named): nothing is listed or run."""
        self.listed = 0
        """How many cases ``--conformance-list-cases`` printed."""
        self.clock: Callable[[], float] = time.monotonic
        """The run's clock (the project's tests drive a fake one to pass a deadline)."""
        self.started = self.clock()
        self.deadline_s: float | None = None
        self.baseline: Baseline | None = None
        self.strict_baseline = False
        self.notes: list[str] = []
        """Lines for the end of the terminal summary: what the run did not do, and why."""
        self.wording = Wording()
        self.levels = frozenset(LEVELS)
        self.base: RunBase | None = None
        self.not_started: str | None = None
        """Why no case could run: the run's deadline passed while the harness started."""
        self.trace: Trace | None = None
        self.unwritten: list[str] = []
        """A report asked for that could not be written at the end, each in one line."""
        self.judges: dict[str, Judge] = {}
        self.cleanup: list[Path] = []
        self.secrets: RunSecrets | None = None
        self.recorder = Recorder(self.report, worker=hasattr(config, "workerinput"))
        self.split: parallel.Split | None = None
        """In the main process of a run on two cores: the helper and the cases it runs."""
        self.helper: parallel.Helper | None = None
        """In the helper process: its side of the run."""

    # -- configuration ----------------------------------------------------------------------

    def read_options(self) -> None:
        """Check every option before anything runs; a bad one is one line and exit 4."""
        config = self.config
        self.check_harness_options()
        level = config.getoption("conformance_level") or config.getini("conformance_level") or "all"
        if level not in LEVEL_CHOICES:
            raise pytest.UsageError(
                f"--conformance-level {level!r} does not exist; choose one of "
                f"{', '.join(LEVEL_CHOICES)}"
            )
        self.report.level = level
        self.levels = frozenset(LEVELS) if level == "all" else frozenset({"behaviour"})
        wording = config.getoption("conformance_wording") or config.getini("conformance_wording")
        if wording:
            try:
                self.wording = Wording.load(wording)
            except WordingError as exc:
                raise pytest.UsageError(str(exc)) from None
        snapshots = config.getoption("conformance_snapshots")
        if snapshots is not None:
            problem = snapshot_guard.dir_problem(snapshots)
            if problem is not None:
                raise pytest.UsageError(f"--conformance-snapshots {snapshots}: {problem}")
        baseline = config.getoption("conformance_baseline") or config.getini("conformance_baseline")
        self.strict_baseline = bool(config.getoption("conformance_baseline_strict"))
        if baseline:
            try:
                self.baseline = Baseline.load(baseline)
            except BaselineError as exc:
                raise pytest.UsageError(str(exc)) from None
        for name in (
            "conformance_timeout",
            "conformance_handshake_timeout",
            "conformance_deadline",
            "conformance_max_answer_bytes",
        ):
            value = config.getoption(name)
            if value is not None and value <= 0:
                raise pytest.UsageError(f"--{name.replace('_', '-')} must be positive, got {value}")
        self.deadline_s = config.getoption("conformance_deadline")
        listing = config.getoption("conformance_list_cases")
        if config.getoption("conformance_list_format") is not None and not listing:
            raise pytest.UsageError(  # else pytest would call --format unrecognized, or ignore it
                "--format (--conformance-list-format) goes with --conformance-list-cases"
            )
        jobs = config.getini("conformance_jobs")
        if jobs and jobs not in parallel.JOBS_CHOICES:
            raise pytest.UsageError(f"jobs {jobs!r} does not exist; choose auto or 1")
        for name, beside in OUTPUTS.items():
            path = config.getoption(name)
            problem = output_problem(path, beside=beside) if path else None  # "": none asked
            if problem is not None:
                raise pytest.UsageError(f"--{name.replace('_', '-')} {path}: {problem}")
        clash = output_clash(
            {**{f"--{name.replace('_', '-')}": config.getoption(name) for name in OUTPUTS},
             "--junitxml": getattr(config.option, "xmlpath", None)},
            {"--conformance-baseline": baseline, "--conformance-wording": wording,
             "--harness-mcp-map": config.getoption("harness_mcp_map")},
        )  # fmt: skip
        if clash is not None:
            raise pytest.UsageError(clash)

    def past_deadline(self) -> bool:
        """Whether the run's deadline, counted from the session's start, has passed."""
        return self.deadline_s is not None and self.clock() - self.started >= self.deadline_s

    def deadline_cuts(self) -> int:
        """How many calls the run's deadline has cut so far, on either instance of the harness."""
        instances = (self.transport, self.spare, *self.second_instances)
        return sum(t.deadline_cuts for t in instances if isinstance(t, Stdio))

    def cut_by_deadline(self, nodeid: str) -> bool:
        """Whether the run's deadline cut a call since this case's set-up began."""
        return self.deadline_cuts() > self.cuts_before.get(nodeid, self.deadline_cuts())

    def check_harness_options(self) -> None:
        """The harness options as given: one harness, none empty, a map only with MCP."""
        config = self.config
        named = (("--harness-cmd", config.getoption("conformance_harness_cmd")),
                 ("--harness-mcp", config.getoption("harness_mcp")),
                 ("--harness", config.getoption("conformance_harness")))  # fmt: skip
        given = [name for name, value in named if value is not None]
        if len(given) > 1:
            raise pytest.UsageError(f"choose one harness: {' and '.join(given)} were both given")
        for name, value in named:
            # An unset CI variable must not quietly test the reference instead (a green run).
            if value is not None and not value.strip():
                raise pytest.UsageError(f"{name} is empty: name the harness to test")
        if config.getoption("harness_mcp_map") is not None and "--harness-mcp" not in given:
            raise pytest.UsageError("--harness-mcp-map applies only to --harness-mcp, not given")

    def choose_harness(self) -> Choice:
        """The harness to test, first match wins (see ``harness.loading``)."""
        config = self.config
        cmd, mcp = config.getoption("conformance_harness_cmd"), config.getoption("harness_mcp")
        option = config.getoption("conformance_harness")
        self.check_harness_options()
        mcp_map = config.getoption("harness_mcp_map")
        if cmd:
            return Choice("cmd", cmd, f"--harness-cmd {cmd!r}")
        if mcp:
            wording = config.getoption("conformance_wording") or config.getini(
                "conformance_wording"
            )
            return Choice("mcp", mcp, f"--harness-mcp {mcp!r}", mcp_map, wording or None)
        if option:
            return Choice("python", option, f'harness "{option}"')
        handed = config.hook.pytest_conformance_harness(config=config)
        if handed is not None:
            label = HOOK_LABEL
            try:
                return Choice("object", instantiate(handed, label), label)
            except HarnessLoadError as exc:
                raise pytest.UsageError(scrub(str(exc))) from None
        ini_cmd = config.getini("conformance_harness_cmd")
        if ini_cmd:
            return Choice("cmd", ini_cmd, f"harness-cmd {ini_cmd!r}")
        ini = config.getini("conformance_harness")
        if ini:
            return Choice("python", ini, f'harness "{ini}"')
        return Choice("python", DEFAULT_HARNESS, f'harness "{DEFAULT_HARNESS}"')

    def launch(self) -> None:
        """Everything the handshake needs, a harness child started; once.

        ``pytest_collection`` calls it before the cases are collected, so a child starts
        while they are (``connect`` shakes hands with it afterwards).
        """
        if self.launched:
            return
        self.launched = True
        config = self.config
        self.choice = choice = self.choose_harness()
        self.make_base()
        assert self.base is not None
        self.secrets = plant_run_secrets()  # before the harness starts: it inherits them
        # Found secrets first: a planted value is named by its variable even where it is both.
        display.PLACES.run_values(dict.fromkeys(run_secrets(), REDACTED))
        display.PLACES.run_values(
            {value: f"<${name}>" for name, value in self.secrets.environment().items()}
        )
        trace_path = config.getoption("conformance_trace")
        if trace_path:
            header = {
                "harness": choice.label,
                "args": _run_args(config, choice),
                "cwd": os.getcwd(),
            }
            try:
                self.trace = Trace(trace_path, header)
            except OSError as exc:  # checked by read_options; the disk changed since
                raise pytest.UsageError(f"--conformance-trace {trace_path}: {exc}") from None
        validator = None
        if config.getoption("conformance_validate"):
            from conformance.harness.schema import validator_for_answers  # noqa: PLC0415

            validator = validator_for_answers()
        settings = Settings(
            in_process=bool(config.getoption("conformance_in_process")),
            timeout_s=config.getoption("conformance_timeout") or DEFAULT_TIMEOUT_S,
            handshake_timeout_s=config.getoption("conformance_handshake_timeout")
            or DEFAULT_HANDSHAKE_TIMEOUT_S,
            max_answer_bytes=config.getoption("conformance_max_answer_bytes")
            or DEFAULT_MAX_ANSWER_BYTES,
            cwd=str(self.base.harness_cwd),
            tmpdir=str(self.base.harness_tmp),
            trace=self.trace,
            validator=validator,
        )
        self.report.run = {"harness": choice.label, "kind": choice.kind,
                           "args": _run_args(config, choice), "cwd": os.getcwd()}  # fmt: skip
        try:
            transport = transport_for(choice, settings)
        except HarnessLoadError as exc:
            self.launch_failure = exc  # said by connect, where a failed handshake is
            return
        if isinstance(transport, Stdio):
            if self.deadline_s is not None:
                # The child's calls wait in real time, whatever clock the run counts with.
                transport.deadline = time.monotonic() + self.deadline_s - self.elapsed()
            transport.start()
            if _may_need_a_second_process(config):
                # Started and greeted before the first case, like the first: whatever it writes
                # into its directories as it starts is never taken for a case's doing.
                self.spare = _twin(transport)
                self.spare.start()
        self.transport = transport

    def make_base(self) -> None:
        """The run's directory under the base (``--conformance-basetemp``), once."""
        if self.base is not None:
            return
        given = self.config.getoption("conformance_basetemp")
        self.base = RunBase(Path(given).absolute() if given else default_base())
        note = None if given else under_temp_note(self.base.base)
        if note is not None:
            self.notes.append(note)
        try:
            self.base.create()
        except BaseTempError as exc:
            raise pytest.UsageError(str(exc)) from None

    def split_run(self) -> None:
        """Fork the helper that runs part of the cases on the second core (``parallel``)."""
        self.make_base()
        assert self.base is not None
        speed.wait_asleep()  # before the fork: both halves, and every harness child, inherit it
        # Both halves import hypothesis (0.2 s) for their cases: once, here (it starts no thread).
        importlib.import_module("conformance.strategies")
        self.config.add_cleanup(speed.wait_as_before)
        modules = [str(CASES_DIR / f"{name}.py") for name in sorted(parallel.HELPER_MODULES)]
        side = parallel.fork(self.config, self.base, modules=modules, keep=_stays_here,
                             notes=self.notes, become_helper=self._become_helper)  # fmt: skip
        if side is None:
            speed.wait_as_before()  # no helper after all: one process, waiting as it always has
        if isinstance(side, parallel.Split):
            self.split = side

    def _become_helper(self, base: RunBase, helper: parallel.Helper) -> None:
        self.base = base
        self.helper = helper
        self.recorder.worker = True  # its reports go to the main process whole, as a worker's
        helper.cleanup = self._close_helper

    def _close_helper(self) -> None:
        """What the helper made: its harness, its directories (the main removes them again)."""
        self.close_harness()
        for directory in self.cleanup:
            shutil.rmtree(directory, ignore_errors=True)
        if self.base is not None:
            self.base.remove()

    def connect(self) -> Client:
        """Start the harness and shake hands; a harness that cannot is one line and exit 4."""
        if self.client is not None:
            return self.client
        self.launch()
        config, choice = self.config, self.choice
        assert choice is not None
        try:
            if self.launch_failure is not None:
                raise self.launch_failure
            transport = self.transport
            assert transport is not None
            self.profile = handshake(transport, choice)
        except HarnessLoadError as exc:
            if self.past_deadline():
                # Out of time, not out of order: every case is not run (exit 1), as promised.
                self.not_started = (
                    f"the run's deadline ({config.getoption('conformance_deadline'):g} s) "
                    "passed while the harness started"
                )
                self.report.incomplete(self.not_started)
                raise NotStarted(self.not_started) from None
            # Its stderr's last lines are in ``exc``: a harness may die printing its secrets.
            self.report.incomplete(scrub(f"the harness could not be started: {exc}"))
            self.write_reports()
            raise pytest.UsageError(scrub("; ".join([str(exc), *self.unwritten]))) from None
        if self.spare is not None:
            try:
                self.spare.call("describe", {})
            except HarnessCallError:  # the case that needs it starts another, and says why
                self.spare.close()
                self.spare = None
        assert self.base is not None
        self.report.harness = self.profile.to_json()
        self.client = Client(transport, self.profile, self.wording)
        self.client.secrets = self.secrets
        if isinstance(transport, Stdio):
            self.client.scratch = {
                HARNESS_CWD: self.base.harness_cwd,
                HARNESS_TMP: self.base.harness_tmp,
            }
        # The run's own directory holds every case's; the deepest registered name wins.
        assert self.base.run is not None
        display.PLACES.run_directory("tmp", self.base.run)
        display.PLACES.run_directory("harness cwd", self.base.harness_cwd)
        display.PLACES.run_directory("harness tmp", self.base.harness_tmp)
        return self.client

    # -- outputs ----------------------------------------------------------------------------

    def harness_gone(self, error: HarnessCallError) -> bool:
        """Whether ``error`` says the harness is dead or the run's deadline has passed."""
        return isinstance(error, HarnessDead) or self.past_deadline()

    def elapsed(self) -> float:
        """Seconds since the session started, on the run's clock."""
        return self.clock() - self.started

    def write_reports(self) -> None:
        """The JSON and Markdown reports, if asked for; always whole, even for a cut-short run.

        Only the main process writes them (the helper's cases come back as its reports).
        """
        if self.helper is not None:
            return
        _REPORTED.append(True)
        config = self.config
        path = config.getoption("conformance_report")
        markdown = config.getoption("conformance_report_md")
        for target, what, write in (
            (path, "the JSON report", self.report.write),
            (markdown, "the Markdown summary", lambda to: markdown_report.write(self.report, to)),
        ):
            if not target:
                continue
            try:
                write(target)
            except OSError as exc:  # checked at the start, so the disk changed since (full?)
                why = exc.strerror or str(exc)
                self.unwritten.append(f"{what} could not be written to {target}: {why}")

    def close_harness(self) -> None:
        """Stop the harness (and its second instance) for good: no call starts it again."""
        self.end_harness("the run is over")
        for transport in (self.transport, self.spare):
            if transport is not None:
                transport.close()

    def interrupted(self) -> None:
        """The run was interrupted: no instance of the harness starts again (``end_harness``).

        Not under ``--pdb``, where pytest goes on after a Ctrl-C in a case.
        """
        if not self.config.getoption("usepdb", False):
            self.signalled = True
            self.end_harness("the run was interrupted")

    def end_harness(self, why: str) -> None:
        """From now on no instance of the harness starts a process (``Ended``); ``why`` says so."""
        # One gate for all: the second instances are made by ``_twin``, which shares it.
        if isinstance(self.transport, Stdio) and self.transport.ended.why is None:
            self.transport.ended.why = why

    def close(self) -> None:
        """Stop the harness and the helper, and remove what the suite made."""
        self.close_harness()
        if self.split is not None:
            self.split.close()
        if self.trace is not None:
            self.trace.close()
        if self.secrets is not None:
            unplant(self.secrets)
        for directory in self.cleanup:
            shutil.rmtree(directory, ignore_errors=True)
        if self.base is not None:
            self.base.remove()


class NotStarted(Exception):
    """The run's deadline passed while the harness started: no case can run."""


STATE: Final = pytest.StashKey[_State]()


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Register ``pytest_conformance_harness``."""
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    """The suite's options and ini keys."""
    group = parser.getgroup("conformance", "harness conformance")
    add = group.addoption
    add(
        "--harness",
        dest="conformance_harness",
        metavar="HARNESS",
        help="a Python harness: module:attr, or a name registered in the entry-point group "
        "harness_conformance.harnesses (default: reference); run in a child process",
    )
    add(
        "--harness-cmd",
        dest="conformance_harness_cmd",
        metavar="CMD",
        help="a harness in any language: a command speaking the stdio protocol (SPEC §6.3)",
    )
    add(
        "--harness-mcp",
        dest="harness_mcp",
        metavar="CMD",
        help="test the file tools of an MCP server started by CMD (needs the mcp extra)",
    )
    add(
        "--harness-mcp-map",
        dest="harness_mcp_map",
        metavar="FILE",
        help="TOML mapping of the spec's tools to the MCP server's tools",
    )
    add(
        "--conformance-in-process",
        action="store_true",
        help="run a Python harness in this process (debugging, mutation testing; no isolation)",
    )
    add(
        "--conformance-level",
        metavar="LEVEL",
        default=None,
        help="all (default: behaviour, then wording) or behaviour (only)",
    )
    add(
        "--conformance-wording",
        metavar="FILE",
        help="a TOML wording table: the harness's own texts for the spec's templates",
    )
    add(
        "--conformance-case",
        action="append",
        default=[],
        metavar="CASE_ID",
        help="run exactly this case (repeatable); -k keeps pytest's substring meaning",
    )
    add("--conformance-report", metavar="PATH", help="write the JSON report")
    add("--conformance-report-md", metavar="PATH", help="write a Markdown summary (CI job page)")
    add(
        "--conformance-baseline",
        metavar="FILE",
        help="known failures (python -m conformance baseline REPORT.json > FILE)",
    )
    add(
        "--conformance-baseline-strict",
        action="store_true",
        help="with a baseline: cases new since it was made fail the run too",
    )
    add(
        "--conformance-expect-fail",
        action="append",
        default=[],
        metavar="CASE_ID",
        help="a case your harness is known to fail (reported as expected-fail; repeatable)",
    )
    add(
        "--conformance-timeout",
        type=float,
        metavar="SECONDS",
        help=f"per harness call (default {DEFAULT_TIMEOUT_S:g})",
    )
    add(
        "--conformance-handshake-timeout",
        type=float,
        metavar="SECONDS",
        help="for a harness process to start and answer describe "
        f"(default {DEFAULT_HANDSHAKE_TIMEOUT_S:g}); also for every restart",
    )
    add(
        "--conformance-basetemp",
        metavar="DIR",
        help="where the run's workspaces and the harness's directories live, made and removed "
        "(default: $XDG_CACHE_HOME/harness-conformance, outside the system temp directory)",
    )
    add(
        "--conformance-deadline",
        type=float,
        metavar="SECONDS",
        help="for the whole run: cases not reached by then are reported as not run",
    )
    add(
        "--conformance-max-answer-bytes",
        type=int,
        metavar="N",
        help=f"the largest answer line a harness may send (default {DEFAULT_MAX_ANSWER_BYTES})",
    )
    add(
        "--conformance-jobs",
        choices=parallel.JOBS_CHOICES,
        default=None,
        help="auto (default): on Linux with two CPUs, a second process runs the property, "
        "state-machine, publication and contract cases with a harness instance of its own; "
        "1: one process",
    )
    add("--conformance-trace", metavar="FILE", help="record every request and answer (JSON Lines)")
    add(
        "--conformance-validate",
        action="store_true",
        help="validate every answer against the protocol's JSON Schema (needs jsonschema)",
    )
    add(
        "--conformance-snapshots",
        metavar="DIR",
        help="compare with (and --snapshot-update into) your own snapshot directory",
    )
    add("--conformance-list-cases", action="store_true",
        help="print the cases selected (-k, --conformance-case) to stdout instead of running "
             "them (exit status 5 when none is selected, as for a run)")  # fmt: skip
    add("--conformance-list-format", choices=LIST_FORMATS, default=None,
        help="with --conformance-list-cases: a Markdown table (the default) or JSON (python -m "
             "conformance takes --format)")  # fmt: skip
    parser.addini("conformance_harness", "harness under test (as --harness)", default="")
    parser.addini("conformance_harness_cmd", "harness command (as --harness-cmd)", default="")
    parser.addini("conformance_level", "as --conformance-level", default="")
    parser.addini("conformance_jobs", "as --conformance-jobs", default="")
    parser.addini("conformance_wording", "as --conformance-wording", default="")
    parser.addini("conformance_baseline", "as --conformance-baseline", default="")
    parser.addini(
        "conformance_expect_fail", "case IDs known to fail (as --conformance-expect-fail)",
        type="linelist",
    )  # fmt: skip


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Register markers and the recorder; check options at once so a bad one stops the run."""
    config.addinivalue_line("markers", "case(id, rules=[…]): a conformance case and its rules")
    config.addinivalue_line("markers", "needs(*capabilities, options=[…]): what a case needs")
    state = _State(config)
    config.stash[STATE] = state
    config.add_cleanup(speed.thaw)  # first in, last out: after pytest's closing collections
    config.pluginmanager.register(state.recorder, "conformance-recorder")
    config.pluginmanager.register(outcomes, "conformance-outcomes")
    config.pluginmanager.register(interrupt, "conformance-interrupt")
    config.pluginmanager.register(OwnWords(own_words), "conformance-own-words")
    config.pluginmanager.register(NoHarvest(_is_case), "conformance-no-harvest")
    if config.getoption("conformance_list_cases") and hasattr(config.option, "dist"):
        # A listing is a collection alone, which xdist leaves to one process too (--collect-only).
        config.option.dist, config.option.tx = "no", []
    workers.register(config)
    directory = config.getoption("conformance_snapshots")
    ConformanceSnapshots.directory = (
        Path(directory).resolve() if directory else default_snapshot_dir()
    )
    if config.getoption("hypothesis_profile", None) == "triage":
        # Only ours, so it must exist before hypothesis' own plugin loads it (after this hook).
        from conformance.strategies import register_triage_profile  # noqa: PLC0415

        register_triage_profile()
    if config.getoption("help", False):
        return  # the help is what a user reads to fix a bad option or setting: shown whole
    state.read_options()


def _keep_hypothesis_out_of_the_working_directory(state: _State) -> None:
    """Hypothesis writes ``.hypothesis/`` where the run started unless told otherwise.

    Its home is the user's cache directory: what it keeps there (the Unicode category table, the
    constants it harvests from each module's source) is the same on every run, so the next run
    need not compute it again. The profiles keep no example database, so verdicts never depend
    on what an earlier run found.
    """
    from hypothesis import configuration  # noqa: PLC0415

    home = user_cache_dir() / "hypothesis"
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError:  # no writable cache directory: a private one, removed afterwards
        home = Path(tempfile.mkdtemp(prefix="conformance-hypothesis-"))
        state.cleanup.append(home)
    configuration.set_hypothesis_home_dir(home)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the harness; leave the snapshot extension as it was for the next run."""
    state = config.stash.get(STATE, None)
    if state is not None:
        state.ending = True  # a SIGTERM now must not cut the harness's stop short
        state.close()
        if state in _RUNS:
            _RUNS.remove(state)
        with contextlib.suppress(ValueError):  # not the main thread
            if state.term_before is not None:
                signal.signal(signal.SIGTERM, state.term_before)
            if state.int_before is not None:
                signal.signal(signal.SIGINT, state.int_before)
    ConformanceSnapshots.directory = default_snapshot_dir()
    ConformanceSnapshots.partial_run = False
    ConformanceSnapshots.uncoded = False


def pytest_sessionstart(session: pytest.Session) -> None:
    """Start the clock; a SIGTERM ends the run as an interruption, so the report is written."""
    state = session.config.stash[STATE]
    state.started = state.clock()
    _RUNS.append(state)
    if not any(_names_cases(arg) for arg in session.config.args):
        return  # another project's tests, in an environment that has the plugin: left alone
    _last_failed_by_deselection(session.config)
    with contextlib.suppress(ValueError):  # not the main thread
        term = signal.getsignal(signal.SIGTERM) if hasattr(signal, "SIGTERM") else None
        if term is signal.SIG_DFL or getattr(term, "before_the_run", False):  # ``__main__``'s
            signal.signal(signal.SIGTERM, _interrupt)
            state.term_before = term
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _interrupt)
            state.int_before = signal.default_int_handler


def _last_failed_by_deselection(config: pytest.Config) -> None:
    """``--lf`` runs the last failures as a deselection from the whole suite.

    pytest's own ``--lf`` narrows the collection instead: it skips the files without a failure
    and drops the other cases of the rest, unannounced. The suite then took those few cases for
    all it has: a baseline's or an expect-fail's other cases were "unknown" (exit 4), the report
    called the run whole, and the snapshot plugin deleted every transcript not collected.
    """
    if config.pluginmanager.has_plugin(LAST_FAILED_NARROWING):
        config.pluginmanager.unregister(name=LAST_FAILED_NARROWING)


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """A run of the cases starts its harness child now, so it starts while they are collected.

    Not for a harness in process (nothing to overlap), one a hook hands over, a listing, a
    collection alone, or xdist's controller (its workers collect and connect).
    """
    config = session.config
    if (
        config.getoption("conformance_in_process")
        or config.getoption("conformance_list_cases")
        or config.getoption("collectonly")
        or config.hook.pytest_conformance_harness.get_hookimpls()
        or (config.pluginmanager.has_plugin("dsession") and not hasattr(config, "workerinput"))
        or not any(_names_cases(arg) for arg in config.args)
    ):
        return
    state = config.stash[STATE]
    if (
        all(_names_whole_suite(arg) for arg in config.args)
        and parallel.why_one_process(config) is None
    ):
        state.split_run()
    state.launch()


def _names_cases(arg: str) -> bool:
    """Whether a command-line argument names the cases (or some of them)."""
    path = arg.split("::", maxsplit=1)[0]
    if path == CASES_PACKAGE or path.startswith(CASES_PACKAGE + "."):
        return True
    try:
        return Path(path).resolve().is_relative_to(CASES_DIR.resolve())
    except OSError:
        return False


_RUNS: list[_State] = []
"""The runs in this process between their start and their end, for the signal handler."""
_REPORTED: list[bool] = []


def reports_written() -> bool:
    """Whether a run in this process got as far as writing its reports (if any were asked)."""
    return bool(_REPORTED)


def _interrupt(signum: int, frame: types.FrameType | None) -> None:
    if signum != signal.SIGINT and any(run.signalled or run.ending for run in _RUNS):
        return  # CI's repeated SIGTERM while the run ends; a second Ctrl-C still stops it
    # At once, before anything unwinds: a case's ``finally`` that stops a harness instance
    # (PUB-010's second) must not let one of the case's threads start another.
    for run in _RUNS:
        run.interrupted()
    if signum == signal.SIGINT:
        signal.default_int_handler(signum, frame)  # pytest's Ctrl-C, as it always was
    raise KeyboardInterrupt(f"signal {signum}")


def _stays_here(item: pytest.Item) -> bool:
    """Whether an item runs in the main process whatever its module (``parallel``)."""
    return not _is_case(item) or _case_id(item) in SECOND_PROCESS_CASES


def _is_case(item: pytest.Item) -> bool:
    module = getattr(item, "module", None)
    return bool(module) and str(getattr(module, "__name__", "")).startswith(CASES_PACKAGE + ".")


def _case_mark(item: pytest.Item) -> pytest.Mark | None:
    marks = list(item.iter_markers("case"))
    return marks[0] if marks and marks[0].args else None


def _case_id(item: pytest.Item) -> str | None:
    mark = _case_mark(item)
    return str(mark.args[0]) if mark is not None else None


def case_rules(item: pytest.Item) -> list[str]:
    """The rule IDs a case names."""
    mark = _case_mark(item)
    return list(mark.kwargs.get("rules", [])) if mark is not None else []


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give every case its ID; select, mark not-applicable, expected and recommended cases."""
    try:
        _mark_cases(config, items)
    except pytest.UsageError:
        # pytest still finishes the collection: a listing there would be the whole suite.
        config.stash[STATE].refused_selection = True
        raise


def _mark_cases(config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash[STATE]
    cases = [item for item in items if _is_case(item)]
    if not cases:
        return
    _keep_hypothesis_out_of_the_working_directory(state)
    book = rule_book()
    for item in cases:
        case_id = _case_id(item)
        match = CASE_ID.match(case_id or "")
        if case_id is None or match is None or match["area"] not in AREAS:
            raise pytest.UsageError(
                f"conformance case {item.nodeid} has no valid case ID (got {case_id!r})"
            )
        if case_id in state.case_items:
            raise pytest.UsageError(
                f"case ID {case_id} is used twice: "
                f"{state.case_items[case_id].nodeid} and {item.nodeid}"
            )
        unknown_rules = [r for r in case_rules(item) if r not in book]
        if not case_rules(item) or unknown_rules:
            named = unknown_rules or "none named"
            raise pytest.UsageError(f"case {case_id} must name rules of SPEC.md; unknown: {named}")
        state.case_items[case_id] = item
        item.user_properties.append(("case_id", case_id))
        item.extra_keyword_matches.add(case_id)
    _select_exactly(config, state, items)
    given = set(config.getoption("conformance_expect_fail"))
    set_in_settings = set(config.getini("conformance_expect_fail"))
    expected = given | set_in_settings
    # The helper collects only its modules: the whole suite's checks are the main process's.
    whole = state.helper is None
    for where, ids in (("--conformance-expect-fail", given), ("the settings' expect-fail or -o",
                                                               set_in_settings)):  # fmt: skip
        unknown = sorted(ids - set(state.case_items)) if whole else []
        if unknown:
            raise pytest.UsageError(
                f"unknown case ID(s) declared as expected to fail ({where}): {', '.join(unknown)}"
            )
    if state.baseline is not None and whole:
        retired = state.baseline.unknown_cases(set(state.case_items))
        if retired:
            raise pytest.UsageError(
                f"baseline {state.baseline.path}: lists case(s) this suite does not have: "
                f"{', '.join(retired)}"
            )
    if config.getoption("conformance_list_cases"):
        return  # listed once -k has deselected too (pytest_collection_finish); nothing runs
    try:
        client = state.connect()
    except NotStarted as exc:
        for item in items:
            if _is_case(item):
                item.add_marker(pytest.mark.skip(reason=f"{NOT_RUN}{exc}"))
        return
    snapshot_guard.guard_update(config, state)
    explicit_seed = config.getoption("hypothesis_seed", None) is not None
    for item in items:
        case_id = _case_id(item) if _is_case(item) else None
        if case_id is None:
            continue
        gap = _missing(item, client.profile)
        if gap is not None:
            item.add_marker(pytest.mark.skip(reason=NOT_APPLICABLE + gap))
            continue
        if case_id in expected:
            item.add_marker(pytest.mark.xfail(reason=f"{case_id} {DECLARED}", strict=True))
        elif all(book[r].recommended for r in case_rules(item)):
            item.add_marker(pytest.mark.xfail(reason=RECOMMENDED, strict=False))
        if not explicit_seed and getattr(item.obj, "is_hypothesis_test", False):  # type: ignore[attr-defined]
            item.obj._hypothesis_internal_use_seed = case_seed(case_id)  # type: ignore[attr-defined]


def _select_exactly(config: pytest.Config, state: _State, items: list[pytest.Item]) -> None:
    wanted = list(dict.fromkeys(config.getoption("conformance_case")))
    if not wanted:
        return
    unknown = [case for case in wanted if case not in state.case_items]
    if unknown:
        raise pytest.UsageError(f"--conformance-case: no case {', '.join(unknown)} in this suite")
    keep = [item for item in items if _case_id(item) in wanted]
    dropped = [item for item in items if item not in keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def case_seed(case_id: str) -> int:
    """A fixed hypothesis seed per case: the same harness gets the same verdict every run."""
    return int.from_bytes(hashlib.sha256(case_id.encode()).digest()[:8], "big")


def _not_applicable_without(method: str) -> None:
    """A case reached a method the harness lists in ``describe.lacks``: it does not apply."""
    pytest.skip(f"{NOT_APPLICABLE}needs the {method} method (the harness lacks it)")


def _missing(item: pytest.Item, profile: Profile) -> str | None:
    """What a case needs that the harness does not declare, in words, or None.

    A missing capability is named before a missing option, whichever mark says it.
    """
    marks = list(item.iter_markers("needs"))
    for mark in marks:
        for capability in mark.args:
            if not profile.has(capability):
                return f"needs the {capability} capability"
    for mark in marks:
        for option in mark.kwargs.get("options", ()):
            name, _, mode = option.partition(":")
            if not profile.supports(name, mode or None):
                if not mode:
                    return f"needs the option {name}"
                what = "the sandbox mode" if name == "sandbox" else name
                return f"needs {what} {mode}"
        for method in mark.kwargs.get("methods", ()):
            if not profile.implements(method):
                return f"needs the {method} method (the harness lacks it)"
        paths = mark.kwargs.get("paths")
        if paths is not None and profile.paths not in paths:
            return f"needs paths {' or '.join(paths)} (the harness takes {profile.paths} paths)"
    return None


def another_client(config: pytest.Config) -> Client | None:
    """A second, independent instance of the harness (its own process), or None in process.

    The caller closes its transport.
    """
    state = config.stash[STATE]
    client = state.connect()
    if not isinstance(client.transport, Stdio) or state.choice is None:
        return None
    transport, state.spare = state.spare, None
    if transport is None:
        transport = _twin(client.transport)
        state.second_instances.append(transport)
        transport.call("describe", {})
    else:
        state.second_instances.append(transport)
    return Client(transport, client.profile, client.wording)


SECOND_PROCESS_CASES: Final = frozenset({"PUB-010"})
"""The cases that race a second instance of the harness (``another_client``)."""


def _twin(stdio: Stdio) -> Stdio:
    """Another child of the same harness command, set up like ``stdio``'s."""
    twin = Stdio(stdio.command, label=stdio.label, timeout_s=stdio.timeout_s,
                 handshake_timeout_s=stdio.handshake_timeout_s,
                 max_answer_bytes=stdio.max_answer_bytes, cwd=stdio.cwd, env=stdio.env,
                 trace=stdio.trace, validator=stdio.validator)  # fmt: skip
    twin.deadline = stdio.deadline  # its greeting waits no longer than the run may
    twin.ended = stdio.ended  # an interruption ends every instance
    return twin


def _may_need_a_second_process(config: pytest.Config) -> bool:
    """Whether the run may select a case of ``SECOND_PROCESS_CASES``, as far as its options
    tell before collection (a ``-k`` expression leaves it to the case to start one)."""
    wanted = set(config.getoption("conformance_case") or [])
    if config.stash[STATE].helper is not None:
        return False  # the helper never runs them
    if config.option.keyword or (wanted and not wanted & SECOND_PROCESS_CASES):
        return False
    return all(_names_whole_suite(arg) or "test_publication" in arg for arg in config.args)


def pytest_deselected(items: list[pytest.Item]) -> None:
    """Remember that only part of the suite runs (see ``pytest_collection_finish``)."""
    if items and any(_is_case(item) for item in items):
        items[0].config.stash[STATE].deselected = True


def pytest_collection_finish(session: pytest.Session) -> None:
    """When only part of the suite runs, unused snapshots are neither an error nor deleted.

    (See ``ConformanceSnapshots``: out-of-tree snapshots make syrupy call the siblings of a
    node-ID selection unused.) A behaviour-only run compares no snapshot at all (they are
    wording), so it counts as partial too.
    """
    config = session.config
    state = config.stash[STATE]
    if not state.case_items or state.refused_selection:
        return
    if config.getoption("conformance_list_cases"):
        chosen = {i.nodeid: i for i in session.items}
        listed = {c: i for c, i in state.case_items.items() if i.nodeid in chosen}
        # The process's own stdout: ``python -m conformance`` sends pytest's lines to stderr
        # while it lists, so the listing can be redirected into a file alone.
        out = sys.__stdout__ or sys.stdout
        out.write(case_listing(listed, config.getoption("conformance_list_format") or "markdown"))
        out.flush()
        state.listed = len(listed)
        config.hook.pytest_deselected(items=list(session.items))
        session.items[:] = []
        return
    # Only now is the selection final (-k and -m deselect after our collection hook).
    state.selected = [c for c in (_case_id(i) for i in session.items if _is_case(i)) if c]
    if hasattr(config, "workeroutput"):
        workers.share_selection(config, _own_selection(state))
    snapshot_guard.refuse_missing(config, state, session.items)
    if state.spare is not None and not SECOND_PROCESS_CASES & set(state.selected):
        state.spare.close()
        state.spare = None
    whole = (
        not state.deselected
        and all(_names_whole_suite(arg) for arg in config.args)
        and "wording" in state.levels
    )
    ConformanceSnapshots.partial_run = False
    if not whole:
        snapshot_guard.partial(config)
    speed.freeze_collected()


def _own_selection(state: _State) -> workers.Selection:
    chosen = state.selected
    rules = {case_id: case_rules(state.case_items[case_id]) for case_id in chosen}
    return workers.Selection(chosen, len(state.case_items), state.deselected, rules)


def _the_selection(config: pytest.Config, state: _State) -> workers.Selection:
    """The run's choice of cases: its own, or a worker's where xdist's controller collected none."""
    if state.case_items:
        return _own_selection(state)
    return workers.received_selection(config) or workers.Selection([], 0, False, {})


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    """A run cut short (interrupted, ``-x``, ``--maxfail``) is a partial run for the snapshots.

    syrupy counts the pinned transcripts of the cases that never ran as unused: an interrupted
    run's exit 2 became 3 (syrupy adds its failure bit), and under ``--snapshot-update`` they
    were deleted from the snapshot directory. This runs before syrupy's end of session.
    """
    ended = False
    try:
        result = yield
        ended = not (session.shouldfail or session.shouldstop)
        return result
    finally:
        if not ended:
            snapshot_guard.partial(session.config)


def _names_whole_suite(arg: str) -> bool:
    if "::" in arg:
        return False
    if arg == CASES_PACKAGE:
        return True
    try:
        return Path(arg).resolve() in (CASES_DIR.resolve(), CASES_DIR.parent.resolve())
    except OSError:
        return False


@pytest.fixture(scope="session")
def conformance_client(pytestconfig: pytest.Config) -> Client:
    """The harness under test, behind checked contract calls."""
    return pytestconfig.stash[STATE].connect()


def conformance_dir(config: pytest.Config, name: str) -> Path:
    """A fresh directory of the run's own, outside the system temp directory (``basetemp``)."""
    state = config.stash[STATE]
    state.connect()
    assert state.base is not None
    return state.base.case_dir(name)


def discard_dir(config: pytest.Config, directory: Path) -> None:
    """A directory ``conformance_dir`` made is no longer needed: removed in the background."""
    base = config.stash[STATE].base
    if base is not None:
        base.discard(directory)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Past the deadline, a case is not run; otherwise it gets its judge."""
    case_id = _case_id(item) if _is_case(item) else None
    if case_id is None:
        return
    state = item.config.stash[STATE]
    state.cuts_before[item.nodeid] = state.deadline_cuts()
    if state.past_deadline():
        state.report.incomplete(
            f"the run's deadline ({item.config.getoption('conformance_deadline'):g} s) passed"
        )
        pytest.skip(f"{NOT_RUN}the run's deadline passed")
    if state.trace is not None:
        state.trace.case = case_id
    immediate = getattr(item.obj, "is_hypothesis_test", False) or bool(  # type: ignore[attr-defined]
        (_case_mark(item) or pytest.mark.case).kwargs.get("model_based")
    )
    judge = Judge(state.levels, immediate=immediate)
    state.judges[item.nodeid] = judge
    display.PLACES.forget_case()
    if state.client is not None:
        state.client.judge = judge
        state.client.wording.root = None
        state.client.case_id = case_id
        state.client.lacking = _not_applicable_without


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    """When a case ends, report every violation its judge collected, together."""
    state = pyfuncitem.config.stash[STATE]
    judge = state.judges.get(pyfuncitem.nodeid)
    if judge is None:
        return (yield)
    client = state.client
    if client is not None:
        client.dead_ends_case = judge.immediate
    returned = False
    hypothesis: Any = getattr(pyfuncitem.obj, "hypothesis", None)
    inner = getattr(hypothesis, "inner_test", None)
    if inner is not None:
        hypothesis.inner_test = _one_example_at_a_time(inner, judge)
    try:
        outcome = yield
        returned = True
    except ConformanceFailure as failure:
        # Raised at once inside a property: the judge already holds it.
        if not judge.violations:
            judge.violations.extend(failure.violations)
        raise ConformanceFailure(judge.violations) from None
    except (pytest.skip.Exception, pytest.fail.Exception):
        raise
    except KeyboardInterrupt:
        # Before its waiting call is released: a thread of the case may still call.
        state.interrupted()
        raise
    except HarnessGone as gone:
        raise _cut_short(judge, gone.error) from gone.error
    except Exception as exc:
        raise _cut_short(judge, exc) from exc
    finally:
        if inner is not None:
            hypothesis.inner_test = inner
        if client is not None:
            client.dead_ends_case = False
        _release_abandoned_calls(state, pyfuncitem)
        # Taken whatever the case's end, so it is never told to the next case.
        untold = _untold_break(state)
        if untold is not None and not returned:
            _cut_short(judge, untold)  # beside the failure the case ends on
    if untold is not None:
        raise _cut_short(judge, untold) from None
    judge.check_unjudged_calls()
    judge.settle()
    return outcome


def _one_example_at_a_time(inner: Callable[..., object], judge: Judge) -> Callable[..., object]:
    """A property's test body, judged one example at a time.

    Hypothesis runs a property many times (generating, then shrinking what failed, then the
    smallest failing example once more), and the case's judge outlives every run. Each example
    starts with no violations and no calls of its own, so the verdict is the one of the example
    hypothesis settled on, with its calls: not every example's first violation (hundreds, whose
    handles and values depend on how far the search went) and every call of the search.
    What a call changed outside the workspace is judged after its own example, so that it is
    shrunk too.
    """

    @functools.wraps(inner)
    def one_example(*args: object, **kwargs: object) -> object:
        judge.violations.clear()
        judge.calls.clear()
        display.PLACES.forget_handles()
        result = inner(*args, **kwargs)
        judge.check_unjudged_calls()
        return result

    return one_example


def _untold_break(state: _State) -> HarnessCallError | None:
    """A protocol break the harness made after this case's last answer (a second answer sent
    with it, a line that is no answer): this case's, though no call of it failed."""
    for transport in (state.transport, state.spare, *state.second_instances):
        if isinstance(transport, Stdio) and (untold := transport.take_untold()) is not None:
            return untold
    return None


def _cut_short(judge: Judge, exc: Exception) -> ConformanceFailure:
    """A case that ended on an error: its words are a behaviour violation of their own."""
    sentence = display.text(
        f"{type(exc).__name__}: {exc}" if not isinstance(exc, AssertionError) else str(exc)
    )
    judge.cut_short = True
    # An answer outside the protocol names the rule it broke (its words cite it already), and
    # is one cause wherever it shows: the harness's framing, not the case's subject.
    rule = exc.rule if isinstance(exc, HarnessCallError) else None
    sig = subject_signature(rule, "protocol-broken") if rule is not None else None
    judge.violations.append(
        Violation("behaviour", -1, sentence or type(exc).__name__, rule, signature=sig)
    )
    return ConformanceFailure(judge.violations)


def _release_abandoned_calls(state: _State, item: pytest.Item) -> None:
    """A call the case gave up waiting for is its own: stop the harness before the next case.

    Otherwise it would time out (or block) during an innocent later case and fail that one.
    """
    if state.transport is not None:
        state.transport.abandon(f"{_case_id(item)} ended with a call still waiting for its answer")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, object, object]:
    """Attach each case's verdicts; keep secrets out of everything the suite prints."""
    report = yield
    if not isinstance(report, pytest.TestReport):
        return report
    _redact(report)
    case_id = _case_id(item) if _is_case(item) else None
    if case_id is None:
        return report
    state = item.config.stash[STATE]
    judge = state.judges.get(item.nodeid)
    error = call.excinfo.value if call.excinfo is not None else None
    # A harness call that failed in set-up or teardown is one line (own_words); closing a
    # session of a harness that is dead or out of time is none: the case's outcome says so.
    gone = isinstance(error, HarnessCallError) and state.harness_gone(error)
    if report.failed and report.when == "teardown" and gone:
        report.outcome, report.longrepr = "passed", None
        return report
    ran = not report.skipped or hasattr(report, "wasxfail")  # not "not applicable" or not run
    if report.when in ("setup", "call") and ran and state.cut_by_deadline(item.nodeid):
        _not_run_past_deadline(item, report, state)
        return report
    skipped = report.skipped and not hasattr(report, "wasxfail")
    if report.when == "call" and judge is not None and not skipped:
        # A declared expected failure that passes fails the run (strict), but the harness
        # failed nothing: its levels say so, and the failure says what to change.
        declared_passes = (
            report.failed and str(report.longrepr) == f"{XPASS_LEAD}{case_id} {DECLARED}"
        )
        if declared_passes:
            report.longrepr = (
                f"{XPASS_LEAD}{case_id} {PASSES_AS_DECLARED}: remove it from "
                "--conformance-expect-fail or the settings' expect-fail"
            )
        failed = (report.failed and not declared_passes) or (
            report.skipped and hasattr(report, "wasxfail")
        )
        data: dict[str, Any] = {
            "levels": judge.outcomes(failed_by_exception=failed and not judge.violations),
            "rules": case_rules(item),
        }
        if judge.violations:
            data["verdicts"] = [
                v.to_json() for v in ConformanceFailure(judge.violations).violations
            ]
            data["calls"] = [record.to_json() for record in judge.calls]
        data = cast(dict[str, Any], scrub_data(json.loads(json.dumps(data))))
        if getattr(report, "wasxfail", None) == RECOMMENDED and data.get("verdicts"):
            # Its one line is its first verdict, as a failed case's is (JUnit's message too).
            report.wasxfail = f"{RECOMMENDED}: {data['verdicts'][0]['verdict']}"
        # A recommended case is judged too: an entry an older baseline has for a level it now
        # passes is stale, and fails the run in pytest's words as well as the suite's.
        soft = str(getattr(report, "wasxfail", "")).startswith(RECOMMENDED)
        if state.baseline is not None and (not hasattr(report, "wasxfail") or soft):
            mark_known(report, case_id, data, state.baseline, state.strict_baseline,
                       recommended=soft)  # fmt: skip
        report.user_properties.append((DATA, data))
    elif report.when == "setup" and report.failed:
        data = {"rules": case_rules(item)}
        if state.baseline is not None:
            mark_known(report, case_id, data, state.baseline, state.strict_baseline)
        report.user_properties.append((DATA, data))
    if report.failed and report.when in ("setup", "call") and "advice" not in data_of(report):
        report.sections.append(("conformance case", f"{case_id}: {_summary(item)}"))
    return report


def _not_run_past_deadline(item: pytest.Item, report: pytest.TestReport, state: _State) -> None:
    """The run's deadline cut one of the case's calls: the suite stopped the harness, so the
    case is not run (README), whether it then failed, passed, or judged the failed call."""
    state.report.incomplete(
        f"the run's deadline ({item.config.getoption('conformance_deadline'):g} s) passed"
    )
    reason = f"{NOT_RUN}the run's deadline passed while it ran"
    report.outcome = "skipped"
    report.longrepr = (str(item.path), (item.location[1] or 0) + 1, f"Skipped: {reason}")
    report.sections = []
    if hasattr(report, "wasxfail"):
        del report.wasxfail


def own_words(item: pytest.Item, call: pytest.CallInfo[None]) -> str | None:
    """The words a failed phase of a case is reported in where the suite words it, else ``None``.

    A harness that could not be reached: one line. A verdict: its sentences, then the calls.
    Never the suite's own traceback (``conformance.failures`` makes such reports directly).
    """
    case_id = _case_id(item) if call.excinfo is not None and _is_case(item) else None
    if call.excinfo is None or case_id is None:
        return None
    error = call.excinfo.value
    if call.when in ("setup", "teardown") and isinstance(error, HarnessCallError | ContractError):
        return scrub(display.text(f"{case_id}: {error}"))
    judge = item.config.stash[STATE].judges.get(item.nodeid)
    if call.when != "teardown" and judge is not None and isinstance(error, ConformanceFailure):
        return scrub(verdict_text(case_id, error, judge))
    return None


def data_of(report: pytest.TestReport) -> dict[str, Any]:
    """The verdict data a case's phase carries (empty for none)."""
    found = dict(report.user_properties).get(DATA)
    return cast(dict[str, Any], found) if isinstance(found, dict) else {}


def _redact(report: pytest.TestReport) -> None:
    """The suite never prints a secret value it planted or found: ``[REDACTED]`` instead."""
    secrets = run_secrets()
    if report.longrepr is not None:
        text = str(report.longrepr)
        cleaned = scrub(text, secrets)
        if cleaned != text:
            report.longrepr = cleaned
    report.sections = [(title, scrub(body, secrets)) for title, body in report.sections]


def pytest_runtest_teardown(item: pytest.Item) -> None:
    """The case is over: its judge and watch are let go."""
    state = item.config.stash[STATE]
    if state.client is not None:
        state.client.judge = None
        state.client.watch = None


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Complete the report — also for a run cut short — write it, and set the exit status.

    Runs last, so other plugins (syrupy's unused snapshots) have had their say on the status.
    """
    config = session.config
    state = config.stash[STATE]
    if config.getoption("conformance_list_cases") and state.case_items:
        # Listing runs no test on purpose; a selection that lists none is pytest's 5, as a run
        # of it would be, so a script can tell an empty list from a table. An interruption or
        # an error keeps its own status.
        if _listed(exitstatus):
            empty = not state.listed and not state.refused_selection  # a refusal has said why
            session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED if empty else pytest.ExitCode.OK
        return
    if config.option.collectonly:
        return  # nothing ran, nothing to judge: pytest's listing and status stand
    report = state.report
    if exitstatus == pytest.ExitCode.USAGE_ERROR:
        return
    whole = state.helper is None
    if not state.selected and not report.cases:
        cases_run = any(_names_cases(arg) for arg in config.args)  # not the project's own tests
        if exitstatus == pytest.ExitCode.INTERRUPTED and whole and cases_run:
            # Before its cases were collected: the report says so all the same, and the harness
            # is not started (or greeted) now to fill in its name.
            report.incomplete("the run was interrupted before its cases were collected")
            report.duration_s = state.elapsed()
            state.write_reports()
        elif exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and state.case_items and whole:
            # A -k that matches nothing: the reports are written all the same, so a CI job
            # never uploads an earlier run's in their place.
            report.incomplete(NOTHING_SELECTED)
            report.duration_s = state.elapsed()
            state.write_reports()
        return
    interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
    if not report.harness and state.not_started is None and not interrupted:
        # An xdist controller collects nothing; an interrupted run never waits for a greeting.
        report.harness = state.connect().profile.to_json()
    report.duration_s = state.elapsed()
    selection = _the_selection(config, state)
    if selection.partial and whole:
        report.selected = {"cases": len(selection.cases), "of": selection.of}
    for case_id in selection.cases:
        if case_id not in report.cases:
            report.add(case_id, "not-run", f"{NOT_RUN}the run ended first", None)
            report.cases[case_id].rules = selection.rules.get(case_id, [])
    for result in report.cases.values():
        if not result.levels:  # not judged at all: say so at every level
            judged = {"not-applicable": "not-applicable", "failed": "failed"}
            result.levels = {
                level: judged.get(result.outcome, "not-run") if level in state.levels else "not-run"
                for level in LEVELS
            }
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        report.incomplete("the run was interrupted")
    elif any(r.outcome == "not-run" for r in report.cases.values()):
        report.incomplete("the run stopped before every case ran (-x or --maxfail?)")
    if state.baseline is not None:
        state.baseline.apply(report, strict_new=state.strict_baseline)
    state.write_reports()
    if state.unwritten:  # a file the run was asked for is missing: never a green run
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        return
    ours = report.exit_status()
    if state.recorder.other_failures:
        return  # a test that is not a case failed in the same run: pytest's status stands
    if session.exitstatus == pytest.ExitCode.OK or (
        session.exitstatus == pytest.ExitCode.TESTS_FAILED and session.testsfailed
    ):
        # Failed cases are ours to judge (a baseline may expect them); a failure without a
        # failed test (unused snapshots) stays a failure.
        session.exitstatus = ours


def _listed(exitstatus: int) -> bool:
    """Whether a ``--conformance-list-cases`` session ended as a listing does (not cut short)."""
    return exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    """Print the conformance report, or the case table with ``--conformance-list-cases``."""
    state = config.stash[STATE]
    if exitstatus == pytest.ExitCode.USAGE_ERROR:
        return
    if config.getoption("conformance_list_cases"):
        if state.case_items and not state.refused_selection and _listed(exitstatus):
            listed = f"{state.listed} {plural('case', state.listed)}"  # pytest: "deselected"
            terminalreporter.write_line(f"listed {listed}; none was run")
        return
    if config.option.collectonly:
        return
    if not state.report.cases:
        if not state.report.complete:  # interrupted before its cases were collected
            terminalreporter.write_line(f"INCOMPLETE: {state.report.reason}")
        return
    terminalreporter.write_sep("=", "harness conformance")
    for line in terminal.lines(state.report):
        terminalreporter.write_line(scrub(line))
    for note in state.notes:
        terminalreporter.write_line(scrub(f"NOTE: {note}"))
    for line in state.unwritten:
        terminalreporter.write_line(f"ERROR: {line}", red=True)


def case_table(items: dict[str, pytest.Item]) -> list[str]:
    """The markdown table of case IDs: ID, area, rules, and what the harness must do."""
    rows = ["| ID | area | rules | the harness must… |", "|---|---|---|---|"]
    for case_id in sorted(items, key=sort_key):
        rules = ", ".join(f"`{r}`" for r in case_rules(items[case_id]))
        rows.append(f"| {case_id} | {area_of(case_id)} | {rules} | {_summary(items[case_id])} |")
    return rows


def case_listing(items: dict[str, pytest.Item], form: str) -> str:
    """The cases as ``--conformance-list-cases`` prints them: a Markdown table, or JSON."""
    if form == "json":
        rows = [
            {"id": case_id, "area": area_of(case_id), "rules": case_rules(items[case_id]),
             "summary": _summary(items[case_id])}
            for case_id in sorted(items, key=sort_key)
        ]  # fmt: skip
        return json.dumps({"cases": rows}, indent=2, ensure_ascii=False) + "\n"
    return "\n".join(case_table(items)) + "\n"


def _summary(item: pytest.Item) -> str:
    """The first line of a case's docstring: what the harness must do."""
    return (getattr(item, "obj", None).__doc__ or "").strip().split("\n")[0]


def _plugins_named(config: pytest.Config) -> list[str]:
    """The plugins this run loaded with ``-p`` (not the suite's own, not a ``no:``)."""
    args = [str(a) for a in config.invocation_params.args]
    named = [b for a, b in itertools.pairwise(args) if a == "-p"]
    named += [a[2:] for a in args if a.startswith("-p") and len(a) > 2 and not a.startswith("-p=")]
    return [n for n in named if not n.startswith("no:") and n != "conformance.plugin"]


def _run_args(config: pytest.Config, choice: Choice) -> list[str]:
    """The suite options of this run, so a failed case can be replayed alone.

    As the run took them, typed or from the settings (``pyproject.toml``, ``-o``): a replay
    from another directory finds no settings, and must not test the reference instead.
    """
    flag = {"python": "--harness", "cmd": "--harness-cmd", "mcp": "--harness-mcp"}.get(choice.kind)
    keep = [flag, str(choice.value)] if flag else []
    if choice.kind == "object":  # a hook's harness: the plugins named with -p hand it again
        keep += [arg for name in _plugins_named(config) for arg in ("-p", name)]
    if choice.kind == "mcp" and choice.mcp_map:
        keep += ["--harness-mcp-map", str(choice.mcp_map)]
    for name in ("conformance_level", "conformance_wording", "conformance_timeout",
                 "conformance_handshake_timeout"):  # fmt: skip
        value = config.getoption(name)
        if not value and name in ("conformance_level", "conformance_wording"):
            value = config.getini(name)
        if value:
            keep += [f"--{name.replace('_', '-')}", str(value)]
    if config.getoption("conformance_in_process"):
        keep.append("--conformance-in-process")
    # The examples a property case draws: CI's profile (500 examples, chosen by CI=true) finds
    # what a replay on a laptop, with the default profile's 30, would call passing.
    from conformance.strategies import active_profile  # noqa: PLC0415

    profile = active_profile()
    if profile is not None:
        keep += ["--hypothesis-profile", profile]
    seed = config.getoption("hypothesis_seed", None)
    if seed is not None:
        keep += ["--hypothesis-seed", str(seed)]
    return keep


__all__ = ["case_seed", "case_table"]
