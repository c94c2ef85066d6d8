"""Baselines: the known failures of a harness, so its CI fails only on what is new.

``python -m conformance baseline REPORT.json > conformance-baseline.json`` writes the failures of
a run, keyed by case and level, each with its one-line verdict, and the suite and spec version it
was made with (and every case that existed then). ``--conformance-baseline FILE`` then marks those
failures expected — in the suite's report and in pytest's own outcome (``xfail`` with the verdict
as its reason), so JUnit and CI test views count them as expected — and fails the run on a
listed failure that now passes (a stale entry: the advice names the level to remove) and on any
failure it does not list. A case added to the suite after the baseline is reported
as *new* and does not fail the run unless ``--conformance-baseline-strict`` asks it to; cases that
do not apply never need an entry.

Case IDs are stable, so upgrading the suite never breaks a baseline: a case that was split keeps
its ID for one part and its other parts get new IDs (``SPLIT``); a baseline made before the split
carries its entry for the old ID over to the new ones and never calls that entry stale. A
withdrawn case (``WITHDRAWN``) keeps its ID; a baseline that lists it still loads, with a note.
So does a baseline made against another spec version, at behaviour alone, or for a harness of
another name (``provenance_notes``): the run's verdicts stand, and its baseline line says why a
stale entry or an unlisted failure may not be the harness's doing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Final

from conformance.causes import at_fault
from conformance.display import show
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


class _Twice(ValueError):
    """A key given twice in one JSON object of a baseline."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _once_each(pairs: list[tuple[str, Json]]) -> dict[str, Json]:
    """A JSON object whose keys are each given once (``json.load``'s hook)."""
    seen: dict[str, Json] = {}
    for key, value in pairs:
        if key in seen:
            raise _Twice(key)
        seen[key] = value
    return seen


def make_baseline(report: JsonObject) -> JsonObject:
    """The baseline of one JSON report: every failed (or expected-fail) case, by level.

    Not a recommended-fail case: it never fails a run, so listing it would only make the run
    fail (as a stale entry) on the day the harness is fixed. Nor a case that failed the run at
    no level (declared as expected to fail, and passing).
    """
    failures: dict[str, dict[str, str]] = {}
    for case in report["cases"]:
        if case.get("outcome") not in ("failed", "expected-fail") or not at_fault(case):
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
class Decision:
    """What a baseline says about one case's outcome."""

    status: str | None
    """``listed``, ``stale``, ``new`` or None (the baseline does not name the case)."""
    expected: bool
    """The case failed, and only where the baseline expects it to."""
    stale_levels: tuple[str, ...] = ()
    """Listed levels at which the case now passes."""
    kept_levels: tuple[str, ...] = ()
    """Listed levels at which it still fails."""
    unjudged_levels: tuple[str, ...] = ()
    """Listed levels this run did not judge (``--conformance-level behaviour``)."""
    unlisted_levels: tuple[str, ...] = ()
    """Levels at which a listed case fails that its entry does not list: what fails the run."""

    def advice(self, case_id: str) -> str:
        """The action for a stale entry, level by level: never one that creates a failure."""
        passing = " and ".join(self.stale_levels)
        if not self.kept_levels and not self.unjudged_levels:
            return f"{case_id} now passes at {passing}: remove its entry from the baseline"
        keep = []
        if self.kept_levels:
            keep.append(f"{' and '.join(self.kept_levels)}, which it still fails")
        if self.unjudged_levels:
            keep.append(f"{' and '.join(self.unjudged_levels)}, not judged in this run")
        return (
            f"{case_id} now passes at {passing}: remove only its {passing} entry from the "
            f"baseline (keep {'; keep '.join(keep)})"
        )


