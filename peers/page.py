"""``docs/peers/``: the HTML matrices and the Markdown page, from the reports a run wrote.

The behaviour-level matrix is the comparison (peers keep their own words); the default-level one
shows the wording too. Each peer's triage stands beside its failures, on the page and in the
Markdown, so every red cell says whether it is a defect or a deliberate design.
"""

from __future__ import annotations

import datetime
import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Final

from conformance.report import matrix
from peers import triage
from peers.manifest import Manifest, folders, load

CONTROLS: Final = ("reference", "node-example")
LEVEL_TITLES: Final = {"behaviour": "behaviour level", "all": "default level (behaviour + wording)"}


def report_path(out: Path, key: str, level: str) -> Path:
    """Where a run's JSON report lives."""
    return out / f"{key}.{level}.json"


def columns(out: Path) -> list[str]:
    """Report keys in page order: the controls, then every peer with reports."""
    keys = [*CONTROLS, *folders()]
    return [k for k in keys if report_path(out, k, "behaviour").is_file()]


def notes_of(folder: str, report: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """The triage of one peer's report, as matrix notes by case ID: each behaviour root cause
    of a case, with the entry that explains it."""
    entries = triage.index(triage.load(Path(__file__).parent / folder / "triage.toml"))
    notes: dict[str, list[tuple[str, str]]] = {}
    for signature, cause in triage.causes(report).items():
        entry = entries.get(signature)
        tag, text = ("untriaged", "no triage entry yet") if entry is None else (
            entry.verdict, f"{entry.summary} — evidence: {entry.evidence}"
        )  # fmt: skip
        for case in cause.cases:
            notes.setdefault(case, []).append((tag, f"{cause.words} ({signature}). {text}"))
    return notes


def write_pages(out: Path) -> None:
    """Write the matrices and the Markdown page from the reports in ``out``."""
    keys = columns(out)
    for level, name in (("behaviour", "matrix.html"), ("all", "matrix-all.html")):
        paths = [report_path(out, k, level) for k in keys if report_path(out, k, level).is_file()]
        reports = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
        notes = [
            {} if p.name.split(".")[0] in CONTROLS else notes_of(p.name.split(".")[0], r)
            for p, r in zip(paths, reports, strict=True)
        ]
        page = matrix.render(reports, [p.name for p in paths], notes)
        # Reports quote lone surrogates the harnesses were sent; the page shows them escaped.
        (out / name).write_text(page, encoding="utf-8", errors="backslashreplace")
    (out / "README.md").write_text(markdown(out, keys), encoding="utf-8")


def _counts(report: dict[str, Any], level: str) -> dict[str, int]:
    counts = {"passed": 0, "failed": 0, "not-applicable": 0}
    for case in report.get("cases", []):
        outcome = (case.get("levels") or {}).get(level)
        if outcome == "failed" and case.get("outcome") == "recommended-fail":
            continue  # a recommended rule never fails a run; the page counts it apart
        if outcome in counts:
            counts[outcome] += 1
    return counts


def _cell(counts: dict[str, int]) -> str:
    return f"{counts['passed']} / {counts['failed']} / {counts['not-applicable']}"


def markdown(out: Path, keys: list[str]) -> str:
    """The Markdown page: the table of every harness, then one section per peer."""
    timings = json.loads((out / "timings.json").read_text(encoding="utf-8"))
    first = json.loads(report_path(out, keys[0], "behaviour").read_text(encoding="utf-8"))
    suite, spec = first["suite"], first["spec"]
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    lines = [
        "# Real agent harnesses, side by side",
        "",
        f"Generated {today} by `nox -s peers` with {suite['name']} {suite['version']} "
        f"(spec {spec}). The [matrix](matrix.html) compares the behaviour level (peers keep "
        "their own words); [matrix-all.html](matrix-all.html) shows the default level "
        "(behaviour, then the spec's wording). The reference and the Node kit's example are "
        "controls. Counts are cases passed / failed / not applicable at that level, from the "
        "behaviour-level run and the default-level run (a failed recommended rule, which never "
        "fails a run, is in neither); run time is the wall time of each run. Every behaviour "
        "root cause of a peer (the suite's `rule · situation · deviation` signature, "
        "[docs/root-causes.md](../root-causes.md)) is triaged below, as a defect or a deliberate "
        "design, with evidence quoted from the installed package.",
        "",
        "| harness | version | language | capabilities | behaviour p / f / n-a "
        "| default level: behaviour · wording p / f / n-a | run time (behaviour, default) |",
        "|---|---|---|---|---|---|---|",
    ]
    for key in keys:
        behaviour = json.loads(report_path(out, key, "behaviour").read_text(encoding="utf-8"))
        full_path = report_path(out, key, "all")
        full = json.loads(full_path.read_text(encoding="utf-8")) if full_path.is_file() else {}
        harness = behaviour["harness"]
        name = key if key in CONTROLS else f"[{harness['name']}](#{key})"
        lines.append(
            f"| {name} | {harness['version']} | {harness['language']} "
            f"| {', '.join(harness['capabilities'])} | {_cell(_counts(behaviour, 'behaviour'))} "
            f"| {_cell(_counts(full, 'behaviour'))} · {_cell(_counts(full, 'wording'))} "
            f"| {timings.get(f'{key}.behaviour', '?')} s, {timings.get(f'{key}.all', '?')} s |"
        )
    total = sum(
        float(timings.get(f"{k}.{level}", 0)) for k in keys for level in ("behaviour", "all")
    )
    lines += [
        "",
        f"The runs took {total / 60:.0f} minutes here (2 shared cores), one after another; the "
        "first `nox -s peers` also installs the peers (a few minutes more). "
        "![the matrix](matrix.png)",
    ]
    for key in keys:
        if key not in CONTROLS:
            lines += _section(out, load(key))
    return "\n".join(lines) + "\n"


def _section(out: Path, manifest: Manifest) -> list[str]:
    entries = triage.index(triage.load(manifest.directory / "triage.toml"))
    found: dict[str, triage.Cause] = {}
    for level in ("behaviour", "all"):
        path = report_path(out, manifest.folder, level)
        if path.is_file():
            for signature, cause in triage.causes(json.loads(path.read_text("utf-8"))).items():
                found.setdefault(signature, cause)
    triaged = {s: entries[s] for s in found if s in entries}
    defects = {id(e) for e in triaged.values() if e.verdict == "defect"}
    designs = {id(e) for e in triaged.values() if e.verdict == "design"}
    failed = {case for cause in found.values() for case in cause.cases}
    lines = [
        "",
        f'<a id="{manifest.folder}"></a>',
        f"## {manifest.name} {manifest.version}",
        "",
        f"{manifest.summary}. {manifest.registry} package `{manifest.package}` "
        f"({', '.join(f'`{p}`' for p in manifest.packages)}), runtime {manifest.runtime}; "
        f"folder [`peers/{manifest.folder}/`](../../peers/{manifest.folder}/). Per-call timeout "
        f"{manifest.timeout_s:g} s: {manifest.timeout_reason}.",
        "",
        f"Capabilities: {', '.join(manifest.capabilities)}; paths: {manifest.paths}.",
        "",
        "| option | declared | why |",
        "|---|---|---|",
        *(f"| {o.name} | `{json.dumps(o.value)}` | {o.reason} |" for o in manifest.options),
        "",
        f"Behaviour failures: {len(failed)} cases, {len(found)} root causes (at either level); "
        f"triaged as {len(defects)} defects and {len(designs)} deliberate designs:",
        "",
        "| root cause | cases | triage | what | evidence |",
        "|---|---|---|---|---|",
    ]
    for signature, cause in found.items():
        entry = entries.get(signature)
        what = f"{_md(cause.words)}<br>`{_md(signature)}`"
        cases = ", ".join(cause.cases)
        if entry is None:
            lines.append(f"| {what} | {cases} | **untriaged** | | |")
            continue
        lines.append(
            f"| {what} | {cases} | {entry.verdict} | {_md(entry.summary)} | {_md(entry.evidence)} |"
        )
    return lines


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


SHOT_WINDOW: Final = "1400,2000"
"""Tall enough to show the headers, the totals and the first failing remedy case, opened."""


def screenshot(out: Path) -> Path | None:
    """``matrix.png``: the page as headless Chromium shows it, one failed cell opened as one click
    would; ``None`` (and nothing written) when Chromium is not installed."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return None
    page = (out / "matrix.html").read_text(encoding="utf-8")
    # The first failed cell of a peer opens (Chromium's headless screenshot ignores a #fragment).
    first = page.find('data-outcome="failed"', page.find('<tr class="case"'))
    if first != -1:
        at = page.index("<details>", first)
        page = f"{page[:at]}<details open>{page[at + len('<details>') :]}"
    target = out / "matrix.png"
    with tempfile.TemporaryDirectory(prefix="peers-shot-") as scratch:
        html = Path(scratch) / "matrix.html"
        html.write_text(page, encoding="utf-8", errors="backslashreplace")
        subprocess.run(
            [chromium, "--headless=new", "--no-sandbox", f"--window-size={SHOT_WINDOW}",
             f"--screenshot={target}", html.as_uri()],
            check=True, capture_output=True, timeout=120, cwd=scratch,
        )  # fmt: skip
    return target
