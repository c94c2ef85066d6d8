"""No output of a run holds a secret, in part or escaped (README "Secrets never reach a report").

A harness may print its configuration as it dies, leave a ``.env`` file where the suite looks,
or end its error texts with its API key. Each output of the run is read for the whole secret,
its start (a verdict cuts long values) and its JSON spelling (a verdict quotes strings as JSON).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance import display
from conformance.secrets import REDACTED, clean_cut, clean_cut_bytes, scrub, scrub_data
from conformance.watch import Change, content_entry
from tests.suite import run_suite

API_KEY = "sk-proj-" + "Q7" * 24  # 56 characters, as a provider's key is
PASSWORD = 'pä"ss\\wörd-1234'  # a quote, a backslash and non-ASCII: JSON spells it otherwise
ENV = {"OPENAI_API_KEY": API_KEY, "MY_DB_PASSWORD": PASSWORD}


def spellings(value: str) -> list[str]:
    """What of ``value`` must appear nowhere: its start, and its JSON spellings' starts."""
    escaped = [json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]]
    return [value[:12], *(form[:12] for form in escaped)]


def leaked(text: str) -> list[str]:
    return [part for value in ENV.values() for part in spellings(value) if part in text]


def outputs(tmp_path: Path, harness: str, *args: str) -> tuple[int, dict[str, str]]:
    done = run_suite("--harness", harness, "--conformance-report", "r.json",
                     "--conformance-report-md", "r.md", "--junitxml", "j.xml",
                     "--conformance-trace", "t.jsonl", *args, cwd=tmp_path, env=ENV)  # fmt: skip
    files = {name: (tmp_path / name).read_text(encoding="utf-8")
             for name in ("r.json", "r.md", "j.xml", "t.jsonl") if (tmp_path / name).exists()}  # fmt: skip
    return done.returncode, {"stdout": done.stdout, "stderr": done.stderr, **files}


def test_a_harness_that_dies_printing_its_secrets_leaves_them_in_no_output(
    tmp_path: Path,
) -> None:
    status, written = outputs(tmp_path, "tests.fixtures.leaks_environment:dies_at_start")
    assert status == 4
    assert "could not log in: OPENAI_API_KEY=[REDACTED]" in written["stderr"]
    assert "HARNESS_CONFORMANCE_CANARY_TOKEN=[REDACTED]" in written["stderr"]
    assert {name: leaked(text) for name, text in written.items() if leaked(text)} == {}
    assert "hc-canary-" not in json.dumps(written)


@pytest.mark.parametrize("harness", ["writes_env_file", "errors_with_env"])
def test_a_secret_a_verdict_would_cut_or_escape_is_in_no_output(
    tmp_path: Path, harness: str
) -> None:
    status, written = outputs(tmp_path, f"tests.fixtures.leaks_environment:{harness}",
                              "-k", "DEL or PUB-001")  # fmt: skip
    assert status == 1
    assert {name: leaked(text) for name, text in written.items() if leaked(text)} == {}
    assert "hc-canary-" not in json.dumps(written)


def test_every_spelling_of_a_secret_is_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_DB_PASSWORD", PASSWORD)
    as_json = json.dumps({"password": PASSWORD})
    assert scrub(as_json) == '{"password": "[REDACTED]"}'
    assert scrub(display.show(PASSWORD)) == '"[REDACTED]"'
    assert scrub_data({"verdicts": [PASSWORD], PASSWORD: 1}) == {
        "verdicts": [REDACTED],
        REDACTED: 1,
    }


def test_the_secrets_follow_every_change_of_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # run_secrets is kept between calls (the suite asks for every string it prints): a value
    # set, changed in place or removed between two calls must be seen at the second.
    monkeypatch.setenv("MY_DB_PASSWORD", PASSWORD)
    assert scrub(PASSWORD) == REDACTED
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "a test (call)")  # pytest's own, at each phase
    monkeypatch.setenv("MY_DB_PASSWORD", PASSWORD + "-rotated")
    assert scrub(PASSWORD + "-rotated") == REDACTED
    assert scrub(f"old {PASSWORD}") == f"old {PASSWORD}"
    monkeypatch.delenv("MY_DB_PASSWORD")
    assert scrub(PASSWORD + "-rotated") == PASSWORD + "-rotated"


def test_a_cut_never_leaves_the_start_of_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    text = f"config: key={API_KEY} end"
    assert clean_cut(text, 20) == "config: key="
    assert clean_cut(text, 12) == "config: key="
    assert clean_cut(text, 200) == text
    assert clean_cut_bytes(text.encode(), 30) == b"config: key="
    created = Change("../.env", None, content_entry(f"OPENAI_API_KEY={API_KEY}\n".encode()))
    assert created.describe() == '"../.env" created (72 bytes: "OPENAI_API_KEY="…)'


def test_a_secret_in_a_file_name_is_named_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghu_user_1234567890abcdef")
    display.PLACES.run_values({"ghu_user_1234567890abcdef": REDACTED})
    try:
        made = Change("cache-ghu_user_1234567890abcdef.json", None, content_entry(b"{}"))
        assert made.describe() == '"cache-[REDACTED].json" created (2 bytes: "{}")'
    finally:
        display.PLACES.forget_values()
