"""Root causes: the rule each call broke, failures grouped by defect, reports that lead with them."""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import cast

import pytest

from conformance import causes as causes_module
from conformance import scenarios
from conformance.causes import (
    CONSEQUENCES,
    DEVIATIONS,
    PAIR_RULES,
    RULES,
    SHAPE_RULES,
    SITUATIONS,
    SUBJECTS,
    Observations,
    carries_remedy,
    code_signature,
    final_newline_counted,
    group,
    loop_error_signature,
    scripted_divergence,
    secret_unredacted,
    state_of,
    subject_signature,
    text_shape,
    text_signature,
)
from conformance.harness.contract import Json, JsonObject
from conformance.report import Report, matrix, terminal
from conformance.report import markdown as markdown_report
from conformance.spec import Wording
from tests.suite import REPO, case_of, report, run_suite

OVERWRITE = "policy.write-intent · existing-read · refused-instead-of-accepted"
UNDO = "tool.changes-only-target · any · harness-dir-files"
CRLF = "fs.text.utf8 · existing-read · bytes-differ"


def _call(tool: str, situation: str, target: str = "a.txt", refused: bool = False) -> JsonObject:
    return {"tool": tool, "arguments": {}, "situation": situation, "target": target,
            "result": {"isError": refused}}  # fmt: skip


def _verdict(sig: str | None, call: int | None, level: str = "behaviour",
             rule: str | None = None, text: str = "v") -> JsonObject:  # fmt: skip
    verdict: JsonObject = {"level": level, "rule": rule or (sig or "").split(" · ")[0] or None,
                           "verdict": text}  # fmt: skip
    if sig is not None:
        verdict["signature"] = sig
    if call is not None:
        verdict["call"] = call
    return verdict


def _case(case_id: str, verdicts: list[JsonObject], calls: list[JsonObject]) -> JsonObject:
    return {"id": case_id, "outcome": "failed", "verdicts": verdicts, "calls": calls}


# -- grouping ----------------------------------------------------------------------------------


def test_a_reads_wrong_text_in_several_observation_states_is_one_cause() -> None:
    # A read that turns CRLF into LF shows it whether the session read the file before or not.
    unread, read = (
        f"read.lines · {s} · text-differs" for s in ("existing-unread", "existing-read")
    )
    cases = [
        _case("RD-002", [_verdict(unread, 0, "wording")], [_call("read", "existing-unread")]),
        _case("RD-003", [_verdict(read, 1, "wording")], [_call("read", "existing-unread"),
                                                         _call("read", "existing-read")]),
    ]  # fmt: skip
    assert [(c.signature, c.cases) for c in group(cases).causes] == [
        ("read.lines · any · text-differs", ["RD-002", "RD-003"])
    ]
    # seen in one situation only, it keeps its words (a re-read may be shown otherwise)
    assert [c.signature for c in group(cases[1:]).causes] == [read]


def test_a_read_that_takes_a_file_for_text_by_its_bytes_is_one_cause_in_any_situation() -> None:
    # A read that never sniffs for a NUL shows a binary file whatever the session saw of it.
    unread, changed = (
        f"fs.msg.binary · {s} · accepted-instead-of-refused"
        for s in ("existing-unread", "changed-since-read")
    )
    cases = [
        _case("PRV-006", [_verdict(unread, 0)], [_call("read", "existing-unread")]),
        _case("GRD-010", [_verdict(changed, 1)], [_call("read", "existing-unread"),
                                                  _call("read", "changed-since-read")]),
    ]  # fmt: skip
    causes = group(cases).causes
    assert [(c.signature, c.cases) for c in causes] == [
        ("fs.msg.binary · any · accepted-instead-of-refused", ["PRV-006", "GRD-010"])
    ]
    assert causes[0].words == "read shows a file whose first 8192 bytes hold a NUL byte"
    # seen in one situation only, it keeps that situation's words
    assert [c.signature for c in group(cases[1:]).causes] == [changed]
    # an edit looks at the whole file, a read at its first 8192 bytes: never one cause
    edit = "fs.msg.binary · existing-read · accepted-instead-of-refused"
    with_edit = [*cases, _case("PRV-008", [_verdict(edit, 1)], [_call("read", "existing-unread"),
                                                                _call("edit", "existing-read")])]  # fmt: skip
    assert [c.signature for c in group(with_edit).causes] == [
        "fs.msg.binary · any · accepted-instead-of-refused",
        edit,
    ]


def test_a_refused_text_file_in_two_situations_is_one_cause_in_its_own_words() -> None:
    read, changed = (
        f"fs.msg.binary · {s} · refused-instead-of-accepted"
        for s in ("existing-read", "changed-since-read")
    )
    cases = [
        _case("RD-002", [_verdict(changed, 1)], [_call("read", "existing-unread"),
                                                 _call("read", "changed-since-read", refused=True)]),
        _case("CON-003", [_verdict(read, 1)], [_call("write", "new-file"),
                                               _call("read", "existing-read", refused=True)]),
    ]  # fmt: skip
    causes = group(cases).causes
    assert [(c.signature, c.cases) for c in causes] == [
        ("fs.msg.binary · any · refused-instead-of-accepted", ["RD-002", "CON-003"])
    ]
    assert causes[0].words == "read refuses a file whose first 8192 bytes hold no NUL byte"


def test_a_rule_of_no_content_stays_apart_by_situation() -> None:
    # whether a file may be read does depend on what the session saw of it elsewhere
    cases = [
        _case(f"A-{n}", [_verdict(f"read.whole-file · {s} · accepted-instead-of-refused", 0)],
              [_call("read", s)])
        for n, s in enumerate(("existing-unread", "changed-since-read"))
    ]  # fmt: skip
    assert len(group(cases).causes) == 2


