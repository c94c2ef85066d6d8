"""The pinned scenario set (SPEC §5), read as data.

The scenario files ship inside the same distribution, beside the reference harness that plays
them by default; the suite reads their JSON and never the reference's code.
"""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path
from typing import Final

from conformance.harness.contract import JsonObject

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
