"""SPEC §2.4, §1.4 and §5: the scripted model, the provider boundary, and scenarios."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reference import LlmError, open_workspace
from reference.loop import AgentLoop
from reference.model import (
    ModelResponse,
    ScriptedModel,
    ScriptError,
    ToolCallRequest,
    workspace_path,
)
from reference.scenarios import (
    Scenario,
    ScenarioError,
    load_scenario,
    normalize,
    parse_scenario,
    play_scenario,
    run_scenario,
    scenario_names,
)

SECRET = "tok-0123456789abcdef"


def _respond(steps: list[dict[str, object]], root: Path) -> object:
    return ScriptedModel(steps, root=str(root)).respond([], [])


def test_a_raise_step_raises_an_llm_error_with_every_field_it_names(tmp_path: Path) -> None:
    spec = {
        "message": "slow down",
        "code": "RATE_LIMIT",
        "status": 429,
        "retryAfterMs": 1500,
        "requestId": "req-7",
    }
    with pytest.raises(LlmError) as info:
        _respond([{"raise": spec}], tmp_path)
    assert dict(info.value.failure) == {
        "message": "slow down",
        "code": "RATE_LIMIT",
        "status": 429,
        "providerRetryAfterMs": 1500,
        "requestId": "req-7",
    }


def test_a_raise_step_takes_a_fractional_retry_hint(tmp_path: Path) -> None:
    with pytest.raises(LlmError) as info:
        _respond([{"raise": {"message": "m", "code": "C", "retryAfterMs": 2.5}}], tmp_path)
    assert (info.value.retry_after_ms, info.value.request_id, info.value.status) == (
        2.5,
        None,
        None,
    )


def test_a_tool_call_without_arguments_sends_an_empty_object(tmp_path: Path) -> None:
    response = _respond([{"tool_calls": [{"name": "read"}]}], tmp_path)
    assert response == ModelResponse("", (ToolCallRequest("read", "{}"),))


def test_tool_call_arguments_are_sent_as_compact_utf8_json(tmp_path: Path) -> None:
    arguments = {"file_path": "café <&>.txt", "n": [1, 2]}
    response = _respond(
        [{"text": "t", "tool_calls": [{"name": "read", "arguments": arguments}]}], tmp_path
    )
    assert response == ModelResponse(
        "t", (ToolCallRequest("read", '{"file_path":"café <&>.txt","n":[1,2]}'),)
    )


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ("go", "steps[1] must be an object"),
        ({"say": 1, "ask": 2}, "steps[1]: unknown key(s) 'ask', 'say'"),
        ({"tool_calls": "read"}, "steps[1].tool_calls must be a list"),
        (
            {"tool_calls": [{"name": "read", "args": {}}]},
            "steps[1].tool_calls[0]: only name and arguments are allowed",
        ),
        ({"raise": "boom"}, "steps[1].raise must be an object"),
        (
            {"raise": {"message": "", "code": "C"}},
            "steps[1].raise.message must be a non-empty string",
        ),
        (
            {"raise": {"message": "m", "code": "C", "status": "429"}},
            "steps[1].raise: expected an integer, got '429'",
        ),
        (
            {"raise": {"message": "m", "code": "C", "retryAfterMs": "soon"}},
            "steps[1].raise: expected a number, got 'soon'",
        ),
        (
            {"raise": {"message": "m", "code": "C", "retryAfterMs": True}},
            "steps[1].raise: expected a number, got True",
        ),
        (
            {"raise": {"message": "m", "code": "C", "requestId": 7}},
            "steps[1].raise: expected a string, got 7",
        ),
        ({"external": {"op": "delete", "path": "a"}}, "steps[1].external must be a list"),
        (
            {"external": [{"op": "chmod", "path": "a"}]},
            "steps[1].external[0].op must be one of write, delete, touch, same_size_rewrite",
        ),
        (
            {"external": ["delete"]},
            "steps[1].external[0].op must be one of write, delete, touch, same_size_rewrite",
        ),
        ({"external": [{"op": "delete"}]}, "steps[1].external[0].path must be a non-empty string"),
        (
            {"external": [{"op": "touch", "path": 5}]},
            "steps[1].external[0].path must be a non-empty string",
        ),
        (
            {"external": [{"op": "delete", "path": ""}]},
            "steps[1].external[0].path must be a non-empty string",
        ),
        (
            {"external": [{"op": "delete", "path": "a"}, {"op": "same_size_rewrite", "path": "a"}]},
            "steps[1].external[1].content must be a string",
        ),
    ],
)
def test_a_bad_script_step_is_refused_naming_the_step_and_field(step: object, message: str) -> None:
    with pytest.raises(ScriptError) as info:
        ScriptedModel([{"text": "ok"}, step], root="/nowhere")  # type: ignore[list-item]
    assert str(info.value) == message


def test_an_external_path_must_be_relative(tmp_path: Path) -> None:
    with pytest.raises(ScriptError) as info:
        workspace_path(str(tmp_path), "/etc/passwd")
    assert str(info.value) == "'/etc/passwd' must be relative to the workspace"


class _RaisingModel:
    api_key: str | None = None

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def respond(self, messages: list[dict[str, object]], tools: list[dict[str, object]]) -> object:
        raise self.exc


def _boundary(tmp_path: Path, exc: BaseException) -> LlmError:
    """What the loop's provider boundary raises when the provider raises ``exc``."""
    environ = {"MY_API_TOKEN": SECRET}
    loop = AgentLoop(open_workspace(tmp_path, environ=environ), _RaisingModel(exc), environ=environ)
    with pytest.raises(LlmError) as info:
        loop._respond()
    return info.value


