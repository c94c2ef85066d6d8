"""Scenarios (SPEC §5): data that seeds a workspace, scripts a model and yields a session log.

A scenario is ``{name, description?, workspace: {relpath: content}, options?: {policy = true,
sandbox = "danger-full-access", probe = false}, prompt, steps}``. The pinned set ships as JSON
files beside this module; ``normalize`` makes a run's log comparable across machines.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from reference.fs.sandbox import check_sandbox_mode
from reference.loop import AgentLoop
from reference.model import ScriptedModel, ScriptError, check_step, workspace_path
from reference.session import SessionLog
from reference.workspace import open_workspace

SCENARIO_DIR: Final = Path(__file__).parent
CWD_PLACEHOLDER: Final = "{{cwd}}"
SESSION_PLACEHOLDER: Final = "{{sessionId}}"
_OPTIONS: Final = {"policy": bool, "sandbox": str, "probe": bool}
_KEYS: Final = frozenset({"name", "description", "workspace", "options", "prompt", "steps"})


class ScenarioError(ValueError):
    """A scenario that cannot be loaded or does not fit the format; the message says where."""


@dataclass(frozen=True)
class Scenario:
    """A validated scenario."""

    name: str
    workspace: Mapping[str, str]
    prompt: str
    steps: tuple[Mapping[str, object], ...]
    policy: bool = True
    sandbox: str = "danger-full-access"
    probe: bool = False


def scenario_names() -> list[str]:
    """The names of the pinned scenarios, sorted."""
    return sorted(path.stem for path in SCENARIO_DIR.glob("*.json"))


def load_scenario(name_or_path: str) -> dict[str, object]:
    """Load a pinned scenario by name, or any scenario from a JSON file path."""
    path = SCENARIO_DIR / f"{name_or_path}.json"
    if name_or_path not in scenario_names():
        path = Path(name_or_path)
        if not path.is_file():
            known = ", ".join(scenario_names())
            raise ScenarioError(f"no scenario {name_or_path!r}: not a file, nor one of: {known}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ScenarioError(f"cannot load scenario {str(path)!r}: {exc}") from exc
    if not isinstance(data, dict):
        raise ScenarioError(f"scenario {str(path)!r} must be a JSON object")
    return data


def parse_scenario(data: Mapping[str, object]) -> Scenario:
    """Validate scenario data; raise ``ScenarioError`` naming the scenario and the field."""
    name = data.get("name")
    where = f"scenario {name!r}" if isinstance(name, str) else "scenario"
    if not isinstance(name, str) or not name:
        raise ScenarioError(f"{where}: name must be a non-empty string")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ScenarioError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}")
    workspace = data.get("workspace", {})
    if not isinstance(workspace, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in workspace.items()
    ):
        raise ScenarioError(f"{where}: workspace must map relative paths to string contents")
    prompt = data.get("prompt")
    if not isinstance(prompt, str):
        raise ScenarioError(f"{where}: prompt must be a string")
    steps = data.get("steps")
    if not isinstance(steps, list):
        raise ScenarioError(f"{where}: steps must be a list")
    options = data.get("options", {})
    if not isinstance(options, Mapping):
        raise ScenarioError(f"{where}: options must be an object")
    for key, value in options.items():
        kind = _OPTIONS.get(key)
        if kind is None:
            raise ScenarioError(f"{where}: unknown option {key!r}")
        if not isinstance(value, kind):
            raise ScenarioError(f"{where}: option {key!r} must be a {kind.__name__}")
    try:
        for index, step in enumerate(steps):
            check_step(step, f"steps[{index}]")
        sandbox = check_sandbox_mode(options.get("sandbox", "danger-full-access"))
    except (ScriptError, ValueError) as exc:
        raise ScenarioError(f"{where}: {exc}") from exc
    return Scenario(
        name=name,
        workspace=dict(workspace),
        prompt=prompt,
        steps=tuple(steps),
        policy=bool(options.get("policy", True)),
        sandbox=sandbox,
        probe=bool(options.get("probe", False)),
    )


def play_scenario(
    root: str | os.PathLike[str],
    scenario: Mapping[str, object] | Scenario,
    *,
    environ: Mapping[str, str] | None = None,
) -> SessionLog:
    """Seed ``root`` (created if missing), run the scenario's one turn, return the log."""
    parsed = scenario if isinstance(scenario, Scenario) else parse_scenario(scenario)
    root = os.path.abspath(os.fspath(root))
    os.makedirs(root, exist_ok=True)
    try:
        for relpath, content in parsed.workspace.items():
            path = workspace_path(root, relpath)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            Path(path).write_bytes(content.encode("utf-8"))
    except ScriptError as exc:
        raise ScenarioError(f"scenario {parsed.name!r}: workspace: {exc}") from exc
    workspace = open_workspace(
        root, policy=parsed.policy, sandbox=parsed.sandbox, probe=parsed.probe, environ=environ
    )
    loop = AgentLoop(workspace, ScriptedModel(parsed.steps, root=root), environ=environ)
    loop.run_turn(parsed.prompt)
    return loop.log


def run_scenario(
    root: str | os.PathLike[str],
    scenario: Mapping[str, object] | Scenario,
    *,
    environ: Mapping[str, str] | None = None,
) -> list[dict[str, object]]:
    """Seed ``root``, run the scenario through the real loop, return the wire events."""
    return play_scenario(root, scenario, environ=environ).records()[1:]


def normalize(value: object, *, root: str, session_id: str | None = None) -> object:
    """Put ``{{cwd}}`` for the root (as given and realpath'd) and ``{{sessionId}}`` for the id."""
    roots = sorted({os.path.abspath(root), os.path.realpath(root)}, key=len, reverse=True)
    # A root must end at a path boundary: /tmp/ws must not rewrite /tmp/ws2.
    pattern = re.compile("|".join(re.escape(r) + r"(?![\w.\-])" for r in roots))
    return _normalize(value, pattern, session_id)


def _normalize(value: object, pattern: re.Pattern[str], session_id: str | None) -> object:
    if isinstance(value, str):
        if session_id:
            value = value.replace(session_id, SESSION_PLACEHOLDER)
        return pattern.sub(CWD_PLACEHOLDER, value)
    if isinstance(value, Mapping):
        return {k: _normalize(v, pattern, session_id) for k, v in value.items()}
    if isinstance(value, Sequence):
        return [_normalize(v, pattern, session_id) for v in value]
    return value


__all__ = [
    "Scenario",
    "ScenarioError",
    "load_scenario",
    "normalize",
    "parse_scenario",
    "play_scenario",
    "run_scenario",
    "scenario_names",
]
