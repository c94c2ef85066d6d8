"""The report as a Markdown summary, for a CI job page (``--conformance-report-md PATH``)."""

from __future__ import annotations

from collections import Counter

from conformance.report import AREAS, CaseResult, Report, area_of, level_counts, plural, write_text
from conformance.report.terminal import (
    baseline_facts,
    describe_harness,
    expected_column,
    new_failures,
)
from conformance.secrets import scrub


def render(report: Report) -> str:
    """The whole summary."""
    harness = report.harness
    any_failed = any(r.outcome == "failed" for r in report.cases.values())
    status = (
        "passed" if report.exit_status() == 0 else "FAILED" if any_failed or report.complete
        else "INCOMPLETE"
    )  # fmt: skip
    level = "behaviour only" if report.level == "behaviour" else "behaviour + wording"
    title = f"{harness.get('name', '?')} {harness.get('version', '')}".rstrip()
    if not harness:
        title = "harness not known (the run ended before its handshake)"
    out = [
        f"## Harness conformance: {title} — {status}",
        "",
        f"Suite {report.suite['name']} {report.suite['version']}, spec {report.spec}, "
        f"level: **{level}**.",
    ]
    if harness:  # not when the run ended before the harness was greeted
        out += ["", *(f"- {line}" for line in describe_harness(harness))]
    if not report.complete:
        out += ["", f"> **Incomplete run:** {report.reason}"]
    causes = report.causes()
    if causes.causes:
        out += ["", f"### Root causes: {causes.counted()}", ""]
        for number, cause in enumerate(causes.causes, 1):
            weight = "required" if cause.required else "recommended"
            rule = f"`{cause.rule}` {weight}" if cause.rule else weight
            out.append(f"{number}. {_escape(cause.words)} — {rule} — {', '.join(cause.cases)}")
    out += [
        "",
        "| area | passed | failed | expected | n/a | skip | not run | behaviour | wording |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    by_area: dict[str, list[CaseResult]] = {}
    for result in report.cases.values():
        by_area.setdefault(area_of(result.id), []).append(result)
    for area in AREAS.values():
        results = by_area.get(area)
        if not results:
            continue
        counts = Counter(r.outcome for r in results)
        behaviour = "{}/{}".format(*level_counts(results, "behaviour"))
        wording = (
            "—"
            if report.level == "behaviour"
            else "{}/{}".format(*level_counts(results, "wording"))
        )
        out.append(
            f"| {area} | {counts['passed']} | {counts['failed']} | "
            f"{expected_column(counts, 'expected-fail')} | "
            f"{counts['not-applicable']} | {counts['skipped']} | {counts['not-run']} | "
            f"{behaviour} | {wording} |"
        )
    failed = [r for r in report.ordered() if r.outcome == "failed"]
    if failed:
        out += ["", "### Failed cases", ""]
        for result in failed:
            note = causes.note(result.id)
            if result.baseline == "listed" and result.baseline_advice:  # what fails it
                note = _escape(result.baseline_advice.splitlines()[0])
            out.append(f"- **{result.id}** ({', '.join(f'`{r}`' for r in result.rules)})"
                       + (f" — {note}" if note else ""))  # fmt: skip
            if note:
                continue
            verdicts = [v["verdict"] for v in result.verdicts] or [result.message or "failed"]
            out += [f"  - {_escape(v.splitlines()[0])}" for v in verdicts]
    if report.baseline is not None:
        facts = "; ".join(baseline_facts(report))
        out += ["", f"Baseline `{report.baseline.get('path')}`: {_escape(facts)}."]
    expected = [r for r in report.ordered() if r.outcome in ("expected-fail", "recommended-fail")]
    if expected:
        out += ["", "### Expected failures", ""]
        if report.baseline is not None:
            new = (
                ", or new since it (those fail the run with --conformance-baseline-strict)"
                if new_failures(report)
                else ""
            )
            out += [f"Known from the baseline `{report.baseline.get('path')}` or declared{new}; "
                    "they do not fail the run.", ""]  # fmt: skip
        for result in expected:
            why = "recommended" if result.outcome == "recommended-fail" else "expected"
            if result.baseline == "new" and result.outcome == "expected-fail":
                why = "new since the baseline"
            verdict = (result.verdicts[0]["verdict"] if result.verdicts else result.message) or why
            out.append(f"- **{result.id}** ({why}): {_escape(verdict.splitlines()[0])}")
    stale = [r for r in report.ordered() if r.baseline == "stale"]
    if stale:
        out += ["", "### Stale baseline entries (they fail the run)", ""]
        out += [f"- {_escape(r.baseline_advice or r.id + ' now passes')}" for r in stale]
    not_applicable = Counter(
        (r.message or "").removeprefix("not applicable: ")
        for r in report.cases.values()
        if r.outcome == "not-applicable"
    )
    if not_applicable:
        out += ["", "### Not applicable", "", "The harness does not declare what they need:", ""]
        out += [
            f"- {n} {plural('case', n)}: {_escape(why)}"
            for why, n in sorted(not_applicable.items())
        ]
    skipped = [r for r in report.ordered() if r.outcome == "skipped"]
    if skipped:  # the table counts them; a reader should not have to find why elsewhere
        out += ["", "### Skipped", ""]
        out += [f"- **{r.id}**: {_escape((r.message or 'skipped').splitlines()[0])}"
                for r in skipped]  # fmt: skip
    out += ["", f"Duration: {report.duration_s:.2f} s.", ""]
    return "\n".join(out)


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;")


def write(report: Report, path: str) -> None:
    """Write the summary to ``path``, no secret of the run in it."""
    write_text(path, scrub(render(report)))
