"""pytest's outcome of each case, and the suite's: one decides the other, in both directions.

A case's phases arrive as pytest reports; ``Recorder`` folds them into the conformance report
(outcome per case and level, its verdicts). Under a baseline a known failure is turned into an
expected failure *in pytest's own report* too (``xfail``, its verdict as the reason), so the
terminal summary, JUnit and every CI test view count it as expected; a stale baseline entry
becomes a failure whose message says which level to remove (``mark_known``).
"""

from __future__ import annotations

import re
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, Final, cast

import pytest

from conformance.harness.contract import JsonObject

if TYPE_CHECKING:
    from conformance.baseline import Baseline
    from conformance.report import Report

NOT_APPLICABLE: Final = "not applicable: "
NOT_RUN: Final = "not run: "
DATA: Final = "conformance-data"
KNOWN: Final = "known failure: "
"""How a listed failure's reason starts in pytest's report and in JUnit."""
NEW_CASE: Final = "case new since the baseline: "
"""How the reason of a failure the baseline predates starts: expected, but not known to it."""


def mark_known(
    report: pytest.TestReport,
    case_id: str,
    data: dict[str, Any],
    baseline: Baseline,
    strict: bool,
    *,
    recommended: bool = False,
) -> None:
    """Under a baseline: a listed failure becomes pytest's xfail; a stale entry a failure.

    A ``recommended`` case (pytest's xfail whatever it does) stays a recommended failure in
    the suite's report; only a stale entry changes its pytest outcome.
    """
    levels = data.get("levels") or {}
    failed = report.failed or (recommended and not report.passed)
    decision = baseline.decide(case_id, failed, levels, strict_new=strict)
    if decision.status is None:
        return
    data["baseline"] = decision.status
    if decision.expected and not recommended:
        verdicts = data.get("verdicts") or []
        first = verdicts[0]["verdict"] if verdicts else _first_line(report)
        report.outcome = "skipped"
        if decision.status == "new":
            why = f"{NEW_CASE}{case_id} (expected unless --conformance-baseline-strict)"
        else:
            why = f"{KNOWN}{case_id} (in the baseline)"
        data["failure"] = first.splitlines()[0]  # the case's message: not the reason above
        report.wasxfail = f"{why}: {data['failure']}"
        data["outcome"] = "expected-fail"
    if decision.status == "stale":
        advice = decision.advice(case_id)
        data["advice"] = advice
        if not report.failed:
            if recommended and failed:
                data["outcome"] = "recommended-fail"  # it still fails what never fails a run
            else:
                data["outcome"] = "expected-fail" if decision.expected else "passed"
            report.outcome = "failed"
            report.longrepr = f"stale baseline entry ({baseline.path}): {advice}"
        else:  # a new failure fails it already; its stale entry is said beside that failure
            report.sections.append(("stale baseline entry", f"{baseline.path}: {advice}"))
        if hasattr(report, "wasxfail"):
            del report.wasxfail


class Recorder:
    """Per-run plugin object: ``pytest_runtest_logreport`` is not given the config."""

    def __init__(self, report: Report, *, worker: bool) -> None:
        self.report = report
        self.worker = worker
        self.other_failures = 0
        """Failed tests in the same run that are not cases."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Fold each phase into the report (and keep the verdict data out of JUnit)."""
        properties = dict(report.user_properties)
        data = cast(JsonObject | None, properties.get(DATA))
        if not self.worker:  # an xdist worker passes it on
            report.user_properties = [p for p in report.user_properties if p[0] != DATA]
        case_id = properties.get("case_id")
        if not case_id:
            if report.failed:
                self.other_failures += 1
            return
        verdict = outcome_of(report)
        if verdict is None:
            return
        outcome, message = verdict
        verdicts = (data or {}).get("verdicts") or []
        if data and data.get("outcome"):
            outcome = str(data["outcome"])  # pytest's word was set by the baseline
        if outcome in ("failed", "expected-fail", "recommended-fail") and verdicts:
            message = verdicts[0]["verdict"]  # the first violation, disk first, is the one line
        elif outcome == "expected-fail" and data and data.get("failure"):
            message = str(data["failure"])  # a baseline's reason would reach the next baseline
        elif data and data.get("advice") and outcome == "passed":
            message = None
        self.report.add(str(case_id), outcome, message, data)
        result = self.report.cases[str(case_id)]
        if data and data.get("rules"):
            result.rules = list(data["rules"])
        if data and data.get("baseline"):
            result.baseline = str(data["baseline"])
            result.baseline_advice = cast(str | None, data.get("advice"))


def outcome_of(report: pytest.TestReport) -> tuple[str, str | None] | None:
    """What one phase says about its case: (outcome, message), or None for nothing."""
    if report.when != "call" and report.outcome == "passed":
        return None
    if report.skipped and hasattr(report, "wasxfail"):
        reason = str(report.wasxfail)
        outcome = "recommended-fail" if reason.startswith("recommended") else "expected-fail"
        return outcome, _first_line(report) if outcome == "recommended-fail" else reason or None
    if report.failed:
        return "failed", _first_line(report)
    if report.skipped:
        reason = _skip_reason(report) or ""
        if reason.startswith(NOT_APPLICABLE):
            return "not-applicable", reason
        if reason.startswith(NOT_RUN):
            return "not-run", reason
        return "skipped", reason
    return "passed", None


def _first_line(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    crash = getattr(longrepr, "reprcrash", None)
    text = getattr(crash, "message", None) or str(longrepr)
    text = re.sub(r"^(?:conformance\.verdict\.)?ConformanceFailure: ", "", text.strip())
    text = text.removeprefix("AssertionError: ")
    phase = "" if report.when == "call" else f"[{report.when}] "
    return phase + (text.strip().splitlines() or ["failed"])[0]


def _skip_reason(report: pytest.TestReport) -> str | None:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return None


@pytest.hookimpl(wrapper=True)
def pytest_report_teststatus(
    report: pytest.TestReport | pytest.CollectReport,
) -> Generator[None, object, object]:
    """Show the case ID beside the verbose status word: ``PASSED [REM-001]``.

    pytest's summary asks for a collection error's status too; such a report has no case.
    """
    result = yield
    case_id = dict(getattr(report, "user_properties", ())).get("case_id")
    # Skips are folded together in pytest's summary: an ID there would name only the first.
    if case_id and isinstance(result, tuple) and len(result) == 3 and not report.skipped:
        category, letter, word = result
        if isinstance(word, tuple):
            return category, letter, (f"{word[0]} [{case_id}]", word[1])
        if word:
            return category, letter, f"{word} [{case_id}]"
    return result
