"""The suite judging harnesses that are not the reference: missing parts, foreign wording,
real defects, partial options, and the baselines that let their CI move forward."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from conformance.verdict import LEVELS, CallRecord, Judge
from tests.suite import (
    REPO,
    by_area,
    case_of,
    cases,
    error_lines,
    fixture,
    outcomes,
    report,
    run_suite,
)

TOOLS_ONLY = fixture("tools_only:harness")
WORDING = str(REPO / "tests" / "fixtures" / "tools_only.toml")
NOT_TOOLS = {"taxonomy", "loop events", "derive_messages", "scenarios", "secret-free"}


@pytest.fixture(scope="module")
def tools_only(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The tools-only harness, judged against its own wording table."""
    work = tmp_path_factory.mktemp("tools-only")
    path = work / "report.json"
    done = run_suite("--harness", TOOLS_ONLY, "--conformance-wording", WORDING,
                     "--conformance-report", str(path), cwd=work)  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:]
    assert "capabilities: tools (declared)" in done.stdout
    return report(path)


def test_a_tools_only_harness_runs_with_no_stubs(tools_only: dict[str, object]) -> None:
    harness = tools_only["harness"]
    assert isinstance(harness, dict)
    assert harness["capabilities"] == ["tools"]
    not_applicable = by_area(tools_only, "not-applicable")
    assert set(not_applicable) >= NOT_TOOLS
    cases = tools_only["cases"]
    assert isinstance(cases, list)
    for case in cases:
        if case["area"] in NOT_TOOLS:
            assert case["outcome"] == "not-applicable", case["id"]
            assert case["message"].startswith("not applicable: needs the "), case["id"]
    assert by_area(tools_only, "failed") == {}


def test_its_behaviour_level_all_passes(tools_only: dict[str, object]) -> None:
    cases = tools_only["cases"]
    assert isinstance(cases, list)
    judged = [c for c in cases if c["levels"].get("behaviour") in ("passed", "failed")]
    assert len(judged) >= 120
    assert all(c["levels"]["behaviour"] == "passed" for c in judged)


def test_its_wording_is_judged_against_its_own_texts(tools_only: dict[str, object]) -> None:
    entry = case_of(tools_only, "GRD-001")
    assert entry["levels"] == {"behaviour": "passed", "wording": "passed"}
    cases = tools_only["cases"]
    assert isinstance(cases, list)
    assert sum(c["levels"].get("wording") == "passed" for c in cases) >= 80