def test_a_refusal_in_the_words_for_a_file_that_is_not_text_names_their_rule() -> None:
    spec = Wording()
    assert spec.not_text_rule('Error: cannot read "/w/a b.txt": binary file', "read") == (
        "fs.msg.binary"
    )
    assert spec.not_text_rule('Error: cannot read "x": invalid UTF-8 text', "read") == (
        "fs.msg.invalid-utf8"
    )
    assert spec.not_text_rule('Error: cannot read "x": not found', "read") is None
    assert spec.not_text_rule('Error: cannot read "x": binary file, or so', "read") is None
    own = Wording({"fs.binary": "{rel} looks binary"})
    assert own.not_text_rule("Error: ws/a.txt looks binary", "read") == "fs.msg.binary"
    assert own.not_text_rule('Error: cannot read "x": binary file', "read") is None


def test_words_another_refusal_can_say_too_name_no_rule() -> None:
    # One plain sentence for every failed read: a refusal for a permission (a read-only file
    # opened for writing) is no file taken for binary, nor is its generic sentence for a size.
    own = Wording({
        "fs.binary": "Cannot read {p}", "fs.invalid_utf8": "Cannot read {p}",
        "fs.permission": "Cannot read {p}: permission denied", "fs.too_large": "Cannot read {p}",
    })  # fmt: skip
    assert own.not_text_rule("Error: Cannot read /w/a.txt: permission denied", "read") is None
    assert own.not_text_rule("Error: Cannot read /w/a.txt", "read") is None
    apart = Wording({"fs.binary": "Cannot read {p}", "fs.io": "Cannot read {p}: {reason}"})
    assert apart.not_text_rule("Error: Cannot read /w/a.txt: input/output error", "read") is None
    assert apart.not_text_rule("Error: Cannot read /w/a.txt", "read") == "fs.msg.binary"
    # the spec's own words for an I/O error hold any reason, "binary file" too: still binary
    spec = Wording()
    assert spec.not_text_rule('Error: cannot read "/w/a.txt": binary file', "read") == (
        "fs.msg.binary"
    )


def test_one_defect_in_many_cases_is_one_root_cause_led_by_its_first_case() -> None:
    cases = [
        _case("GRD-003", [_verdict(OVERWRITE, 1)], [_call("read", "existing-unread"),
                                                    _call("write", "existing-read", refused=True)]),
        _case("PUB-001", [_verdict(OVERWRITE, 1)], [_call("read", "existing-unread"),
                                                    _call("write", "existing-read", refused=True)]),
    ]  # fmt: skip
    causes = group(cases)
    assert [(c.signature, c.cases) for c in causes.causes] == [(OVERWRITE, ["GRD-003", "PUB-001"])]
    assert causes.causes[0].words == (
        "write of a file the session read (or wrote), unchanged since is refused"
    )
    assert (causes.note("GRD-003"), causes.note("PUB-001")) == ("", "also explained by GRD-003")


def test_two_defects_of_one_tool_never_merge() -> None:
    cases = [
        _case("PRV-019", [_verdict(UNDO, 0), _verdict(CRLF, 0)], [_call("edit", "existing-read")])
    ]
    assert [c.signature for c in group(cases).causes] == [UNDO, CRLF]


def test_a_refined_situation_joins_its_parent_only_when_the_run_shows_the_parent() -> None:
    alias = "policy.aliases · read-via-alias · refused-instead-of-accepted"
    alone = [
        _case("GRD-011", [_verdict(alias, 0)], [_call("write", "read-via-alias", refused=True)])
    ]
    assert [c.signature for c in group(alone).causes] == [alias]
    both = [_case("GRD-003", [_verdict(OVERWRITE, 0)], [_call("write", "existing-read", refused=True)]),
            *alone]  # fmt: skip
    causes = group(both)
    assert [(c.signature, c.cases) for c in causes.causes] == [(OVERWRITE, ["GRD-003", "GRD-011"])]


def test_a_refinement_of_a_refinement_joins_the_nearest_cause_the_run_shows() -> None:
    slash = "fs.resolve.display · trailing-slash · refused-instead-of-accepted"
    alone = [
        _case("GRD-020", [_verdict(slash, 0)], [_call("write", "trailing-slash", refused=True)])
    ]
    assert [c.signature for c in group(alone).causes] == [slash]
    # a harness that refuses every overwrite: the slash spelling's refusal is that defect too
    both = [_case("GRD-003", [_verdict(OVERWRITE, 0)], [_call("write", "existing-read", refused=True)]),
            *alone]  # fmt: skip
    assert [(c.signature, c.cases) for c in group(both).causes] == [
        (OVERWRITE, ["GRD-003", "GRD-020"])
    ]


def test_the_text_of_a_diverged_call_and_what_follows_on_its_file_are_that_cause() -> None:
    edit = "policy.edit-intent · existing-read · refused-instead-of-accepted"
    case = _case(
        "GRD-011",
        [
            _verdict(OVERWRITE, 0),
            _verdict("write.output · existing-read · text-differs", 0, level="wording"),
            _verdict(edit, 1),  # the edit finds the text the refused write should have put there
            _verdict(None, None, rule="fs.cas.one-winner"),  # the case's own check, after both
        ],
        [
            _call("write", "existing-read", refused=True),
            _call("edit", "existing-read", refused=True),
        ],
    )
    assert [(c.signature, c.cases) for c in group([case]).causes] == [(OVERWRITE, ["GRD-011"])]


def test_a_check_of_a_case_with_no_divergence_is_its_own_cause() -> None:
    causes = group([_case("SCN-004", [_verdict(None, None, rule="scenario.pinned")], [])])
    assert [(c.signature, c.words) for c in causes.causes] == [
        (
            "scenario.pinned · SCN-004 · check-failed",
            "SCN-004: its check of {scenario.pinned} fails",
        )
    ]


