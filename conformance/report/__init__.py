"""The conformance report: how every case ended, at each level, and whether the run is whole.

One model, several outputs: the terminal summary (``terminal``), the JSON report (``to_json``,
also the input of baselines and of the matrix), the Markdown summary (``markdown``) and the HTML
matrix (``matrix``). The exit status is decided here too: never 0 unless the report is complete
and every case passed, does not apply, or was expected to fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from typing import Final

from conformance.causes import Causes, group
from conformance.encoding import json_text
from conformance.harness.contract import Json, JsonObject
from conformance.secrets import scrub_data

AREAS: Final = {
    "TAX": "taxonomy",
    "REM": "remedy",
    "PRV": "provider messages",
    "RD": "read output",
    "GRD": "guards",
    "DEL": "deleted target",
    "PUB": "publication",
    "SBX": "sandbox",
    "CON": "contract",
    "REG": "registry",
    "LOOP": "loop events",
    "DRV": "derive_messages",
    "SCN": "scenarios",
    "SEC": "secret-free",
    "PROP": "properties",
    "STM": "state machine",
}
OUTCOMES: Final = (
    "passed",
    "failed",
    "expected-fail",
    "recommended-fail",
    "not-applicable",
    "skipped",
    "not-run",
)
OK_OUTCOMES: Final = frozenset(
    {"passed", "expected-fail", "recommended-fail", "not-applicable", "skipped"}
)
_RANK: Final = {
    "passed": 0,
    "not-applicable": 1,
    "skipped": 2,
    "not-run": 3,
    "recommended-fail": 4,
    "expected-fail": 5,
    "failed": 6,
}


def area_of(case_id: str) -> str:
    """The area a case ID belongs to, from its prefix."""
    return AREAS[case_id.split("-", maxsplit=1)[0]]


def plural(noun: str, n: int) -> str:
    """``noun`` as a count of ``n`` says it: ``case`` for one, ``cases`` for any other."""
    return noun if n == 1 else f"{noun}s"


def sort_key(case_id: str) -> tuple[int, int]:
    """Cases in area order, then by number."""
    prefix, _, number = case_id.partition("-")
    return list(AREAS).index(prefix), int(number)


@dataclass
class CaseResult:
    """How one case ended."""

    id: str
    rules: list[str] = field(default_factory=list)
    outcome: str = "passed"
    levels: dict[str, str] = field(default_factory=dict)
    message: str | None = None
    verdicts: list[JsonObject] = field(default_factory=list)
    calls: list[JsonObject] = field(default_factory=list)
    baseline: str | None = None
    baseline_advice: str | None = None
    """For a stale baseline entry: what to remove, level by level; for a listed case failing
    at a level its entry does not list: that level and its first verdict."""

    def record(self, outcome: str, message: str | None, data: JsonObject | None = None) -> None:
        """Fold in one phase's verdict: the worse outcome wins, the earlier phase's words a tie.

        A case whose call failed and whose teardown failed too is named by its verdict.
        """
        rank, now = _RANK[outcome], _RANK[self.outcome]
        if rank > now or (rank == now and self.message is None):
            self.outcome, self.message = outcome, message
        if data:
            self.levels = data.get("levels", self.levels) or self.levels
            self.verdicts = data.get("verdicts", self.verdicts) or self.verdicts
            self.calls = data.get("calls", self.calls) or self.calls

    def to_json(self) -> JsonObject:
        """The case as the JSON report records it."""
        entry: JsonObject = {
            "id": self.id,
            "area": area_of(self.id),
            "rules": self.rules,
            "outcome": self.outcome,
            "levels": self.levels,
        }
        if self.message is not None:
            entry["message"] = self.message
        if self.verdicts:
            entry["verdicts"] = self.verdicts
        if self.calls:
            entry["calls"] = self.calls
        if self.baseline is not None:
            entry["baseline"] = self.baseline
        if self.baseline_advice is not None:
            entry["baselineAdvice"] = self.baseline_advice
        return entry


@dataclass
class Report:
    """Everything the summaries and the JSON report say."""

    suite: JsonObject
    spec: str
    level: str = "all"
    harness: JsonObject = field(default_factory=dict)
    run: JsonObject = field(default_factory=dict)
    cases: dict[str, CaseResult] = field(default_factory=dict)
    duration_s: float = 0.0
    complete: bool = True
    reason: str | None = None
    baseline: JsonObject | None = None
    selected: JsonObject | None = None
    """When -k, -m or --conformance-case chose part of the suite: how many cases, of how many."""

    def add(self, case_id: str, outcome: str, message: str | None, data: JsonObject | None) -> None:
        """Record one phase of one case."""
        self.cases.setdefault(case_id, CaseResult(case_id)).record(outcome, message, data)

    def incomplete(self, reason: str) -> None:
        """Mark the run as cut short (the first reason is kept)."""
        if self.complete:
            self.complete, self.reason = False, reason

    def ordered(self) -> list[CaseResult]:
        """Every case, in area order."""
        return sorted(self.cases.values(), key=lambda r: sort_key(r.id))

    def counts(self) -> Counter[str]:
        """Cases per outcome."""
        return Counter(result.outcome for result in self.cases.values())

    def causes(self) -> Causes:
        """The failed cases grouped by root cause, in case order (``conformance.causes``)."""
        return group(result.to_json() for result in self.ordered())

    def stale(self) -> list[str]:
        """Baseline entries whose case now passes at the listed level."""
        return [r.id for r in self.ordered() if r.baseline == "stale"]

    def exit_status(self) -> int:
        """0 only for a complete run in which every case passed, does not apply or was expected."""
        if not self.complete:
            return 1
        if any(r.outcome not in OK_OUTCOMES for r in self.cases.values()):
            return 1
        return 1 if self.stale() else 0

    def to_json(self) -> JsonObject:
        """The JSON report."""
        causes = self.causes()
        cases = []
        for result in self.ordered():
            entry = result.to_json()
            if causes.note(result.id):
                entry["alsoExplainedBy"] = causes.explained_by[result.id]
            cases.append(entry)
        data: JsonObject = {
            "suite": self.suite,
            "spec": self.spec,
            "harness": self.harness,
            "level": self.level,
            "complete": self.complete,
            "rootCauses": [cause.to_json() for cause in causes.causes],
            "summary": dict(sorted(self.counts().items())),
            "cases": cases,
            "duration_s": round(self.duration_s, 3),
            "run": self.run,
        }
        if self.reason is not None:
            data["reason"] = self.reason
        if self.baseline is not None:
            data["baseline"] = self.baseline
        if self.selected is not None:
            data["selected"] = self.selected
        return data

    def write(self, path: str) -> None:
        """Write the JSON report atomically (see ``write_text``), no secret of the run in it."""
        write_text(path, json_text(scrub_data(self.to_json()), indent=2) + "\n", errors="strict")


def write_text(path: str, text: str, *, errors: str = "backslashreplace") -> None:
    """Write ``text`` at ``path`` atomically, its missing directories made: a reader never sees
    half of it, a write that fails (a full disk) leaves what was there and no ``.partial`` file,
    and a symbolic link stays one (its target is replaced). Anything but a regular file
    (``/dev/stdout``, a FIFO) is written into. By default a lone surrogate is written escaped,
    not refused."""
    if _special(path):
        with open(path, "w", encoding="utf-8", errors=errors) as out:
            out.write(text)
        return
    target = os.path.realpath(path)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    temp = f"{target}.partial"
    try:
        with open(temp, "w", encoding="utf-8", errors=errors) as out:
            out.write(text)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _special(path: str) -> bool:
    """Whether ``path`` is, or links to, something that is neither a regular file nor missing."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def output_problem(path: str, *, beside: bool = False) -> str | None:
    """Why no file can be written at ``path``, or None; ``beside``: a regular file is replaced
    through a temporary file next to it (next to a link's target). Missing directories are
    no problem (the writers make them), so the check looks at the nearest one that exists.
    Run before anything runs, so a path that cannot work is one line of bad input rather
    than a traceback at the end of a run."""
    if not path:
        return "an empty path"
    if os.path.isdir(path):
        return "is a directory, not a file"
    exists = os.path.exists(path)
    if exists and not os.access(path, os.W_OK):
        return "is not writable"
    if exists and _special(path):
        return None  # written into, as it is
    path = os.path.realpath(path) if beside else path
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return f"{parent} is not a directory"
    if (beside or not exists) and not os.access(parent, os.W_OK | os.X_OK):
        return f"no file can be made in {parent}"
    return None