def test_without_its_table_only_wording_fails(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    done = run_suite("--harness", TOOLS_ONLY, "--conformance-case", "GRD-001", "--conformance-case",
                     "PRV-002", "--conformance-case", "GRD-004", "--conformance-report", str(path),
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    data = report(path)
    levels = {c["id"]: c["levels"] for c in cases(data)}
    assert levels["GRD-001"] == {"behaviour": "passed", "wording": "failed"}
    assert levels["PRV-002"] == {"behaviour": "passed", "wording": "failed"}
    assert levels["GRD-004"] == {"behaviour": "passed", "wording": "not-applicable"}  # a code only
    verdict = case_of(data, "PRV-002")["verdicts"][0]["verdict"]  # type: ignore[index]
    assert verdict.startswith(
        'read of "nope.txt": the model saw text that was "Error: File not found: <root>/nope.txt"'
    )
    assert "SPEC §3.4 {fs.msg.read-missing}" in verdict


def test_the_behaviour_level_alone_passes_without_a_table(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    done = run_suite("--harness", TOOLS_ONLY, "--conformance-level", "behaviour",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    data = report(path)
    assert data["level"] == "behaviour"
    assert {c["levels"]["wording"] for c in cases(data)} == {"not-run"}
    assert "level: behaviour only" in done.stdout


def test_a_wording_table_with_an_unknown_key_is_refused(tmp_path: Path) -> None:
    table = tmp_path / "w.toml"
    table.write_text('[wording]\n"fs.nope" = "x"\n')
    done = run_suite("--conformance-wording", str(table), cwd=tmp_path)
    assert done.returncode == 4
    assert error_lines(done) == [f"ERROR: wording table {table}: unknown template key 'fs.nope'"]


@pytest.fixture(scope="module")
def non_atomic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """The harness that writes in place, judged whole."""
    work = tmp_path_factory.mktemp("non-atomic")
    path = work / "report.json"
    done = run_suite("--harness", fixture("non_atomic:harness"), "--conformance-report", str(path),
                     cwd=work)  # fmt: skip
    assert done.returncode == 1
    return path, report(path)


def test_a_real_defect_is_named_by_its_behaviour(
    non_atomic: tuple[Path, dict[str, object]],
) -> None:
    _, data = non_atomic
    failed = {case for case, outcome in outcomes(data).items() if outcome == "failed"}
    assert {"PUB-001", "PUB-002", "PUB-003"} <= failed
    assert failed - {"PUB-001", "PUB-002", "PUB-003", "PUB-006"} == set()
    first = case_of(data, "PUB-001")["verdicts"][0]["verdict"]  # type: ignore[index]
    assert first.startswith("""write of "a.txt" accepted, but "b.txt" overwritten (12 → 12 bytes""")
    if outcomes(data)["PUB-006"] == "failed":  # a tmpfs could be mounted here
        full = case_of(data, "PUB-006")["verdicts"][0]["verdict"]  # type: ignore[index]
        assert full.startswith(
            'write of "small/a.txt" refused, yet "small/a.txt" overwritten (3600 → 65536 bytes'
        )


def test_partial_options_make_cases_not_applicable(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    done = run_suite("--harness", fixture("partial_options:harness"), "--conformance-report",
                     str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    data = report(path)
    reasons = {c["id"]: c.get("message") for c in cases(data) if c["outcome"] == "not-applicable"}
    assert reasons["PRV-011"] == "not applicable: needs the option maxReadBytes"
    assert reasons["SBX-001"] == "not applicable: needs the sandbox mode workspace-write"
    assert reasons["REG-001"] == "not applicable: needs the option probe"
    assert (
        reasons["GRD-021"] == "not applicable: needs paths any (the harness takes relative paths)"
    )
    assert reasons["LOOP-001"] == "not applicable: needs the loop capability"
    # A missing capability is named before a missing option, whichever mark says it.
    assert reasons["LOOP-019"] == "not applicable: needs the loop capability"
    assert "TAX-001" not in reasons
    assert "   11 cases: needs the option probe" in done.stdout


def test_a_harness_without_an_argument_option_is_not_failed_for_it(tmp_path: Path) -> None:
    """``readWindow`` and ``replaceAll`` declared false: no case and no scenario sends the
    arguments the harness's schemas lack; the rest of each case is still judged."""
    path = tmp_path / "r.json"
    done = run_suite("--conformance-in-process", "--harness",
                     fixture("no_window_no_replace_all:harness"), "--conformance-report",
                     str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    found = outcomes(report(path))
    reasons = {c["id"]: c.get("message") for c in cases(report(path))}
    assert reasons["SCN-008"] == "not applicable: needs the option replaceAll"  # fs-edit-ambiguous
    for scenario in ("SCN-010", "SCN-016", "SCN-018"):  # offset and limit
        assert reasons[scenario] == "not applicable: needs the option readWindow"
    assert {found[c] for c in ("REG-006", "REG-010", "REG-012", "REG-023")} == {"passed"}


# -- baselines --------------------------------------------------------------------------------


def _baseline(source: Path, cwd: Path) -> Path:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "conformance", "baseline", str(source)],
        cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    path = cwd / "conformance-baseline.json"
    path.write_text(done.stdout)
    return path


def test_a_baseline_turns_known_failures_into_expected_ones(
    non_atomic: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    source, data = non_atomic
    baseline = _baseline(source, tmp_path)
    written = json.loads(baseline.read_text())
    assert written["format"] == 1
    assert written["suite"] == {"name": "harness-conformance", "version": "0.1.0"}
    assert written["spec"] == "2.14.0"
    assert written["failures"]["PUB-001"] == {
        "behaviour": case_of(data, "PUB-001")["verdicts"][0]["verdict"]  # type: ignore[index]
    }
    path = tmp_path / "again.json"
    again = run_suite("--harness", fixture("non_atomic:harness"), "--conformance-baseline",
                      str(baseline), "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert again.returncode == 0, again.stdout[-3000:]
    assert outcomes(report(path))["PUB-001"] == "expected-fail"
    assert case_of(report(path), "PUB-001")["baseline"] == "listed"


def test_a_baseline_entry_that_now_passes_is_stale(
    non_atomic: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    baseline = _baseline(non_atomic[0], tmp_path)
    path = tmp_path / "r.json"
    fixed = run_suite("--conformance-baseline", str(baseline), "--conformance-case", "PUB-001",
                      "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert fixed.returncode == 1
    assert case_of(report(path), "PUB-001")["baseline"] == "stale"
    assert "STALE baseline entries (1, they fail the run):" in fixed.stdout


def _junit(path: Path) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """The suite totals of a JUnit file, and per case ID its element (failure/skipped) and message."""
    import xml.etree.ElementTree as ET

    root = ET.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root[0]
    found: dict[str, tuple[str, str]] = {}
    for case in suite.iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        marks = [child for child in case if child.tag in ("failure", "skipped", "error")]
        tag, message = (marks[0].tag, marks[0].get("message", "")) if marks else ("passed", "")
        found[str(props.get("case_id"))] = (tag, message)
    return dict(suite.attrib), found


def test_a_baseline_listing_one_of_two_failures_leaves_exactly_one_failure_in_junit(
    non_atomic: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    baseline = _baseline(non_atomic[0], tmp_path)
    written = json.loads(baseline.read_text())
    written["failures"] = {"PUB-001": written["failures"]["PUB-001"]}  # PUB-002 is not listed
    baseline.write_text(json.dumps(written))
    xml = tmp_path / "junit.xml"
    done = run_suite("--harness", fixture("non_atomic:harness"), "--conformance-baseline",
                     str(baseline), "--conformance-case", "PUB-001", "--conformance-case", "PUB-002",
                     f"--junitxml={xml}", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    totals, found = _junit(xml)
    assert totals["failures"] == "1"
    assert found["PUB-002"][0] == "failure"
    tag, message = found["PUB-001"]
    assert tag == "skipped"
    assert message.startswith("known failure: PUB-001 (in the baseline): ")
    assert message.endswith(written["failures"]["PUB-001"]["behaviour"])
    assert "1 failed" in done.stdout
    assert "1 xfailed" in done.stdout


def test_a_baselined_run_is_green_in_junit_and_lists_its_expected_failures(
    non_atomic: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    baseline = _baseline(non_atomic[0], tmp_path)
    xml, md = tmp_path / "junit.xml", tmp_path / "summary.md"
    done = run_suite("--harness", fixture("non_atomic:harness"), "--conformance-baseline",
                     str(baseline), "-k", "PUB or TAX", f"--junitxml={xml}",
                     "--conformance-report-md", str(md), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    totals, _ = _junit(xml)
    assert (totals["failures"], totals["errors"]) == ("0", "0")
    assert " failed" not in done.stdout.splitlines()[-1]
    summary = md.read_text()
    assert "### Expected failures" in summary
    assert "- **PUB-001** (expected): " in summary


def test_a_stale_entry_fails_the_run_in_junit_with_its_advice(
    non_atomic: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    baseline = _baseline(non_atomic[0], tmp_path)
    xml = tmp_path / "junit.xml"
    fixed = run_suite("--conformance-baseline", str(baseline), "--conformance-case", "PUB-001",
                      f"--junitxml={xml}", cwd=tmp_path)  # fmt: skip
    assert fixed.returncode == 1
    totals, found = _junit(xml)
    assert totals["failures"] == "1"
    assert found["PUB-001"][0] == "failure"
    assert "PUB-001 now passes at behaviour: remove its entry from the baseline" in fixed.stdout


def test_a_recommended_case_is_never_baselined_and_a_stale_entry_for_one_shows_in_junit(
    tmp_path: Path,
) -> None:
    from conformance.baseline import make_baseline

    soft = {"id": "PUB-010", "outcome": "recommended-fail", "levels": {"behaviour": "failed"}}
    hard = {"id": "PUB-001", "outcome": "failed", "levels": {"behaviour": "failed"}}
    assert list(make_baseline({"cases": [soft, hard]})["failures"]) == ["PUB-001"]
    # An older baseline that lists one: once the case passes, the entry is stale, and the red
    # run must say so in pytest's words and JUnit's, not only in the suite's summary.
    path, xml = tmp_path / "b.json", tmp_path / "junit.xml"
    path.write_text(json.dumps({"format": 1, "failures": {"PUB-010": {"behaviour": "x"}},
                                "cases": ["PUB-010"]}))  # fmt: skip
    done = run_suite("--conformance-baseline", str(path), "--conformance-case", "PUB-010",
                     f"--junitxml={xml}", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    totals, found = _junit(xml)
    assert totals["failures"] == "1"
    assert found["PUB-010"][0] == "failure"
    assert "PUB-010 now passes at behaviour: remove its entry from the baseline" in done.stdout
    # Every other case is deselected, however many the suite has.
    assert re.search(r"= 1 failed, \d+ deselected in ", done.stdout.splitlines()[-1])


def test_a_listed_case_failing_at_an_unlisted_level_is_named_by_that_failure(
    tmp_path: Path,
) -> None:
    from conformance.baseline import Baseline
    from conformance.report import Report
    from conformance.report.terminal import lines

    path = tmp_path / "b.json"
    entry = {"behaviour": "known"}
    path.write_text(json.dumps({"format": 1, "failures": {"STM-001": entry}, "cases": ["STM-001"]}))
    report = Report(suite={"name": "harness-conformance", "version": "0"}, spec="2")
    verdicts = [{"level": "behaviour", "verdict": "known"}, {"level": "wording", "verdict": "new"}]
    report.add("STM-001", "failed", "known", {"levels": {"behaviour": "failed",
               "wording": "failed"}, "verdicts": verdicts})  # fmt: skip
    Baseline.load(str(path)).apply(report, strict_new=False)
    result = report.cases["STM-001"]
    assert (result.outcome, result.baseline) == ("failed", "listed")
    said = "now fails at wording, which the baseline does not list: new"
    assert result.baseline_advice == said
    assert f"  STM-001   {said}" in lines(report)


def test_a_listed_case_that_does_not_apply_is_said_to_be_unjudged(tmp_path: Path) -> None:
    # A harness that stopped declaring a capability: its entries were counted as known
    # failures, and nothing said that no case behind them was judged.
    from conformance.baseline import Baseline
    from conformance.report import Report
    from conformance.report import markdown as markdown_report
    from conformance.report.terminal import lines

    path = tmp_path / "b.json"
    path.write_text(json.dumps({"format": 1, "failures": {"CON-006": {"behaviour": "x"}},
                                "cases": ["CON-006"]}))  # fmt: skip
    report = Report(suite={"name": "harness-conformance", "version": "0"}, spec="2")
    report.add("CON-006", "not-applicable", "not applicable: needs the pause capability", None)
    Baseline.load(str(path)).apply(report, strict_new=False)
    assert report.cases["CON-006"].outcome == "not-applicable"
    said = "1 known failure; CON-006 does not apply to this harness, so its entry was not judged"
    assert f"baseline {path}: {said}" in lines(report)
    assert f"Baseline `{path}`: {said}." in markdown_report.render(report)
    assert report.exit_status() == 0


def test_a_case_stale_at_one_level_and_failing_at_another_is_told_both(tmp_path: Path) -> None:
    # Listed at behaviour, which it now passes, and failing wording, which is not listed:
    # the stale advice alone hid the failure that fails the run.
    from conformance.baseline import Baseline
    from conformance.outcomes import mark_known
    from conformance.report import Report
    from conformance.report.terminal import lines

    path = tmp_path / "b.json"
    path.write_text(json.dumps({"format": 1, "failures": {"REM-003": {"behaviour": "x"}},
                                "cases": ["REM-003"]}))  # fmt: skip
    baseline = Baseline.load(str(path))
    levels = {"behaviour": "passed", "wording": "failed"}
    stale = "REM-003 now passes at behaviour: remove its entry from the baseline"
    phase = pytest.TestReport("n", ("f.py", 1, "t"), {}, "failed", "wording differs", "call")
    data: dict[str, object] = {"levels": levels}
    mark_known(phase, "REM-003", data, baseline, False)
    assert (phase.outcome, str(phase.longrepr)) == ("failed", "wording differs")
    assert phase.sections == [("stale baseline entry", f"{path}: {stale}")]
    report = Report(suite={"name": "harness-conformance", "version": "0"}, spec="2")
    report.add("REM-003", "failed", "new words", {"levels": levels, "verdicts": [
        {"level": "wording", "verdict": "new words"}]})  # fmt: skip
    baseline.apply(report, strict_new=False)
    result = report.cases["REM-003"]
    said = f"{stale}; and now fails at wording, which the baseline does not list: new words"
    assert (result.outcome, result.baseline, result.baseline_advice) == ("failed", "stale", said)
    assert f"  {said}" in lines(report)


def test_a_baselined_failure_without_a_verdict_keeps_its_own_words(tmp_path: Path) -> None:
    # A failure judged by no rule (a call that timed out) took the xfail reason as its
    # message, and a baseline made from that run quoted the reason as the case's failure.
    from conformance.baseline import Baseline, make_baseline
    from conformance.outcomes import DATA, Recorder, mark_known
    from conformance.report import Report

    path = tmp_path / "b.json"
    path.write_text(json.dumps({"format": 1, "failures": {"PUB-001": {"behaviour": "x"}},
                                "cases": ["PUB-001"]}))  # fmt: skip
    timed_out = "HarnessCallError: write timed out after 5 s"
    phase = pytest.TestReport("n", ("f.py", 1, "t"), {}, "failed", timed_out, "call")
    data: dict[str, object] = {"levels": {"behaviour": "failed"}}
    mark_known(phase, "PUB-001", data, Baseline.load(str(path)), False)
    assert phase.wasxfail == f"known failure: PUB-001 (in the baseline): {timed_out}"
    phase.user_properties = [("case_id", "PUB-001"), (DATA, data)]
    report = Report(suite={"name": "harness-conformance", "version": "0"}, spec="2")
    Recorder(report, worker=False).pytest_runtest_logreport(phase)
    assert (report.cases["PUB-001"].outcome, report.cases["PUB-001"].message) == (
        "expected-fail",
        timed_out,
    )
    assert make_baseline(report.to_json())["failures"] == {"PUB-001": {"behaviour": timed_out}}


def test_a_recommended_case_stale_at_one_level_fails_in_pytests_words_too(
    tmp_path: Path,
) -> None:
    # It passes wording, which an older baseline lists, and still fails behaviour: pytest's
    # xfail would have shown nothing while the suite's stale entry made the run red.
    from conformance.baseline import Baseline
    from conformance.outcomes import mark_known
    from conformance.plugin import RECOMMENDED

    path = tmp_path / "b.json"
    entry = {"behaviour": "x", "wording": "y"}
    path.write_text(json.dumps({"format": 1, "failures": {"PUB-010": entry}, "cases": ["PUB-010"]}))
    report = pytest.TestReport("n", ("f.py", 1, "t"), {}, "skipped", None, "call")
    report.wasxfail = f"{RECOMMENDED}: x"
    data: dict[str, object] = {"levels": {"behaviour": "failed", "wording": "passed"}}
    mark_known(report, "PUB-010", data, Baseline.load(str(path)), False, recommended=True)
    advice = (
        "PUB-010 now passes at wording: remove only its wording entry from the baseline "
        "(keep behaviour, which it still fails)"
    )
    assert (report.outcome, str(report.longrepr)) == (
        "failed",
        f"stale baseline entry ({path}): {advice}",
    )
    assert not hasattr(report, "wasxfail")
    assert (data["baseline"], data["advice"], data["outcome"]) == (
        "stale",
        advice,
        "recommended-fail",
    )


def test_stale_advice_keeps_the_level_that_still_fails(tmp_path: Path) -> None:
    from conformance.baseline import Baseline

    path = tmp_path / "b.json"
    entry = {"behaviour": "x", "wording": "y"}
    path.write_text(json.dumps({"format": 1, "failures": {"REM-003": entry}, "cases": ["REM-003"]}))
    baseline = Baseline.load(str(path))
    levels = {"behaviour": "passed", "wording": "failed"}
    decision = baseline.decide("REM-003", True, levels, strict_new=False)
    assert (decision.status, decision.expected) == ("stale", True)
    assert decision.advice("REM-003") == (
        "REM-003 now passes at behaviour: remove only its behaviour entry from the baseline "
        "(keep wording, which it still fails)"
    )
    untouched = baseline.decide("REM-003", False, {"behaviour": "passed", "wording": "not-run"},
                                strict_new=False)  # fmt: skip
    assert untouched.advice("REM-003").endswith("(keep wording, not judged in this run)")


def test_cases_new_since_the_baseline_do_not_fail_the_run(
    non_atomic: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    baseline = _baseline(non_atomic[0], tmp_path)
    written = json.loads(baseline.read_text())
    written["cases"] = [c for c in written["cases"] if c != "PUB-001"]
    del written["failures"]["PUB-001"]
    baseline.write_text(json.dumps(written))
    path = tmp_path / "r.json"
    args = ["--harness", fixture("non_atomic:harness"), "--conformance-baseline", str(baseline),
            "--conformance-case", "PUB-001", "--conformance-report", str(path)]  # fmt: skip
    lenient = run_suite(*args, "-rx", cwd=tmp_path)
    assert lenient.returncode == 0, lenient.stdout[-2000:]
    assert case_of(report(path), "PUB-001")["baseline"] == "new"
    # Expected, but not a failure the baseline knows: its reason said "known failure" once.
    said = "case new since the baseline: PUB-001 (expected unless --conformance-baseline-strict): "
    assert said in lenient.stdout
    assert "known failure: PUB-001" not in lenient.stdout
    strict = run_suite(*args, "--conformance-baseline-strict", cwd=tmp_path)
    assert strict.returncode == 1


def test_a_baseline_made_for_another_spec_level_or_harness_says_so(
    non_atomic: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    # A stale entry or an unlisted failure read as the harness's doing, when the baseline was
    # made against another spec, at behaviour alone, or for another harness.
    baseline = _baseline(non_atomic[0], tmp_path)
    written = json.loads(baseline.read_text())
    written.update(spec="2.12.0", level="behaviour", harness={"name": "acme", "version": "1"})
    for entry in written["failures"].values():  # as a run at behaviour alone makes it
        entry.pop("wording", None)
    baseline.write_text(json.dumps(written))
    md, path = tmp_path / "summary.md", tmp_path / "r.json"
    done = run_suite("--harness", fixture("non_atomic:harness"), "--conformance-baseline",
                     str(baseline), "--conformance-case", "PUB-001", "--conformance-report",
                     str(path), "--conformance-report-md", str(md), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]  # said, not refused: the verdicts stand
    name = report(path)["harness"]["name"]  # type: ignore[index]
    notes = [
        f'the baseline lists the failures of harness "acme", and this run tested "{name}": '
        "check that it is the right file",
        "the baseline was made against SPEC 2.12.0 and this run judges against SPEC 2.14.0: a "
        "stale entry or an unlisted failure may come from a rule that changed between them "
        "(write it again with: python -m conformance baseline REPORT.json)",
        "the baseline was made at --conformance-level behaviour, so it lists no wording "
        "failure: every wording failure of this run is one it does not list (write it again "
        "with: python -m conformance baseline REPORT.json from a run at both levels)",
    ]
    assert report(path)["baseline"]["notes"] == notes  # type: ignore[index]
    flat = " ".join(done.stdout.split())
    summary = " ".join(md.read_text().split())
    for note in notes:
        assert note in flat
        assert note in summary


def test_a_baseline_of_the_same_spec_level_and_harness_says_nothing_of_them(
    tmp_path: Path,
) -> None:
    from conformance.baseline import Baseline
    from conformance.report import Report

    path = tmp_path / "b.json"
    same = {"format": 1, "spec": "2", "level": "all", "harness": {"name": "h", "version": "1"},
            "failures": {}, "cases": ["GRD-001"]}  # fmt: skip
    path.write_text(json.dumps(same))
    report = Report(suite={"name": "harness-conformance", "version": "0"}, spec="2",
                    harness={"name": "h", "version": "2"})  # fmt: skip
    assert Baseline.load(str(path)).provenance_notes(report) == []
    # A baseline at both levels serves a behaviour-only run (its wording entries are unjudged),
    # and an old file that does not say what it was made against is taken as it is.
    report.level = "behaviour"
    path.write_text(json.dumps({"format": 1, "failures": {}, "cases": ["GRD-001"]}))
    assert Baseline.load(str(path)).provenance_notes(report) == []
    # A file that says behaviour and lists wording (edited by hand) was said to list none.
    report.level = "all"
    edited = {**same, "level": "behaviour",
              "failures": {"GRD-001": {"wording": "said in other words"}}}  # fmt: skip
    path.write_text(json.dumps(edited))
    assert Baseline.load(str(path)).provenance_notes(report) == []


def test_a_harness_name_in_a_baseline_note_reads_as_written(tmp_path: Path) -> None:
    from conformance.baseline import Baseline
    from conformance.report import Report

    path = tmp_path / "b.json"
    path.write_text(json.dumps({"format": 1, "harness": {"name": "outil-é"}, "failures": {},
                                "cases": ["GRD-001"]}))  # fmt: skip
    report = Report(suite={"name": "harness-conformance", "version": "0"}, spec="2",
                    harness={"name": "ツール\u202e"})  # fmt: skip
    # As the report's header shows it (not "\u30c4…"); what cannot be seen stays escaped.
    assert Baseline.load(str(path)).provenance_notes(report) == [
        'the baseline lists the failures of harness "outil-é", and this run tested '
        '"ツール\\u202e": check that it is the right file'
    ]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{", "not JSON"),
        ('{"format": 9}', "not a format-1 baseline"),
        ('{"format": 1, "failures": {"GRD-001": {"spelling": "x"}}, "cases": []}',
         "GRD-001 must map levels (behaviour, wording) to verdicts"),
        # Every failure would be new since it, and the run green.
        ('{"format": 1, "failures": {}, "cases": []}',
         "its cases list is empty, so it would expect every failure (write one with: "
         "python -m conformance baseline REPORT.json)"),
        ('{"format": 1, "failures": {"GRD-001": {"behaviour": "x"}}, "cases": ["GRD-002"]}',
         "lists failures of case(s) missing from its cases list, so their entries would be "
         "ignored: GRD-001"),
        # json keeps the last of two: the wording entry would be lost without a word.
        ('{"format": 1, "failures": {"GRD-001": {"wording": "x"}, "GRD-001": {"behaviour": "y"}},'
         ' "cases": ["GRD-001"]}', "names GRD-001 twice in one object: keep one entry"),
    ],
)  # fmt: skip
def test_a_malformed_baseline_is_one_line(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "b.json"
    path.write_text(content)
    done = run_suite("--conformance-baseline", str(path), cwd=tmp_path)
    assert done.returncode == 4
    errors = error_lines(done)
    assert len(errors) == 1
    assert errors[0].startswith(f"ERROR: baseline {path}: {problem}")


def test_a_malformed_report_is_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    bad = tmp_path / "r.json"
    bad.write_text('{"cases": [{"id": 5}]}')
    done = subprocess.run([sys.executable, "-m", "conformance", "baseline", str(bad)],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert done.returncode == 4
    assert done.stderr.strip() == f"ERROR: report {bad}: a case entry is malformed: {{'id': 5}}"


# -- xdist ------------------------------------------------------------------------------------


def test_reports_stay_right_under_xdist(tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    serial, parallel = tmp_path / "serial.json", tmp_path / "parallel.json"
    selection = ["-k", "GRD or DRV or TAX-00"]
    run_suite("--harness", "tests.mutants.derive_leaks_error:harness", *selection,
              "--conformance-report", str(serial), cwd=tmp_path)  # fmt: skip
    done = run_suite("--harness", "tests.mutants.derive_leaks_error:harness", *selection, "-n", "2",
                     "--conformance-report", str(parallel), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    one, two = report(serial), report(parallel)
    assert outcomes(one) == outcomes(two)
    assert one["harness"] == two["harness"]
    assert case_of(one, "DRV-001")["verdicts"] == case_of(two, "DRV-001")["verdicts"]


def test_rewriting_the_bytes_a_file_holds_counts_as_written() -> None:
    """An accepted write of identical bytes changes nothing a snapshot sees; it is not missing."""
    from conformance.client import _unexpected
    from conformance.watch import Change, content_entry

    empty = {"f.txt": content_entry(b"")}
    assert _unexpected([], {"f.txt": ""}, empty) == []
    assert _unexpected([], {"f.txt": "x"}, empty) == ['"f.txt" not written (it should hold "x")']
    assert _unexpected([], {"g.txt": ""}, empty) == ['"g.txt" not written (it should hold "")']
    # One expected file changed, another already held its bytes: both count as written.
    a, b = content_entry(b"a"), content_entry(b"b")
    changed = [Change("a.txt", content_entry(b"old"), a)]
    assert _unexpected(changed, {"a.txt": "a", "b.txt": "b"}, {"a.txt": a, "b.txt": b}) == []


def test_an_unjudged_change_beside_the_root_is_not_the_harness_dirs() -> None:
    # The suite's outside area and extra roots are spelled like the harness's own directories
    # (<outside>/x, <harness tmp>/x); only the latter are "files in the harness's directories".
    judge = Judge(frozenset(LEVELS))
    for outside in (['"<outside>/notes.txt" overwritten'], ['"<harness tmp>/t" created']):
        judge.calls.append(CallRecord(tool="read", arguments={}, outside=outside, index=0))
    judge.check_unjudged_calls()
    assert [v.signature for v in judge.violations] == [
        "tool.changes-only-target · any · other-files-changed",
        "tool.changes-only-target · any · harness-dir-files",
    ]


def test_a_new_file_elsewhere_than_beside_the_target_is_no_stray() -> None:
    """A refused write that left a file in the target's directory left a temporary file behind
    (one cause, tool.changes-only-target); one that created a file outside the fence (a
    directory swapped for a symlink, PUB-004) wrote where it must not: the case's own rule."""
    from conformance.client import Result
    from conformance.harness.contract import Profile
    from conformance.watch import Change, content_entry

    wire = {"callId": "c1", "content": [{"type": "text", "text": "no"}], "isError": True}
    found = {}
    for where in ("real/.pwn.txt.0a1b2c3d4e5f.tmp", "../outside/pwn.txt", "other/pwn.txt"):
        judge = Judge(frozenset(LEVELS))
        record = CallRecord("write", {"file_path": "real/pwn.txt", "content": "escaped\n"},
                            situation="new-file", target="real/pwn.txt", index=0)  # fmt: skip
        changes = [Change(where, None, content_entry(b"escaped\n"))]
        profile = Profile("h", "1", "python", frozenset({"tools"}))
        Result(wire, "c1", "no", True, None, 1, record, changes, judge, profile).refused(
            "fs.publish.no-redirect"
        )
        found[where] = [v.signature for v in judge.violations]
    assert found == {
        "real/.pwn.txt.0a1b2c3d4e5f.tmp": ["tool.changes-only-target · any · stray-files"],
        "../outside/pwn.txt": ["fs.publish.no-redirect · new-file · refused-and-changed"],
        "other/pwn.txt": ["fs.publish.no-redirect · new-file · refused-and-changed"],
    }
