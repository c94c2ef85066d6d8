"""Capabilities at the grain harnesses have (SPEC §6.2): a method lacked on purpose, codes on
tool results without the taxonomy methods, one pause point, and declarations checked first."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conformance.harness.contract import ContractError, parse_profile
from tests.suite import REPO, error_lines, fixture, outcomes, report, run_suite

NOT_APPLICABLE_WITHOUT_TO_ERROR = "not applicable: needs the to_error method (the harness lacks it)"


def _run(tmp_path: Path, *args: str) -> dict[str, str]:
    path = tmp_path / "report.json"
    done = run_suite(*args, "--conformance-report", str(path), cwd=REPO)
    assert done.returncode == 0, done.stdout[-3000:]
    return outcomes(report(path))


def _messages(tmp_path: Path) -> dict[str, str]:
    data = report(tmp_path / "report.json")
    cases = data["cases"]
    assert isinstance(cases, list)
    return {case["id"]: case.get("message") or "" for case in cases}


def test_a_lacked_method_makes_only_its_cases_not_applicable(tmp_path: Path) -> None:
    found = _run(tmp_path, "--harness", fixture("grain:LacksToError"), "-k", "TAX or PROP")
    lacking = {case for case, outcome in found.items() if outcome == "not-applicable"}
    assert lacking == {"TAX-007", "TAX-008", "PROP-004"}
    assert _messages(tmp_path)["TAX-008"] == NOT_APPLICABLE_WITHOUT_TO_ERROR
    assert {found[c] for c in found if c not in lacking} <= {"passed", "not-applicable"}
    assert found["TAX-001"] == found["TAX-028"] == "passed"


def test_a_python_harness_may_lack_a_native_method_by_its_python_name(tmp_path: Path) -> None:
    found = _run(tmp_path, "--harness", fixture("grain:LacksAdoptError"), "-k", "TAX")
    lacking = {case for case, outcome in found.items() if outcome == "not-applicable"}
    needs = {"native_roundtrip", "native_raise", "native_unrenderable"}
    messages = _messages(tmp_path)
    assert lacking, found
    for case in lacking:  # each names a protocol method adopt_error backs
        assert any(f"needs the {method} method" in messages[case] for method in needs), case
    assert "TAX-001" not in lacking  # native_repr needs only native_error: its case runs
    assert {found[c] for c in found if c not in lacking} <= {"passed"}


def test_a_python_harness_missing_a_declared_method_stops_before_the_first_case() -> None:
    done = run_suite("--harness", fixture("grain:HidesItsGap"), "-q", cwd=REPO)
    assert done.returncode == 4
    assert error_lines(done) == [
        'ERROR: harness "tests.fixtures.grain:HidesItsGap": describe declares the taxonomy '
        "capability, but the harness has no "
        "to_error() method (list it in describe.lacks if it is missing on purpose)"
    ]
    assert "passed" not in done.stdout


def test_a_missing_tools_method_is_never_advised_into_describe_lacks() -> None:
    from conformance.harness.contract import ContractError, parse_profile

    class NoClose:
        def open_workspace(self, root: str, options: object) -> str:
            return "s"

        def call_tool(self, session: str, name: str, arguments: object) -> object:
            return {}

    answer = {"name": "n", "version": "1", "language": "python", "capabilities": ["tools"]}
    with pytest.raises(ContractError) as raised:
        parse_profile(answer, "h", methods_of=NoClose())
    assert str(raised.value).endswith(
        "has no close_workspace() method (every harness implements it)"
    )


def test_lacks_naming_a_tools_method_is_one_line() -> None:
    done = run_suite("--harness", fixture("grain:LacksATool"), "-q", cwd=REPO)
    assert done.returncode == 4
    lines = error_lines(done)
    assert len(lines) == 1, lines
    assert "describe.lacks names 'call_tool'" in lines[0]


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ({"lacks": "to_error"}, "describe.lacks must be a list of method names"),
        ({"lacks": ["run_scenario"]}, "'run_scenario', which is not a method of a declared"),
        ({"options": {"pausePoints": ["later"]}}, "options.pausePoints must list values among"),
        ({"options": {"valueCauses": "some"}}, "options.valueCauses must be one of harness, all"),
    ],
)
def test_a_declaration_the_schema_forbids_names_the_field(
    answer: dict[str, object], problem: str
) -> None:
    described = {
        "name": "n",
        "version": "1",
        "language": "x",
        "capabilities": ["tools", "taxonomy"],
    }
    with pytest.raises(ContractError, match=r"^h: ") as caught:
        parse_profile({**described, **answer}, "h")
    assert problem in str(caught.value)
    assert "\n" not in str(caught.value)


def test_codes_on_results_are_judged_without_the_taxonomy_methods(tmp_path: Path) -> None:
    found = _run(tmp_path, "--harness", fixture("grain:CodesOnly"), "-k", "PRV or REM or TAX")
    assert found["PRV-013"] == "passed"
    assert all(found[c] == "not-applicable" for c in found if c.startswith("TAX-"))
    dropped = tmp_path / "dropped"
    dropped.mkdir()
    path = dropped / "report.json"
    done = run_suite("--harness", fixture("grain:CodesDropped"), "-k", "PRV-013",
                     "--conformance-report", str(path), cwd=REPO)  # fmt: skip
    assert done.returncode == 1
    assert "carried no structured error where" in _messages(dropped)["PRV-013"]


def test_a_loop_without_codes_is_judged_without_them(tmp_path: Path) -> None:
    # Its results carry no codes (SPEC §6.2), so its tool/result events have no error to copy:
    # the loop's cases and the pinned transcripts judge everything else.
    found = _run(tmp_path, "--harness", fixture("grain:LoopWithoutCodes"), "-k", "LOOP or SCN")
    assert found["LOOP-006"] == found["LOOP-010"] == found["LOOP-019"] == "passed"
    assert {found[c] for c in found if c.startswith("SCN-")} == {"passed"}, found


def test_a_loop_without_codes_is_an_unknown_tool_only_where_it_refuses_as_one(
    tmp_path: Path,
) -> None:
    # With probe: true its probe_echo fails in other words: the tool is there (LOOP-019 holds).
    found = _run(
        tmp_path, "--harness", fixture("grain:LoopWithoutCodesProbeFails"), "-k", "LOOP-019"
    )
    assert found == {"LOOP-019": "passed"}
    # It ignores probe: true, so the call is refused as it was without: LOOP-019 fails.
    path = tmp_path / "never.json"
    done = run_suite("--harness", fixture("grain:LoopWithoutCodesNeverProbes"), "-k", "LOOP-019",
                     "--conformance-report", str(path), cwd=REPO)  # fmt: skip
    assert done.returncode == 1
    cases = report(path)["cases"]
    assert isinstance(cases, list)
    message = str(cases[0]["message"])
    assert message.startswith(
        "probe_echo in a scenario with options {'probe': True} is an unknown tool was true where "
        "false was expected"
    ), message


def test_a_loop_without_codes_is_still_held_to_the_pinned_words(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    done = run_suite("--harness", fixture("grain:LoopWithoutCodesOwnWords"), "-k", "SCN",
                     "--conformance-report", str(path), cwd=REPO)  # fmt: skip
    assert done.returncode == 1
    found, messages = outcomes(report(path)), _messages(tmp_path)
    failed = sorted(case for case, outcome in found.items() if outcome == "failed")
    assert failed == ["SCN-006", "SCN-007"], found  # the two whose refusals say "not found"
    pinned = "; SPEC §5 {scenario.pinned}: each transcript of the pinned set is pinned"
    assert messages["SCN-006"] == (
        'fs-deleted-target: call_4 result[0]: the model saw "Error: cannot read '
        '\\"{{cwd}}/draft.txt\\": missing" where "Error: cannot read \\"{{cwd}}/draft.txt\\": '
        'not found" is pinned' + pinned
    )
    assert messages["SCN-007"] == (
        'fs-edit-not-found: call_2 result[0]: the model saw "Error: old_string was missing in '
        '\\"{{cwd}}/README.md\\"" where "Error: old_string was not found in '
        '\\"{{cwd}}/README.md\\"" is pinned' + pinned
    )


def test_a_harness_of_relative_paths_is_sent_no_absolute_one(tmp_path: Path) -> None:
    found = _run(tmp_path, "--harness", fixture("grain:RelativeOnly"), "-k", "SCN or SBX-002")
    absolute = {"SBX-002", "SCN-009"}  # SCN-009's script edits /nonexistent-…/escape.txt
    assert {found[c] for c in absolute} == {"not-applicable"}, found
    messages = _messages(tmp_path)
    assert messages["SCN-009"] == (
        "not applicable: needs paths any or absolute (the harness takes relative paths)"
    )
    assert {found[c] for c in found if c not in absolute} == {"passed"}, found


def test_each_pause_point_is_declared_on_its_own(tmp_path: Path) -> None:
    found = _run(tmp_path, "--harness", fixture("grain:StagedOnly"), "-k", "PUB")
    assert (found["PUB-002"], found["PUB-003"], found["PUB-005"]) == ("passed",) * 3
    assert found["PUB-004"] == "not-applicable"
    assert _messages(tmp_path)["PUB-004"] == "not applicable: needs pausePoints checked"


def test_a_harness_without_the_staged_point_is_never_asked_for_it(tmp_path: Path) -> None:
    # It refuses to arm a point it does not offer: a case arming it anyway would fail it.
    found = _run(tmp_path, "--harness", fixture("grain:CheckedOnly"), "-k", "PUB")
    staged = {"PUB-002", "PUB-003", "PUB-005"}
    assert {found[c] for c in staged} == {"not-applicable"}, found
    messages = _messages(tmp_path)
    assert {messages[c] for c in staged} == {"not applicable: needs pausePoints staged"}
    assert found["PUB-004"] == "passed"


@pytest.mark.parametrize(
    "harness",
    ["grain:WaitingNeverReached", "grain:PausesOfTwoZeroZero", "grain:DeclaresNoOptions"],
)
def test_the_waiting_point_only_speeds_a_race_up(tmp_path: Path, harness: str) -> None:
    # Listed but never reached, the races wait out their bound; not listed (the default before
    # 2.4.0), or no option declared at all, it is never armed, so a harness that refuses unknown
    # points is not failed for it.
    found = _run(tmp_path, "--harness", fixture(harness), "-k", "GRD-025 or GRD-026")
    assert found == {"GRD-025": "passed", "GRD-026": "passed"}


def test_the_races_arm_the_waiting_point_a_harness_offers(tmp_path: Path) -> None:
    # Offered, it is what lets GRD-025/026 go on at once instead of after their bound.
    armed = tmp_path / "armed.txt"
    done = run_suite("--harness", fixture("grain:RecordsArmed"), "-k", "GRD-025 or GRD-026",
                     cwd=tmp_path, env={"HC_ARMED_POINTS": str(armed)})  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    points = armed.read_text(encoding="utf-8").split()
    assert {"checked", "waiting"} <= set(points), points


def test_a_declared_method_answered_as_unknown_fails_every_case_in_one_line(tmp_path: Path) -> None:
    """The same line in each case, whichever met it first (a case replayed alone, or in the
    other half of a split run, reads as it does in the whole run)."""
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed, but CI must run the Node fixtures")
        pytest.skip("node is not installed")
    command = f"{node} {REPO / 'tests' / 'fixtures' / 'node_unknown_method.mjs'}"
    path = tmp_path / "report.json"
    done = run_suite("--harness-cmd", command, "-k", "TAX-001 or TAX-002 or TAX-010",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    messages = _messages(tmp_path)
    assert messages["TAX-001"].startswith(
        "ContractError: make_error: the harness declares the taxonomy capability but answered "
        "make_error as an unknown method; implement it, or list it in describe.lacks"
    )
    assert messages["TAX-002"] == messages["TAX-010"] == messages["TAX-001"]