def test_an_answer_no_signature_fits_is_its_own_cause_in_plain_words() -> None:
    crash = "ContractError: call_tool('read'): result keys must be within [...] (got {'x': 1})"
    cases = [
        _case("RD-001", [_verdict(None, None, text=crash)], []),
        _case("RD-002", [_verdict(None, None, text="ValueError: something else")], []),
        {"id": "RD-003", "outcome": "failed", "message": "[setup] the harness died"},
    ]
    causes = group(cases)
    assert [(c.words, c.rule, c.cases) for c in causes.causes] == [
        (crash, None, ["RD-001"]),
        ("ValueError: something else", None, ["RD-002"]),
        ("the harness died", None, ["RD-003"]),  # its phase is the suite's word, not the harness's
    ]


def test_a_calls_structured_error_is_part_of_its_texts_cause() -> None:
    text = "marker.sandbox · outside-root · text-differs"
    case = _case("SBX-001", [_verdict(text, 0, level="wording"),
                             _verdict("sandbox.denied · outside-root · code-differs", 0, level="wording")],
                 [_call("write", "outside-root", refused=True)])  # fmt: skip
    assert [c.signature for c in group([case]).causes] == [text]


def test_a_scripted_call_is_judged_in_the_situation_a_replay_of_its_script_gives() -> None:
    script = scenarios.load("fs-overwrite-unread")
    ok, error = ["tool/result", "ok"], ["tool/result", "error"]
    expected = [["user/message"], error, ok, ok]
    call = scripted_divergence(script, [["user/message"], error, ok, error], expected)
    assert call is not None
    assert (call.tool, call.situation, call.expected) == ("write", "existing-read", "accepted")
    assert call.signature("scenario.pinned") == OVERWRITE
    first = scripted_divergence(script, [["user/message"], ok, ok, ok], expected)
    assert first is not None
    assert first.signature("scenario.pinned") == (
        "policy.write-intent · existing-unread · accepted-instead-of-refused"
    )
    assert scripted_divergence(script, [["user/message"], error], expected) is None


def test_a_scripted_calls_text_joins_the_one_wording_cause_its_call_shows_elsewhere() -> None:
    marker = "marker.sandbox · outside-root · text-differs"
    scripted = "scenario.pinned · outside-root · text-differs"
    direct = _case(
        "SBX-001",
        [_verdict(marker, 0, level="wording")],
        [_call("edit", "outside-root", refused=True)],
    )
    scenario = _case(
        "SCN-009",
        [_verdict(scripted, 0, level="wording")],
        [_call("edit", "outside-root", refused=True)],
    )
    causes = group([direct, scenario])
    assert [(c.signature, c.cases) for c in causes.causes] == [(marker, ["SBX-001", "SCN-009"])]
    other = "sandbox.denied · outside-root · text-differs"  # two candidates: no guess
    second = _case(
        "SBX-002",
        [_verdict(other, 0, level="wording")],
        [_call("edit", "outside-root", refused=True)],
    )
    assert [c.signature for c in group([direct, second, scenario]).causes] == [
        marker,
        other,
        scripted,
    ]


def test_a_scenario_for_an_absolute_harness_is_sent_absolute_and_compared_as_written() -> None:
    script = scenarios.load("fs-sandbox-denied")
    sent = scenarios.spelled(script, "/w/ws")
    paths = [c["arguments"]["file_path"] for s in sent["steps"] for c in s.get("tool_calls", [])]
    assert paths == [
        "/w/outside.txt",
        "/nonexistent-harness-conformance/escape.txt",
        "/w/ws/made-inside.txt",
    ]
    records: list[JsonObject] = [
        {"type": "assistant/message", "data": {"content": [
            {"type": "tool_use", "id": "c1", "input": {"file_path": "/w/outside.txt", "content": "x"}}]}},
        {"type": "tool/call", "data": {"arguments": '{"file_path":"/w/outside.txt","content":"x"}'}},
        {"type": "tool/result", "data": {"content": [{"type": "text", "text": "/w/outside.txt"}]}},
    ]  # fmt: skip
    back = scenarios.unspelled(records, sent, script)
    assert back[0]["data"]["content"][0]["input"]["file_path"] == "../outside.txt"
    assert back[1]["data"]["arguments"] == '{"file_path":"../outside.txt","content":"x"}'
    assert back[2] == records[2]  # what the harness wrote itself is kept


def test_a_refusal_the_case_expected_never_joins_a_wrong_refusal() -> None:
    # deepagents refuses "~/b.txt" wrongly (RD-019) and, rightly, a fractional offset (REG-011,
    # call 0); REG-011's own defect (a boolean limit accepted, call 1) stays its own cause.
    tilde = "fs.resolve.display · existing-unread · refused-instead-of-accepted"
    lax = "args.before-run · existing-unread · accepted-instead-of-refused"
    expected_refusal = {**_call("read", "existing-unread", refused=True), "expected": "refused"}
    cases = [
        _case("RD-019", [_verdict(tilde, 0)], [_call("read", "existing-unread", refused=True)]),
        _case("REG-011", [_verdict(lax, 1)], [expected_refusal, _call("read", "existing-unread")]),
    ]
    causes = group(cases)
    assert [(c.signature, c.cases) for c in causes.causes] == [
        (tilde, ["RD-019"]),
        (lax, ["REG-011"]),
    ]


def test_one_error_a_harness_gives_for_every_call_is_one_cause() -> None:
    said = "RuntimeError: the server logs onto stdout"
    cases = [
        _case(case, [_verdict(None, None, text=f"HarnessCallError: {call} failed in the harness: {said}\nline 2")], [])
        for case, call in (("RD-001", 'call_tool("read", {"file_path": "a"})'),
                           ("RD-002", 'call_tool("write", {"file_path": "b", "content": ")"})'))
    ]  # fmt: skip
    # A case whose set-up call failed so says it in its message: the same cause.
    setup = (
        f'[setup] DEL-001: call_tool("read", {{"file_path": "d"}}) failed in the harness: {said}'
    )
    cases.append({"id": "DEL-001", "outcome": "failed", "message": setup})
    causes = group(cases)
    assert [(c.words, c.cases) for c in causes.causes] == [
        (f"HarnessCallError: a call failed in the harness: {said}", ["RD-001", "RD-002", "DEL-001"])
    ]


