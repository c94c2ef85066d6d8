"""The report as the terminal shows it at the end of a run."""

from __future__ import annotations

from collections import Counter

from conformance.causes import Causes
from conformance.report import AREAS, CaseResult, Report, area_of, level_counts, plural

_COLUMNS = ("passed", "failed", "expected-fail", "not-applicable", "skipped", "not-run")
_HEADS = ("passed", "failed", "xfail", "n/a", "skip", "not run")


def describe_harness(harness: dict[str, object]) -> list[str]:
    """Who was tested, with what it declares: a tools-only run never reads as full conformance."""
    capabilities = harness.get("capabilities") or []
    assert isinstance(capabilities, list)
    how = "inferred from its methods" if harness.get("capabilitiesInferred") else "declared"
    options = harness.get("options") or {}
    assert isinstance(options, dict)
    shown = [f"sandbox {'/'.join(options.get('sandbox') or []) or 'none'}"]
    shown += [name for name, value in options.items() if name != "sandbox" and value is True]
    declared = "" if harness.get("optionsDeclared", True) else " (not declared: all assumed)"
    return [
        f"capabilities: {', '.join(map(str, capabilities))} ({how})",
        f"options: {', '.join(shown)}{declared}    paths: {harness.get('paths', 'any')}",
    ]


def root_cause_lines(causes: Causes) -> list[str]:
    """The root causes, first: how many distinct defects, each with its rule and cases."""
    if not causes.causes:
        return []
    out = [f"root causes: {causes.counted()}"]
    for number, cause in enumerate(causes.causes, 1):
        weight = "required" if cause.required else "recommended"
        rule = f"{{{cause.rule}}} {weight}" if cause.rule else weight
        out.append(f"  {number}. {cause.words} — {rule} — {', '.join(cause.cases)}")
    return out


def lines(report: Report) -> list[str]:
    """The terminal summary: the root causes lead."""
    harness = report.harness
    level = "behaviour only" if report.level == "behaviour" else "behaviour + wording"
    leading = root_cause_lines(report.causes())
    who = (
        f"{harness.get('name', '?')} {harness.get('version', '?')} ({harness.get('language', '?')})"
        if harness
        else "not known (the run ended before the harness answered its handshake)"
    )
    out = [
        f"harness: {who}    suite: {report.suite['name']} "
        f"{report.suite['version']}    spec: {report.spec}    level: {level}",
        *(describe_harness(harness) if harness else []),
        "",
        *leading,
        *([""] if leading else []),
        f"{'area':<19}" + "".join(f"{h:>8}" for h in _HEADS) + f"{'behaviour':>11}{'wording':>9}",
    ]
    by_area: dict[str, list] = {}  # type: ignore[type-arg]
    for result in report.cases.values():
        by_area.setdefault(area_of(result.id), []).append(result)
    total: Counter[str] = Counter()
    all_results = []
    for area in AREAS.values():
        results = by_area.get(area)
        if not results:
            continue
        counts = Counter(r.outcome for r in results)
        total.update(counts)
        all_results += results
        out.append(_row(area, counts, results, report.level))
    out.append(_row("total", total, all_results, report.level))
    causes = report.causes()
    failed = [r for r in report.ordered() if r.outcome == "failed"]
    if failed:
        out += ["", "failed cases:"]
        for r in failed:
            note = causes.note(r.id)
            if r.baseline == "listed" and r.baseline_advice:  # what fails it is not listed
                note = _one_line(r.baseline_advice)
            out.append(f"  {r.id:<9} {note}" if note else f"  {r.id:<9} {_one_line(r.message)}")
    soft = [r for r in report.ordered() if r.outcome == "recommended-fail"]
    if soft:
        out += ["", "recommended (a failure here never fails the run):"]
        out += [f"  {r.id:<9} {_one_line(r.message)}" for r in soft]
    not_applicable = Counter(
        (r.message or "").removeprefix("not applicable: ")
        for r in report.cases.values()
        if r.outcome == "not-applicable"
    )
    if not_applicable:
        out += ["", "not applicable (the harness does not declare what they need):"]
        out += [f"  {n:>3} {plural('case', n)}: {why}" for why, n in sorted(not_applicable.items())]
    if report.baseline is not None:
        out += ["", *_baseline_line(report).splitlines()]
    if not report.complete:
        not_run = sum(1 for r in report.cases.values() if r.outcome == "not-run")
        cases = "case" if not_run == 1 else "cases"
        out += ["", f"INCOMPLETE: {report.reason} ({not_run} {cases} not run)"]
    out += ["", f"duration: {report.duration_s:.2f} s"]
    return out


def _row(name: str, counts: Counter[str], results: list, level: str) -> str:  # type: ignore[type-arg]
    cells = "".join(f"{expected_column(counts, column):>8}" for column in _COLUMNS)
    behaviour = "{}/{}".format(*level_counts(results, "behaviour"))
    wording = "-" if level == "behaviour" else "{}/{}".format(*level_counts(results, "wording"))
    return f"{name:<19}{cells}{behaviour:>11}{wording:>9}"


def expected_column(counts: Counter[str], column: str) -> int:
    """A column's count; "xfail" holds the recommended failures too, so every row adds up."""
    if column == "expected-fail":
        return counts["expected-fail"] + counts["recommended-fail"]
    return counts[column]


def _one_line(message: str | None, width: int = 220) -> str:
    """The first line, cut to ``width``; a verdict keeps its rule citation visible."""
    first = (message or "failed").strip().splitlines()[0]
    if len(first) <= width:
        return first
    head, sep, cited = first.rpartition("; SPEC §")
    if sep:
        where = "SPEC §" + cited.split(": ", 1)[0]  # "SPEC §2.3 {history.fold}"
        room = width - len(where) - 3
        cut = head if len(head) <= room else head[: room - 1].rstrip() + "…"
        return f"{cut}; {where}"
    return first[: width - 1] + "…"


def baseline_facts(report: Report) -> list[str]:
    """What the run's baseline held: its known failures, the cases new since it, its notes."""
    info = report.baseline or {}
    listed = int(info.get("listed", 0))
    parts = [f"{listed} known {plural('failure', listed)}"]
    new = [r.id for r in report.ordered() if r.baseline == "new"]
    if new:
        parts.append(f"{len(new)} {plural('case', len(new))} new since the baseline")
    notes = info.get("notes")
    if isinstance(notes, list):
        parts += [str(note) for note in notes]
    return parts


def new_failures(report: Report) -> list[CaseResult]:
    """Cases new since the baseline that fail, expected only because the baseline predates them."""
    return [r for r in report.ordered() if r.baseline == "new" and r.outcome == "expected-fail"]


def _baseline_line(report: Report) -> str:
    stale = [r for r in report.ordered() if r.baseline == "stale"]
    lines = [f"baseline {(report.baseline or {}).get('path')}: {'; '.join(baseline_facts(report))}"]
    new = new_failures(report)
    if new:  # they leave the run green: named here, not only in the JSON and JUnit
        lines.append(
            f"new since the baseline and failing ({len(new)}, they fail the run with "
            "--conformance-baseline-strict):"
        )
        lines += [f"  {r.id:<9} {_one_line(r.message)}" for r in new]
    if stale:
        lines.append(f"STALE baseline entries ({len(stale)}, they fail the run):")
        lines += [f"  {r.baseline_advice or r.id + ' now passes'}" for r in stale]
    return "\n".join(lines)
