"""The Node adapter kit (adapters/node/): its example harness passes the suite's behaviour level
over the stdio protocol, and the kit's own tests pass."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.suite import REPO, by_area, case_of, outcomes, report, run_suite

NODE_KIT = REPO / "adapters" / "node"


@pytest.fixture(scope="module")
def node() -> str:
    """The node executable; CI installs it, so there a missing node is a failure."""
    found = shutil.which("node")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed, but CI must run the Node kit (.ci/run installs it)")
        pytest.skip("node is not installed (apt-get install nodejs)")
    return found


def test_the_example_passes_the_behaviour_level(node: str, tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    done = run_suite("--harness-cmd", f"{node} {NODE_KIT / 'example' / 'harness.mjs'}",
                     "--conformance-level", "behaviour", "--conformance-report", str(path),
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:]
    data = report(path)
    harness = data["harness"]
    assert isinstance(harness, dict)
    assert (harness["name"], harness["language"], harness["capabilities"]) == (
        "example-node-harness",
        "javascript",
        ["tools"],
    )
    assert by_area(data, "failed") == {}
    found = outcomes(data)
    assert all(
        found[case] == "passed"
        for case in found
        if case.startswith(("GRD-", "DEL-")) and found[case] != "not-applicable"
    )
    assert sum(outcome == "passed" for outcome in found.values()) >= 90
    # Node has no flock: the recommended cross-process case shows, and never fails the run.
    assert found["PUB-010"] in ("recommended-fail", "passed")


def test_crossed_answers_in_a_sessions_start_fail_con_002(node: str, tmp_path: Path) -> None:
    # A call racing a session's first one gets that call's answer: only a race on fresh
    # sessions meets it (a lone read in each session first let it pass every case).
    path = tmp_path / "report.json"
    harness = REPO / "tests" / "fixtures" / "node_cold_session.mjs"
    run_suite("--harness-cmd", f"{node} {harness}", "--conformance-case", "CON-002",
              "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    entry = case_of(report(path), "CON-002")
    assert entry["outcome"] == "failed", entry
    assert "{proto.ids}" in str(entry["message"]), entry["message"]


def test_the_kits_own_tests_pass(node: str) -> None:
    done = subprocess.run(
        [node, "--test"], cwd=NODE_KIT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout


NATURAL = REPO / "tests" / "fixtures" / "node_natural" / "harness.mjs"
NATURAL_WORDING = NATURAL.parent / "wording.toml"
# Cases that judge the structured {name, code} of a failed tool result (at the wording level):
# a guard, a provider message, a sandbox denial (one in the temp grant), a deleted target, an
# argument violation, an unknown tool, the state machine.
CODED = ("GRD-001", "PRV-001", "SBX-001", "SBX-014", "DEL-001", "REG-004", "REG-012", "STM-001")


def test_a_harness_written_the_way_javascript_authors_write_passes(
    node: str, tmp_path: Path
) -> None:
    # Error subclasses, String(err) as "Name: message", causes of any value, one pause point,
    # the taxonomy without to_error: every case that applies passes, and the ones that assumed
    # Python (TAX-001, TAX-028) or a pair of pause points apply to it.
    path = tmp_path / "report.json"
    done = run_suite("--harness-cmd", f"{node} {NATURAL}", "--conformance-level", "behaviour",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:]
    data = report(path)
    found = outcomes(data)
    assert by_area(data, "failed") == {}
    for case in ("TAX-001", "TAX-028", "TAX-025", "TAX-027", "PUB-002", "PUB-003", "PROP-005"):
        assert found[case] == "passed", case
    assert (found["TAX-007"], found["TAX-008"], found["PUB-004"]) == ("not-applicable",) * 3
    # Its workspace-write grants the temp directory, declared: the sandbox cases apply and pass.
    sandbox = {case: o for case, o in found.items() if case.startswith("SBX-")}
    assert set(sandbox.values()) == {"passed"}, sandbox
    assert "SBX-014" in sandbox
    # Under another TMPDIR, the same verdicts: no workspace lives in a temp area it may write.
    elsewhere, again = tmp_path / "other-tmp", tmp_path / "again.json"
    elsewhere.mkdir()
    selection = [arg for case in sandbox for arg in ("--conformance-case", case)]
    done = run_suite("--harness-cmd", f"{node} {NATURAL}", "--conformance-level", "behaviour",
                     *selection, "--conformance-report", str(again), cwd=tmp_path,
                     env={"TMPDIR": str(elsewhere)})  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:]
    assert outcomes(report(again)) == sandbox


def test_the_natural_harness_passes_every_level_in_its_own_words(node: str, tmp_path: Path) -> None:
    # Every text the model reads is its own (wording.toml re-pins them) and its failed results
    # carry {name, code}: the default level, wording included, passes every case that applies.
    path = tmp_path / "report.json"
    done = run_suite("--harness-cmd", f"{node} {NATURAL}", "--conformance-wording",
                     str(NATURAL_WORDING), "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:]
    data = report(path)
    assert by_area(data, "failed") == {}
    harness = data["harness"]
    assert isinstance(harness, dict)
    assert harness["lacks"] == ["to_error"]
    assert {"toolCodes", "taxonomy", "pause"} <= set(harness["capabilities"])
    assert harness["options"]["tempWritable"] is True
    assert harness["options"]["pausePoints"] == ["staged"]
    found = outcomes(data)
    for case in ("TAX-001", "TAX-028", "PUB-002", "PUB-003"):  # Python's semantics; a staged race
        assert found[case] == "passed", case
        assert case_of(data, case)["levels"] in (
            {"behaviour": "passed", "wording": "passed"},
            {"behaviour": "passed", "wording": "not-applicable"},
        ), case
    # The structured codes, the taxonomy's and the registry's messages, judged in its words.
    for case in (*CODED, "TAX-018", "TAX-019", "REG-017", "REM-001", "PUB-003"):
        assert case_of(data, case)["levels"] == {"behaviour": "passed", "wording": "passed"}, case
    assert (found["TAX-007"], found["PUB-004"]) == ("not-applicable",) * 2
    # The spec's own words are not its words: without the table the same run fails on wording.
    spec_words = tmp_path / "spec-words.json"
    selection = [arg for case in CODED for arg in ("--conformance-case", case)]
    done = run_suite("--harness-cmd", f"{node} {NATURAL}", *selection,
                     "--conformance-report", str(spec_words), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    assert set(outcomes(report(spec_words)).values()) == {"failed"}
