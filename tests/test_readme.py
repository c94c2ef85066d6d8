"""The README's promises: the two commands, what CI runs, its samples; the case table in docs/."""

from __future__ import annotations

import re
from pathlib import Path

from docs import make_readme_sample
from tests.suite import REPO, run_suite

README = (REPO / "README.md").read_text(encoding="utf-8")
CASES = (REPO / "docs" / "cases.md").read_text(encoding="utf-8")


def commands() -> list[str]:
    return re.findall(r"```sh\n(.+?)\n```", README, re.S)


def test_the_readme_has_exactly_two_newcomer_commands() -> None:
    assert len(commands()) == 2


def test_the_first_command_installs_and_runs_the_suite() -> None:
    main_job = commands()[0]
    assert "pip install ." in main_job
    assert main_job.endswith("python -m conformance")


def test_the_second_command_installs_and_runs_every_check_and_is_what_ci_runs() -> None:
    all_checks = commands()[1]
    assert "pip install nox" in all_checks
    assert all_checks.endswith("nox")
    assert "`.ci/run` runs this command" in README
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert all_checks in ci.splitlines()


def test_the_case_table_in_the_docs_is_the_suites_own(tmp_path: Path) -> None:
    listed = run_suite("-q", "--conformance-list-cases", cwd=tmp_path)
    assert listed.returncode == 0, listed.stdout
    generated = listed.stdout.splitlines()
    documented = [line for line in CASES.splitlines() if line.startswith("|")]
    assert documented == generated


def test_the_readme_samples_are_what_a_real_run_prints() -> None:
    documented = make_readme_sample.documented(README)
    made = make_readme_sample.samples()
    assert set(documented) == set(made) == {"reference", "failure", "causes", "matrix"}
    for name, body in made.items():
        assert make_readme_sample.normalized(documented[name]) == make_readme_sample.normalized(
            body
        ), f"README sample {name!r} drifted: run python docs/make_readme_sample.py --write"


def test_a_page_that_shows_a_readme_sample_shows_the_readmes() -> None:
    samples = make_readme_sample.documented(README)
    for page in make_readme_sample.PAGES:
        shown = make_readme_sample.documented(page.read_text(encoding="utf-8"))
        assert shown, f"{page.name} shows no sample"
        for name, body in shown.items():
            assert body == samples[name], (
                f"{page.name}: run python docs/make_readme_sample.py --write"
            )


def test_the_readme_is_a_guide_that_links_its_reference_pages() -> None:
    assert len(README.encode()) < 20_000  # a guide; reference pages live in docs/
    for page in ("docs/cases.md", "docs/protocol.md", "docs/numbers.md", "LICENSE"):
        assert f"]({page}" in README
        assert (REPO / page).is_file()
    for heading in ("## Root causes", "## The child process, temp areas and start-up",
                    "## Real harnesses compared",
                    "## What the reference guarantees, and what it does not cover"):  # fmt: skip
        assert f"\n{heading}\n" in README
    for limit in ("hard links", "bind mounts", "network filesystems"):
        assert limit in README