def test_words_the_suite_adds_to_an_error_never_make_it_another_cause() -> None:
    # The case's ID, the call's arguments, which call found the harness dead and the class of
    # the error are the suite's words: a harness that hung once is not 88 distinct defects.
    dead = "the harness is dead: 3 calls in a row timed out"
    slow = "did not answer within 2.0 s (--conformance-timeout); it wrote nothing to stderr"
    messages = {
        "REM-009": f"[setup] REM-009: open_workspace not made: {dead}",
        "REM-010": f"[setup] REM-010: open_workspace not made: {dead}",
        "RD-001": f'HarnessDead: call_tool("read", {{"file_path": "a.txt"}}) not made: {dead}',
        "TAX-027": f"HarnessDead: batch of 5 requests not made: {dead}",
        "GRD-001": f'HarnessCallError: call_tool("write", {{"file_path": "a", "content": ")"}}) {slow}',
        "GRD-002": f'HarnessDead: call_tool("write", {{"file_path": "b.txt"}}) {slow}',
        "DEL-001": f'[setup] DEL-001: call_tool("write", {{"file_path": "c"}}) {slow}',
        "PRV-004": f"[setup] PRV-004: open_workspace {slow}",
        "PRV-005": f"HarnessCallError: open_workspace {slow}",
        "PRV-006": "[teardown] conformance.harness.contract.ContractError: close_workspace: x",
        "PRV-007": "[teardown] conformance.harness.contract.ContractError: close_workspace: x",
    }
    cases = [{"id": case, "outcome": "failed", "message": text} for case, text in messages.items()]
    causes = group(cases)
    assert [(c.words, c.cases) for c in causes.causes] == [
        (f"HarnessDead: a call not made: {dead}", ["REM-009", "REM-010", "RD-001", "TAX-027"]),
        (f'HarnessCallError: call_tool("write", …) {slow}', ["GRD-001", "GRD-002", "DEL-001"]),
        (f"HarnessCallError: open_workspace {slow}", ["PRV-004", "PRV-005"]),
        ("ContractError: close_workspace: x", ["PRV-006", "PRV-007"]),
    ]


def test_an_answer_no_rule_names_weighs_what_its_cases_weigh() -> None:
    crash = 'HarnessCallError: call_tool("write", …) failed in the harness: RuntimeError: x'
    soft = {"id": "PUB-010", "outcome": "recommended-fail", "message": crash}
    hard = {"id": "PUB-001", "outcome": "failed", "message": crash.replace("x", "y")}
    causes = group([soft, hard])
    assert [(c.cases, c.required) for c in causes.causes] == [
        (["PUB-010"], False),
        (["PUB-001"], True),
    ]


def test_the_rule_table_speaks_only_in_the_vocabulary() -> None:
    assert {situation for _, situation, _ in RULES} <= set(SITUATIONS)
    assert all(parent is None or parent in SITUATIONS for parent, _ in SITUATIONS.values())
    spec = (REPO / "SPEC.md").read_text(encoding="utf-8")
    doc = (REPO / "docs" / "root-causes.md").read_text(encoding="utf-8")
    for word in SITUATIONS:
        assert f"`{word}`" in spec, word
        assert f"`{word}`" in doc, word
    for word in (*SHAPE_RULES, *SUBJECTS):
        assert f"`{word}`" in doc, word
    assert set(SHAPE_RULES) <= set(DEVIATIONS)


# -- wording: the shape of a wrong text, the pair of a wrong code --------------------------------

REMEDIES = Wording().remedies()
UNREAD = 'Error: cannot overwrite existing "/w/a.txt" without reading it first'
READ_IT = " — read the file, then retry"


def _wording_case(case_id: str, sig: str, tool: str = "write",
                  situation: str = "existing-unread") -> JsonObject:  # fmt: skip
    return _case(case_id, [_verdict(sig, 0, level="wording", rule="remedy.texts")],
                 [_call(tool, situation, refused=True)])  # fmt: skip


def test_a_texts_shape_is_named_from_a_small_fixed_vocabulary() -> None:
    remedied = UNREAD + READ_IT
    assert text_shape(remedied + READ_IT, remedied, REMEDIES) == "remedy-extra"
    assert text_shape(UNREAD + READ_IT, UNREAD, REMEDIES) == "remedy-extra"  # a provider's own
    assert text_shape(UNREAD, remedied, REMEDIES) == "remedy-missing"
    violations = 'Error: invalid arguments: missing required property "a"; "b" must be a string'
    reordered = 'Error: invalid arguments: "b" must be a string; missing required property "a"'
    assert text_shape(reordered, violations, REMEDIES) == "parts-reordered"
    assert text_shape(remedied + " please", remedied, REMEDIES) == "text-differs"
    assert text_shape("Error: no such file", remedied, REMEDIES) == "text-differs"


def test_one_wrong_text_shape_is_one_cause_across_rules_tools_and_situations() -> None:
    remedied = UNREAD + READ_IT
    twice = text_signature("fs.msg.exists-unread", "existing-unread", remedied + READ_IT, remedied,
                           REMEDIES)  # fmt: skip
    stale = 'Error: cannot edit "/w/a.txt": file changed since it was read'
    again = text_signature("policy.dead-end", "changed-since-read",
                           stale + REMEDIES["FS_STALE_VERSION"] * 2,
                           stale + REMEDIES["FS_STALE_VERSION"], REMEDIES)  # fmt: skip
    assert twice == again == "remedy.once · any · remedy-extra"
    causes = group([_wording_case("REM-012", twice),
                    _wording_case("DEL-005", again, "edit", "changed-since-read")])  # fmt: skip
    assert [(c.signature, c.cases, c.tools) for c in causes.causes] == [
        (twice, ["REM-012", "DEL-005"], ["write", "edit"])
    ]
    assert causes.causes[0].words == (
        "write or edit shows the model the recovery instruction once more than the spec says"
    )


