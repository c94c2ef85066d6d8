"""SPEC §2.1b: the schema subset a tool may declare, argument limits and validation, definitions."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import cast

import pytest

from reference import ToolArgsError, define_tool
from reference.tools import ToolRegistry
from reference.tools.registry import KEPT_FAILURES
from reference.tools.schema import MAX_DEPTH, check_schema, validate_arguments
from tests.conftest import error_of, text_of

NOT_JSON = 'Error: invalid arguments: "arguments" is not valid JSON'


def _exactly(message: str) -> str:
    """A ``match`` pattern for exactly ``message``."""
    return f"^{re.escape(message)}$"


def _echo(args: dict[str, object]) -> str:
    return repr(args)


def _run(schema: dict[str, object], arguments: object) -> str:
    """The text a call of a tool declaring ``schema`` gives; the tool shows its arguments."""
    registry = ToolRegistry()
    registry.register(define_tool(name="t", description="", parameters=schema, execute=_echo))
    return text_of(registry.execute("call_1", "t", arguments))


def _nested(levels: int) -> dict[str, object]:
    """An object nested ``levels`` deep (``{}`` is one level)."""
    value: dict[str, object] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


# -- the schema subset, checked when a tool is defined --------------------------------------


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ([], "t.parameters must be a JSON schema object"),
        (
            {"type": "object", "properties": {"a": 3}},
            "t.parameters.properties.a must be a JSON schema object",
        ),
        (
            {"type": "object", "pattern": "x", "minimum": 1},
            "t.parameters uses unsupported schema keyword(s): minimum, pattern",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "str"}}},
            "t.parameters.properties.a.type must be one of string, integer, number, boolean, object, array, null, not 'str'",
        ),
        ({"type": "object", "properties": ["a"]}, "t.parameters.properties must be an object"),
        (
            {"type": "object", "required": "a"},
            "t.parameters.required must be a list of property names",
        ),
        (
            {"type": "object", "required": [1]},
            "t.parameters.required must be a list of property names",
        ),
        (
            {"type": "object", "additionalProperties": "no"},
            "t.parameters.additionalProperties must be a JSON schema object",
        ),
        (
            {"type": "object", "additionalProperties": {"minimum": 1}},
            "t.parameters.additionalProperties uses unsupported schema keyword(s): minimum",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "array", "items": "x"}}},
            "t.parameters.properties.a.items must be a JSON schema object",
        ),
        (
            {"type": "object", "properties": {"a": {"items": {"type": "int"}}}},
            "t.parameters.properties.a.items.type must be one of string, integer, number, boolean, object, array, null, not 'int'",
        ),
        (
            {"type": "object", "properties": {"a": {"enum": "abc"}}},
            "t.parameters.properties.a.enum must be a list",
        ),
        ({"type": "array"}, 't.parameters must have "type": "object"'),
        ({}, 't.parameters must have "type": "object"'),
    ],
)
def test_a_schema_outside_the_subset_is_refused_naming_where(
    parameters: object, message: str
) -> None:
    with pytest.raises(ValueError, match=_exactly(message)):
        define_tool(
            name="t",
            description="",
            parameters=cast(dict[str, object], parameters),
            execute=_echo,
        )


def test_a_schema_checked_on_its_own_is_named_parameters() -> None:
    message = "parameters uses unsupported schema keyword(s): minimum"
    with pytest.raises(ValueError, match=_exactly(message)):
        check_schema({"type": "object", "minimum": 1})


def test_every_supported_keyword_is_accepted() -> None:
    check_schema(
        {
            "type": "object",
            "description": "all of them",
            "properties": {
                "a": {"type": "array", "items": {"type": "integer"}},
                "b": {"enum": ["x", 1, None]},
            },
            "required": ["a"],
            "additionalProperties": {"type": "string"},
        }
    )


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"name": ""}, ValueError, "tool name must be a non-empty string"),
        ({"name": 3}, ValueError, "tool name must be a non-empty string"),
        ({"description": None}, TypeError, "tool description must be a string"),
        ({"execute": "run"}, TypeError, "execute must be callable"),
    ],
)
def test_a_tool_needs_a_name_a_description_and_a_callable(
    fields: dict[str, object], error: type[Exception], message: str
) -> None:
    given: dict[str, object] = {
        "name": "t",
        "description": "",
        "parameters": {"type": "object"},
        "execute": _echo,
        **fields,
    }
    with pytest.raises(error, match=_exactly(message)):
        define_tool(**given)  # type: ignore[arg-type]


def test_a_tool_spec_is_its_name_description_and_parameters() -> None:
    parameters = {"type": "object", "properties": {"a": {"type": "string"}}}
    tool = define_tool(name="t", description="Does t.", parameters=parameters, execute=_echo)
    assert tool.spec() == {"name": "t", "description": "Does t.", "parameters": parameters}


# -- limits: text past them is not JSON, parsed or not --------------------------------------


@pytest.mark.parametrize("raw", [True, False], ids=["text", "parsed"])
@pytest.mark.parametrize(
    ("arguments", "ok"),
    [
        (_nested(MAX_DEPTH), True),
        (_nested(MAX_DEPTH + 1), False),
        ({"a": _nested(MAX_DEPTH - 1), "b": 1}, True),
        ({"a": _nested(MAX_DEPTH), "b": 1}, False),
        ({"b": 1, "a": [[_nested(MAX_DEPTH - 2)]]}, False),
    ],
    ids=["100", "101", "100-beside-a-scalar", "101-beside-a-scalar", "101-through-arrays"],
)
def test_arguments_may_nest_100_levels_deep(
    arguments: dict[str, object], ok: bool, raw: bool
) -> None:
    text = _run({"type": "object"}, json.dumps(arguments) if raw else arguments)
    assert text == (repr(arguments) if ok else NOT_JSON)


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        ("9" * 100, int("9" * 100)),
        ("-" + "9" * 99, -int("9" * 99)),
        ("1." + "0" * 98, 1.0),
        ("-1." + "5" * 97, -float("1." + "5" * 97)),
        ("1e308", 1e308),
    ],
)
def test_a_number_literal_of_up_to_100_characters_is_json(literal: str, value: object) -> None:
    assert _run({"type": "object"}, f'{{"n": {literal}}}') == repr({"n": value})


@pytest.mark.parametrize(
    "literal",
    [
        "9" * 101,
        "-" + "9" * 100,
        "1." + "0" * 99,
        "-1." + "5" * 98,
        "1e999",
        "-1e999",
        "NaN",
        "Infinity",
        "-Infinity",
    ],
)
def test_a_longer_or_non_finite_literal_is_not_json(literal: str) -> None:
    assert _run({"type": "object"}, f'{{"n": {literal}}}') == NOT_JSON


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        (10**100 - 1, True),
        (10**100, False),
        (-(10**99 - 1), True),  # "-" and 99 digits: 100 characters
        (-(10**99), False),  # 101 characters, as its text would be refused
        (-(10**100), False),
        (1e308, True),
        (math.inf, False),
        (-math.inf, False),
        (math.nan, False),
    ],
)
def test_parsed_arguments_meet_the_same_number_limits(value: object, ok: bool) -> None:
    arguments = {"list": [{"n": value}]}
    assert _run({"type": "object"}, arguments) == (repr(arguments) if ok else NOT_JSON)


# -- validation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "options", "ok"),
    [
        (True, [True], True),
        (False, [False], True),
        (True, [False], False),
        (1, [True], False),
        (0, [False], False),
        (1.0, [1], True),
        (1, [1.5], False),
        ("a", ["a"], True),
        ("1", [1], False),
        (None, [None], True),
        (["a"], ["a"], False),
        ([1], [[1]], True),
        ([1.0, "a"], [[1, "a"]], True),
        ([1], [[2]], False),
        ([1], [[1, 1]], False),
        ([True], [[1]], False),
        ({"a": 1}, [1], False),
        (1, [{"a": 1}], False),
        ({"a": 1}, [{"a": 1}], True),
        ({"a": 1.0, "b": [None]}, [{"b": [None], "a": 1}], True),
        ({"a": 1}, [{"a": 2}], False),
        ({"a": 1}, [{"b": 1}], False),
        ({"a": 1}, [{"a": 1, "b": 1}], False),
        (Decimal(1), [1], False),
    ],
    ids=repr,
)
def test_an_enum_matches_by_json_equality(value: object, options: list[object], ok: bool) -> None:
    schema: dict[str, object] = {"type": "object", "properties": {"v": {"enum": options}}}
    listed = json.dumps(options, separators=(",", ":"))
    expected = (
        repr({"v": value}) if ok else f'Error: invalid arguments: "v" must be one of {listed}'
    )
    assert _run(schema, {"v": value}) == expected


def test_an_enum_is_listed_as_compact_json_keeping_unicode() -> None:
    schema: dict[str, object] = {
        "type": "object",
        "properties": {"v": {"enum": ["café", {"k": [1, None]}, True]}},
    }
    assert _run(schema, {"v": "tea"}) == (
        'Error: invalid arguments: "v" must be one of ["café",{"k":[1,null]},true]'
    )


def test_only_integer_positions_turn_whole_numbers_into_integers() -> None:
    schema: dict[str, object] = {
        "type": "object",
        "properties": {
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "whole": {"type": "number"},
            "any": {},
        },
    }
    assert _run(schema, {"count": 2.0, "ratio": 0.5, "whole": 2.0, "any": 2.5}) == repr(
        {"count": 2, "ratio": 0.5, "whole": 2.0, "any": 2.5}
    )


def test_items_apply_only_to_arrays() -> None:
    schema: dict[str, object] = {
        "type": "object",
        "properties": {"v": {"items": {"type": "integer"}}},
    }
    assert _run(schema, {"v": "ab"}) == repr({"v": "ab"})
    assert _run(schema, {"v": 7}) == repr({"v": 7})
    assert _run(schema, {"v": [1.0, 2]}) == repr({"v": [1, 2]})
    assert _run(schema, {"v": [1, "2"]}) == 'Error: invalid arguments: "v[1]" must be an integer'


def test_undeclared_properties_are_allowed_unless_refused() -> None:
    schema: dict[str, object] = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert _run(schema, {"a": "x", "z": [1]}) == repr({"a": "x", "z": [1]})


def test_undeclared_properties_meet_an_additional_properties_schema() -> None:
    schema: dict[str, object] = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": {"type": "integer"},
    }
    assert _run(schema, {"a": "x", "k": 2.0, "m": 3}) == repr({"a": "x", "k": 2, "m": 3})
    assert _run(schema, {"k": "2"}) == 'Error: invalid arguments: "k" must be an integer'


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan], ids=repr)
@pytest.mark.parametrize(("kind", "word"), [("number", "a number"), ("integer", "an integer")])
def test_validation_alone_refuses_non_finite_numbers(value: float, kind: str, word: str) -> None:
    schema: dict[str, object] = {"type": "object", "properties": {"x": {"type": kind}}}
    with pytest.raises(ToolArgsError) as raised:
        validate_arguments(schema, {"x": value})
    assert raised.value.violations == (f'"x" must be {word}',)


# -- the registry keeps the last failures ----------------------------------------------------


def test_the_registry_keeps_the_error_of_its_last_256_failures() -> None:
    registry = ToolRegistry()
    for number in range(KEPT_FAILURES + 1):
        result = registry.execute(f"c{number}", "missing", {})
        assert error_of(result) == ("ToolNotFoundError", "UNKNOWN_TOOL")
    kept = [registry.failure(f"c{number}") for number in range(KEPT_FAILURES + 1)]
    assert kept[0] is None
    assert [str(error) for error in kept[1:]] == ['unknown tool "missing"'] * KEPT_FAILURES


def test_a_successful_call_keeps_no_failure() -> None:
    registry = ToolRegistry()
    registry.register(
        define_tool(name="t", description="", parameters={"type": "object"}, execute=_echo)
    )
    assert text_of(registry.execute("c1", "t", "{}")) == "{}"
    assert registry.failure("c1") is None
