"""Baselines: the known failures of a harness, so its CI fails only on what is new.

``python -m conformance baseline REPORT.json > conformance-baseline.json`` writes the failures of
a run, keyed by case and level, each with its one-line verdict, and the suite and spec version it
was made with (and every case that existed then). ``--conformance-baseline FILE`` then marks those
failures expected, and fails the run on a listed failure that now passes (a stale entry: remove
it) and on any failure it does not list. A case added to the suite after the baseline is reported
as *new* and does not fail the run unless ``--conformance-baseline-strict`` asks it to; cases that
do not apply never need an entry.

Case IDs are stable, so upgrading the suite never breaks a baseline: a case that was split keeps
its ID for one part and its other parts get new IDs (``SPLIT``); a baseline made before the split
carries its entry for the old ID over to the new ones and never calls that entry stale. A
withdrawn case (``WITHDRAWN``) keeps its ID; a baseline that lists it still loads, with a note.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Final

from conformance.harness.contract import Json, JsonObject
from conformance.report import Report, sort_key
from conformance.verdict import LEVELS

FORMAT: Final = 1

SPLIT: Final[dict[str, tuple[str, ...]]] = {
    # "another program's files are never touched" is required (tool.changes-only-target)
    "PUB-005": ("PUB-011",),
}
"""A case whose checks were split: the ID it kept → the IDs of its other parts."""

WITHDRAWN: Final[dict[str, str]] = {}
"""A withdrawn case's ID → why, in words (and which case checks it now, if any)."""


class BaselineError(ValueError):
    """A baseline file that cannot be used; the message names the file and what is wrong."""


def make_baseline(report: JsonObject) -> JsonObject:
    """The baseline of one JSON report: every failed (or expected-fail) case, by level."""
    failures: dict[str, dict[str, str]] = {}
    for case in report["cases"]:
        if case.get("outcome") not in ("failed", "expected-fail", "recommended-fail"):
            continue
        levels = case.get("levels") or {}
        failed = [level for level in LEVELS if levels.get(level) == "failed"] or ["behaviour"]
        verdicts = case.get("verdicts") or []
        entry = {}
        for level in failed:
            first = next((v["verdict"] for v in verdicts if v.get("level") == level), None)
            entry[level] = (first or case.get("message") or "failed").splitlines()[0]
        failures[case["id"]] = entry
    return {
        "format": FORMAT,
        "suite": report.get("suite", {}),
        "spec": report.get("spec"),
        "harness": {k: report.get("harness", {}).get(k) for k in ("name", "version")},
        "level": report.get("level", "all"),
        "cases": sorted((c["id"] for c in report["cases"]), key=sort_key),
        "failures": dict(sorted(failures.items(), key=lambda kv: sort_key(kv[0]))),
    }


@dataclass(frozen=True)
class Baseline:
    """A loaded baseline."""

    path: str
    failures: dict[str, dict[str, str]]
    known: frozenset[str]
    suite_version: str

    @classmethod
    def load(cls, path: str) -> Baseline:
        """Read and check a baseline file."""
        try:
            with open(path, encoding="utf-8") as source:
                data: Json = json.load(source)
        except OSError as exc:
            raise BaselineError(f"baseline {path}: cannot be read: {exc.strerror}") from None
        except ValueError as exc:
            raise BaselineError(f"baseline {path}: not JSON: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise BaselineError(
                f"baseline {path}: not a format-{FORMAT} baseline "
                "(write one with: python -m conformance baseline REPORT.json)"
            )
        failures, known = data.get("failures"), data.get("cases")
        if not isinstance(failures, dict) or not isinstance(known, list):
            raise BaselineError(f"baseline {path}: needs a failures object and a cases list")
        for case_id, entry in failures.items():
            if not isinstance(entry, dict) or not entry or not set(entry) <= set(LEVELS):
                raise BaselineError(
                    f"baseline {path}: {case_id} must map levels ({', '.join(LEVELS)}) "
                    f"to verdicts, got {entry!r}"
                )
        suite = data.get("suite")
        if not isinstance(suite, dict):
            suite = {}
        return cls(
            path,
            {k: dict(v) for k, v in failures.items()},
            frozenset(str(c) for c in known),
            str(suite.get("version", "?")),
        )

    def unknown_cases(self, all_cases: set[str]) -> list[str]:
        """Listed cases the suite does not have (a typo; withdrawn cases are known)."""
        return sorted(set(self.failures) - all_cases - set(WITHDRAWN))

    def carried(self) -> dict[str, str]:
        """New case ID → the listed ID it was split from (for a baseline older than the split)."""
        return {
            new: old
            for old, parts in SPLIT.items()
            if old in self.failures
            for new in parts
            if new not in self.known
        }

    def notes(self) -> list[str]:
        """What the suite changed since this baseline about the cases it lists, in words."""
        notes = [
            f"{case_id} is withdrawn ({WITHDRAWN[case_id]}); its entry is ignored"
            for case_id in sorted(set(self.failures) & set(WITHDRAWN), key=sort_key)
        ]
        for new, old in sorted(self.carried().items(), key=lambda kv: sort_key(kv[0])):
            notes.append(f"{old} was split since this baseline: its entry also covers {new}")
        return notes

    def apply(self, report: Report, *, strict_new: bool) -> None:
        """Turn listed failures into expected ones, and flag stale entries and new cases."""
        listed = 0
        carried = self.carried()
        split = set(carried.values())
        for result in report.cases.values():
            if result.id in carried:  # a part split off a listed case: listed under that case
                inherited = self.failures[carried[result.id]]
                result.baseline = "listed"
                failed = {level for level, o in result.levels.items() if o == "failed"}
                if result.outcome == "failed" and failed <= set(inherited):
                    result.outcome = "expected-fail"
                continue
            if result.id not in self.known:
                result.baseline = "new"
                if result.outcome == "failed" and not strict_new:
                    result.outcome = "expected-fail"
                continue
            entry = self.failures.get(result.id)
            if entry is None:
                continue
            listed += 1
            result.baseline = "listed"
            failed = {level for level, o in result.levels.items() if o == "failed"}
            if result.outcome == "failed" and not failed:
                failed = {"behaviour"}
            if result.id not in split and any(
                result.levels.get(level) == "passed" for level in entry
            ):
                result.baseline = "stale"
            if result.outcome == "failed" and failed <= set(entry):
                result.outcome = "expected-fail"
        report.baseline = {
            "path": self.path,
            "suite": self.suite_version,
            "listed": listed,
            "strictNew": strict_new,
        }
        notes = self.notes()
        if notes:
            report.baseline["notes"] = list(notes)