def test_two_different_wrong_texts_stay_two_causes() -> None:
    remedied = UNREAD + READ_IT
    # one harness: the remedy appended twice on a write, and other words on a read
    twice = text_signature("remedy.texts", "existing-unread", remedied + READ_IT, remedied,
                           REMEDIES)  # fmt: skip
    other = text_signature("fs.msg.read-missing", "new-file", 'Error: "/w/x" does not exist',
                           'Error: cannot read "/w/x": not found', REMEDIES)  # fmt: skip
    # and two texts of other words under one rule and situation keep that rule and situation
    words = text_signature("remedy.texts", "existing-unread", "Error: refused", remedied, REMEDIES)
    missing = text_signature("remedy.texts", "existing-unread", UNREAD, remedied, REMEDIES)
    assert len({twice, other, words, missing}) == 4
    causes = group([_wording_case("REM-012", twice),
                    _wording_case("RD-011", other, "read", "new-file"),
                    _wording_case("GRD-001", words), _wording_case("GRD-012", missing)])  # fmt: skip
    assert [c.signature for c in causes.causes] == [
        "remedy.once · any · remedy-extra",
        "fs.msg.read-missing · new-file · text-differs",
        "remedy.texts · existing-unread · text-differs",
        "remedy.texts · any · remedy-missing",
    ]


def test_a_wrong_code_is_keyed_by_the_pair_and_its_rule_comes_from_the_pair() -> None:
    observed, stale = ("FsError", "FS_NOT_OBSERVED"), ("FsError", "FS_STALE_VERSION")
    plain = code_signature("fs-error.codes", None, "probe_raise", ("ValueError", "UNKNOWN"), None)
    assert plain == "tool.error.plain · none→UNKNOWN · code-differs"
    assert code_signature("fs.msg.changed", "changed-since-read", "write", None, stale) == (
        "tool.error.structured · FS_STALE_VERSION→none · code-differs"
    )
    # the text shows the remedy ran for the expected code: the remedied error's code changed
    changed = code_signature("policy.edit-intent", "new-file", "edit", stale, observed,
                             remedied=True)  # fmt: skip
    assert changed == "remedy.code · FS_NOT_OBSERVED→FS_STALE_VERSION · code-differs"
    # a refusal of another kind altogether (its text is another code's) keeps the case's rule
    assert code_signature("policy.failed-read", "stale-after-failed-read", "write", observed,
                          stale) == "policy.failed-read · stale-after-failed-read · code-differs"  # fmt: skip
    assert code_signature("err.name", "any", "read", ("HarnessError", "X"), ("FsError", "X")) == (
        "err.name · any · code-differs"
    )
    assert carries_remedy(UNREAD + READ_IT, "FS_NOT_OBSERVED", REMEDIES)
    assert not carries_remedy(UNREAD + READ_IT, "FS_STALE_VERSION", REMEDIES)
    lost = loop_error_signature("read", None, {"name": "FsError", "code": "FS_NOT_FOUND"}, "x")
    assert lost == "loop.result-error · error→none · code-differs"
    assert loop_error_signature("read", {"name": "A", "code": "B"}, {"code": "B", "name": "A"},
                                "x") is None  # fmt: skip
    causes = group([_wording_case("REG-003", plain, "probe_raise", "any")])
    assert causes.causes[0].words == (
        "probe_raise carries UNKNOWN where no structured error is expected"
    )


def test_a_checks_subject_is_one_cause_across_cases_and_unknown_subjects_are_refused() -> None:
    sig = subject_signature("remedy.passthrough", "passthrough-copied")
    cases = [_case(c, [_verdict(sig, None)], []) for c in ("REM-006", "REM-007", "PROP-002")]
    causes = group(cases)
    assert [(c.signature, c.cases, c.words) for c in causes.causes] == [
        (sig, ["REM-006", "REM-007", "PROP-002"], SUBJECTS["passthrough-copied"])
    ]
    with pytest.raises(KeyError, match="no subject"):
        subject_signature("remedy.passthrough", "REM-006")


def test_what_a_failed_read_leads_to_is_one_behaviour() -> None:
    forgot = "policy.failed-read · after-failed-read · refused-instead-of-accepted"
    unread = "policy.failed-read · stale-after-failed-read · code-differs"
    recreated = "policy.dead-end · deleted-after-failed-read · accepted-instead-of-refused"
    worded = "fs.version.changes · stale-after-failed-read · text-differs"
    cases = [
        _case("GRD-009", [_verdict(forgot, 1)], [_call("read", "existing-read", refused=True),
                                                 _call("write", "after-failed-read", refused=True)]),
        _case("GRD-010", [_verdict(unread, 0, level="wording")],
              [_call("write", "stale-after-failed-read", refused=True)]),
        _case("DEL-004", [_verdict(recreated, 0)], [_call("write", "deleted-after-failed-read")]),
        _case("STM-001", [_verdict(worded, 0, level="wording")],
              [_call("edit", "stale-after-failed-read", refused=True)]),
    ]  # fmt: skip
    causes = group(cases)
    assert [(c.signature, c.cases) for c in causes.causes] == [
        (forgot, ["GRD-009", "GRD-010", "DEL-004", "STM-001"])
    ]
    # without a behaviour deviation there, two wrong texts stay two causes
    assert len(group(cases[1:2] + cases[3:]).causes) == 2
    # a harness that recreates every deleted file: the failed read is not what it shows
    dead = "policy.dead-end · deleted-since-read · accepted-instead-of-refused"
    both = [_case("DEL-001", [_verdict(dead, 0)], [_call("write", "deleted-since-read")]),
            cases[2]]  # fmt: skip
    assert [(c.signature, c.cases) for c in group(both).causes] == [(dead, ["DEL-001", "DEL-004"])]


