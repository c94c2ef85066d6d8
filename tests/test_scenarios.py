"""SPEC §5: the pinned scenarios, normalization, and ``python -m reference run``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.scenarios import SCENARIO_SET as SPEC_SET
from reference import run_scenario
from reference.__main__ import main
from reference.scenarios import (
    ScenarioError,
    load_scenario,
    normalize,
    play_scenario,
    scenario_names,
)


def test_the_pinned_set_is_the_spec_set() -> None:
    assert scenario_names() == sorted(SPEC_SET)


def results(events: object) -> list[dict[str, object]]:
    assert isinstance(events, list)
    return [e["data"] for e in events if e["type"] == "tool/result"]


def _code(result: dict[str, object]) -> object:
    error = result.get("error")
    return error["code"] if isinstance(error, dict) else None


@pytest.mark.parametrize("name", SPEC_SET)
def test_every_scenario_runs_to_a_turn_end(tmp_path: Path, name: str) -> None:
    events = run_scenario(tmp_path / "ws", load_scenario(name))
    assert events[0]["type"] == "user/message"
    assert events[-1]["type"] == "turn/end"
    assert json.loads(json.dumps(events)) == events


def test_fs_policy_reject_step_one_is_the_remedied_refusal(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    events = normalize(run_scenario(root, load_scenario("fs-policy-reject")), root=str(root))
    assert isinstance(events, list)
    first = results(events)[0]
    assert first["content"] == [
        {
            "type": "text",
            "text": 'Error: edit requires reading "{{cwd}}/settings.txt" first'
            " — read the file, then retry",
        }
    ]
    assert first["error"] == {"name": "FsError", "code": "FS_NOT_OBSERVED"}
    assert [r.get("error") for r in results(events)[1:]] == [None, None]
    assert (root / "settings.txt").read_text() == "mode = safe\nretries = 3\n"


def test_deleted_target_scenario_creates_nothing_while_dead(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    events = run_scenario(root, load_scenario("fs-deleted-target"))
    codes = [_code(r) for r in results(events)]
    assert codes == [
        None,
        "FS_STALE_VERSION",
        "FS_STALE_VERSION",
        "FS_NOT_FOUND",
        "FS_STALE_VERSION",
        "FS_STALE_VERSION",
        None,
        None,
    ]
    assert (root / "draft.txt").read_text() == "better draft\n"


def test_the_canary_is_redacted_everywhere(tmp_path: Path) -> None:
    canary = "hc-canary-5f0e2d7c9b1a"
    scenario = json.loads(
        json.dumps(load_scenario("llm-error-redacted")).replace("{{canary}}", canary)
    )
    log = play_scenario(tmp_path, scenario, environ={"HARNESS_CONFORMANCE_CANARY_TOKEN": canary})
    text = json.dumps(log.records())
    assert canary not in text
    assert "authentication failed for key [REDACTED]" in text


def test_normalize_replaces_the_root_its_realpath_and_the_session_id(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    value = {
        "a": f"{link}/x and {real}/y",
        "b": [f"{link}2/not-the-root", "id-123"],
        "c": 3,
    }
    assert normalize(value, root=str(link), session_id="id-123") == {
        "a": "{{cwd}}/x and {{cwd}}/y",
        "b": [f"{link}2/not-the-root", "{{sessionId}}"],
        "c": 3,
    }


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "scenario: name must be a non-empty string"),
        (
            {"name": "s", "prompt": "p", "steps": [], "extra": 1},
            "scenario 's': unknown key(s) 'extra'",
        ),
        ({"name": "s", "prompt": "p", "steps": [], "workspace": {"a": 1}}, "workspace must map"),
        ({"name": "s", "prompt": 3, "steps": []}, "prompt must be a string"),
        ({"name": "s", "prompt": "p", "steps": {}}, "steps must be a list"),
        ({"name": "s", "prompt": "p", "steps": [], "options": {"x": 1}}, "unknown option 'x'"),
        (
            {"name": "s", "prompt": "p", "steps": [], "options": {"policy": "yes"}},
            "option 'policy' must be a bool",
        ),
        (
            {"name": "s", "prompt": "p", "steps": [], "options": {"sandbox": "open"}},
            "unknown sandbox mode",
        ),
        ({"name": "s", "prompt": "p", "steps": [{"nope": 1}]}, "steps[0]: unknown key(s) 'nope'"),
    ],
)
def test_bad_scenarios_name_what_is_wrong(
    tmp_path: Path, data: dict[str, object], message: str
) -> None:
    with pytest.raises(ScenarioError) as info:
        run_scenario(tmp_path, data)
    assert message in str(info.value)


def test_workspace_seeds_stay_inside(tmp_path: Path) -> None:
    data = {"name": "s", "prompt": "p", "steps": [], "workspace": {"../out.txt": "x"}}
    with pytest.raises(ScenarioError, match="climbs out of the workspace"):
        run_scenario(tmp_path / "ws", data)
    assert not (tmp_path / "out.txt").exists()


def test_cli_prints_the_normalized_transcript(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "fs-policy-reject"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0] == {"type": "session", "version": 1, "id": "{{sessionId}}", "cwd": "{{cwd}}"}
    assert lines[4]["data"]["content"][0]["text"] == (
        'Error: edit requires reading "{{cwd}}/settings.txt" first — read the file, then retry'
    )


def test_cli_runs_a_scenario_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"name": "mine", "prompt": "p", "steps": [{"text": "ok"}]}))
    assert main(["run", str(path)]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["data"]["reason"] == {
        "kind": "completed"
    }


def test_cli_names_an_unknown_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "no-such-scenario"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "error: no scenario 'no-such-scenario': not a file, nor one of: fs-deleted-target"
    )


def test_cli_lists_the_scenarios(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    assert capsys.readouterr().out.split() == sorted(SPEC_SET)


def test_python_dash_m_reference_works(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "reference", "run", "read-empty"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert "(End of file - total 0 lines)" in done.stdout


def _ambr(name: str, transcript: str) -> str:
    return f"# serializer version: 1\n# name: test_scenario_transcript[{name}]\n  '''\n  {transcript}\n  '''\n# ---\n"


def test_a_pinned_transcript_is_read_once_until_its_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from syrupy.extensions.amber.serializer import AmberDataSerializer

    from conformance import snapshots

    reads: list[str] = []
    real = AmberDataSerializer.read_file

    def counted(cls: type[AmberDataSerializer], path: str) -> object:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(AmberDataSerializer, "read_file", classmethod(counted))
    pinned = tmp_path / snapshots.SCENARIO_SNAPSHOTS
    pinned.write_text(_ambr("one", '{"a": 1}'), encoding="utf-8")
    assert snapshots._pinned(tmp_path, "one") == '{"a": 1}'
    assert snapshots._pinned(tmp_path, "one") == '{"a": 1}'  # each scenario case looks it up
    assert snapshots._pinned(tmp_path, "two") is None
    assert len(reads) == 1
    fresh = tmp_path / "fresh.ambr"  # the same size, put in its place
    fresh.write_text(_ambr("one", '{"b": 2}'), encoding="utf-8")
    fresh.replace(pinned)
    assert snapshots._pinned(tmp_path, "one") == '{"b": 2}'
    assert len(reads) == 2
    pinned.unlink()
    assert snapshots._pinned(tmp_path, "one") is None
