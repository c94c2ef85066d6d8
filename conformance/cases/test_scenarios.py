"""SPEC §5: the pinned scenarios, run through the harness's real loop and compared with snapshots.

Behaviour is judged against the suite's normative transcripts (the sequence of events, which
tools ran, which results were errors, how the turn ended); wording against the pinned snapshot —
the normative one, or the harness's own with ``--conformance-snapshots``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance import causes, scenarios
from conformance.cases import case, needs
from conformance.client import Client
from conformance.harness.contract import JsonObject
from conformance.rules import cite
from conformance.secrets import RunSecrets
from conformance.snapshots import (
    behaviour_of,
    first_different_error,
    first_different_result,
    normative_transcript,
    result_texts,
    transcript_difference,
    uncoded_failures,
)
from conformance.spec import Wording
from conformance.verdict import RANK_CODE, RANK_TEXT, Judge, differ

pytestmark = needs("loop")


def _needs(script: JsonObject) -> pytest.MarkDecorator:
    """What a scenario needs declared beyond the loop: its options, and paths it may be sent."""
    return needs(options=scenarios.options_used(script), paths=scenarios.path_styles(script))


CASES = [
    pytest.param(
        name,
        id=name,
        marks=[
            case(
                f"SCN-{number:03d}",
                rules=[
                    "scenario.pinned",
                    "scenario.format",
                    "scenario.normalize",
                    "scenario.workspace",
                ],
            ),
            _needs(scenarios.load(name)),
        ],
    )
    for number, name in enumerate(scenarios.SCENARIO_SET, start=1)
]


@pytest.mark.parametrize("name", CASES)
def test_scenario_transcript(
    name: str,
    client: Client,
    root: Path,
    judge: Judge,
    secrets: RunSecrets,
    w: Wording,
    transcript_snapshot: Callable[[list[JsonObject], str], bool],
) -> None:
    """produce exactly the pinned transcript of the scenario (normalized, secret-free)"""
    script = scenarios.load(name, canary=secrets.canary)
    records = client.scenario(str(root), script)
    normative = normative_transcript(name)
    judge.transcript(f"the events of {name} (types, tools, error flags, how the turn ended)",
                     behaviour_of(records), behaviour_of(normative), script=script,
                     rule="scenario.pinned", texts=result_texts(name, records, str(root)))  # fmt: skip
    if judge.runs("wording"):
        ok = transcript_snapshot(records, str(root))
        # Where the first difference is a result's text, the verdict is of that scripted call.
        first = None if ok else first_different_result(name, records, str(root))
        outcomes = [
            e[1] for e in behaviour_of(normative) if isinstance(e, list) and e[0] == "tool/result"
        ]
        # Else, where the first difference is a result's structured error, of that call.
        wrong = None if ok or first is not None else first_different_error(name, records, str(root))
        number = first[0] if first is not None else wrong[0] if wrong is not None else None
        call = None if number is None else causes.scripted_call(
            script, number, outcomes,
            "accepted" if outcomes[number : number + 1] == ["ok"] else "refused", "text-differs")  # fmt: skip
        sig = None
        if wrong is not None:
            pinned = wrong[2].get("code") if isinstance(wrong[2], dict) else None
            remedied = isinstance(pinned, str) and causes.carries_remedy(
                wrong[3], pinned, w.remedies()
            )
            sig = causes.loop_error_signature(call.tool if call else None, wrong[1], wrong[2], "",
                                              call.situation if call else None, remedied=remedied)  # fmt: skip
            # a pair no rule of its own names stays this scenario's (no guess)
            sig = None if sig is None or sig.startswith(" · ") else sig
        if (
            not ok
            and first is None
            and wrong is None
            and uncoded_failures(name, records, str(root))
        ):
            sig = causes.subject_signature("loop.failure-value", "failure-uncoded")
        if not ok and secrets.canary in json.dumps(records, ensure_ascii=False):
            sig, call = causes.secret_unredacted(True), None  # the planted secret, as planted
        elif call is not None and first is not None:
            # normalized on both sides, so a recovery instruction is found as in any other text
            sig = causes.text_signature("scenario.pinned", call.situation, first[1], first[2],
                                        w.remedies())  # fmt: skip
            # its wrong code, where that names the defect (causes.PAIR_RULES), is what its text shows
            same = first_different_error(name, records, str(root))
            if same is not None and same[0] == first[0]:
                coded = causes.loop_error_signature(call.tool, same[1], same[2], "", call.situation)
                sig = coded if coded is not None and causes.names_its_defect(coded) else sig
        judge.record("wording", ok, lambda: f"{name}: {transcript_difference(name, records, str(root))}; "
                     "SPEC §5 {scenario.pinned}: each transcript of the pinned set is pinned",
                     "scenario.pinned", RANK_TEXT, signature=sig,
                     call=judge.scripted(call) if call and sig else None)  # fmt: skip


@case("SCN-019", rules=["scenario.pinned", "remedy.texts"])
def test_policy_reject_step_one(client: Client, root: Path, judge: Judge, w: Wording) -> None:
    """show fs-policy-reject's first result as the remedied refusal with {FsError, FS_NOT_OBSERVED}"""
    records = client.scenario(str(root), scenarios.load("fs-policy-reject"))
    first = next(r["data"] for r in records if r["type"] == "tool/result")
    judge.equal("the first result's error flag", first.get("isError"), True, rule="scenario.pinned")
    text = w.remedied("policy.edit_unobserved", "FS_NOT_OBSERVED", p=f"{root}/settings.txt")
    content, expected = first.get("content"), [{"type": "text", "text": text}]
    blocks = content if isinstance(content, list) else []
    shown = blocks[0].get("text") if len(blocks) == 1 and isinstance(blocks[0], dict) else None
    judge.record("wording", content == expected,
                 lambda: f"the first result's content {differ(content, expected)}; {cite('remedy.texts')}",
                 "remedy.texts", RANK_TEXT,
                 signature=causes.text_signature("remedy.texts", "existing-unread", shown, text, w.remedies())
                 if isinstance(shown, str) else None)  # fmt: skip
    if client.profile.has("toolCodes"):
        error, want = first.get("error"), {"name": "FsError", "code": "FS_NOT_OBSERVED"}
        judge.record("wording", error == want,
                     lambda: f"the first result's error {differ(error, want)}; {cite('scenario.pinned')}",
                     "scenario.pinned", RANK_CODE,
                     signature=causes.loop_error_signature("edit", error, want, "scenario.pinned",
                                                           "existing-unread", remedied=shown == text))  # fmt: skip
