"""The suite has teeth: every deliberately broken harness fails it, caught by the right cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.suite import outcomes, report, run_suite

# mutant module → the cases that must catch it (each is among those that fail)
MUTANTS = {
    "provider_remedy": {"REM-009", "REM-010", "REM-012", "SCN-002", "STM-001"},
    "remedy_changes_code": {"REM-003", "REM-013", "PROP-001"},
    "remedy_drops_cause": {"REM-004", "PROP-001"},
    "remedy_twice": {"REM-009", "REM-013", "SCN-001", "SCN-019"},
    "remedy_copies_others": {"REM-006", "REM-007", "REM-008", "PROP-002"},
    "intent_outside_try": {"REM-013", "GRD-016", "SCN-001", "SCN-019"},
    "result_without_error": {"LOOP-006", "SCN-001"},
    "derive_leaks_error": {"DRV-001", "DRV-002"},
    "to_error_bare": {"TAX-008", "LOOP-007", "SCN-014", "PROP-004"},
    "mtime_version": {"GRD-006", "GRD-007", "SCN-005"},
    "recreates_deleted": {"REM-010", "DEL-001", "DEL-004", "SCN-006"},
    "fence_ignores_symlinks": {"SBX-003", "SBX-004"},
    "plain_errors_coded": {"REG-003", "PROP-003", "SCN-013"},
    "no_redaction": {"SEC-001", "SEC-002", "SCN-015"},
    "fence_after_policy": {"SBX-005", "SCN-009"},
    "violations_reordered": {"REG-010", "SCN-010"},
    "failed_read_forgets": {"GRD-009", "DEL-004", "SCN-006"},
    "read_window_off_by_one": {"RD-001", "RD-002", "SCN-018"},
    # one per failure shape of docs/blind-spots.md
    "edit_unlocked": {"GRD-025"},
    "lock_by_spelling": {"GRD-026"},
    "sweeps_look_alikes": {"PUB-011"},
    "tool_error_harness_only": {"REG-024"},
    "logs_failures": {"SEC-007"},
    "keeps_bom_on_write": {"PRV-024"},
    "trailing_slash_unresolved": {"GRD-020", "RD-019"},
    "edit_skips_type_check": {"PRV-031"},
    "remedy_in_policy": {"REM-015"},
    "edit_first_of_many": {"PRV-015", "PRV-026", "SCN-008", "STM-001"},
    "write_leaves_temp": {"REM-012", "GRD-001", "PUB-001", "STM-001"},
    "racy_by_mtime": {"GRD-028"},
}


pytestmark = pytest.mark.once

Run = tuple[int, dict[str, str], str, list[str]]
OWN_PROCESS = {"logs_failures"}
"""Mutants whose defect shows only in a child process (its log is the child's stderr)."""


def _run(name: str, workdir: Path) -> Run:
    """The suite on one mutant: exit code, outcomes, output, and the signatures of the root
    causes its report leads with."""
    path = workdir / "report.json"
    # In process where the defect is in the file tools, not in how the harness runs: the child
    # process's protocol costs a fifth of each of these 26 runs.
    where = () if name in OWN_PROCESS else ("--conformance-in-process",)
    done = run_suite("-q", *where, "--harness", f"tests.mutants.{name}:harness",
                     "--conformance-report", str(path), cwd=workdir, profile="triage")  # fmt: skip
    data = report(path) if path.exists() else {}
    found = outcomes(data) if data else {}
    causes = data.get("rootCauses") or []
    assert isinstance(causes, list)
    signatures = [str(cause["signature"]) for cause in causes]
    return done.returncode, found, done.stdout + done.stderr, signatures


def test_there_are_at_least_twelve_mutants() -> None:
    assert len(MUTANTS) >= 12
    assert {p.stem for p in Path(__file__).parent.joinpath("mutants").glob("*.py")} - {
        "__init__"
    } == set(MUTANTS)


# mutant → its root causes, exactly: one defect, one cause (conformance.causes).
ONE_CAUSE: dict[str, set[str]] = {
    "mtime_version": {"fs.version.racy · rewritten-same-size · accepted-instead-of-refused"},
    "recreates_deleted": {"policy.dead-end · deleted-since-read · accepted-instead-of-refused"},
    # its second effect, named in its docstring (a root opened through a symlink is refused),
    # is a consequence (conformance.causes.CONSEQUENCES)
    "fence_ignores_symlinks": {
        "sandbox.workspace-write · symlink-outside · accepted-instead-of-refused"
    },
    "edit_skips_type_check": {"fs.msg.not-regular · not-a-file · text-differs"},
    "keeps_bom_on_write": {"fs.text.utf8 · existing-read · bytes-differ"},
    "sweeps_look_alikes": {"tool.changes-only-target · existing-read · other-files-changed"},
    "logs_failures": {"secret.redact.everywhere · secret-unredacted · check-failed"},
    "tool_error_harness_only": {"contract.tool-error.any · REG-024 · check-failed"},
    "edit_unlocked": {"fs.cas.one-winner · GRD-025 · check-failed"},
    "remedy_twice": {"remedy.once · any · remedy-extra"},
    "provider_remedy": {"remedy.once · any · remedy-extra"},
    "intent_outside_try": {"remedy.texts · any · remedy-missing"},
    "violations_reordered": {"args.order · any · parts-reordered"},
    "remedy_changes_code": {"remedy.code · FS_NOT_OBSERVED→FS_STALE_VERSION · code-differs"},
    "plain_errors_coded": {"tool.error.plain · none→UNKNOWN · code-differs"},
    "result_without_error": {"loop.result-error · error→none · code-differs"},
    "derive_leaks_error": {"history.no-error · history-error · check-failed"},
    "remedy_copies_others": {"remedy.passthrough · passthrough-copied · check-failed"},
    "remedy_drops_cause": {"remedy.cause · remedied-cause-lost · check-failed"},
    "failed_read_forgets": {"policy.failed-read · after-failed-read · refused-instead-of-accepted"},
    "read_window_off_by_one": {"read.lines · any · final-newline-counted"},
    "no_redaction": {"secret.redact.everywhere · secret-unredacted · check-failed"},
    "fence_after_policy": {
        "sandbox.before-policy · FS_SANDBOX_DENIED→FS_NOT_OBSERVED · code-differs"
    },
    "lock_by_spelling": {"fs.cas.one-winner · GRD-026 · check-failed"},
    "to_error_bare": {"err.to-error.value · to-error-uncoded · check-failed"},
    "remedy_in_policy": {"remedy.cause · remedied-cause-lost · check-failed"},
    # the scenario's accepted edit, which RULES cannot name, joins the direct calls' cause
    "edit_first_of_many": {"fs.msg.ambiguous · existing-read · accepted-instead-of-refused"},
    "trailing_slash_unresolved": {
        "fs.resolve.display · trailing-slash · refused-instead-of-accepted"
    },
    # refused or published, every write leaves one: one cause, its name shown by its shape
    "write_leaves_temp": {"tool.changes-only-target · any · stray-files"},
    "racy_by_mtime": {"fs.version.racy · rewritten-same-size · accepted-instead-of-refused"},
}


def test_every_mutant_is_one_cause() -> None:
    assert set(ONE_CAUSE) == set(MUTANTS)
    assert all(len(signatures) == 1 for signatures in ONE_CAUSE.values())


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_the_suite_catches_the_mutant_by_its_one_root_cause(name: str, tmp_path: Path) -> None:
    """The right cases fail, and the report leads with exactly the mutant's one root cause.

    One run for both: under ``pytest -n`` a run shared by two tests was made once in each
    worker that ran one of them.
    """
    code, found, output, shown = _run(name, tmp_path)
    failed = {case for case, outcome in found.items() if outcome == "failed"}
    assert code == 1, output[-3000:]
    assert MUTANTS[name] <= failed, (
        f"{name}: expected {sorted(MUTANTS[name])} among {sorted(failed)}"
    )
    assert sorted(shown) == sorted(ONE_CAUSE[name]), f"{name}: {shown}"
