"""The blind-spot table names real cases and mutants; levels never mix; baselines survive a split."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conformance import baseline as baseline_module
from conformance.baseline import SPLIT, Baseline
from conformance.rules import rule_book
from tests.mutants import __file__ as mutants_init
from tests.suite import REPO, case_of, outcomes, report, run_suite
from tests.test_mutants import MUTANTS

DOC = (REPO / "docs" / "blind-spots.md").read_text(encoding="utf-8")
TABLE = "\n".join(line for line in DOC.splitlines() if line.startswith("| "))


@pytest.fixture(scope="module")
def cited(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """Case ID → the rules it names, as the suite lists them."""
    done = run_suite("-q", "--conformance-list-cases", cwd=tmp_path_factory.mktemp("list"))
    assert done.returncode == 0, done.stdout
    rows = [line for line in done.stdout.splitlines() if re.match(r"^\| [A-Z]+-\d{3} \|", line)]
    return {row.split("|")[1].strip(): re.findall(r"`([^`]+)`", row.split("|")[3]) for row in rows}


def test_every_case_the_table_names_exists(cited: dict[str, list[str]]) -> None:
    named = set(re.findall(r"\b[A-Z]{2,4}-\d{3}\b", TABLE))
    assert named, "the table names no case"
    assert sorted(named - set(cited)) == []


def test_every_mutant_the_table_names_exists_and_is_run() -> None:
    named = set(re.findall(r"\*([a-z_]+)\*", TABLE))
    assert named, "the table names no mutant"
    on_disk = {p.stem for p in Path(mutants_init).parent.glob("*.py")}
    assert sorted(named - on_disk) == []
    assert sorted(named - set(MUTANTS)) == []


def test_no_case_mixes_a_required_and_a_recommended_rule(cited: dict[str, list[str]]) -> None:
    book = rule_book()
    mixed = {
        case: rules
        for case, rules in cited.items()
        if len({book[rule].recommended for rule in rules if rule in book}) > 1
    }
    assert mixed == {}


def test_a_baseline_made_before_a_split_still_holds(tmp_path: Path) -> None:
    # The state of a harness whose sweep deletes another program's temp files, as a baseline of
    # the suite before PUB-005 was split: PUB-005 failed (recommended), PUB-011 did not exist.
    old, new = "PUB-005", SPLIT["PUB-005"][0]
    listed = run_suite("-q", "--conformance-list-cases", cwd=tmp_path)
    cases = [row.split("|")[1].strip() for row in listed.stdout.splitlines()
             if re.match(r"^\| [A-Z]+-\d{3} \|", row)]  # fmt: skip
    path = tmp_path / "old-baseline.json"
    path.write_text(json.dumps({
        "format": 1, "suite": {"name": "harness-conformance", "version": "0.0.9"},
        "cases": [c for c in cases if c != new],
        "failures": {old: {"behaviour": "write of \".a.txt.tmp\" deleted"}},
    }))  # fmt: skip
    out = tmp_path / "r.json"
    done = run_suite("--harness", "tests.mutants.sweeps_look_alikes:harness", "--conformance-baseline",
                     str(path), "--conformance-case", old, "--conformance-case", new,
                     "--conformance-report", str(out), cwd=tmp_path, profile="triage")  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    data = report(out)
    assert outcomes(data)[new] == "expected-fail"
    assert case_of(data, new)["baseline"] == "listed"
    assert case_of(data, old).get("baseline") != "stale"
    assert f"{old} was split since this baseline: its entry also covers {new}" in done.stdout


def test_a_baseline_listing_a_withdrawn_case_loads_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(baseline_module.WITHDRAWN, "GRD-999", "its check moved to GRD-001")
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"format": 1, "cases": ["GRD-999"],
                                "failures": {"GRD-999": {"behaviour": "x"}}}))  # fmt: skip
    loaded = Baseline.load(str(path))
    assert loaded.unknown_cases({"GRD-001"}) == []
    assert loaded.notes() == [
        "GRD-999 is withdrawn (its check moved to GRD-001); its entry is ignored"
    ]


def test_the_state_machine_reports_each_divergence_once_with_its_steps(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = run_suite("-q", "--harness", "tests.mutants.recreates_deleted:harness",
                     "--conformance-case", "STM-001", "--conformance-report", str(out),
                     cwd=tmp_path, profile="triage")  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:]
    entry = case_of(report(out), "STM-001")
    verdicts = entry["verdicts"]
    assert isinstance(verdicts, list)
    assert verdicts
    sentences = [v["verdict"] for v in verdicts]
    assert all(" — reproduced in " in s for s in sentences), sentences
    assert len(set(sentences)) == len(sentences)
    # Writing to a deleted target is one defect, whichever spelling the step used.
    assert len(verdicts) == 1, sentences
    assert entry["levels"] == {"behaviour": "failed", "wording": "passed"}
