"""SPEC §5: the pinned scenarios, run through the harness's real loop and compared with snapshots.

Behaviour is judged against the suite's normative transcripts (the sequence of events, which
tools ran, which results were errors, how the turn ended); wording against the pinned snapshot —
the normative one, or the harness's own with ``--conformance-snapshots``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conformance import causes, scenarios
from conformance.cases import case, needs
from conformance.client import Client
from conformance.harness.contract import JsonObject
from conformance.secrets import RunSecrets
from conformance.snapshots import (
    behaviour_of,
    first_different_result,
    normative_transcript,
    transcript_difference,
)
from conformance.spec import Wording
from conformance.verdict import RANK_TEXT, Judge

pytestmark = needs("loop")

CASES = [
    pytest.param(
        name,
        id=name,
        marks=case(
            f"SCN-{number:03d}",
            rules=[
                "scenario.pinned",
                "scenario.format",
                "scenario.normalize",
                "scenario.workspace",
            ],
        ),
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
    transcript_snapshot: Callable[[list[JsonObject], str], bool],
) -> None:
    """produce exactly the pinned transcript of the scenario (normalized, secret-free)"""
    script = scenarios.load(name, canary=secrets.canary)
    records = client.scenario(str(root), script)
    normative = normative_transcript(name)
    judge.transcript(f"the events of {name} (types, tools, error flags, how the turn ended)",
                     behaviour_of(records), behaviour_of(normative), script=script,
                     rule="scenario.pinned")  # fmt: skip
    if judge.runs("wording"):
        ok = transcript_snapshot(records, str(root))
        # Where the first difference is a result's text, the verdict is of that scripted call.
        number = None if ok else first_different_result(name, records, str(root))
        outcomes = [
            e[1] for e in behaviour_of(normative) if isinstance(e, list) and e[0] == "tool/result"
        ]
        call = None if number is None else causes.scripted_call(
            script, number, outcomes,
            "accepted" if outcomes[number : number + 1] == ["ok"] else "refused", "text-differs")  # fmt: skip
        judge.record("wording", ok, lambda: f"{name}: {transcript_difference(name, records, str(root))}; "
                     "SPEC §5 {scenario.pinned}: each transcript of the pinned set is pinned",
                     "scenario.pinned", RANK_TEXT,
                     signature=call.signature("scenario.pinned") if call else None,
                     call=judge.scripted(call) if call else None)  # fmt: skip


@case("SCN-019", rules=["scenario.pinned", "remedy.texts"])
def test_policy_reject_step_one(client: Client, root: Path, judge: Judge, w: Wording) -> None:
    """show fs-policy-reject's first result as the remedied refusal with {FsError, FS_NOT_OBSERVED}"""
    records = client.scenario(str(root), scenarios.load("fs-policy-reject"))
    first = next(r["data"] for r in records if r["type"] == "tool/result")
    judge.equal("the first result's error flag", first.get("isError"), True, rule="scenario.pinned")
    judge.equal("the first result's content", first.get("content"),
                [{"type": "text", "text": w.remedied("policy.edit_unobserved", "FS_NOT_OBSERVED", p=f"{root}/settings.txt")}],
                rule="remedy.texts", level="wording")  # fmt: skip
    if client.profile.has("toolCodes"):
        judge.equal("the first result's error", first.get("error"), {"name": "FsError", "code": "FS_NOT_OBSERVED"},
                    rule="scenario.pinned", level="wording")  # fmt: skip
