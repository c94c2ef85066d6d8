"""Tool argument schemas: the JSON Schema subset tools declare, and validation against it.

Supported keywords: ``type`` (one JSON type name), ``properties``, ``required``,
``additionalProperties`` (a boolean or a schema), ``items``, ``enum`` and ``description``.
Anything else is refused when the tool is defined rather than silently not enforced.

Violations are reported in a fixed order per object: missing required properties (in the
schema's ``required`` order), then the present properties (in the schema's ``properties``
order, nested violations in place), then undeclared properties (in argument order).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Final

from reference.errors import ToolArgsError

ROOT: Final = "arguments"
MAX_DEPTH: Final = 100
MAX_NUMBER_CHARS: Final = 100
_LARGEST: Final = 10**MAX_NUMBER_CHARS  # an integer this large takes more than 100 characters
SUPPORTED_KEYWORDS: Final = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "enum", "description"}
)
TYPE_WORDS: Final = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


def check_schema(schema: object, where: str = "parameters") -> None:
    """Raise ValueError naming the first part of ``schema`` outside the supported subset."""
    if not isinstance(schema, Mapping):
        raise ValueError(f"{where} must be a JSON schema object")
    unknown = sorted(set(schema) - SUPPORTED_KEYWORDS)
    if unknown:
        raise ValueError(f"{where} uses unsupported schema keyword(s): {', '.join(unknown)}")
    kind = schema.get("type")
    if kind is not None and kind not in TYPE_WORDS:
        raise ValueError(f"{where}.type must be one of {', '.join(TYPE_WORDS)}, not {kind!r}")
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        raise ValueError(f"{where}.properties must be an object")
    for name, sub in properties.items():
        check_schema(sub, f"{where}.properties.{name}")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ValueError(f"{where}.required must be a list of property names")
    extra = schema.get("additionalProperties", True)
    if not isinstance(extra, bool):
        check_schema(extra, f"{where}.additionalProperties")
    if "items" in schema:
        check_schema(schema["items"], f"{where}.items")
    if "enum" in schema and not isinstance(schema["enum"], list):
        raise ValueError(f"{where}.enum must be a list")


def parse_arguments(raw: object) -> object:
    """A ``str`` is the raw JSON text the model sent; anything else is already parsed.

    Text past the limits (SPEC §2.1b: nested deeper than ``MAX_DEPTH``, a number literal longer
    than ``MAX_NUMBER_CHARS`` or not finite as a double) is not valid JSON either, so no bad
    input reaches the model as the runtime's own message.
    """
    if not isinstance(raw, str):
        # Arguments parsed elsewhere (a direct caller, another transport) meet the same limits.
        if _depth(raw) > MAX_DEPTH or _out_of_range(raw):
            raise ToolArgsError([f'"{ROOT}" is not valid JSON'])
        return raw
    try:
        parsed = json.loads(
            raw, parse_constant=_reject_constant, parse_int=_integer, parse_float=_float
        )
    except (ValueError, RecursionError):
        raise ToolArgsError([f'"{ROOT}" is not valid JSON']) from None
    if _depth(parsed) > MAX_DEPTH:
        raise ToolArgsError([f'"{ROOT}" is not valid JSON'])
    return parsed


def validate_arguments(schema: Mapping[str, object], arguments: object) -> dict[str, object]:
    """Return the arguments if they fit ``schema``; raise ``ToolArgsError`` with every violation.

    Integer-valued numbers in integer positions come back as integers (``2.0`` → ``2``).
    """
    if not isinstance(arguments, dict):
        raise ToolArgsError([f'"{ROOT}" must be an object'])
    violations: list[str] = []
    checked = _validate(schema, arguments, ROOT, violations)
    if violations:
        raise ToolArgsError(violations)
    assert isinstance(checked, dict)
    return checked


def _validate(schema: Mapping[str, object], value: object, path: str, out: list[str]) -> object:
    """Record ``value``'s violations of ``schema``; return the value with integers normalized."""
    kind = schema.get("type")
    if isinstance(kind, str) and not _is_type(value, kind):
        out.append(f'"{path}" must be {TYPE_WORDS[kind]}')
        return value
    if kind == "integer" and isinstance(value, float):
        value = int(value)
    enum = schema.get("enum")
    if isinstance(enum, list) and not any(_json_equal(value, option) for option in enum):
        listed = json.dumps(enum, separators=(",", ":"), ensure_ascii=False)
        out.append(f'"{path}" must be one of {listed}')
        return value
    if isinstance(value, dict):
        return _validate_object(schema, value, path, out)
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        items = schema["items"]
        assert isinstance(items, Mapping)
        return [_validate(items, item, f"{path}[{index}]", out) for index, item in enumerate(value)]
    return value


def _validate_object(
    schema: Mapping[str, object], value: dict[str, object], path: str, out: list[str]
) -> dict[str, object]:
    properties = schema.get("properties", {})
    assert isinstance(properties, Mapping)
    required = schema.get("required", [])
    assert isinstance(required, list)
    checked = dict(value)
    for name in required:
        if name not in value:
            out.append(f'missing required property "{_child(path, name)}"')
    for name, sub in properties.items():
        if name in value:
            checked[name] = _validate(sub, value[name], _child(path, name), out)
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties:
            continue
        if extra is False:
            out.append(
                f'"{_child(path, name)}" is not a declared property (additionalProperties: false)'
            )
        elif isinstance(extra, Mapping):
            checked[name] = _validate(extra, item, _child(path, name), out)
    return checked


def _child(path: str, name: str) -> str:
    return name if path == ROOT else f"{path}.{name}"


def _is_type(value: object, kind: str) -> bool:
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if isinstance(value, float) and not math.isfinite(value):
        return False
    # JSON has one number type: 1.0 is an integer, 1.5 is not.
    return kind == "number" or isinstance(value, int) or value.is_integer()


def _json_equal(a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


class _NotJson(ValueError):
    """Text SPEC §2.1b does not count as JSON: ``NaN``/``Infinity``, or a literal past the limits.

    Raised from inside ``json.loads``; ``parse_arguments`` reports every such refusal as
    ``"arguments" is not valid JSON``, so it carries no message of its own.
    """


def _reject_constant(name: str) -> object:
    raise _NotJson


def _integer(literal: str) -> int:
    if len(literal) > MAX_NUMBER_CHARS:
        raise _NotJson
    return int(literal)


def _float(literal: str) -> float:
    value = float(literal)
    if len(literal) > MAX_NUMBER_CHARS or not math.isfinite(value):
        raise _NotJson
    return value


def _out_of_range(value: object) -> bool:
    """Whether a parsed value holds a number its text could not have (SPEC {args.limits})."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif _unwritable(item):
            return True
    return False


def _unwritable(item: object) -> bool:
    """A float that is not finite, or an integer longer than the longest literal allowed
    (its minus sign counts, as it does in the text)."""
    if isinstance(item, float):
        return not math.isfinite(item)
    if not isinstance(item, int) or isinstance(item, bool):
        return False
    return not -(_LARGEST // 10) < item < _LARGEST


def _depth(value: object) -> int:
    """How deeply arrays and objects nest (the outermost counts 1), without recursion."""
    deepest = 0
    pending: list[tuple[object, int]] = [(value, 1)]
    while pending:
        item, level = pending.pop()
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        )
        if children is None:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            return deepest
        pending.extend((child, level + 1) for child in children)
    return deepest
