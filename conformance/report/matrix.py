"""The HTML matrix: several harnesses' JSON reports side by side (``python -m conformance matrix``).

``matrix A.json B.json … -o matrix.html`` writes one self-contained page (inline CSS, no script,
no external request): one column per harness, one row per area with its passed/judged counts per
level, each area opening onto one row per case. Every cell names its outcome in words and a symbol
as well as a colour, and every cell that did not simply pass opens (a ``<details>``) onto its
reason: the levels, the verdicts with their rules, and the calls made. Everything taken from a
report is HTML-escaped, and the page depends only on the reports (no timestamp), so the same
reports always give the same bytes.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Final, TypeAlias

from conformance.causes import group
from conformance.harness.contract import (
    CAPABILITIES,
    FLAG_OPTIONS,
    GRANTS,
    IMPLIED,
    SANDBOX_MODES,
    Json,
    JsonObject,
)
from conformance.report import AREAS, load_report, write_text
from conformance.verdict import LEVELS

# Outcome → (symbol, label). The symbol and the word carry the outcome as well as the colour, so
# the page reads the same to a colour-blind reader, in print and in a text browser.
# Each outcome is spelled as the JSON report spells it, on the page and in the summaries alike.
STYLE: Final = {
    "passed": ("✓", "passed"),
    "failed": ("✗", "failed"),
    "expected-fail": ("⚑", "expected-fail"),
    "recommended-fail": ("△", "recommended-fail"),
    "not-applicable": ("∅", "not-applicable"),
    "skipped": ("↷", "skipped"),
    "not-run": ("?", "not-run"),
}
MISSING: Final = "—"
"""What a cell shows for a case its report does not have."""

# Worst first: an area's summary cell takes the tint of the worst outcome in it.
_SEVERITY: Final = (
    "failed",
    "not-run",
    "recommended-fail",
    "expected-fail",
    "skipped",
    "passed",
    "not-applicable",
)
_FAILING: Final = frozenset({"failed", "not-run"})
# "Only cases whose outcomes differ" compares what the harnesses did: a pass beside a case that
# does not apply to another harness is no difference between them.
_SAME_AS: Final = {"not-applicable": "passed"}
# Beyond these, a call's strings and a case's calls are cut: one case of a real run recorded
# 64 KiB tool results, and the page has to stay light enough to open. The JSON keeps them whole.
_MAX_STRING: Final = 2000
_MAX_CALLS: Final = 40
_MAX_LINKS: Final = 24

# Okabe–Ito hues (distinguishable with the common colour-vision deficiencies), as light fills
# with dark text, except "failed": the one that has to jump out is a solid vermillion.
_CSS: Final = """
:root{font:14px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
color:#1b1b1b;background:#fff}
body{margin:0 1rem 2rem}
h1{font-size:1.3rem;margin:.7rem 0 .15rem}
p{margin:.2rem 0}
code,.mono{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.86em}
.meta{color:#444}
.warn{background:#fff3cd;border-left:4px solid #e69f00;padding:.2rem .5rem}
.legend{display:flex;flex-wrap:wrap;gap:.3rem;align-items:center;margin:.35rem 0}
.legend .o{padding:.05rem .4rem;border-radius:3px}
.controls{margin:.2rem 0 .5rem;color:#333}
.controls label{margin-right:1.2rem;cursor:pointer}
table.matrix{border-collapse:separate;border-spacing:0;table-layout:fixed;width:100%}
col.first{width:15.5rem}
/* Six or more harnesses keep readable columns: the page scrolls sideways, the first column
   stays. */
table.matrix{min-width:calc(15.5rem + var(--columns) * 12rem)}
table.matrix th[scope=row]{position:sticky;left:0;z-index:1;background:#fff}
@media (max-width:700px){col.first{width:7.5rem}
table.matrix{min-width:calc(7.5rem + var(--columns) * 10rem);font-size:.9em}}
thead tr.names th:first-child{left:0;z-index:4}
th,td{padding:.25rem .45rem;text-align:left;vertical-align:top;overflow-wrap:anywhere;
border-bottom:1px solid #ddd;border-right:1px solid #e8e8e8;font-weight:normal}
thead tr.names th{position:sticky;top:0;z-index:3;background:#f4f4f4;
border-bottom:2px solid #888;font-weight:bold}
thead tr.about td,thead tr.about th{background:#fafafa;font-size:.86em;color:#333}
.about p{margin:0 0 .1rem}
.badge{display:inline-block;font-size:.75em;font-weight:bold;padding:0 .35rem;margin-left:.2rem;
border-radius:3px;border:1px solid #888;vertical-align:1px;white-space:nowrap}
.b-all{border-color:#0072b2;color:#0072b2}
.b-tools{background:#e69f00;border-color:#e69f00;color:#000}
.b-partial{border-color:#e69f00;color:#6b4a00}
.b-level{border-color:#666;color:#444}
.b-incomplete{background:#000;border-color:#000;color:#f0e442}
.incomplete{background:#000;color:#f0e442;padding:.1rem .35rem;font-weight:bold}
tbody.total th,tbody.total td{border-bottom:2px solid #888}
tbody.total th{background:#f0f0f0}
.src{font-weight:normal;color:#555}
tr.area-row th,tr.area-row td{border-top:1px solid #bbb}
tr.area-row summary{cursor:pointer;font-weight:bold}
tr.area-row .n{font-weight:normal;color:#555;font-size:.86em}
.lv{white-space:nowrap;margin-right:.6rem}
.counts{font-size:.86em;color:#333}
.s-failed,.s-not-run{background:#fbe2d3;box-shadow:inset 4px 0 #d55e00}
.s-recommended-fail{background:#f7e6f0}
.s-expected-fail{background:#fdf1d3}
.s-passed{background:#e6f5ef}
.s-skipped{background:#eaf3fb}
.s-not-applicable,.s-none{background:#f3f3f3;color:#555}
tr.case th{font-size:.9em;padding-left:1.3rem}
tr.case th a{color:inherit;font-weight:bold;text-decoration:none}
.rules{display:block;color:#555;font-size:.82em}
tr.case{scroll-margin-top:4.5rem}
td.cell{font-size:.9em}
.o-passed{background:#cdeee3;color:#00543c}
.o-failed{background:#d55e00;color:#fff;font-weight:bold}
.o-expected-fail{background:#fbe3a6;color:#5c3f00}
.o-recommended-fail{background:#f2d4e6;color:#6b2450}
.o-not-applicable{background:#ececec;color:#5f5f5f}
.o-skipped{background:#d8ebfa;color:#0b4a75}
.o-not-run{background:#f0e442;color:#3a3600;font-weight:bold}
.o-missing{background:#fff;color:#777}
td.cell summary{cursor:pointer}
.tag{font-size:.75em;border:1px solid currentColor;border-radius:3px;padding:0 .25rem;
margin-left:.25rem;font-weight:normal}
.why{background:#fff;color:#1b1b1b;font-weight:normal;margin:.3rem -.2rem 0;padding:.35rem .45rem;
border:1px solid #999;border-radius:3px}
.why ol{margin:.15rem 0 .3rem;padding-left:1.3rem}
.why li{margin-bottom:.3rem}
.text{white-space:pre-wrap}
.calls{max-height:26rem;overflow:auto;border-top:1px solid #ccc;margin-top:.3rem;padding-top:.2rem}
.block{white-space:pre-wrap;background:#f5f5f5;border-left:3px solid #bbb;padding:.1rem .3rem;
margin:.1rem 0;font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;
font-size:.82em}
.links a{margin-right:.35rem}
.note{border-left:3px solid #0072b2;padding:.1rem .35rem;margin:.25rem 0;background:#eef5fb}
/* An area shows its cases when open, when one of them is the link target, or when asked to;
   a browser without :has() simply shows every case. */
tbody.area:has(>tr.area-row details:not([open])):not(:has(>tr:target))>tr.case{display:none}
body:has(#all:checked) tbody.area>tr.case,
body:has(#differ:checked) tbody.area>tr.case{display:table-row}
body:has(#differ:checked) tbody.area>tr.case.same{display:none}
"""


Notes: TypeAlias = Mapping[str, Sequence[tuple[str, str]]]
"""Per case ID, (tag, text) notes shown beside its verdict: a peer's triage, for one."""


def render(
    reports: Sequence[JsonObject],
    sources: Sequence[str] | None = None,
    notes: Sequence[Notes] | None = None,
) -> str:
    """The matrix page of these JSON reports, one column each (``sources`` names their files,
    ``notes`` holds each report's notes by case ID)."""
    names = list(sources) if sources is not None else [""] * len(reports)
    per_report: list[Notes] = list(notes) if notes is not None else [{}] * len(reports)
    # Two columns may be the same harness (a fixture reuses the reference's name): then the
    # sticky header also says which report each one is.
    tags = _tags(reports, sources)
    tables = [_by_id(report) for report in reports]
    order = _case_order(reports)
    by_area: dict[str, list[str]] = {}
    for case_id, area in order:
        by_area.setdefault(area, []).append(case_id)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Harness conformance matrix</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<h1>Harness conformance matrix</h1>",
        *_preamble(reports, len(order)),
        f'<table class="matrix" style="--columns:{len(reports)}">',
        '<colgroup><col class="first">' + "<col>" * len(reports) + "</colgroup>",
        "<thead>",
        '<tr class="names"><th scope="col">area / case</th>'
        + "".join(_name_cell(report, tag) for report, tag in zip(reports, tags, strict=True))
        + "</tr>",
        '<tr class="about"><th scope="row">harness</th>'
        + "".join(_about_cell(report, name) for report, name in zip(reports, names, strict=True))
        + "</tr>",
        "</thead>",
        '<tbody class="causes"><tr><th scope="row"><b>root causes</b>'
        ' <span class="n">distinct defects</span></th>'
        + "".join(_causes_cell(report) for report in reports)
        + "</tr></tbody>",
        '<tbody class="total"><tr><th scope="row"><b>all areas</b>'
        f' <span class="n">{len(order)} cases</span></th>'
        + "".join(_total_cell(report, table) for report, table in zip(reports, tables, strict=True))
        + "</tr></tbody>",
    ]
    for area, case_ids in by_area.items():
        out += _area(area, case_ids, reports, tables, per_report)
    out += [
        "</table>",
        '<p class="meta">Counts per level are passed/judged: a case is judged at a level when '
        "that level had something to check. Cases marked not-applicable need a capability or "
        "option the harness does not declare; they are never counted as passed.</p>",
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(out)


def write(paths: Sequence[str], output: str) -> None:
    """Write the matrix of the reports at ``paths`` to ``output`` (a bad report: ValueError)."""
    reports = [load_report(path) for path in paths]
    write_text(output, render(reports, source_names(paths)))


def source_names(paths: Sequence[str]) -> list[str]:
    """Short names for the report files that tell them apart: their file names, or, when two
    share one (``v1/report.json``, ``v2/report.json``), their paths from a common directory."""
    names = [os.path.basename(path) for path in paths]
    if len(set(names)) == len(names):
        return names
    absolute = [os.path.abspath(path) for path in paths]
    common = os.path.commonpath([os.path.dirname(path) for path in absolute])
    return [os.path.relpath(path, common) for path in absolute]


def _tags(reports: Sequence[JsonObject], sources: Sequence[str] | None) -> list[str]:
    """What a column's heading adds when two columns would read the same: its report's name."""
    names = list(sources) if sources is not None else [""] * len(reports)
    titles = [f"{_harness(r).get('name', '?')} {_harness(r).get('version', '?')}" for r in reports]
    return [
        (name or f"report {n}") if titles.count(title) > 1 else ""
        for n, (title, name) in enumerate(zip(titles, names, strict=True), 1)
    ]


def _mixed_versions(reports: Sequence[JsonObject]) -> bool:
    return (
        len({_suite(r) for r in reports}) > 1 or len({str(r.get("spec", "?")) for r in reports}) > 1
    )


MIXED_VERSIONS: Final = (
    "These reports come from different suite or spec versions: a case one of them does not "
    "have shows “—”."
)


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _by_id(report: JsonObject) -> dict[str, JsonObject]:
    return {str(case["id"]): case for case in _cases(report)}


def _cases(report: JsonObject) -> list[JsonObject]:
    cases = report.get("cases")
    return [c for c in cases if isinstance(c, dict)] if isinstance(cases, list) else []


def _area_of(case: JsonObject) -> str:
    prefix = str(case["id"]).split("-", maxsplit=1)[0]
    return AREAS.get(prefix) or str(case.get("area") or prefix)


def _case_order(reports: Sequence[JsonObject]) -> list[tuple[str, str]]:
    """(case ID, area) for the union of the reports' cases, in the suite's area order."""
    areas = list(AREAS.values())
    seen: dict[str, str] = {}
    for report in reports:
        for case in _cases(report):
            seen.setdefault(str(case["id"]), _area_of(case))

    # A report from another suite version may hold an area or an ID this one does not know:
    # it sorts after the known areas instead of failing the page.
    def key(item: tuple[str, str]) -> tuple[int, str, int, str]:
        case_id, area = item
        number = case_id.rpartition("-")[2]
        rank = areas.index(area) if area in areas else len(areas)
        return (
            rank,
            area if rank == len(areas) else "",
            int(number) if number.isdigit() else 0,
            case_id,
        )

    return sorted(seen.items(), key=key)


def _preamble(reports: Sequence[JsonObject], total: int) -> list[str]:
    suites = sorted({f"{_suite(r)}" for r in reports})
    specs = sorted({str(r.get("spec", "?")) for r in reports})
    out = [
        f'<p class="meta">{len(reports)} harness{"es" if len(reports) != 1 else ""} · '
        f"{total} cases · suite {_e(', '.join(suites))} · spec {_e(', '.join(specs))}</p>"
    ]
    if _mixed_versions(reports):
        out.append(f'<p class="warn">{_e(MIXED_VERSIONS)}</p>')
    legend = "".join(
        f'<span class="o o-{outcome}">{symbol} {label}</span>'
        for outcome, (symbol, label) in STYLE.items()
    )
    out += [
        f'<p class="legend">{legend}<span class="o o-missing">{MISSING} not in that report</span>'
        "</p>",
        '<p class="controls"><label><input type="checkbox" id="all"> show every case</label>'
        '<label><input type="checkbox" id="differ"> only cases whose outcomes differ</label>'
        "click an area to open its cases, a cell to see why</p>",
    ]
    return out


def _suite(report: JsonObject) -> str:
    suite = report.get("suite")
    if not isinstance(suite, dict):
        return "?"
    return f"{suite.get('name', '?')} {suite.get('version', '?')}"


def _harness(report: JsonObject) -> JsonObject:
    harness = report.get("harness")
    return harness if isinstance(harness, dict) else {}


def _scope(harness: JsonObject) -> tuple[str, str, str]:
    """(badge class, badge text, sentence) for what the harness declares it can be judged on."""
    declared = [str(c) for c in harness.get("capabilities") or []]
    how = " (inferred from its methods)" if harness.get("capabilitiesInferred") else ""
    # A capability another one implies (toolCodes by taxonomy) is not missing from the column.
    missing = [c for c in CAPABILITIES if c not in declared and IMPLIED.get(c) not in declared]
    if declared == ["tools"]:
        # The one reading to rule out: a green column for a harness judged on its tools alone.
        return (
            "b-tools",
            "TOOLS ONLY",
            f"capabilities: tools only{how} — judged on its file tools alone, not full "
            f"conformance; the cases needing {', '.join(missing)} do not apply",
        )
    if not missing:
        return "b-all", "all capabilities", f"capabilities: {', '.join(declared)}{how}"
    return (
        "b-partial",
        f"{len(declared)} of {len(CAPABILITIES)} capabilities",
        f"capabilities: {', '.join(declared) or 'none'}{how}; "
        f"not declared (their cases do not apply): {', '.join(missing)}",
    )


def _options(harness: JsonObject) -> str:
    options = harness.get("options")
    paths = harness.get("paths", "any")
    tail = "" if paths == "any" else f"; paths: {paths}"
    if not harness.get("optionsDeclared", True):
        return f"options: not declared (all assumed){tail}"
    if not isinstance(options, dict):
        return f"options: none{tail}"
    sandbox = [str(m) for m in options.get("sandbox") or []]
    features = [name for name in FLAG_OPTIONS if name not in GRANTS]
    flags = [name for name in features if options.get(name) is True]
    # A grant widens the fence; it is no feature whose absence the page should point out.
    grants = "".join(f"; grants {name}" for name in GRANTS if options.get(name) is True)
    if sandbox == list(SANDBOX_MODES) and len(flags) == len(features):
        return f"options: all{grants}{tail}"
    without = [name for name in features if name not in flags]
    return (
        f"options: sandbox {'/'.join(sandbox) or 'none'}"
        + (f", {', '.join(flags)}" if flags else "")
        + (f"; without {', '.join(without)}" if without else "")
        + grants
        + tail
    )


def _level_name(report: JsonObject) -> str:
    return "behaviour only" if report.get("level") == "behaviour" else "behaviour + wording"


def _name_cell(report: JsonObject, tag: str) -> str:
    harness = _harness(report)
    badge, text, _ = _scope(harness)
    badges = [f'<span class="badge {badge}">{_e(text)}</span>']
    if report.get("level") == "behaviour":
        badges.append('<span class="badge b-level">behaviour only</span>')
    if not report.get("complete", True):
        badges.append('<span class="badge b-incomplete">INCOMPLETE</span>')
    return (
        f'<th scope="col" class="harness"><span class="hname">{_e(harness.get("name", "?"))}'
        f'</span> <span class="hversion">{_e(harness.get("version", "?"))}</span> '
        + "".join(badges)
        + (f'<br><span class="mono src">{_e(tag)}</span>' if tag else "")
        + "</th>"
    )


def _about_cell(report: JsonObject, source: str) -> str:
    harness = _harness(report)
    _, _, scope = _scope(harness)
    run = report.get("run")
    lines = [
        f"{_e(harness.get('language', '?'))} · suite {_e(_suite(report))} · "
        f"spec {_e(report.get('spec', '?'))}",
        _e(scope),
        _e(_options(harness)),
    ]
    if report.get("complete", True):
        lines.append(f"level: {_e(_level_name(report))} · run complete{_e(_part(report))}")
    else:
        reason = report.get("reason") or "no reason recorded"
        lines += [
            f"level: {_e(_level_name(report))}{_e(_part(report))}",
            f'<span class="incomplete">INCOMPLETE: {_e(reason)}</span>',
        ]
    where = [f"from {source}"] if source else []
    if isinstance(run, dict) and run.get("harness"):
        where.append(f"run: {run['harness']}")
    if isinstance(report.get("duration_s"), int | float):
        where.append(f"{report['duration_s']:.2f} s")
    if where:
        lines.append(f'<span class="mono">{_e(" · ".join(where))}</span>')
    baseline = report.get("baseline")
    if isinstance(baseline, dict):
        lines.append(
            f"baseline {_e(baseline.get('path', '?'))}: "
            f"{_e(baseline.get('listed', 0))} known failures"
        )
    if stale := _stale(_cases(report)):
        lines.append(f'<span class="incomplete">{_e(_stale_words(stale))}</span>')
    return '<td class="about">' + "".join(f"<p>{line}</p>" for line in lines) + "</td>"


def _counts_line(cases: Iterable[JsonObject]) -> str:
    counts = Counter(str(case.get("outcome")) for case in cases)
    parts = [
        f'<span class="c-{outcome}">{counts[outcome]} {symbol} {label}</span>'
        for outcome, (symbol, label) in STYLE.items()
        if counts[outcome]
    ]
    return '<span class="counts">' + " · ".join(parts) + "</span>"


def _levels_line(report: JsonObject, cases: Sequence[JsonObject]) -> str:
    parts = []
    for level in LEVELS:
        if level != "behaviour" and report.get("level") == "behaviour":
            parts.append(f'<span class="lv">{level} <b>not-run</b></span>')
            continue
        judged = [
            levels.get(level)
            for case in cases
            if isinstance(levels := case.get("levels"), dict)
            and levels.get(level) in ("passed", "failed")
        ]
        parts.append(
            f'<span class="lv">{level} <b>{judged.count("passed")}/{len(judged)}</b></span>'
        )
    return " ".join(parts)


def _worst(cases: Iterable[JsonObject]) -> str:
    present = {str(case.get("outcome")) for case in cases}
    return next((outcome for outcome in _SEVERITY if outcome in present), "none")


def root_causes(report: JsonObject) -> list[JsonObject]:
    """A report's root causes: as it recorded them, or grouped now for an older report."""
    recorded = report.get("rootCauses")
    if isinstance(recorded, list):
        return [c for c in recorded if isinstance(c, dict)]
    return [cause.to_json() for cause in group(_cases(report)).causes]


def _causes_cell(report: JsonObject) -> str:
    causes = root_causes(report)
    if not causes:
        return '<td class="o o-passed">✓ none</td>'
    items = []
    for cause in causes:
        weight = "required" if cause.get("required", True) else "recommended"
        rule = f' <span class="mono">{{{_e(cause["rule"])}}}</span>' if cause.get("rule") else ""
        cases = cause.get("cases")
        shown = ", ".join(map(str, cases)) if isinstance(cases, list) else ""
        items.append(f"<li>{_e(cause.get('words', ''))}{rule} {weight} — {_e(shown)}</li>")
    count = len(causes)
    return (
        f'<td class="o o-failed"><details><summary>✗ {count} defect{"s" if count != 1 else ""}'
        f'</summary><ol class="causes">{"".join(items)}</ol></details></td>'
    )


def _total_cell(report: JsonObject, table: dict[str, JsonObject]) -> str:
    cases = list(table.values())
    links = _failing_links(table, table)
    badge, text, _ = _scope(_harness(report))
    # Totals that are all passes still say what was not judged, so they never read as full marks.
    scope = "" if badge == "b-all" else f'<br><span class="badge {badge}">{_e(text)}</span>'
    incomplete = (
        "" if report.get("complete", True) else '<br><span class="incomplete">INCOMPLETE</span>'
    )
    stale = _stale(cases)
    if stale:  # the run failed on them, though every outcome is a pass
        incomplete += f'<br><span class="incomplete">{_e(_stale_words(stale))}</span>'
    return (
        f'<td class="sum s-{_worst(cases)}">{_levels_line(report, cases)}<br>'
        f"{_counts_line(cases)}{scope}{incomplete}{links}</td>"
    )


def _stale(cases: Iterable[JsonObject]) -> list[str]:
    """The cases whose baseline entry is stale: each fails the run, though the case passed."""
    return [str(case.get("id")) for case in cases if case.get("baseline") == "stale"]


def _stale_words(stale: Sequence[str]) -> str:
    count = len(stale)
    return (
        f"{count} stale baseline entr{'y' if count == 1 else 'ies'}: the run fails until "
        f"{'it is' if count == 1 else 'they are'} removed"
    )


def _area(
    area: str,
    case_ids: list[str],
    reports: Sequence[JsonObject],
    tables: Sequence[dict[str, JsonObject]],
    notes: Sequence[Notes],
) -> list[str]:
    # An area opens by itself when a harness fails a case in it, so the page opens on problems.
    failing = any(
        t[i].get("outcome") in _FAILING or t[i].get("baseline") == "stale"
        for t in tables
        for i in case_ids
        if i in t
    )
    cells = []
    for report, table in zip(reports, tables, strict=True):
        cases = [table[i] for i in case_ids if i in table]
        if not cases:
            cells.append(f'<td class="sum s-none">{MISSING} no case of this area</td>')
            continue
        cells.append(
            f'<td class="sum s-{_worst(cases)}">{_levels_line(report, cases)}<br>'
            f"{_counts_line(cases)}{_failing_links(table, case_ids)}</td>"
        )
    slug = "area-" + "-".join(area.split())
    out = [
        f'<tbody class="area" id="{_e(slug)}">',
        f'<tr class="area-row"><th scope="row"><details{" open" if failing else ""}><summary>'
        f'{_e(area)} <span class="n">{len(case_ids)} cases</span></summary></details></th>'
        + "".join(cells)
        + "</tr>",
    ]
    for case_id in case_ids:
        present = [t.get(case_id) for t in tables]
        outcomes = {
            None if c is None else _SAME_AS.get(str(c.get("outcome")), c.get("outcome"))
            for c in present
        }
        rules: Json = next((c["rules"] for c in present if c is not None and c.get("rules")), [])
        rule_list = " ".join(_e(r) for r in rules) if isinstance(rules, list) else ""
        same = " same" if len(outcomes) == 1 else ""
        out.append(
            f'<tr class="case{same}" id="{_e(case_id)}"><th scope="row">'
            f'<a href="#{_e(case_id)}">{_e(case_id)}</a>'
            f'<span class="rules mono">{rule_list}</span></th>'
            + "".join(
                _case_cell(case, note.get(case_id, ()))
                for case, note in zip(present, notes, strict=True)
            )
            + "</tr>"
        )
    out.append("</tbody>")
    return out


def _failing_links(table: dict[str, JsonObject], case_ids: Iterable[str]) -> str:
    """Links to the failing cases among ``case_ids``: each opens its row, and the cell its why."""
    failing = [i for i in case_ids if i in table and table[i].get("outcome") in _FAILING]
    if not failing:
        return ""
    shown = "".join(f'<a href="#{_e(i)}">{_e(i)}</a>' for i in failing[:_MAX_LINKS])
    more = f" +{len(failing) - _MAX_LINKS} more" if len(failing) > _MAX_LINKS else ""
    return f'<br><span class="links">failing: {shown}{more}</span>'


def _case_cell(case: JsonObject | None, notes: Sequence[tuple[str, str]] = ()) -> str:
    if case is None:
        return f'<td class="cell o-missing" data-outcome="missing">{MISSING}</td>'
    outcome = str(case.get("outcome"))
    symbol, label = STYLE.get(outcome, ("?", outcome))
    levels = case.get("levels") if isinstance(case.get("levels"), dict) else {}
    assert isinstance(levels, dict)
    title = ", ".join(f"{level} {value}" for level, value in levels.items()) or label
    tags = (
        f'<span class="tag">baseline: {_e(case["baseline"])}</span>' if case.get("baseline") else ""
    ) + "".join(f'<span class="tag">{_e(tag)}</span>' for tag, _ in notes)
    head = f'<span class="label">{symbol} {_e(label)}</span>{tags}'
    opening = f'<td class="cell o-{_e(outcome)}" data-outcome="{_e(outcome)}" title="{_e(title)}">'
    plain = not (case.get("verdicts") or notes or case.get("baselineAdvice"))
    if outcome == "passed" and plain:
        return f"{opening}{head}</td>"
    return f"{opening}<details><summary>{head}</summary>{_why(case, levels, notes)}</details></td>"


def _why(case: JsonObject, levels: dict[str, Json], notes: Sequence[tuple[str, str]] = ()) -> str:
    """The reason behind a cell: levels, verdicts (or the message), notes, then the calls made."""
    out = ['<div class="why">']
    if levels:
        out.append(
            '<p class="levels">'
            + " · ".join(f"{_e(level)}: <b>{_e(value)}</b>" for level, value in levels.items())
            + "</p>"
        )
    verdicts = [v for v in case.get("verdicts") or [] if isinstance(v, dict)]
    if verdicts:
        out.append('<ol class="verdicts">')
        for verdict in verdicts:
            out.append(
                f'<li><span class="tag">{_e(verdict.get("level", "?"))}</span> '
                f'<code class="rule">{_e(verdict.get("rule") or "no rule")}</code>'
                f'<div class="text verdict">{_e(verdict.get("verdict", ""))}</div></li>'
            )
        out.append("</ol>")
    elif case.get("message"):
        out.append(f'<div class="text message">{_e(case["message"])}</div>')
    out += [f'<div class="note text"><b>{_e(tag)}</b>: {_e(text)}</div>' for tag, text in notes]
    if case.get("baselineAdvice"):
        out.append(f'<div class="note text"><b>baseline</b>: {_e(case["baselineAdvice"])}</div>')
    calls = [c for c in case.get("calls") or [] if isinstance(c, dict)]
    if calls:
        out.append(f'<div class="calls"><p>calls made ({len(calls)}):</p><ol>')
        out += [_call(call) for call in calls[:_MAX_CALLS]]
        out.append("</ol>")
        if len(calls) > _MAX_CALLS:
            out.append(f"<p>… {len(calls) - _MAX_CALLS} more in the JSON report</p>")
        out.append("</div>")
    out.append("</div>")
    return "".join(out)


def _call(call: JsonObject) -> str:
    arguments = json.dumps(_clip(call.get("arguments")), ensure_ascii=False)
    out = [
        f'<li class="call"><code>{_e(call.get("tool", "?"))}</code> <code>{_e(arguments)}</code>'
    ]
    if call.get("expected") is not None:
        rule = f" ({call['rule']})" if call.get("rule") else ""
        out.append(f'<br>expected: {_e(call["expected"])}<span class="mono">{_e(rule)}</span>')
    result = call.get("result")
    if isinstance(result, dict):
        # The text blocks are what the model saw: shown as text, not as JSON with \n escapes.
        blocks = result.get("content")
        texts: list[str] = []
        rest = result
        if isinstance(blocks, list) and all(
            isinstance(b, dict) and isinstance(b.get("text"), str) for b in blocks
        ):
            texts = [str(b["text"]) for b in blocks]
            rest = {k: v for k, v in result.items() if k != "content"}
        out.append(f"<br>result: <code>{_e(json.dumps(_clip(rest), ensure_ascii=False))}</code>")
        out += [f'<div class="block">{_e(_clip(text))}</div>' for text in texts]
    if call.get("failure") is not None:
        out.append(f'<br>the call failed: <div class="block">{_e(_clip(call["failure"]))}</div>')
    changes = call.get("changes")
    if isinstance(changes, list) and changes:
        out.append("<br>changed: " + "; ".join(_e(_clip(c)) for c in changes))
    out.append("</li>")
    return "".join(out)


def _clip(value: Json) -> Json:
    """``value`` with every string cut to ``_MAX_STRING`` characters, saying how much was cut."""
    if isinstance(value, str) and len(value) > _MAX_STRING:
        return f"{value[:_MAX_STRING]}… [{len(value) - _MAX_STRING} more characters]"
    if isinstance(value, list):
        return [_clip(item) for item in value]
    if isinstance(value, dict):
        return {str(k): _clip(v) for k, v in value.items()}
    return value


# -- the terminal summary (``matrix … --format text|md``) ----------------------------------------

FORMATS: Final = ("html", "text", "md")
_SUMMARY_OUTCOMES: Final = ("passed", "failed", "not-applicable", "not-run")
_SHOWN: Final = (*_SUMMARY_OUTCOMES, *(o for o in STYLE if o not in _SUMMARY_OUTCOMES))
"""The order a cell counts outcomes in, and the legend spells them."""


def summary(reports: Sequence[JsonObject], fmt: str, sources: Sequence[str] | None = None) -> str:
    """The comparison as a table for a terminal (``text``) or a Markdown page (``md``).

    Harnesses are columns, areas rows; each cell counts the area's cases per outcome with the
    page's symbols (``✓3 ✗1 ∅2``), and a row counts the root causes when the reports name them.
    The legend spells every outcome a cell can count.
    """
    if fmt not in ("text", "md"):
        raise ValueError(f"format {fmt!r} does not exist; choose one of {', '.join(FORMATS)}")
    tables = [_by_id(report) for report in reports]
    order = _case_order(reports)
    header = ["area"] + [
        f"{_harness(r).get('name', '?')} {_harness(r).get('version', '?')}"
        + (f" ({tag})" if tag else "")
        for r, tag in zip(reports, _tags(reports, sources), strict=True)
    ]
    rows = [
        ["capabilities"] + [_scope(_harness(r))[1] for r in reports],
        ["level"] + [_level_name(r) + _incomplete(r) for r in reports],
        [f"all areas ({len(order)})"] + [_tally(t.values()) for t in tables],
    ]
    if any(_stale(t.values()) for t in tables):
        rows.append(["baseline"] + [_stale_words(s) if (s := _stale(t.values())) else ""
                                    for t in tables])  # fmt: skip
    by_area: dict[str, list[str]] = {}
    for case_id, area in order:
        by_area.setdefault(area, []).append(case_id)
    for area, case_ids in by_area.items():
        rows.append(
            [f"{area} ({len(case_ids)})"]
            + [_tally(t[i] for i in case_ids if i in t) for t in tables]
        )
    causes = [r.get("rootCauses") for r in reports]
    if any(isinstance(c, list) for c in causes):
        rows.append(["root causes"] + [str(len(c)) if isinstance(c, list) else MISSING
                                       for c in causes])  # fmt: skip
    legend = "  ".join(f"{STYLE[o][0]} {STYLE[o][1]}" for o in _SHOWN)
    if _mixed_versions(reports):
        legend += "\n\n" + MIXED_VERSIONS
    if fmt == "md":
        out = ["| " + " | ".join(c.replace("|", "\\|") for c in header) + " |",
               "|" + "---|" * len(header)]  # fmt: skip
        out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
        return "\n".join([*out, "", legend]) + "\n"
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    out = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
           for row in [header, *rows]]  # fmt: skip
    out.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join([*out, "", legend]) + "\n"


def _incomplete(report: JsonObject) -> str:
    return _part(report) + ("" if report.get("complete", True) else ", INCOMPLETE")


def _part(report: JsonObject) -> str:
    """For a run of part of the suite: how much of it, so the "—" cells do not read as gaps."""
    selected = report.get("selected")
    if not isinstance(selected, dict):
        return ""
    return f", {selected.get('cases', '?')} of {selected.get('of', '?')} cases selected"


def _tally(cases: Iterable[JsonObject]) -> str:
    counts = Counter(str(case.get("outcome")) for case in cases)
    if not counts:
        return MISSING
    # Outcomes beyond the common four (expected-fail, skipped, …) still show, with their symbol.
    return " ".join(f"{STYLE[o][0]}{counts[o]}" for o in _SHOWN if counts[o])
