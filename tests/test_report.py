"""The report model and its outputs, without running the suite."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from conformance.encoding import json_text
from conformance.report import Report, load_report, output_problem
from conformance.report import markdown as markdown_report
from conformance.report.terminal import _one_line


def _report() -> Report:
    report = Report(suite={"name": "harness-conformance", "version": "9"}, spec="2.0.0")
    report.harness = {"name": "h", "version": "1", "language": "python", "capabilities": ["tools"]}
    report.add("PRV-016", "failed", "write accepted", {
        "levels": {"behaviour": "failed", "wording": "not-applicable"},
        "verdicts": [{"level": "behaviour", "rule": "fs.text.unencodable", "verdict": "x\ud800 accepted"}],
        "calls": [{"tool": "write", "arguments": {"file_path": "a.txt", "content": "x\ud800"}}],
    })  # fmt: skip
    return report


def test_a_report_holding_a_lone_surrogate_is_still_written(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    _report().write(str(path))
    data = load_report(str(path))
    assert data["cases"][0]["calls"][0]["arguments"]["content"] == "x\ud800"
    summary = tmp_path / "s.md"
    markdown_report.write(_report(), str(summary))
    assert "x\\ud800 accepted" in summary.read_text(encoding="utf-8")


def test_json_text_escapes_only_when_it_must() -> None:
    assert json_text({"a": "é"}) == '{"a": "é"}'
    assert json_text({"a": "é\ud800"}) == '{"a": "\\u00e9\\ud800"}'
    assert json.loads(json_text({"a": "é\ud800"})) == {"a": "é\ud800"}


def test_an_incomplete_report_never_exits_zero() -> None:
    report = _report()
    report.cases.clear()
    assert report.exit_status() == 0
    report.incomplete("the run was interrupted")
    report.incomplete("a later reason is not kept")
    assert (report.exit_status(), report.reason) == (1, "the run was interrupted")


def test_a_case_failed_in_its_call_and_its_teardown_is_named_by_its_verdict() -> None:
    report = Report(suite={"name": "harness-conformance", "version": "0"}, spec="2")
    report.add("PRV-006", "failed", 'read of "blob.bin" accepted', None)
    report.add("PRV-006", "failed", "[teardown] PRV-006: close_workspace: …", None)
    assert report.cases["PRV-006"].message == 'read of "blob.bin" accepted'
    report.add("RD-001", "passed", None, None)
    report.add("RD-001", "failed", "[teardown] RD-001: close_workspace: …", None)
    assert report.cases["RD-001"].message == "[teardown] RD-001: close_workspace: …"
    report.add("RD-002", "expected-fail", "known", None)
    report.add("RD-002", "failed", "[teardown] RD-002: x", None)
    assert (report.cases["RD-002"].outcome, report.cases["RD-002"].message) == (
        "failed",
        "[teardown] RD-002: x",
    )


def test_a_long_verdict_keeps_its_rule_in_one_line() -> None:
    verdict = (
        "write of a.txt "
        + "x" * 400
        + "; SPEC §4.1 {policy.write-intent}: write intent: never observed"
    )
    line = _one_line(verdict)
    assert len(line) <= 220
    assert line.endswith("…; SPEC §4.1 {policy.write-intent}")
    assert _one_line("short; SPEC §1 {a.b}: c") == "short; SPEC §1 {a.b}: c"


def test_the_report_replaces_a_file_keeps_a_link_and_writes_into_anything_else(
    tmp_path: Path,
) -> None:
    report = Report(suite={"name": "harness-conformance", "version": "0"}, spec="2")
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "42.json").write_text("old", encoding="utf-8")
    link = tmp_path / "latest.json"
    link.symlink_to(runs / "42.json")
    report.write(str(link))
    assert link.is_symlink()  # still the link; its target holds the report
    assert load_report(str(runs / "42.json"))["spec"] == "2"
    assert sorted(p.name for p in runs.iterdir()) == ["42.json"]  # no .partial beside it
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_bytes()), daemon=True)
    reader.start()
    report.write(str(fifo))  # a reader waits on it: it gets the report, the FIFO stays one
    reader.join(timeout=60)
    assert json.loads(read[0])["spec"] == "2"
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert output_problem(str(fifo), beside=True) is None
    if os.path.exists("/dev/full"):  # a device that refuses every write, as a full disk does
        with pytest.raises(OSError, match="No space left"):
            report.write("/dev/full")
        assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
        assert not os.path.exists("/dev/full.partial")


def test_a_run_of_part_of_the_suite_says_how_much_and_the_matrix_shows_it(tmp_path: Path) -> None:
    """A one-case report read "run complete" on the matrix, with "—" in every other cell."""
    from conformance.report.matrix import render, summary
    from tests.suite import run_suite

    path = tmp_path / "r.json"
    run_suite("-q", "--conformance-case", "GRD-001", "--conformance-report", str(path),
              cwd=tmp_path)  # fmt: skip
    data = load_report(str(path))
    selected = data["selected"]
    assert isinstance(selected, dict)
    assert selected["cases"] == 1
    assert isinstance(selected["of"], int)
    assert selected["of"] > 200
    part = f"1 of {selected['of']} cases selected"
    assert f"run complete, {part}" in render([data])
    assert part in summary([data], "text")
    whole = {k: v for k, v in data.items() if k != "selected"}
    assert "cases selected" not in render([whole]) + summary([whole], "md")


def test_a_failure_new_since_the_baseline_is_named_as_new_in_every_summary(
    tmp_path: Path,
) -> None:
    """A case the baseline predates fails without failing the run: the terminal named it
    nowhere, and the Markdown summary called it a known failure "from the baseline"."""
    from conformance.baseline import Baseline
    from conformance.report.terminal import lines

    path = tmp_path / "b.json"
    path.write_text(json.dumps({"format": 1, "failures": {"PUB-001": {"behaviour": "old"}},
                                "cases": ["PUB-001"]}))  # fmt: skip
    report = Report(suite={"name": "harness-conformance", "version": "9"}, spec="2.0.0")
    for case_id, verdict in (("PUB-001", "old"), ("PUB-011", "new words")):
        report.add(case_id, "failed", verdict, {"levels": {"behaviour": "failed"},
                   "verdicts": [{"level": "behaviour", "verdict": verdict}]})  # fmt: skip
    Baseline.load(str(path)).apply(report, strict_new=False)
    assert [(r.outcome, r.baseline) for r in report.ordered()] == [
        ("expected-fail", "listed"),
        ("expected-fail", "new"),
    ]
    said = lines(report)
    start = said.index(f"baseline {path}: 1 known failure; 1 case new since the baseline")
    assert said[start + 1 : start + 3] == [
        "new since the baseline and failing (1, they fail the run with "
        "--conformance-baseline-strict):",
        "  PUB-011   new words",
    ]
    summary = markdown_report.render(report)
    assert f"Baseline `{path}`: 1 known failure; 1 case new since the baseline." in summary
    assert "- **PUB-001** (expected): old" in summary
    assert "- **PUB-011** (new since the baseline): new words" in summary


def test_one_case_that_does_not_apply_is_counted_in_the_singular() -> None:
    """A replay of one case that does not apply read "1 cases: needs the taxonomy capability"."""
    from conformance.report.terminal import lines

    report = Report(suite={"name": "harness-conformance", "version": "9"}, spec="2.0.0")
    report.add("TAX-001", "not-applicable", "not applicable: needs the taxonomy capability", None)
    assert "    1 case: needs the taxonomy capability" in lines(report)
    assert "- 1 case: needs the taxonomy capability" in markdown_report.render(report)


def test_a_skipped_case_is_counted_and_explained_in_the_markdown_summary() -> None:
    """The summary's table had no skip column and named no skip: a case skipped here (one
    that cannot be judged as root) was in no count and no list of it."""
    report = Report(suite={"name": "harness-conformance", "version": "9"}, spec="2.0.0")
    report.add("PRV-012", "skipped", "file permissions are not enforced here (root)", None)
    report.add("PRV-001", "passed", None, None)
    summary = markdown_report.render(report)
    assert "| area | passed | failed | expected | n/a | skip | not run |" in summary
    assert "| provider messages | 1 | 0 | 0 | 0 | 1 | 0 |" in summary
    assert (
        "### Skipped\n\n- **PRV-012**: file permissions are not enforced here (root)\n" in summary
    )