@dataclass(frozen=True)
class Baseline:
    """A loaded baseline."""

    path: str
    failures: dict[str, dict[str, str]]
    known: frozenset[str]
    suite_version: str
    spec: str | None = None
    """The spec version it was made against (None: the file does not say)."""
    level: str = "all"
    """The levels its run judged: ``all``, or ``behaviour`` alone."""
    harness: str | None = None
    """The name of the harness whose failures it lists (None: the file does not say)."""

    @classmethod
    def load(cls, path: str) -> Baseline:
        """Read and check a baseline file."""
        try:
            with open(path, encoding="utf-8") as source:
                data: Json = json.load(source, object_pairs_hook=_once_each)
        except OSError as exc:
            raise BaselineError(f"baseline {path}: cannot be read: {exc.strerror}") from None
        except _Twice as exc:  # json.load keeps the last silently: an entry would be lost
            raise BaselineError(
                f"baseline {path}: names {exc.key} twice in one object: keep one entry"
            ) from None
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
        if not known:
            # Every case would be new since the baseline, and no failure would fail the run.
            raise BaselineError(
                f"baseline {path}: its cases list is empty, so it would expect every failure "
                "(write one with: python -m conformance baseline REPORT.json)"
            )
        unlisted = sorted(set(failures) - {str(c) for c in known}, key=sort_key)
        if unlisted:
            # A case the baseline does not know is new since it: its entry would never be read.
            raise BaselineError(
                f"baseline {path}: lists failures of case(s) missing from its cases list, "
                f"so their entries would be ignored: {', '.join(unlisted)}"
            )
        suite, harness, spec = data.get("suite"), data.get("harness"), data.get("spec")
        suite = suite if isinstance(suite, dict) else {}
        name = harness.get("name") if isinstance(harness, dict) else None
        return cls(
            path,
            {k: dict(v) for k, v in failures.items()},
            frozenset(str(c) for c in known),
            str(suite.get("version", "?")),
            spec=spec if isinstance(spec, str) else None,
            level="behaviour" if data.get("level") == "behaviour" else "all",
            harness=name if isinstance(name, str) else None,
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

    def provenance_notes(self, report: Report) -> list[str]:
        """Where this baseline and the run differ in what they judged, in words.

        Said, not refused: a new spec version or a renamed harness is an ordinary upgrade, and
        the verdicts that follow stay the run's. The words explain them: an entry gone stale or
        a failure the baseline does not list may come from a changed rule, not from the harness.
        """
        remake = "write it again with: python -m conformance baseline REPORT.json"
        notes = []
        if self.harness is not None and report.harness.get("name") not in (None, self.harness):
            notes.append(
                f"the baseline lists the failures of harness {show(self.harness)}, and "
                f"this run tested {show(report.harness.get('name'))}: check that it is "
                "the right file"
            )
        if self.spec is not None and report.spec and self.spec != report.spec:
            notes.append(
                f"the baseline was made against SPEC {self.spec} and this run judges against "
                f"SPEC {report.spec}: a stale entry or an unlisted failure may come from a rule "
                f"that changed between them ({remake})"
            )
        wording = any("wording" in entry for entry in self.failures.values())
        if self.level == "behaviour" and report.level != "behaviour" and not wording:
            # (A hand-edited file can say behaviour and list wording: then this is not so.)
            notes.append(
                "the baseline was made at --conformance-level behaviour, so it lists no "
                "wording failure: every wording failure of this run is one it does not list "
                f"({remake} from a run at both levels)"
            )
        return notes

    def notes(self) -> list[str]:
        """What the suite changed since this baseline about the cases it lists, in words."""
        notes = [
            f"{case_id} is withdrawn ({WITHDRAWN[case_id]}); its entry is ignored"
            for case_id in sorted(set(self.failures) & set(WITHDRAWN), key=sort_key)
        ]
        for new, old in sorted(self.carried().items(), key=lambda kv: sort_key(kv[0])):
            notes.append(f"{old} was split since this baseline: its entry also covers {new}")
        return notes

    def decide(
        self, case_id: str, failed: bool, levels: dict[str, str], *, strict_new: bool
    ) -> Decision:
        """Judge one case: ``failed`` is its outcome, ``levels`` its outcome per level.

        A part split off a listed case is listed under that case; neither is ever stale for
        the split (the baseline was made before it).
        """
        source = self.carried().get(case_id)
        if source is None and case_id not in self.known:
            return Decision("new", failed and not strict_new)
        entry = self.failures.get(source or case_id)
        if entry is None:
            return Decision(None, False)
        failing = {level for level, outcome in levels.items() if outcome == "failed"}
        if failed and not failing:
            failing = {"behaviour"}
        splits = source is not None or case_id in set(self.carried().values())
        stale = (
            ()
            if splits
            else tuple(
                level for level in LEVELS if level in entry and levels.get(level) == "passed"
            )
        )
        kept = tuple(level for level in LEVELS if level in entry and level in failing)
        unjudged = tuple(
            level for level in LEVELS if level in entry and level not in stale and level not in kept
        )
        expected = failed and failing <= set(entry)
        unlisted = tuple(level for level in LEVELS if level in failing and level not in entry)
        return Decision("stale" if stale else "listed", expected, stale, kept, unjudged, unlisted)

    def apply(self, report: Report, *, strict_new: bool) -> None:
        """Turn listed failures into expected ones, and flag stale entries and new cases.

        Idempotent: a case pytest already reported as a known failure keeps that outcome.
        """
        listed = 0
        carried = self.carried()
        unjudged: list[str] = []
        for result in report.cases.values():
            known_failure = result.outcome == "expected-fail" and result.baseline is not None
            failed = result.outcome == "failed" or known_failure
            decision = self.decide(result.id, failed, result.levels, strict_new=strict_new)
            if decision.status is None:
                continue
            listed += decision.status != "new" and result.id not in carried
            result.baseline = decision.status
            if decision.status == "listed" and result.outcome == "not-applicable":
                unjudged.append(result.id)
            advice = []
            if decision.status == "stale":
                advice.append(decision.advice(result.id))
            if result.outcome == "failed" and decision.unlisted_levels:
                # Named by what fails the run, not by the failure the baseline already accepts;
                # beside a stale level's advice too, which alone would hide the new failure.
                levels = decision.unlisted_levels
                first = next(
                    (str(v["verdict"]) for v in result.verdicts if v.get("level") in levels), None
                )
                advice.append(
                    f"now fails at {' and '.join(levels)}, which the baseline does not list"
                    + (f": {first.splitlines()[0]}" if first else "")
                )
            if advice:
                result.baseline_advice = "; and ".join(advice)
            if result.outcome == "failed" and decision.expected:
                result.outcome = "expected-fail"
        report.baseline = {
            "path": self.path,
            "suite": self.suite_version,
            "listed": listed,
            "strictNew": strict_new,
        }
        notes = self.provenance_notes(report) + self.notes()
        if unjudged:  # neither a known failure nor stale: said, or the count reads as failures
            one = len(unjudged) == 1
            notes.append(
                f"{', '.join(sorted(unjudged, key=sort_key))} "
                f"{'does' if one else 'do'} not apply to this harness, so "
                f"{'its entry was' if one else 'their entries were'} not judged"
            )
        if notes:
            report.baseline["notes"] = list(notes)
