"""Bugs every harness author met first (issue 15), each shown on a harness that is not the
reference: the behaviour level's exit status, a scenario's missing workspace, a permission case
that passed for another reason, line endings rewritten outside an edit, and replacement
patterns expanded in new_string."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.suite import REPO, case_of, child_env, fixture, report, run_suite


def _one_case(tmp_path: Path, harness: str, case: str, *extra: str) -> dict[str, object]:
    path = tmp_path / "report.json"
    run_suite("--harness", fixture(harness), "--conformance-case", case,
              "--conformance-report", str(path), *extra, cwd=REPO)  # fmt: skip
    return case_of(report(path), case)


def test_a_passing_behaviour_only_run_of_a_loop_harness_exits_0(tmp_path: Path) -> None:
    # Snapshots are wording: a behaviour-only run compares none, which is not "unused".
    done = run_suite("--conformance-level", "behaviour", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "failed" not in done.stdout.splitlines()[-1]


def test_a_scenario_workspace_left_to_the_suite_names_the_rule(tmp_path: Path) -> None:
    entry = _one_case(tmp_path, "careless:ForgetsTheWorkspace", "LOOP-012")
    assert entry["outcome"] == "failed"
    message = str(entry["message"])
    assert message.startswith(
        "ContractError: run_scenario: the scenario's workspace file 'touched.txt' is not there "
        "after the run; SPEC §5 {scenario.workspace}:"
    )
    assert "FileNotFoundError" not in message


def test_mixed_line_endings_rewritten_outside_an_edit_fail(tmp_path: Path) -> None:
    entry = _one_case(tmp_path, "careless:NormalizesLineEndings", "PRV-032")
    assert entry["outcome"] == "failed"
    # fs.text.mixed-endings spells out fs.text.utf8's "no newline translation"; the calls cite
    # the rule they share with PRV-019, so one defect is one root cause.
    assert "{fs.text.utf8}" in str(entry["message"])
    assert '"m.txt"' in str(entry["message"])


def _unshare() -> str:
    found = shutil.which("unshare")
    usable = (
        found is not None and subprocess.run([found, "-U", "true"], check=False).returncode == 0
    )
    if not usable:
        pytest.skip("unshare -U is not available: permissions cannot be enforced on root here")
    assert found is not None
    return found


def test_the_permission_case_refuses_only_for_the_permission(tmp_path: Path) -> None:
    # Under unshare -U file permissions bind even root. The harness never checks them; the
    # case used to pass anyway, because its own chmod made the observation stale.
    unshare = _unshare()
    path = tmp_path / "report.json"
    command = [unshare, "-U", *_suite_command(), "--harness", fixture("careless:IgnoresPermissions"),
               "--conformance-case", "PRV-012", "--conformance-level", "behaviour",
               "--conformance-report", str(path)]  # fmt: skip
    subprocess.run(command, cwd=REPO, env=child_env(), capture_output=True, check=False)
    entry = case_of(report(path), "PRV-012")
    assert entry["outcome"] == "failed"
    assert str(entry["message"]).startswith('write of "ro.txt" accepted and "ro.txt" overwritten')
    reference = tmp_path / "reference.json"
    command = [unshare, "-U", *_suite_command(), "--conformance-case", "PRV-012",
               "--conformance-report", str(reference)]  # fmt: skip
    subprocess.run(command, cwd=REPO, env=child_env(), capture_output=True, check=False)
    assert case_of(report(reference), "PRV-012")["outcome"] == "passed"


def _suite_command() -> list[str]:
    return [sys.executable, "-m", "conformance", "-p", "no:cacheprovider",
            "--hypothesis-profile", "default"]  # fmt: skip


def test_replacement_patterns_in_new_string_are_text(tmp_path: Path) -> None:
    # re.sub expands \g<0> and \0 in the replacement; the edit must insert them as written,
    # and a.txt (JavaScript's patterns, plain text to re.sub) passed: b.txt is named.
    entry = _one_case(tmp_path, "edit_by_regex:harness", "PRV-033")
    assert entry["outcome"] == "failed"
    message = str(entry["message"])
    assert message.startswith(
        'edit of "b.txt" accepted, but "b.txt" overwritten (18 → 20 bytes: "before item \\u0000 '
        'after\\n") instead of holding "before \\\\g<0> \\\\0 after\\n"; SPEC §3.4b {edit.literal}'
    ), message
