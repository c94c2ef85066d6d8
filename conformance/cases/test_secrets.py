"""SPEC §1.3 and §5: secrets never leave the provider boundary; transcripts normalize."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance import scenarios
from conformance.client import Client
from conformance.secrets import CANARY_VARIABLE, plant_canary
from conformance.snapshots import normalize


@pytest.mark.case("SEC-001")
def test_canary_is_redacted(client: Client, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """redact a secret environment value from a provider error before it reaches the log"""
    canary = plant_canary()
    monkeypatch.setenv(CANARY_VARIABLE, canary)
    records = client.scenario(str(root), scenarios.load("llm-error-redacted", canary=canary))
    leaked = canary in json.dumps(records, ensure_ascii=False)
    assert not leaked, "the planted canary reached the session log"
    errors = [r["data"] for r in records if r["type"] == "error"]
    assert errors == [
        {
            "turn": 1,
            "step": 1,
            "message": "authentication failed for key [REDACTED]",
            "code": "AUTH",
        }
    ]


@pytest.mark.case("SEC-002")
def test_longest_secret_first(client: Client, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """replace the longest secret first, so a secret inside another leaves no fragment"""
    short = plant_canary()
    monkeypatch.setenv("SERVICE_TOKEN", short)
    monkeypatch.setenv("SERVICE_TOKEN_ROTATED", short + "-rotated")
    step = {"raise": {"message": f"keys {short}-rotated and {short}", "code": "AUTH"}}
    records = client.scenario(
        str(root), {"name": "s", "workspace": {}, "prompt": "p", "steps": [step]}
    )
    errors = [r["data"] for r in records if r["type"] == "error"]
    assert [e["message"] for e in errors] == ["keys [REDACTED] and [REDACTED]"]


@pytest.mark.case("SEC-003")
def test_transcripts_normalize(client: Client, root: Path) -> None:
    """let a log normalize: the root (as given or realpath'd) and the session id appear verbatim"""
    alias = root.parent / "alias"
    alias.symlink_to(root)
    records = client.scenario(str(alias), scenarios.load("fs-policy-reject"))
    normalized = normalize(records, str(alias))
    assert normalized[0] == {
        "type": "session",
        "version": 1,
        "id": "{{sessionId}}",
        "cwd": "{{cwd}}",
    }
    text = json.dumps(normalized, ensure_ascii=False)
    assert str(root) not in text
    assert str(alias) not in text
    assert '\\"{{cwd}}/settings.txt\\"' in text
