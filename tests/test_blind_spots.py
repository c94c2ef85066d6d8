"""The blind-spot table names real cases and mutants; levels never mix; baselines survive a split;
the cases that closed the last blind spots fail on their defect and pass on the reference."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conformance import baseline as baseline_module
from conformance.baseline import SPLIT, Baseline
from conformance.rules import rule_book
from tests.mutants import __file__ as mutants_init
from tests.suite import REPO, case_of, fixture, outcomes, report, run_suite
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


def test_every_fixture_the_table_names_exists() -> None:
    named = set(re.findall(r"fixture `([a-z_]+)`", TABLE))
    on_disk = {p.stem for p in (REPO / "tests" / "fixtures").glob("*.py")}
    assert sorted(named - on_disk) == []
    assert {harness.split(":")[0] for harness in CLOSED.values()} <= named


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


# case → the fixture harness with the defect it closes (docs/blind-spots.md)
CLOSED = {
    "GRD-027": "locks_per_tool:harness",
    "PRV-034": "links_before_dotdot:harness",
    "DRV-006": "derive_skips_unknown:harness",
    "CON-005": "keeps_stale_pause:harness",
    "CON-006": "reads_disarm_pause:harness",
}


@pytest.fixture(scope="module")
def closed_on_the_reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The closing cases' outcomes on the reference, in one run."""
    workdir = tmp_path_factory.mktemp("reference")
    path = workdir / "report.json"
    selected = [arg for case in CLOSED for arg in ("--conformance-case", case)]
    done = run_suite(*selected, "--conformance-report", str(path), cwd=workdir)
    assert done.returncode == 0, done.stdout[-3000:]
    return outcomes(report(path))


def _closed(case: str, workdir: Path, harness: str | None = None) -> tuple[str, list[str]]:
    """The case on the fixture with its defect (``CLOSED``'s, or ``harness``): its message and
    every verdict, once it failed."""
    path = workdir / "report.json"
    run_suite("--harness", fixture(harness or CLOSED[case]), "--conformance-case", case,
              "--conformance-report", str(path), cwd=workdir)  # fmt: skip
    entry = case_of(report(path), case)
    assert entry["outcome"] == "failed", entry
    verdicts = entry["verdicts"]
    assert isinstance(verdicts, list)
    return str(entry["message"]), [str(v["verdict"]) for v in verdicts]


def test_a_write_and_an_edit_locked_apart_lose_one_in_either_order(
    tmp_path: Path, closed_on_the_reference: dict[str, str]
) -> None:
    # Writes exclude writes and edits exclude edits (GRD-013, GRD-025 pass); the two together
    # both win, whichever of them is paused after its checks.
    message, verdicts = _closed("GRD-027", tmp_path)
    both = "were both accepted from one version"
    assert message.startswith(
        'round 0: a guarded mutation of shared0.txt was lost: the write of "shared0.txt" (paused '
        f'after its checks) and the edit "second = 2" → "second = B" (made meanwhile) {both}'
    ), message
    assert any(v.startswith('round 1: a guarded mutation of shared1.txt was lost: the edit '
                            '"second = 2" → "second = B" (paused after its checks)') for v in verdicts), verdicts  # fmt: skip
    assert all("{fs.cas.one-winner}" in v for v in verdicts), verdicts
    assert closed_on_the_reference["GRD-027"] == "passed"


def test_a_symlinked_directory_followed_before_dotdot_is_caught(
    tmp_path: Path, closed_on_the_reference: dict[str, str]
) -> None:
    # The model is shown the workspace's notes.txt; the harness reads and edits the one beside
    # the link's target, outside the workspace, and creates new files there.
    message, verdicts = _closed("PRV-034", tmp_path)
    assert message.startswith(
        'edit of "link/../notes.txt" accepted, but "<outside>/notes.txt" overwritten'
    ), message
    assert "; SPEC §3.2 {fs.resolve.key}: " in message, message
    assert any(v.startswith('write of "link/../new.txt" accepted, but "<outside>/new.txt" created')
               for v in verdicts), verdicts  # fmt: skip
    assert any(v.startswith('read of "link/../notes.txt": the model saw text that differs')
               for v in verdicts), verdicts  # fmt: skip
    assert all("{fs.resolve.key}" in v for v in verdicts), verdicts
    assert closed_on_the_reference["PRV-034"] == "passed"


def test_derive_messages_that_skips_what_is_not_an_event_is_caught(
    tmp_path: Path, closed_on_the_reference: dict[str, str]
) -> None:
    message, verdicts = _closed("DRV-006", tmp_path)
    assert message.startswith(
        'derive_messages of [{"foo": 1}] (an object with no type) answered [] instead of '
        "refusing it with an error; SPEC §2.3 {history.input}: "
    ), message
    assert len(verdicts) == 4, verdicts  # the string, the unknown type, and after a real event
    assert closed_on_the_reference["DRV-006"] == "passed"


def test_a_pause_left_armed_by_a_refused_mutation_is_caught(
    tmp_path: Path, closed_on_the_reference: dict[str, str]
) -> None:
    # The edit is refused before its pause point; the pause must not wait for the next write.
    message, verdicts = _closed("CON-005", tmp_path)
    assert message.startswith(
        "the pause armed before an edit of a file never read (refused) fired in the session's "
        "next write; SPEC §6.4 {pause.point}"
    ), message
    assert len(verdicts) == 2, verdicts
    assert all("{pause.point}" in v for v in verdicts), verdicts
    assert closed_on_the_reference["CON-005"] == "passed"


def test_a_pause_disarmed_by_a_read_is_caught(
    tmp_path: Path, closed_on_the_reference: dict[str, str]
) -> None:
    # The model reads the file, then edits it: the read must leave the pause for the edit.
    message, verdicts = _closed("CON-006", tmp_path)
    assert message.startswith(
        "the pause armed before a read, a refused read and an edit did not fire in the edit; "
        "SPEC §6.4 {pause.point}: "
    ), message
    assert len(verdicts) == 1, verdicts
    assert closed_on_the_reference["CON-006"] == "passed"


def test_a_pause_that_fires_in_a_read_is_caught(tmp_path: Path) -> None:
    # The race the suite drives would happen during the read, and the edit run unpaused.
    message, verdicts = _closed("CON-006", tmp_path, "pauses_at_read:harness")
    assert message.startswith(
        "the pause armed before a read, a refused read and an edit fired in the read, not in "
        "the edit; SPEC §6.4 {pause.point}: "
    ), message
    assert len(verdicts) == 1, verdicts