def test_the_provider_boundary_raises_a_redacted_copy_that_keeps_no_cause(tmp_path: Path) -> None:
    original = LlmError(
        f"bad key {SECRET}", "AUTH", request_id=f"r-{SECRET}", cause=RuntimeError(SECRET)
    )
    raised = _boundary(tmp_path, original)
    assert raised is not original
    assert dict(raised.failure) == {
        "message": "bad key [REDACTED]",
        "code": "AUTH",
        "requestId": "r-[REDACTED]",
    }
    assert raised.__cause__ is None
    assert raised.__suppress_context__


def test_the_provider_boundary_passes_a_clean_error_through_with_its_cause(tmp_path: Path) -> None:
    cause = RuntimeError("upstream 503")
    original = LlmError("unavailable", "OVERLOADED", cause=cause)
    raised = _boundary(tmp_path, original)
    assert raised is original
    assert raised.__cause__ is cause


@pytest.mark.usefixtures("ascii_locale")
def test_a_scenario_file_is_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    path.write_text('{"name": "mine", "prompt": "café", "steps": []}', encoding="utf-8")
    assert load_scenario(str(path)) == {"name": "mine", "prompt": "café", "steps": []}


def test_an_unknown_scenario_lists_every_pinned_one() -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario("no-such-scenario")
    known = scenario_names()
    assert len(known) > 1
    assert str(info.value) == (
        f"no scenario 'no-such-scenario': not a file, nor one of: {', '.join(known)}"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "{oops",
            "cannot load scenario {path!r}: Expecting property name enclosed in double quotes:"
            " line 1 column 2 (char 1)",
        ),
        ("[1]", "scenario {path!r} must be a JSON object"),
    ],
)
def test_a_scenario_file_that_is_not_an_object_is_refused_naming_it(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "mine.json"
    path.write_text(text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(str(path))
    assert str(info.value) == message.format(path=str(path))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": "", "prompt": "p", "steps": []}, "scenario '': name must be a non-empty string"),
        ({"name": 5, "prompt": "p", "steps": []}, "scenario: name must be a non-empty string"),
        (
            {"name": "s", "prompt": "p", "steps": [], "more": 1, "extra": 2},
            "scenario 's': unknown key(s) 'extra', 'more'",
        ),
        (
            {"name": "s", "prompt": "p", "steps": [], "options": []},
            "scenario 's': options must be an object",
        ),
    ],
)
def test_a_bad_scenario_is_refused_naming_it(data: dict[str, object], message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(data)
    assert str(info.value) == message


def test_a_scenario_without_options_gets_the_defaults() -> None:
    data = {"name": "s", "workspace": {"a.txt": "x"}, "prompt": "p", "steps": [{"text": "ok"}]}
    assert parse_scenario(data) == Scenario(
        name="s",
        workspace={"a.txt": "x"},
        prompt="p",
        steps=({"text": "ok"},),
        policy=True,
        sandbox="danger-full-access",
        probe=False,
    )


def test_a_scenario_keeps_the_options_it_sets() -> None:
    options = {"policy": False, "sandbox": "read-only", "probe": True}
    data = {"name": "s", "prompt": "p", "steps": [], "options": options}
    assert parse_scenario(data) == Scenario(
        name="s", workspace={}, prompt="p", steps=(), policy=False, sandbox="read-only", probe=True
    )


def test_a_parsed_scenario_plays_as_it_is(tmp_path: Path) -> None:
    scenario = Scenario(name="s", workspace={"a.txt": "x"}, prompt="p", steps=({"text": "ok"},))
    log = play_scenario(tmp_path / "ws", scenario)
    assert [e.type for e in log.events] == ["user/message", "assistant/message", "turn/end"]
    assert (tmp_path / "ws" / "a.txt").read_text() == "x"


def test_an_unguarded_scenario_overwrites_a_file_it_never_read(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    data = {
        "name": "s",
        "workspace": {"a.txt": "old\n"},
        "options": {"policy": False},
        "prompt": "p",
        "steps": [
            {
                "tool_calls": [
                    {"name": "write", "arguments": {"file_path": "a.txt", "content": "new\n"}}
                ]
            },
            {"text": "done"},
        ],
    }
    events = run_scenario(root, data)
    result = events[3]["data"]
    assert isinstance(result, dict)
    assert (result["isError"], result.get("error")) == (False, None)
    assert (root / "a.txt").read_text() == "new\n"


def _missing_secret_file(tmp_path: Path, play: bool) -> object:
    data = {
        "name": "s",
        "prompt": "p",
        "steps": [
            {"tool_calls": [{"name": "read", "arguments": {"file_path": f"{SECRET}.txt"}}]},
            {"text": "done"},
        ],
    }
    environ = {"MY_API_TOKEN": SECRET}
    if play:
        return play_scenario(tmp_path, data, environ=environ).records()[1:]
    return run_scenario(tmp_path, data, environ=environ)


@pytest.mark.parametrize("play", [True, False], ids=["play_scenario", "run_scenario"])
def test_a_scenarios_tool_errors_are_redacted_with_the_environment_it_is_given(
    tmp_path: Path, play: bool
) -> None:
    assert SECRET not in os.environ.values()
    events = _missing_secret_file(tmp_path, play)
    assert isinstance(events, list)
    assert events[3]["data"]["content"] == [
        {"type": "text", "text": f'Error: cannot read "{tmp_path}/[REDACTED].txt": not found'}
    ]
    assert SECRET not in json.dumps(events[3:])


def test_normalize_replaces_the_longer_root_first(tmp_path: Path) -> None:
    real = tmp_path / "ws+real"
    real.mkdir()
    link = tmp_path / "ws"
    link.symlink_to(real)
    resolved = os.path.realpath(link)
    text = f"{resolved}/a and {link}/b"
    assert normalize(text, root=str(link)) == "{{cwd}}/a and {{cwd}}/b"
