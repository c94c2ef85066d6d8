"""The pinned scenario set (SPEC §5), read as data.

The scenario files ship inside the same distribution, beside the reference harness that plays
them by default; the suite reads their JSON and never the reference's code.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Final

from conformance.harness.contract import Json, JsonObject

SCENARIO_SET: Final = (
    "fs-policy-reject",
    "fs-overwrite-unread",
    "fs-stale-edit",
    "fs-stale-write",
    "fs-same-size-rewrite",
    "fs-deleted-target",
    "fs-edit-not-found",
    "fs-edit-ambiguous",
    "fs-sandbox-denied",
    "tool-args-invalid",
    "tool-unknown",
    "tool-harness-error",
    "tool-plain-exception",
    "loop-failure-value",
    "llm-error-redacted",
    "read-windowed",
    "read-binary",
    "read-empty",
)
CANARY_PLACEHOLDER: Final = "{{canary}}"


def scenario_dir() -> Path:
    """The directory of the pinned scenario files (found without importing any harness code)."""
    spec = find_spec("reference")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the pinned scenarios ship in the 'reference' package, not found")
    return Path(next(iter(spec.submodule_search_locations))) / "scenarios"


def load(name: str, *, canary: str | None = None) -> JsonObject:
    """A pinned scenario's data; ``{{canary}}`` is replaced when a canary is given."""
    if name not in SCENARIO_SET:
        raise KeyError(f"no pinned scenario {name!r}")
    text = (scenario_dir() / f"{name}.json").read_text(encoding="utf-8")
    if canary is not None:
        text = text.replace(CANARY_PLACEHOLDER, canary)
    data: JsonObject = json.loads(text)
    return data


ARGUMENT_OPTIONS: Final = {
    "replace_all": "replaceAll",
    "offset": "readWindow",
    "limit": "readWindow",
}
"""A tool argument a script may send → the option (SPEC §6.2) a harness declares to take it."""


def options_used(scenario: JsonObject) -> list[str]:
    """The options a scenario needs declared, as ``needs`` names them: those its session asks
    for (a sandbox mode other than the default, the probe tools, the policy off) and those its
    tool calls' arguments name (``replace_all``, ``offset``, ``limit``).

    A harness that does not declare one of them has no such property in its schema: the run
    would leave the transcript at a refusal the spec does not ask of it.
    """
    options = scenario.get("options")
    given = options if isinstance(options, dict) else {}
    used = []
    sandbox = given.get("sandbox")
    if isinstance(sandbox, str) and sandbox != "danger-full-access":
        used.append(f"sandbox:{sandbox}")
    if given.get("probe") is True:
        used.append("probe")
    if given.get("policy") is False:
        used.append("unguarded")
    for call in _calls(scenario):
        arguments = call.get("arguments")
        for name in arguments if isinstance(arguments, dict) else ():
            if name in ARGUMENT_OPTIONS:
                used.append(ARGUMENT_OPTIONS[name])
    return list(dict.fromkeys(used))


def path_styles(scenario: JsonObject) -> list[str] | None:
    """The ``paths`` a harness must take for a scenario, as ``needs`` names them: ``any`` or
    ``absolute`` when a tool call names an absolute path (a harness that takes only relative
    paths is never sent one, SPEC §6.2), else None (any harness)."""
    absolute = any(os.path.isabs(path) for path in map(_path, _calls(scenario)) if path)
    return ["any", "absolute"] if absolute else None


def spelled(scenario: JsonObject, root: str) -> JsonObject:
    """A scenario whose tool calls name each path as a harness that takes absolute paths takes
    it: the plainest absolute path, normalized (``../x`` is ``<parent>/x``). Its external steps
    keep their paths: the loop applies those, relative to the root, by the script's own rules.
    """
    steps = []
    for step in scenario.get("steps") or []:
        calls = step.get("tool_calls") if isinstance(step, dict) else None
        if not isinstance(step, dict) or not isinstance(calls, list):
            steps.append(step)
            continue
        spelled_calls = []
        for call in calls:
            arguments = call.get("arguments") if isinstance(call, dict) else None
            path = arguments.get("file_path") if isinstance(arguments, dict) else None
            if isinstance(call, dict) and isinstance(arguments, dict) and isinstance(path, str):
                absolute = os.path.normpath(os.path.join(root, path))
                spelled_calls.append({**call, "arguments": {**arguments, "file_path": absolute}})
            else:
                spelled_calls.append(call)
        steps.append({**step, "tool_calls": spelled_calls})
    return {**scenario, "steps": steps}


def unspelled(records: list[JsonObject], sent: JsonObject, script: JsonObject) -> list[JsonObject]:
    """The log of a run of ``sent`` (``spelled``) as a run of ``script`` would read: where the
    harness echoes a path the script authored (a ``tool_use`` input, a ``tool/call``'s raw
    arguments) exactly as sent, the script's own spelling stands, so the transcript compares
    with the pinned one; any other text, and everything the harness wrote itself, is kept.
    """
    pairs = [(_path(a), _path(b)) for a, b in zip(_calls(sent), _calls(script), strict=True)]
    uses, calls = iter(pairs), iter(pairs)
    restored = []
    for record in records:
        data, kind = record.get("data"), record.get("type")
        if kind == "assistant/message" and isinstance(data, dict):
            blocks = [_use(block, uses) for block in data.get("content") or []]
            restored.append({**record, "data": {**data, "content": blocks}})
        elif kind == "tool/call" and isinstance(data, dict):
            absolute, original = next(calls, (None, None))
            raw = data.get("arguments")
            if isinstance(raw, str) and absolute and original:
                quoted = json.dumps(absolute, ensure_ascii=False)
                raw = raw.replace(quoted, json.dumps(original, ensure_ascii=False), 1)
            restored.append({**record, "data": {**data, "arguments": raw}})
        else:
            restored.append(record)
    return restored


def _use(block: Json, pairs: Iterator[tuple[str | None, str | None]]) -> Json:
    """A ``tool_use`` block with the script's own path where it echoes the one sent."""
    if not isinstance(block, dict) or block.get("type") != "tool_use":
        return block
    absolute, original = next(pairs, (None, None))
    given = block.get("input")
    if isinstance(given, dict) and original and given.get("file_path") == absolute:
        return {**block, "input": {**given, "file_path": original}}
    return block


def _calls(scenario: JsonObject) -> list[JsonObject]:
    steps = scenario.get("steps")
    return [
        call
        for step in (steps if isinstance(steps, list) else [])
        if isinstance(step, dict) and isinstance(step.get("tool_calls"), list)
        for call in step["tool_calls"]
        if isinstance(call, dict)
    ]


def _path(call: JsonObject) -> str | None:
    arguments = call.get("arguments")
    path = arguments.get("file_path") if isinstance(arguments, dict) else None
    return path if isinstance(path, str) else None
