"""The report model and its outputs, without running the suite."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.encoding import json_text
from conformance.report import Report, load_report
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