def is_trace_record(line: str) -> bool:
    """Whether ``line`` is one of a trace's records (a JSON object with its ``kind``)."""
    try:
        record = json.loads(line)
    except ValueError:
        return False
    return isinstance(record, dict) and "kind" in record and "line" in record


def _traced(text: str) -> bool:
    """Whether ``text`` reads as a trace: its first line is one of a trace's records."""
    return is_trace_record(text.partition("\n")[0])


def level_counts(results: list[CaseResult], level: str) -> tuple[int, int]:
    """(passed, judged) at one level; cases where the level does not apply are not judged."""
    judged = [r.levels.get(level) for r in results if r.levels.get(level) in ("passed", "failed")]
    return judged.count("passed"), len(judged)


def load_report(path: str) -> JsonObject:
    """Read a JSON report written by the suite; raise ValueError naming what is wrong."""
    try:
        with open(path, encoding="utf-8-sig") as source:  # a BOM, as some editors save
            text = source.read()
    except OSError as exc:
        raise ValueError(f"report {path}: cannot be read: {exc.strerror}") from None
    except ValueError as exc:
        raise ValueError(f"report {path}: not UTF-8 text: {exc}") from None
    try:
        data: Json = json.loads(text)
    except ValueError as exc:
        if _traced(text):
            raise ValueError(
                f"report {path}: is a trace (--conformance-trace), not the JSON report of a run: "
                "pass the file written by --conformance-report"
            ) from None
        raise ValueError(f"report {path}: not JSON: {exc}") from None
    if isinstance(data, dict) and data.get("format") == 1 and "failures" in data:
        raise ValueError(
            f"report {path}: is a baseline (python -m conformance baseline writes one), not "
            "the JSON report of a run: pass the file written by --conformance-report"
        )
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        if _traced(text):  # a trace of one record is one JSON object
            raise ValueError(
                f"report {path}: is a trace (--conformance-trace), not the JSON report of a run: "
                "pass the file written by --conformance-report"
            )
        raise ValueError(f"report {path}: not a conformance report (no cases list)")
    for case in data["cases"]:
        if not (
            isinstance(case, dict)
            and isinstance(case.get("id"), str)
            and case.get("outcome") in OUTCOMES
        ):
            raise ValueError(f"report {path}: a case entry is malformed: {str(case)[:120]}")
    return data
