"""The pytest plugin: choose the harness, give every case its ID, guard snapshots, report.

It is loaded in every pytest run of an environment where harness-conformance is installed
(entry point ``pytest11``), and stays out of the way unless conformance cases are collected.

Choosing the harness, first match wins:

1. ``--harness module:attr`` or ``--harness NAME`` (a name registered in the entry-point group
   ``harness_conformance.harnesses``);
2. a ``pytest_conformance_harness(config)`` hook implementation returning the harness object
   (in-process hand-over; put it in a plugin module loaded with ``-p``);
3. the ini option ``conformance_harness``;
4. the reference harness.

A harness that cannot be loaded, or lacks part of the contract, stops the run at once with one
line naming what is wrong.
"""

from __future__ import annotations

import re
import time
from collections.abc import Generator
from pathlib import Path
from typing import Final

import pytest

import conformance
from conformance import hookspecs
from conformance.client import Client
from conformance.contract import Harness
from conformance.loading import DEFAULT_HARNESS, HarnessLoadError, accept_harness, load_harness
from conformance.report import AREAS, Report, area_of, outcome_of
from conformance.snapshots import ConformanceSnapshots, default_snapshot_dir

CASES_PACKAGE: Final = "conformance.cases"
CASES_DIR: Final = Path(conformance.__file__).parent / "cases"
CASE_ID: Final = re.compile(r"^(?P<area>[A-Z]+)-\d{3}$")