LISTING = "<path>/w/a.txt</path>\n<type>file</type>\n<content>\n{}\n</content>"


def test_a_read_that_counts_the_final_newline_as_a_line_is_one_shape() -> None:
    def read(body: str) -> str:
        return LISTING.format(body)

    whole = read("1: a\n2: b\n\n(End of file - total 2 lines)")
    assert final_newline_counted(read("1: a\n2: b\n3: \n\n(End of file - total 3 lines)"), whole)
    window = read("3: c\n4: d\n\n(Showing lines 3-4 of 10. Use offset=5 to continue.)")
    assert final_newline_counted(window.replace("of 10", "of 11"), window)
    end = read("10: j\n\n(End of file - total 10 lines)")
    more = read("10: j\n\n(Showing lines 10-10 of 11. Use offset=11 to continue.)")
    assert final_newline_counted(more, end)
    out_of_range = 'Error: offset 3 is out of range for "/w/a.txt" (2 lines)'
    assert final_newline_counted(read("3: \n\n(End of file - total 3 lines)"), out_of_range)
    assert final_newline_counted(out_of_range.replace("3 is", "4 is").replace("(2", "(3"),
                                 out_of_range.replace("3 is", "4 is"))  # fmt: skip
    # any other difference is not this shape
    assert not final_newline_counted(whole, whole)
    assert not final_newline_counted(
        read("1: a\n2: B\n3: \n\n(End of file - total 3 lines)"), whole
    )
    assert not final_newline_counted(read("1: a\n\n(End of file - total 1 lines)"), whole)
    assert not final_newline_counted(read("1: a\n2: b\n\n(End of file - total 5 lines)"), whole)
    assert text_shape(window.replace("of 10", "of 11"), window, REMEDIES) == "final-newline-counted"
    # its text explains the call's behaviour too: an offset past the end accepted is that cause
    shape = "read.lines · any · final-newline-counted"
    accepted = "read.offset-range · existing-unread · accepted-instead-of-refused"
    cases = [
        _case("RD-001", [_verdict(shape, 0, level="wording")], [_call("read", "existing-unread")]),
        _case("RD-005", [_verdict(accepted, 0), _verdict(shape, 0, level="wording")],
              [_call("read", "existing-unread")]),
    ]  # fmt: skip
    assert [(c.signature, c.cases) for c in group(cases).causes] == [(shape, ["RD-001", "RD-005"])]


def test_a_wrong_code_that_names_its_defect_is_the_cause_of_its_calls_text() -> None:
    denied, observed = ("FsError", "FS_SANDBOX_DENIED"), ("FsError", "FS_NOT_OBSERVED")
    named = code_signature("sandbox.denied", "outside-root", "edit", observed, denied)
    assert named == "sandbox.before-policy · FS_SANDBOX_DENIED→FS_NOT_OBSERVED · code-differs"
    assert PAIR_RULES[("FS_SANDBOX_DENIED", "FS_NOT_OBSERVED")] == "sandbox.before-policy"
    # a read is never fenced: the pair names nothing there
    assert code_signature("x", "any", "read", observed, denied) == "x · any · code-differs"
    text = "marker.sandbox · outside-root · text-differs"
    cases = [
        _case("REM-017", [_verdict(code_signature("marker.sandbox", "any", "edit", observed, denied),
                                   0, level="wording")], [_call("edit", "any", refused=True)]),
        _case("SBX-001", [_verdict(text, 0, level="wording"), _verdict(named, 0, level="wording")],
              [_call("edit", "outside-root", refused=True)]),
    ]  # fmt: skip
    assert [(c.signature, c.cases) for c in group(cases).causes] == [
        (named, ["REM-017", "SBX-001"])
    ]


def test_a_cause_another_explains_joins_it_only_when_the_run_shows_both() -> None:
    assert all(sig not in CONSEQUENCES for _, (sig, _) in CONSEQUENCES.items())
    uncoded = subject_signature("err.to-error.value", "to-error-uncoded")
    failure = subject_signature("loop.failure-value", "failure-uncoded")
    assert CONSEQUENCES[failure][0] == uncoded
    both = [_case("TAX-008", [_verdict(uncoded, None)], []),
            _case("LOOP-007", [_verdict(failure, None)], [])]  # fmt: skip
    assert [(c.signature, c.cases) for c in group(both).causes] == [
        (uncoded, ["TAX-008", "LOOP-007"])
    ]
    assert [c.signature for c in group(both[1:]).causes] == [failure]


def test_a_secret_found_as_planted_is_one_cause_in_every_check() -> None:
    sig = secret_unredacted(True)
    assert sig == "secret.redact.everywhere · secret-unredacted · check-failed"
    assert secret_unredacted(False) is None
    cases = [_case(c, [_verdict(sig, None)], []) for c in ("SEC-001", "SEC-006", "SEC-007")]
    assert [(c.signature, c.cases) for c in group(cases).causes] == [
        (sig, ["SEC-001", "SEC-006", "SEC-007"])
    ]


# -- the situation a call meets ------------------------------------------------------------------


