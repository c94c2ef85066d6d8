"""SPEC.md is the project's normative document: every rule has a stable ID and a check."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.rules import Rule, parse_rules, rule_book, spec_path, spec_version
from tests.suite import REPO, run_suite

# Rules about the reference's own files that no harness contract can observe; the project's own
# tests check them, by name.
CHECKED_BY_PROJECT_TESTS = {
    "log.encodable": "tests/test_reliability.py::test_a_log_with_lone_surrogates_is_written_whole",
    "log.whole": "tests/test_reliability.py::test_a_log_that_cannot_be_written_keeps_the_old_file",
    "fs.msg.redirected": "tests/test_reliability.py::test_a_directory_swapped_after_the_fence_is_refused",
    # How the suite takes a harness's declaration: shown on fixtures that declare badly.
    "contract.lacks": "tests/test_capability_grain.py::test_a_lacked_method_makes_only_its_cases_not_applicable",
    "contract.declared": "tests/test_capability_grain.py::test_a_python_harness_missing_a_declared_method_stops_before_the_first_case",
    "proto.unknown": "tests/test_capability_grain.py::test_a_declared_method_answered_as_unknown_fails_every_case_in_one_line",
}


@pytest.fixture(scope="module")
def cited(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """Case ID → the rules it names, as the suite lists them."""
    done = run_suite("-q", "--conformance-list-cases", cwd=tmp_path_factory.mktemp("list"))
    assert done.returncode == 0, done.stdout
    rows = [line for line in done.stdout.splitlines() if re.match(r"^\| [A-Z]+-\d{3} \|", line)]
    return {row.split("|")[1].strip(): re.findall(r"`([^`]+)`", row.split("|")[3]) for row in rows}


def test_the_spec_ships_with_the_suite_and_states_its_version() -> None:
    assert spec_path().resolve() in (REPO / "SPEC.md", REPO / "conformance" / "SPEC.md")
    assert spec_version() == "2.14.0"
    assert len(rule_book()) >= 170


def test_every_rule_has_a_case(cited: dict[str, list[str]]) -> None:
    covered = {rule for rules in cited.values() for rule in rules}
    missing = sorted(set(rule_book()) - covered - set(CHECKED_BY_PROJECT_TESTS))
    assert missing == [], f"rules no case checks: {missing}"


def test_every_case_cites_rules_that_exist(cited: dict[str, list[str]]) -> None:
    unknown = {
        case: rule for case, rules in cited.items() for rule in rules if rule not in rule_book()
    }
    assert unknown == {}
    assert all(rules for rules in cited.values())


def test_rules_checked_by_the_projects_tests_name_real_tests() -> None:
    for rule, test in CHECKED_BY_PROJECT_TESTS.items():
        assert rule in rule_book()
        path, _, name = test.partition("::")
        assert f"def {name}(" in (REPO / path).read_text(encoding="utf-8"), test


def test_rule_ids_are_unique_and_parsed_from_their_own_block() -> None:
    rules = parse_rules(
        "## 1. A\n- {#a.one} First rule. More text.\n  continued {#a.two} second; mentions `a.one`.\n"
        "\n| {#a.three} | read | missing | CODE | `msg` |\n"
    )
    assert rules == {
        "a.one": Rule("a.one", "1", "First rule. More text. continued", False),
        "a.two": Rule("a.two", "1", "second; mentions `a.one`.", False),
        "a.three": Rule("a.three", "1", "read, missing: CODE `msg`", False),
    }
    with pytest.raises(ValueError, match=r"tags rule a\.one twice"):
        parse_rules("- {#a.one} x\n- {#a.one} y\n")


def test_a_recommended_rule_is_marked() -> None:
    assert rule_book()["fs.cas.processes"].recommended
    assert not rule_book()["fs.cas.one-winner"].recommended


def test_the_readme_names_the_spec_version(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"SPEC.md (version {spec_version()})" in readme
    done = run_suite("-q", "--conformance-case", "TAX-001", cwd=tmp_path)
    assert f"spec: {spec_version()}" in done.stdout