class _State:
    """What one pytest run knows about the conformance suite."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.harness: Harness | None = None
        self.report = Report(
            suite={"name": "harness-conformance", "version": conformance.__version__}
        )
        self.case_items: dict[str, pytest.Item] = {}
        self.deselected = False
        self.started = time.monotonic()

    def choose_harness(self) -> tuple[str, object] | None:
        """The explicitly configured harness, as (label, reference or object), if any."""
        option = self.config.getoption("conformance_harness")
        if option:
            return f"--harness {option}", option
        handed = self.config.hook.pytest_conformance_harness(config=self.config)
        if handed is not None:
            return "the pytest_conformance_harness hook", handed
        ini = self.config.getini("conformance_harness")
        if ini:
            return f"conformance_harness = {ini}", ini
        return None

    def load(self, chosen: tuple[str, object] | None) -> Harness:
        """Load and accept the harness; raise ``pytest.UsageError`` with one clear line."""
        label, what = chosen if chosen is not None else ("default", DEFAULT_HARNESS)
        try:
            if isinstance(what, str):
                harness = load_harness(what)
            else:
                harness = accept_harness(what, f"the harness from {label}")
        except HarnessLoadError as exc:
            raise pytest.UsageError(str(exc)) from None
        self.harness = harness
        try:
            info = harness.describe()
        except Exception as exc:
            raise pytest.UsageError(f"harness from {label}: describe() failed: {exc}") from None
        if not (
            isinstance(info, dict)
            and all(isinstance(info.get(k), str) for k in ("name", "version", "language"))
        ):
            raise pytest.UsageError(
                f"harness from {label}: describe() must return "
                f'{{"name", "version", "language"}} as strings, got {info!r}'
            )
        self.report.harness = info
        return harness


STATE: Final = pytest.StashKey[_State]()


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Register ``pytest_conformance_harness``."""
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    """The suite's options and ini keys."""
    group = parser.getgroup("conformance", "harness conformance")
    group.addoption(
        "--harness",
        dest="conformance_harness",
        metavar="HARNESS",
        help="harness under test: module:attr, or a name registered in the entry-point group "
        "harness_conformance.harnesses (default: reference)",
    )
    group.addoption(
        "--conformance-snapshots",
        metavar="DIR",
        help="compare with (and --snapshot-update into) your own snapshot directory instead of "
        "the normative snapshots shipped with the suite",
    )
    group.addoption(
        "--conformance-report", metavar="PATH", help="also write the conformance report as JSON"
    )
    group.addoption(
        "--conformance-expect-fail",
        action="append",
        default=[],
        metavar="CASE_ID",
        help="a case your harness is known to fail (reported as expected-fail; repeatable)",
    )
    group.addoption(
        "--conformance-list-cases",
        action="store_true",
        help="print the table of case IDs (markdown) instead of running them",
    )
    parser.addini("conformance_harness", "harness under test (as --harness)", default="")
    parser.addini(
        "conformance_expect_fail",
        "case IDs known to fail (as --conformance-expect-fail)",
        type="linelist",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Register the marker; load an explicitly chosen harness now, so a bad one stops the run."""
    if config.getoption("hypothesis_profile", None) == "triage":
        # Only ours, so it must exist before hypothesis' own plugin loads it (after this hook).
        # default and ci are re-registered by the cases' conftest, only when cases are collected.
        from conformance.strategies import register_triage_profile  # noqa: PLC0415

        register_triage_profile()
    config.addinivalue_line("markers", "case(id): the stable ID of a conformance case")
    state = _State(config)
    config.stash[STATE] = state
    config.pluginmanager.register(_Recorder(state), "conformance-recorder")
    directory = config.getoption("conformance_snapshots")
    ConformanceSnapshots.directory = (
        Path(directory).resolve() if directory else default_snapshot_dir()
    )
    chosen = state.choose_harness()
    if chosen is not None:
        state.load(chosen)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Leave the extension as it was for the next run in this process."""
    ConformanceSnapshots.directory = default_snapshot_dir()
    ConformanceSnapshots.partial_run = False


def pytest_sessionstart(session: pytest.Session) -> None:
    """Start the clock of the report."""
    session.config.stash[STATE].started = time.monotonic()


def _is_case(item: pytest.Item) -> bool:
    module = getattr(item, "module", None)
    return bool(module) and str(getattr(module, "__name__", "")).startswith(CASES_PACKAGE + ".")


def _case_id(item: pytest.Item) -> str | None:
    marks = list(item.iter_markers("case"))
    return str(marks[0].args[0]) if marks and marks[0].args else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give every collected case its ID (checked unique), and mark declared expected failures."""
    state = config.stash[STATE]
    cases = [item for item in items if _is_case(item)]
    if not cases:
        return
    expected = set(config.getoption("conformance_expect_fail")) | set(
        config.getini("conformance_expect_fail")
    )
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
        state.case_items[case_id] = item
        item.user_properties.append(("case_id", case_id))
        item.extra_keyword_matches.add(case_id)
        if case_id in expected:
            item.add_marker(
                pytest.mark.xfail(reason=f"{case_id} declared as expected to fail", strict=True)
            )
    unknown = sorted(expected - set(state.case_items))
    if unknown:
        raise pytest.UsageError(
            f"unknown case ID(s) declared as expected to fail: {', '.join(unknown)}"
        )
    if state.harness is None:
        state.load(None)
    _guard_snapshot_update(config, state)
    if config.getoption("conformance_list_cases"):
        config.hook.pytest_deselected(items=list(items))
        items[:] = []


def _guard_snapshot_update(config: pytest.Config, state: _State) -> None:
    if not getattr(config.option, "update_snapshots", False):
        return
    if (
        not config.getoption("conformance_snapshots")
        and state.report.harness.get("name") != DEFAULT_HARNESS
    ):
        raise pytest.UsageError(
            "--snapshot-update would rewrite the suite's normative snapshots with the output "
            f"of {state.report.harness.get('name')!r}; "
            "pass --conformance-snapshots DIR to keep your own"
        )


def pytest_deselected(items: list[pytest.Item]) -> None:
    """Remember that only part of the suite runs (see ``pytest_collection_finish``)."""
    if items and any(_is_case(item) for item in items):
        items[0].config.stash[STATE].deselected = True


def pytest_collection_finish(session: pytest.Session) -> None:
    """When only part of the suite runs, unused snapshots are neither an error nor deleted.

    (See ``ConformanceSnapshots``: out-of-tree snapshots make syrupy call the siblings of a
    node-ID selection unused.)
    """
    config = session.config
    state = config.stash[STATE]
    if not state.case_items:
        return
    whole = not state.deselected and all(_names_whole_suite(arg) for arg in config.args)
    ConformanceSnapshots.partial_run = not whole
    if not whole:
        config.option.warn_unused_snapshots = True
        if hasattr(config.option, "no_cleanup"):
            config.option.no_cleanup = True


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
def conformance_harness(pytestconfig: pytest.Config) -> Harness:
    """The harness under test."""
    state = pytestconfig.stash[STATE]
    return state.harness if state.harness is not None else state.load(state.choose_harness())


@pytest.fixture(scope="session")
def conformance_client(conformance_harness: Harness) -> Client:
    """The harness behind the checked contract calls."""
    return Client(conformance_harness)


@pytest.hookimpl(wrapper=True)
def pytest_report_teststatus(
    report: pytest.TestReport, config: pytest.Config
) -> Generator[None, object, object]:
    """Show the case ID beside the verbose status word: ``PASSED [REM-001]``."""
    result = yield
    case_id = dict(report.user_properties).get("case_id")
    if case_id and isinstance(result, tuple) and len(result) == 3:
        category, letter, word = result
        if isinstance(word, tuple):
            return category, letter, (f"{word[0]} [{case_id}]", word[1])
        if word:
            return category, letter, f"{word} [{case_id}]"
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, object, object]:
    """Name the case in its failure output."""
    report = yield
    case_id = _case_id(item) if _is_case(item) else None
    if case_id and isinstance(report, pytest.TestReport) and report.failed:
        report.sections.append(("conformance case", f"{case_id}: {_summary(item)}"))
    return report


class _Recorder:
    """Per-run plugin object: ``pytest_runtest_logreport`` is not given the config."""

    def __init__(self, state: _State) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Fold each phase's outcome into the report."""
        case_id = dict(report.user_properties).get("case_id")
        verdict = outcome_of(report) if case_id else None
        if verdict is not None:
            self.state.report.add(str(case_id), *verdict)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop the clock; write the JSON report if asked."""
    state = session.config.stash[STATE]
    if session.config.getoption("conformance_list_cases") and state.case_items:
        session.exitstatus = pytest.ExitCode.OK  # listing ran no test on purpose
        return
    if not state.report.cases:
        return
    state.report.duration_s = time.monotonic() - state.started
    path = session.config.getoption("conformance_report")
    if path:
        state.report.write(path)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    """Print the conformance report, or the case table with ``--conformance-list-cases``."""
    state = config.stash[STATE]
    if config.getoption("conformance_list_cases"):
        terminalreporter.write_sep("=", "conformance cases")
        for line in case_table(state.case_items):
            terminalreporter.write_line(line)
        return
    if not state.report.cases:
        return
    terminalreporter.write_sep("=", "harness conformance")
    for line in state.report.lines():
        terminalreporter.write_line(line)


def case_table(items: dict[str, pytest.Item]) -> list[str]:
    """The markdown table of case IDs: ID, area, and the first line of the case's docstring."""
    rows = ["| ID | area | the harness must… |", "|---|---|---|"]
    for case_id in sorted(items, key=lambda c: (list(AREAS).index(c.split("-")[0]), c)):
        rows.append(f"| {case_id} | {area_of(case_id)} | {_summary(items[case_id])} |")
    return rows


def _summary(item: pytest.Item) -> str:
    """The first line of a case's docstring: what the harness must do."""
    return (getattr(item, "obj", None).__doc__ or "").strip().split("\n")[0]