def test_the_situation_follows_the_sessions_observations(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "outside").mkdir()
    seen = Observations(str(root), {})
    assert seen.situation("write", "a.txt") == "new-file"
    (root / "a.txt").write_text("one\n")
    assert seen.situation("write", "a.txt") == "existing-unread"
    seen.after("read", "a.txt", failed=False)
    assert seen.situation("write", "a.txt") == "existing-read"
    os.symlink("a.txt", root / "alias.txt")
    assert seen.situation("edit", "alias.txt") == "read-via-alias"
    assert seen.situation("read", "sub/../a.txt") == "spelled-with-dotdot"
    seen.after("read", "a.txt", failed=True)
    assert seen.situation("write", "a.txt") == "after-failed-read"
    seen.after("read", "a.txt", failed=False)
    before = os.stat(root / "a.txt")
    (root / "a.txt").write_text("two\n")
    os.utime(root / "a.txt", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert seen.situation("write", "a.txt") == "rewritten-same-size"
    (root / "a.txt").write_text("longer now\n")
    assert seen.situation("write", "a.txt") == "changed-since-read"
    (root / "a.txt").unlink()
    assert seen.situation("write", "a.txt") == "deleted-since-read"
    seen.after("read", "a.txt", failed=True)
    assert seen.situation("write", "a.txt") == "deleted-after-failed-read"
    assert seen.situation("write", "../outside/x") == "outside-root"
    os.symlink(tmp_path / "outside", root / "link")
    assert seen.situation("write", "link/x") == "symlink-outside"
    assert Observations(str(root), {"policy": False}).situation("edit", "b.txt") == "unguarded"
    assert state_of(str(root / "missing")) is None


# -- every report leads with the root causes -------------------------------------------------------


def _report() -> Report:
    rep = Report(suite={"name": "harness-conformance", "version": "9"}, spec="2.0.0")
    rep.harness = {"name": "h", "version": "1", "language": "python", "capabilities": ["tools"]}
    for case_id in ("GRD-003", "PUB-001"):
        rep.add(case_id, "failed", "write of \"a.txt\" refused", {
            "levels": {"behaviour": "failed", "wording": "passed"},
            "verdicts": [_verdict(OVERWRITE, 1, text='write of "a.txt" refused')],
            "calls": [_call("read", "existing-unread"), _call("write", "existing-read", refused=True)],
        })  # fmt: skip
    rep.add("GRD-002", "passed", None, {"levels": {"behaviour": "passed", "wording": "passed"}})
    return rep


LEAD = (
    "1. write of a file the session read (or wrote), unchanged since is refused — "
    "{policy.write-intent} required — GRD-003, PUB-001"
)


def test_the_terminal_summary_leads_with_root_causes() -> None:
    out = terminal.lines(_report())
    start = out.index("root causes: 1 distinct defect in 2 failed cases")
    assert out[start + 1] == f"  {LEAD}"
    assert start < next(i for i, line in enumerate(out) if line.startswith("area"))
    assert "  PUB-001   also explained by GRD-003" in out
    assert '  GRD-003   write of "a.txt" refused' in out


def test_a_recommended_rules_failure_is_not_counted_as_a_failed_case() -> None:
    # the area table counts it apart (it never fails a run), so the root causes' line must too
    rep = _report()
    rep.cases["PUB-001"].outcome = "recommended-fail"
    out = terminal.lines(rep)
    assert "root causes: 1 distinct defect in 1 failed case and 1 recommended-fail case" in out
    rep.cases["GRD-003"].outcome = "recommended-fail"
    assert "root causes: 1 distinct defect in 2 recommended-fail cases" in terminal.lines(rep)
    heading = "### Root causes: 1 distinct defect in 2 recommended-fail cases"
    assert heading in markdown_report.render(rep)


def test_the_markdown_summary_leads_with_root_causes() -> None:
    text = markdown_report.render(_report())
    heading = "### Root causes: 1 distinct defect in 2 failed cases"
    assert f"{heading}\n\n{LEAD.replace('{policy.write-intent}', '`policy.write-intent`')}" in text
    assert text.index(heading) < text.index("| area |")
    assert "- **PUB-001** () — also explained by GRD-003" in text


def test_the_json_report_leads_with_root_causes() -> None:
    data = _report().to_json()
    assert list(data)[:6] == ["suite", "spec", "harness", "level", "complete", "rootCauses"]
    assert data["rootCauses"] == [{
        "signature": OVERWRITE,
        "words": "write of a file the session read (or wrote), unchanged since is refused",
        "rule": "policy.write-intent",
        "required": True,
        "cases": ["GRD-003", "PUB-001"],
    }]  # fmt: skip
    by_id = {case["id"]: case for case in data["cases"]}
    assert by_id["PUB-001"]["alsoExplainedBy"] == ["GRD-003"]
    assert "alsoExplainedBy" not in by_id["GRD-003"]


def test_the_matrix_leads_with_root_causes() -> None:
    page = matrix.render([json.loads(json.dumps(_report().to_json()))])
    row = page.index('<tbody class="causes"><tr><th scope="row"><b>root causes</b>')
    assert row < page.index('<tbody class="total">')
    assert (
        '<summary>✗ 1 defect</summary><ol class="causes"><li>write of a file the session read '
        '(or wrote), unchanged since is refused <span class="mono">{policy.write-intent}</span> '
        "required — GRD-003, PUB-001</li></ol>"
    ) in page


# -- proven on harness shapes nobody here wrote ----------------------------------------------------

# fixture → the root causes its summary must name, each exactly once, and nothing else
FIXTURES: dict[str, set[str]] = {
    "never_overwrites": {OVERWRITE},
    "undo_copies": {UNDO},
    "crlf_on_edit": {CRLF},
    "edit_two_defects": {UNDO, CRLF},
    "loses_concurrent_edits": {
        "fs.version.changes · changed-since-read · accepted-instead-of-refused",
        # its read-modify-write also follows a directory swapped for a symlink (PUB-004)
        "fs.publish.no-redirect · existing-read · refused-and-changed",
    },
    "absolute_no_dotdot": {
        "fs.resolve.display · spelled-with-dotdot · refused-instead-of-accepted"
    },
    "fences_reads": {"sandbox.reads · outside-root · refused-instead-of-accepted"},
    # no NUL sniff on read: a binary file shown whether read before or not, in four cases
    "no_nul_sniff": {"fs.msg.binary · any · accepted-instead-of-refused"},
    # a control character taken for binary: CON-003's wide text and RD-002's \v, one defect
    "sniffs_control_bytes": {"fs.msg.binary · any · refused-instead-of-accepted"},
    # its own words for a missing file, met by five cases under three headlines (a read of a
    # file deleted since read among them): one defect
    "own_missing_words": {"fs.msg.read-missing · new-file · text-differs"},
    # its own words for the policy's refusal of an unread edit, recovery kept: the policy's
    # rule in each situation an unread edit meets, never {remedy.where}
    "own_unread_words": {
        "policy.edit-intent · existing-unread · text-differs",
        "policy.edit-intent · new-file · text-differs",
    },
}


@pytest.mark.parametrize(
    ("harness", "rule"),
    [
        ("sniffs_control_bytes", "fs.msg.binary"),
        ("reads_at_most", "fs.msg.too-large"),
        # a size limit of its own, refused as an I/O error: no binary sniff, by its own code
        ("refuses_big_reads", "fs.msg.os-error"),
    ],
)
def test_con_003_names_the_rule_of_a_refused_read_not_the_framing(
    harness: str, rule: str, tmp_path: Path
) -> None:
    # A refusal that came back whole is the harness refusing the file: its text taken for
    # binary, or a size limit nobody configured. The line framing ({proto.lines}) held.
    path = tmp_path / "report.json"
    done = run_suite("-q", "--harness", f"tests.fixtures.{harness}:harness",
                     "--conformance-case", "CON-003", "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    entry = case_of(report(path), "CON-003")
    assert entry["outcome"] == "failed", done.stdout[-2000:]
    assert [(v["rule"], v["signature"]) for v in entry["verdicts"]] == [  # type: ignore[attr-defined]
        (rule, f"{rule} · existing-read · refused-instead-of-accepted")
    ]


# A race the suite cannot drive: the fixture offers no pause point, so GRD-025 races its two
# edits ten times at once and shows the lost edit only in the runs where the scheduler let the
# two overlap. Such a cause may be shown, never required, and nothing else may be.
RACED: dict[str, set[str]] = {
    "loses_concurrent_edits": {"fs.cas.one-winner · GRD-025 · check-failed"},
}


@pytest.fixture(scope="module")
def fixture_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, JsonObject]]:
    """Run the suite once on every fixture (two at a time): its output and JSON report."""
    workdirs = {name: tmp_path_factory.mktemp(name) for name in FIXTURES}

    def run(name: str) -> tuple[str, tuple[str, JsonObject]]:
        path = workdirs[name] / "report.json"
        done = run_suite("-q", "--harness", f"tests.fixtures.{name}:harness",
                         "--conformance-report", str(path), cwd=workdirs[name], profile="triage")  # fmt: skip
        data = report(path) if path.exists() else {}
        return name, (done.stdout + done.stderr, data)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(run, FIXTURES))


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_each_fixture_shows_exactly_its_root_causes(
    name: str, fixture_runs: dict[str, tuple[str, JsonObject]]
) -> None:
    output, data = fixture_runs[name]
    causes = data.get("rootCauses")
    assert isinstance(causes, list), output[-3000:]
    shown = [str(cause["signature"]) for cause in causes]
    assert len(shown) == len(set(shown)), shown
    assert set(shown) - RACED.get(name, set()) == FIXTURES[name], shown
    for cause in causes:  # each is named once in the summary, with its words and rule
        line = f"{cause['words']} — {{{cause['rule']}}}"
        assert sum(line in text for text in output.splitlines()) == 1, line
    assert f"root causes: {len(shown)} distinct defect" in output


