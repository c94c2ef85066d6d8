"""A property's verdict is the example hypothesis settled on, in the same words on every run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.suite import case_of, report, run_suite

pytestmark = pytest.mark.once


def _verdicts(tmp_path: Path, name: str, harness: str, *cases: str) -> dict[str, Any]:
    path = tmp_path / f"{name}.json"
    selection = [arg for case_id in cases for arg in ("--conformance-case", case_id)]
    run_suite("--harness", harness, *selection, "--conformance-report", str(path), cwd=tmp_path)
    data = report(path)
    return {case_id: case_of(data, case_id).get("verdicts") for case_id in cases}


def test_a_failed_property_reports_its_one_example_not_every_example_it_tried(
    tmp_path: Path,
) -> None:
    """Hypothesis tries dozens of examples, then shrinks: each used to add its own verdict
    (PROP-003 on this mutant had over 300, and every call of every example)."""
    path = tmp_path / "r.json"
    run_suite("--harness", "tests.mutants.plain_errors_coded:harness", "--conformance-case",
              "PROP-003", "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    entry = case_of(report(path), "PROP-003")
    assert entry["outcome"] == "failed", entry
    verdicts, calls = entry["verdicts"], entry["calls"]
    assert isinstance(verdicts, list)
    assert isinstance(calls, list)
    assert len(verdicts) == 1, [v["verdict"] for v in verdicts]
    assert len(calls) == 1, calls  # the shrunk example's one probe_raise
    assert verdicts[0]["call"] == 0


def test_a_handle_in_a_property_verdict_reads_the_same_on_every_run(tmp_path: Path) -> None:
    """A harness may draw its handles at random: a cause compared by its bare handle showed
    ``"e-3f9a0c…"`` (or ``"err_209"``, the harness's history) where ``<handle N>`` belongs."""
    cases = ("PROP-001", "REM-004")
    first = _verdicts(tmp_path, "first", "tests.fixtures.random_handles:harness", *cases)
    second = _verdicts(tmp_path, "second", "tests.fixtures.random_handles:harness", *cases)
    assert first == second
    for case_id in cases:
        assert first[case_id], f"{case_id} passed a remedy that drops its cause"
        for verdict in first[case_id]:
            assert '{"handle": "<handle ' in verdict["verdict"], verdict


def test_a_state_machine_verdict_is_the_words_of_the_step_that_reproduces_it(
    tmp_path: Path,
) -> None:
    """A divergence is kept once per root cause, with the shortest sequence that shows it; its
    words were the first run's, so an unread write's sequence was told in the words of a
    stale write (another rule, another remedy) and a write of ``alias.txt`` in those of
    ``f.txt``."""
    path = tmp_path / "r.json"
    run_suite("--harness", "tests.mutants.provider_remedy:harness", "--conformance-case",
              "STM-001", "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    entry = case_of(report(path), "STM-001")
    verdicts, calls = entry["verdicts"], entry["calls"]
    assert isinstance(verdicts, list)
    assert isinstance(calls, list)
    assert verdicts, "STM-001 passed a provider that appends the remedy itself"
    for verdict in verdicts:
        call = calls[verdict["call"]]
        tool, spelled = call["tool"], call["arguments"]["file_path"]
        sentence = verdict["verdict"]
        assert sentence.startswith(f'{tool} of "{spelled}"'), (sentence, call)
        steps = sentence.split(" — reproduced in ", 1)[1]  # the last step is this call
        assert steps[steps.rindex(f"{tool} ") :].startswith(f"{tool} {spelled}"), sentence
        assert verdict["rule"] == call["rule"], (sentence, call)


@pytest.mark.parametrize(
    ("harness", "signature"),
    [
        ("tests.mutants.edit_first_of_many", "fs.msg.ambiguous · existing-read · accepted-instead-of-refused"),
        ("tests.fixtures.crlf_on_edit", "fs.text.utf8 · existing-read · bytes-differ"),
    ],
)  # fmt: skip
def test_the_state_machine_meets_a_repeated_old_string_and_crlf_endings(
    harness: str, signature: str, tmp_path: Path
) -> None:
    """Its random steps accept an edit only on a file read and unchanged since: in 30 runs
    none met an ``old_string`` found twice, and none edited a CRLF file. The tour does both,
    under the cause the provider cases give the same defect."""
    verdicts = _verdicts(tmp_path, "r", f"{harness}:harness", "STM-001")["STM-001"]
    assert verdicts, f"STM-001 passed {harness}"
    assert {verdict.get("signature") for verdict in verdicts} == {signature}


def test_a_state_machine_disk_divergence_is_kept_once_with_its_steps(tmp_path: Path) -> None:
    """The comparison of the disk after each step went to the case's judge, not the step's:
    every comparison of every run was a verdict of its own (``45 times: the workspace's
    files was …``), without the steps that showed it."""
    verdicts = _verdicts(tmp_path, "r", "tests.mutants.write_leaves_temp:harness", "STM-001")
    sentences = [verdict["verdict"] for verdict in verdicts["STM-001"]]
    disk = [sentence for sentence in sentences if sentence.startswith("the workspace's files")]
    assert len(disk) == 1, sentences
    assert all(" — reproduced in " in sentence for sentence in sentences), sentences
    assert not any(sentence.split(":")[0].endswith(" times") for sentence in sentences)


def test_a_stray_file_named_by_rusts_tempfile_reads_the_same_on_every_run(tmp_path: Path) -> None:
    """``.tmp`` and six random letters or digits: each run named other files, and the state
    machine kept a verdict per name."""
    harness = "tests.fixtures.rust_temp_names:harness"
    first = _verdicts(tmp_path, "first", harness, "GRD-001", "STM-001")
    second = _verdicts(tmp_path, "second", harness, "GRD-001", "STM-001")
    assert first == second
    for case_id, verdicts in first.items():
        assert verdicts, f"{case_id} passed a write that leaves a file beside its target"
        assert any('".tmp…"' in verdict["verdict"] for verdict in verdicts), verdicts
