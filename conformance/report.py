"""The conformance report: per-area counts, the failed case IDs, and the same as JSON."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Final

import pytest

from conformance.contract import Json, JsonObject

AREAS: Final = {
    "TAX": "taxonomy",
    "REM": "remedy",
    "PRV": "provider messages",
    "RD": "read output",
    "GRD": "guards",
    "DEL": "deleted target",
    "SBX": "sandbox",
    "REG": "registry",
    "LOOP": "loop events",
    "DRV": "derive_messages",
    "SCN": "scenarios",
    "SEC": "secret-free",
    "PROP": "properties",
    "STM": "state machine",
}
OUTCOMES: Final = ("passed", "failed", "expected-fail", "skipped")


def area_of(case_id: str) -> str:
    """The area a case ID belongs to, from its prefix."""
    return AREAS[case_id.split("-", maxsplit=1)[0]]


def outcome_of(report: pytest.TestReport) -> tuple[str, str | None] | None:
    """What one phase's report says about its case: (outcome, message), or None for nothing."""
    if report.when == "call" or report.outcome != "passed":
        if hasattr(report, "wasxfail") and report.skipped:
            return "expected-fail", str(report.wasxfail) or None
        if report.failed:
            return "failed", _first_line(report)
        if report.skipped:
            return "skipped", _skip_reason(report)
        return "passed", None
    return None


def _first_line(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = getattr(crash, "message", None) or str(report.longrepr)
    phase = "" if report.when == "call" else f"[{report.when}] "
    return phase + (text.strip().splitlines() or ["failed"])[0]


def _skip_reason(report: pytest.TestReport) -> str | None:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return None


@dataclass
class CaseResult:
    """How one case ended."""

    id: str
    outcome: str = "passed"
    message: str | None = None

    def record(self, outcome: str, message: str | None) -> None:
        """Fold in one phase's verdict: a failure anywhere wins, then expected-fail, skip."""
        rank = {"passed": 0, "skipped": 1, "expected-fail": 2, "failed": 3}
        if rank[outcome] >= rank[self.outcome]:
            self.outcome, self.message = outcome, message


@dataclass
class Report:
    """Everything the summary and the JSON report say."""

    suite: JsonObject
    harness: JsonObject = field(default_factory=dict)
    cases: dict[str, CaseResult] = field(default_factory=dict)
    duration_s: float = 0.0

    def add(self, case_id: str, outcome: str, message: str | None) -> None:
        """Record one phase of one case."""
        self.cases.setdefault(case_id, CaseResult(case_id)).record(outcome, message)

    def to_json(self) -> JsonObject:
        """``{"suite", "harness", "cases": [{"id", "area", "outcome", "message"?}], …}``."""
        cases: list[Json] = []
        for result in sorted(self.cases.values(), key=lambda r: _sort_key(r.id)):
            entry: JsonObject = {
                "id": result.id,
                "area": area_of(result.id),
                "outcome": result.outcome,
            }
            if result.message is not None:
                entry["message"] = result.message
            cases.append(entry)
        return {
            "suite": self.suite,
            "harness": self.harness,
            "cases": cases,
            "duration_s": round(self.duration_s, 3),
        }

    def write(self, path: str) -> None:
        """Write the JSON report."""
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        with open(path, "w", encoding="utf-8") as out:
            json.dump(self.to_json(), out, indent=2, ensure_ascii=False)
            out.write("\n")

    def lines(self) -> list[str]:
        """The terminal summary."""
        harness = self.harness
        lines = [
            f"harness: {harness.get('name', '?')} {harness.get('version', '?')} "
            f"({harness.get('language', '?')})    "
            f"suite: {self.suite['name']} {self.suite['version']}",
            "",
            f"{'area':<20}{'passed':>8}{'failed':>8}{'expected-fail':>15}{'skipped':>9}",
        ]
        counts: dict[str, Counter[str]] = {}
        for result in self.cases.values():
            counts.setdefault(area_of(result.id), Counter())[result.outcome] += 1
        total: Counter[str] = Counter()
        for area in AREAS.values():
            if area in counts:
                c = counts[area]
                total.update(c)
                lines.append(
                    f"{area:<20}{c['passed']:>8}{c['failed']:>8}{c['expected-fail']:>15}{c['skipped']:>9}"
                )
        lines.append(
            f"{'total':<20}{total['passed']:>8}{total['failed']:>8}"
            f"{total['expected-fail']:>15}{total['skipped']:>9}"
        )
        failed = [r for r in self.cases.values() if r.outcome == "failed"]
        if failed:
            lines += ["", "failed cases:"]
            lines += [
                f"  {r.id:<9} {r.message or ''}"
                for r in sorted(failed, key=lambda r: _sort_key(r.id))
            ]
        lines += ["", f"duration: {self.duration_s:.2f} s"]
        return lines


def _sort_key(case_id: str) -> tuple[int, int]:
    prefix, _, number = case_id.partition("-")
    return list(AREAS).index(prefix), int(number)
