"""The protocol's JSON Schema, shipped beside this module, and validation with ``jsonschema``.

``--conformance-validate`` checks every answer against the schema of its method (the project's
CI turns it on); otherwise the client checks shapes cheaply as it unpacks them.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Final

from conformance.harness.contract import Json, JsonObject
from conformance.harness.stdio import Validator

SCHEMA_PATH: Final = Path(__file__).parent / "protocol.schema.json"


@functools.cache
def protocol_schema() -> JsonObject:
    """The whole schema."""
    data: JsonObject = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return data


@functools.cache
def _validator(ref: str) -> Any:
    from jsonschema import Draft202012Validator  # noqa: PLC0415 - only with validation on

    root = protocol_schema()
    schema = {"$schema": root["$schema"], "$defs": root["$defs"], "$ref": ref}
    return Draft202012Validator(schema)


def problem(ref: str, value: Json) -> str | None:
    """The first way ``value`` breaks the schema at ``ref`` (``#/$defs/…``), in one line."""
    errors = sorted(_validator(ref).iter_errors(value), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    error = errors[0]
    where = "/".join(str(p) for p in error.absolute_path) or "(top)"
    return f"at {where}: {error.message[:300]}"


def validator_for_answers() -> Validator:
    """Check the result of each method against ``$defs/results/<method>``."""
    results = protocol_schema()["$defs"]["results"]

    def check(method: str, result: Json) -> str | None:
        if method not in results:
            return None
        return problem(f"#/$defs/results/{method}", result)

    return check