def test_a_recommended_fail_case_is_named_by_its_first_verdict(
    fixture_runs: dict[str, tuple[str, JsonObject]],
) -> None:
    # As a failed case is: "PUB-010: 1 violation (behaviour first)" said nothing of what failed.
    output, data = fixture_runs["never_overwrites"]
    soft = [c for c in cast(list[JsonObject], data["cases"]) if c["outcome"] == "recommended-fail"]
    assert soft, output[-3000:]
    for case in soft:
        first = cast(list[JsonObject], case["verdicts"])[0]["verdict"]
        assert case["message"] == first
        assert f"  {case['id']}   {str(first)[:60]}" in output
    section = output.split("recommended (a failure here never fails the run):\n", 1)[1]
    listed = section.split("\n\n", 1)[0].splitlines()
    assert listed, output[-3000:]
    assert not any("violation" in line for line in listed), listed
    # Every case is in one column of the area table (a recommended failure under xfail).
    total = next(line for line in output.splitlines() if line.startswith("total "))
    assert sum(int(cell) for cell in total.split()[1:7]) == len(cast(list[Json], data["cases"]))


def test_a_case_failed_in_its_teardown_is_a_defect_and_a_declared_one_passing_is_not() -> None:
    # Both fail the run with every level passed: only the message tells them apart.
    passed = {"behaviour": "passed", "wording": "passed"}
    teardown = {"id": "RD-001", "outcome": "failed", "levels": passed,
                "message": "close_workspace: the harness answered it as an unknown method"}  # fmt: skip
    declared = {"id": "RD-002", "outcome": "failed", "levels": passed,
                "message": f"[XPASS(strict)] RD-002 {causes_module.PASSES_AS_DECLARED}: remove it"}  # fmt: skip
    assert causes_module.at_fault(teardown)
    assert not causes_module.at_fault(declared)


def test_a_verdict_in_words_the_harness_chose_is_no_declared_pass() -> None:
    # A file named in the words of a declared pass, left by a write: a defect all the same
    # (it vanished from the root causes and the baseline).
    failed = {"behaviour": "failed", "wording": "passed"}
    named = {"id": "GRD-001", "outcome": "failed", "levels": failed,
             "message": f'write of "a.txt" refused, yet "{causes_module.PASSES_AS_DECLARED}" '
                        'created (1 bytes: "x"); SPEC §2.1 {tool.changes-only-target}'}  # fmt: skip
    assert causes_module.at_fault(named)
    assert causes_module.group([named]).failed == 1
    # Nor does pytest's lead make one, where a level failed.
    led = {**named, "message": f"[XPASS(strict)] GRD-001 {causes_module.PASSES_AS_DECLARED}: x"}
    assert causes_module.at_fault(led)
