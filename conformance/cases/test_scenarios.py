"""SPEC §5: the pinned scenarios, run through the harness's real loop and compared with snapshots."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conformance import scenarios, spec
from conformance.client import Client
from conformance.contract import JsonObject
from conformance.secrets import CANARY_VARIABLE, plant_canary

CASES = [
    pytest.param(name, id=name, marks=pytest.mark.case(f"SCN-{number:03d}"))
    for number, name in enumerate(scenarios.SCENARIO_SET, start=1)
]


@pytest.mark.parametrize("name", CASES)
def test_scenario_transcript(
    name: str,
    client: Client,
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    transcript_snapshot: Callable[[list[JsonObject], str], None],
) -> None:
    """produce exactly the pinned transcript of the scenario (normalized, secret-free)"""
    canary = plant_canary()
    monkeypatch.setenv(CANARY_VARIABLE, canary)
    records = client.scenario(str(root), scenarios.load(name, canary=canary))
    transcript_snapshot(records, str(root))


@pytest.mark.case("SCN-019")
def test_policy_reject_step_one(client: Client, root: Path) -> None:
    """show fs-policy-reject's first result as the remedied refusal with {FsError, FS_NOT_OBSERVED}"""
    records = client.scenario(str(root), scenarios.load("fs-policy-reject"))
    first = next(r["data"] for r in records if r["type"] == "tool/result")
    assert isinstance(first, dict)
    assert first["content"] == [
        {
            "type": "text",
            "text": spec.error_text(spec.edit_unobserved(f"{root}/settings.txt") + spec.READ_FIRST),
        }
    ]
    assert first["error"] == {"name": "FsError", "code": "FS_NOT_OBSERVED"}
