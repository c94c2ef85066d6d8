"""The README's promises: the two commands, what CI runs, and the case table."""

from __future__ import annotations

import re
from pathlib import Path

from tests.suite import REPO, run_suite

README = (REPO / "README.md").read_text(encoding="utf-8")


def commands() -> list[str]:
    return re.findall(r"```sh\n(.+?)\n```", README, re.S)


def test_the_first_command_installs_and_runs_the_suite() -> None:
    main_job = commands()[0]
    assert "pip install ." in main_job
    assert main_job.endswith("python -m conformance")


def test_the_second_command_installs_and_runs_every_check_and_is_what_ci_runs() -> None:
    all_checks = commands()[1]
    assert "pip install nox" in all_checks
    assert all_checks.endswith("nox")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert all_checks in ci.splitlines()


def test_the_case_table_is_the_suites_own(tmp_path: Path) -> None:
    listed = run_suite("-q", "--conformance-list-cases", cwd=tmp_path)
    assert listed.returncode == 0, listed.stdout
    generated = [line for line in listed.stdout.splitlines() if line.startswith("|")]
    table = re.compile(r"^\|( [A-Z]+-\d{3} \| | ID \| area \| |---\|---\|---\|---\|$)")
    documented = [line for line in README.splitlines() if table.match(line)]
    assert documented == generated
