"""SPEC §1.4 and §5: secrets never leave the provider boundary; transcripts normalize."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance import scenarios
from conformance.cases import case, needs
from conformance.causes import secret_unredacted
from conformance.client import Client
from conformance.harness.contract import Json, JsonObject
from conformance.secrets import REDACTED, RunSecrets
from conformance.snapshots import normalize
from conformance.verdict import Judge

pytestmark = needs("loop")


def run(client: Client, root: Path, steps: list[Json], workspace: dict[str, str] | None = None,
        options: JsonObject | None = None) -> list[JsonObject]:  # fmt: skip
    scenario: JsonObject = {
        "name": "s",
        "workspace": workspace or {},
        "prompt": "p",
        "steps": steps,
    }
    if options:
        scenario["options"] = options
    return client.scenario(str(root), scenario)


def errors(records: list[JsonObject]) -> list[str]:
    return [r["data"].get("message") for r in records if r["type"] == "error"]


@case("SEC-001", rules=["secret.redact.provider", "scenario.secret-free"])
def test_canary_is_redacted(client: Client, root: Path, judge: Judge, secrets: RunSecrets) -> None:
    """redact a secret environment value from a provider error before it reaches the log"""
    canary = secrets.canary
    records = client.scenario(str(root), scenarios.load("llm-error-redacted", canary=canary))
    leaked = secret_unredacted(canary in json.dumps(records, ensure_ascii=False))
    judge.true(not leaked, "the planted canary reached the session log", rule="secret.redact.provider",
               signature=leaked)  # fmt: skip
    judge.equal("the error events", [r["data"] for r in records if r["type"] == "error"],
                [{"turn": 1, "step": 1, "message": f"authentication failed for key {REDACTED}", "code": "AUTH"}],
                rule="secret.redact.provider", signature=leaked)  # fmt: skip


@case("SEC-002", rules=["secret.longest-first"])
def test_longest_secret_first(
    client: Client, root: Path, judge: Judge, secrets: RunSecrets
) -> None:
    """replace the longest secret first, so a secret inside another leaves no fragment"""
    short = secrets.short
    message = f"keys {short}-rotated and {short}"
    records = run(client, root, [{"raise": {"message": message, "code": "AUTH"}}])
    judge.equal(
        "the error message",
        errors(records),
        [f"keys {REDACTED} and {REDACTED}"],
        rule="secret.longest-first",
        signature=secret_unredacted(errors(records) == [message]),
    )


@case("SEC-003", rules=["scenario.normalize", "log.header"])
def test_transcripts_normalize(client: Client, root: Path, judge: Judge) -> None:
    """let a log normalize: the root (as given or realpath'd) and the session id appear verbatim"""
    alias = root.parent / "alias"
    alias.symlink_to(root)
    records = client.scenario(str(alias), scenarios.load("fs-policy-reject"))
    normalized = normalize(records, str(alias))
    judge.equal("the normalized header", normalized[0], {"type": "session", "version": 1, "id": "{{sessionId}}", "cwd": "{{cwd}}"},
                rule="scenario.normalize")  # fmt: skip
    text = json.dumps(normalized, ensure_ascii=False)
    judge.true(
        str(root) not in text and str(alias) not in text,
        "the root survived normalization",
        rule="scenario.normalize",
    )


@case("SEC-004", rules=["secret.values", "secret.longest-first"])
def test_which_values_are_secrets(
    client: Client, root: Path, judge: Judge, secrets: RunSecrets
) -> None:
    """treat every credential-like variable of 8+ characters as secret, each occurrence, any case"""
    message = f"{secrets.lower} {secrets.upper} {secrets.lower} {secrets.seven} {secrets.eight}"
    records = run(client, root, [{"raise": {"message": message, "code": "AUTH"}}])
    judge.equal("the error message", errors(records),
                [f"{REDACTED} {REDACTED} {REDACTED} {secrets.seven} {REDACTED}"], rule="secret.values",
                signature=secret_unredacted(errors(records) == [message]))  # fmt: skip


@case("SEC-005", rules=["secret.redact.everywhere", "loop.failure-value"])
def test_a_returned_failure_value_is_redacted(client: Client, root: Path, judge: Judge,
                                              secrets: RunSecrets) -> None:  # fmt: skip
    """redact a secret in a failure value the provider returns, in the error event and the turn's end"""
    canary = secrets.canary
    records = run(client, root, [{"fail": {"error": f"bad key {canary}"}}])
    leaked = canary in json.dumps(records, ensure_ascii=False)
    judge.true(
        not leaked,
        "a returned failure value reached the log with the secret in it",
        rule="secret.redact.everywhere",
        signature=secret_unredacted(leaked),
    )
    if not leaked:
        judge.equal("the error message", errors(records), [f'{{"error":"bad key {REDACTED}"}}'],
                    rule="secret.redact.everywhere")  # fmt: skip


@case("SEC-006", rules=["secret.redact.everywhere", "secret.verbatim"])
@needs(options=["probe"])
def test_tool_failures_are_redacted_and_results_are_not(client: Client, root: Path, judge: Judge,
                                                        secrets: RunSecrets) -> None:  # fmt: skip
    """redact a secret in a tool's error text, but keep a file's content and the model's text verbatim"""
    canary = secrets.canary
    steps: list[Json] = [
        {"text": f"model says {canary}", "tool_calls": [
            {"name": "probe_raise", "arguments": {"kind": "Exception", "message": f"connect ?key={canary}"}},
            {"name": "read", "arguments": {"file_path": "config.txt"}},
        ]},
        {"text": "DONE"},
    ]  # fmt: skip
    records = run(client, root, steps, {"config.txt": f"token = {canary}\n"}, {"probe": True})
    results = [r["data"] for r in records if r["type"] == "tool/result"]
    failed_text = results[0]["content"][0]["text"]
    judge.true(
        canary not in failed_text,
        "a tool's error text carried the secret",
        rule="secret.redact.everywhere",
        signature=secret_unredacted(canary in failed_text),
    )
    judge.true(
        canary in results[1]["content"][0]["text"],
        "a successful read result was redacted",
        rule="secret.verbatim",
    )
    assistant = next(r["data"] for r in records if r["type"] == "assistant/message")
    judge.true(
        canary in json.dumps(assistant), "the model's own text was redacted", rule="secret.verbatim"
    )


@case("SEC-007", rules=["secret.redact.everywhere", "proto.lines"])
@needs(options=["probe"])
def test_the_harness_log_holds_no_secret(client: Client, root: Path, judge: Judge,
                                         secrets: RunSecrets) -> None:  # fmt: skip
    """keep secrets out of the harness's own log (its stderr), for tool and provider failures"""
    log = client.transport.log_lines()
    if log is None:
        pytest.skip("not applicable: the harness's log is not observable (it runs in process)")
    canary = secrets.canary
    steps: list[Json] = [
        {"tool_calls": [{"name": "probe_raise",
                         "arguments": {"kind": "Exception", "message": f"connect ?key={canary}"}}]},
        {"raise": {"message": f"denied for {canary}", "code": "AUTH", "status": 401}},
    ]  # fmt: skip
    run(client, root, steps, options={"probe": True})
    with client.session(str(root), probe=True) as session:
        session.probe("Exception", f"token {canary} rejected")
    written = client.transport.log_lines() or []
    leaked = sum(canary in line for line in written)
    judge.true(not leaked, f"the harness wrote the secret into {leaked} line"
               f"{'s' if leaked != 1 else ''} of its log (stderr)",
               rule="secret.redact.everywhere", signature=secret_unredacted(leaked > 0))  # fmt: skip
