"""SPEC §2.1 and §2.1a: the registry, argument validation, the probe tool; §4.3 the remedy."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference import (
    FsError,
    HarnessError,
    ToolArgsError,
    define_tool,
    open_workspace,
    remediate_fs_error,
)
from reference.tools import ToolRegistry, mark_sandbox_denial
from reference.workspace import Workspace
from tests.conftest import error_of, text_of

NESTED = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "mode": {"type": "string", "enum": ["fast", "safe"]},
        "nothing": {"type": "null"},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"id": {"type": "integer"}},
                "required": ["id"],
                "additionalProperties": False,
            },
        },
        "meta": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "required": ["name", "count"],
    "additionalProperties": False,
}


def _violations(arguments: object) -> list[str]:
    registry = ToolRegistry()
    registry.register(
        define_tool(name="t", description="", parameters=NESTED, execute=lambda a: "ok")
    )
    result = registry.execute("call_1", "t", arguments)
    if result.error is None:
        return []
    prefix = "Error: invalid arguments: "
    text = result.content[0].text
    assert text.startswith(prefix)
    return text[len(prefix) :].split("; ")


def test_valid_arguments_run_the_tool() -> None:
    assert _violations({"name": "a", "count": 1}) == []


def test_violations_are_ordered_missing_then_present_then_undeclared() -> None:
    arguments = {"zeta": 1, "mode": "turbo", "flag": "yes", "alpha": 2}
    assert _violations(arguments) == [
        'missing required property "name"',
        'missing required property "count"',
        '"flag" must be a boolean',
        '"mode" must be one of ["fast","safe"]',
        '"zeta" is not a declared property (additionalProperties: false)',
        '"alpha" is not a declared property (additionalProperties: false)',
    ]


def test_nested_paths_are_dotted_with_array_indexes() -> None:
    arguments = {
        "name": "a",
        "count": 1,
        "items": [{"id": 1}, {"id": "2"}, {}, {"id": 3, "extra": True}],
        "meta": {"k": 1},
    }
    assert _violations(arguments) == [
        '"items[1].id" must be an integer',
        'missing required property "items[2].id"',
        '"items[3].extra" is not a declared property (additionalProperties: false)',
        '"meta.k" must be a string',
    ]


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        (1, True),
        (1.0, True),
        (-0.0, True),
        (1.5, False),
        (True, False),
        ("1", False),
        (None, False),
    ],
)
def test_an_integer_is_a_number_without_a_fraction(value: object, ok: bool) -> None:
    assert (_violations({"name": "a", "count": value}) == []) is ok


def test_numbers_and_null() -> None:
    assert _violations({"name": "a", "count": 1, "ratio": 0.5, "nothing": None}) == []
    assert _violations({"name": "a", "count": 1, "ratio": False, "nothing": 0}) == [
        '"ratio" must be a number',
        '"nothing" must be null',
    ]


def test_null_is_a_value_not_an_absence() -> None:
    assert _violations({"name": None, "count": None}) == [
        '"name" must be a string',
        '"count" must be an integer',
    ]


@pytest.mark.parametrize(
    ("raw", "violation"),
    [
        ("{not json", '"arguments" is not valid JSON'),
        ('{"name": NaN}', '"arguments" is not valid JSON'),
        ("", '"arguments" is not valid JSON'),
        ("[]", '"arguments" must be an object'),
        ('"text"', '"arguments" must be an object'),
        ("null", '"arguments" must be an object'),
    ],
)
def test_raw_arguments_must_parse_to_an_object(raw: str, violation: str) -> None:
    assert _violations(raw) == [violation]


def test_parsed_non_objects_are_refused() -> None:
    assert _violations([1, 2]) == ['"arguments" must be an object']


def test_enum_equality_is_json_equality() -> None:
    schema = {"type": "object", "properties": {"v": {"enum": [1, "a", None]}}}
    registry = ToolRegistry()
    registry.register(
        define_tool(name="t", description="", parameters=schema, execute=lambda a: "ok")
    )
    assert registry.execute("c", "t", {"v": 1.0}).error is None
    assert text_of(registry.execute("c", "t", {"v": True})) == (
        'Error: invalid arguments: "v" must be one of [1,"a",null]'
    )


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "object", "minimum": 1}, "unsupported schema keyword(s): minimum"),
        (
            {"type": "object", "properties": {"a": {"type": "str"}}},
            "t.parameters.properties.a.type",
        ),
        ({"type": "array"}, 'must have "type": "object"'),
        ({"type": "object", "required": "a"}, "required must be a list"),
    ],
)
def test_define_tool_refuses_schemas_outside_the_subset(
    schema: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        define_tool(name="t", description="", parameters=schema, execute=lambda a: "ok")


def test_a_tool_name_is_registered_once(ws: Workspace) -> None:
    with pytest.raises(ValueError, match='a tool named "read" is already registered'):
        ws.register(
            define_tool(
                name="read", description="", parameters={"type": "object"}, execute=lambda a: ""
            )
        )


class Thrower:
    """A workspace with a ``throw`` tool that raises whatever it is handed."""

    def __init__(self, root: Path) -> None:
        self.ws = open_workspace(root)
        self.pending: BaseException = ValueError("unset")
        self.ws.register(
            define_tool(
                name="throw", description="", parameters={"type": "object"}, execute=self._run
            )
        )

    def _run(self, args: dict[str, object]) -> str:
        raise self.pending


@pytest.fixture
def thrower(tmp_path: Path) -> Thrower:
    return Thrower(tmp_path)


def _throw(thrower: Thrower, exc: BaseException) -> tuple[str, tuple[str, str] | None]:
    thrower.pending = exc
    result = thrower.ws.call_tool("throw", {})
    assert result.is_error
    return text_of(result), error_of(result)


def test_every_failure_is_one_text_block(thrower: Thrower) -> None:
    assert _throw(thrower, ValueError("plain")) == ("Error: plain", None)
    assert _throw(thrower, HarnessError("coded", "QUOTA")) == (
        "Error: coded",
        ("HarnessError", "QUOTA"),
    )


def test_a_harness_error_subclass_reports_its_own_name(thrower: Thrower) -> None:
    class QuotaError(HarnessError):
        pass

    assert _throw(thrower, QuotaError("over", "QUOTA")) == ("Error: over", ("QuotaError", "QUOTA"))


def test_an_error_with_an_empty_message_shows_its_class_name(thrower: Thrower) -> None:
    # Never a bare "Error: " (SPEC {chain.empty}'s rule, applied to the one message shown).
    assert _throw(thrower, MemoryError()) == ("Error: MemoryError", None)
    assert _throw(thrower, ValueError("")) == ("Error: ValueError", None)
    assert _throw(thrower, HarnessError("", "QUOTA")) == (
        "Error: HarnessError",
        ("HarnessError", "QUOTA"),
    )


def test_an_unprintable_error_still_becomes_a_result(thrower: Thrower) -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert _throw(thrower, Unprintable()) == ("Error: <unprintable thrown value>", None)


@pytest.mark.parametrize(
    "exc", [KeyboardInterrupt(), SystemExit(3), asyncio.CancelledError(), GeneratorExit()]
)
def test_base_exceptions_propagate(thrower: Thrower, exc: BaseException) -> None:
    with pytest.raises(type(exc)):
        _throw(thrower, exc)


def test_unknown_tool(ws: Workspace) -> None:
    result = ws.call_tool("delete_file", {"file_path": "x"})
    assert (text_of(result), error_of(result)) == (
        'Error: unknown tool "delete_file"',
        ("ToolNotFoundError", "UNKNOWN_TOOL"),
    )


def test_a_tool_must_return_text(tmp_path: Path) -> None:
    ws = open_workspace(tmp_path)

    def number(args: dict[str, object]) -> str:
        return cast(str, 3)

    ws.register(
        define_tool(name="num", description="", parameters={"type": "object"}, execute=number)
    )
    assert text_of(ws.call_tool("num", {})) == 'Error: tool "num" returned int, not str'


def test_wire_form_omits_error_when_there_is_none(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    ok = ws.call_tool("read", {"file_path": "a.txt"}).to_wire()
    assert set(ok) == {"callId", "content", "isError"}
    assert ok["isError"] is False
    failed = ws.call_tool("read", {"file_path": "nope"}).to_wire()
    assert failed["error"] == {"name": "FsError", "code": "FS_NOT_FOUND"}
    assert failed["content"] == [
        {"type": "text", "text": f'Error: cannot read "{tmp_path}/nope": not found'}
    ]
    assert json.loads(json.dumps(failed)) == failed


def test_calls_on_a_workspace_are_numbered_per_workspace(tmp_path: Path) -> None:
    first, second = open_workspace(tmp_path), open_workspace(tmp_path)
    assert [first.call_tool("x", {}).call_id for _ in range(3)] == ["call_1", "call_2", "call_3"]
    assert second.call_tool("x", {}).call_id == "call_1"


# -- the probe tool -------------------------------------------------------------------------


@pytest.fixture
def probe(tmp_path: Path) -> Workspace:
    return open_workspace(tmp_path, probe=True)


@pytest.mark.parametrize(
    ("kind", "code", "error"),
    [
        ("HarnessError", "QUOTA", ("HarnessError", "QUOTA")),
        ("FsError", "FS_IO_ERROR", ("FsError", "FS_IO_ERROR")),
        ("LlmError", "SERVER", ("LlmError", "SERVER")),
        ("Exception", "IGNORED", None),
    ],
)
def test_probe_raises_the_kind_asked_for(
    probe: Workspace, kind: str, code: str, error: tuple[str, str] | None
) -> None:
    result = probe.call_tool("probe_raise", {"kind": kind, "message": "boom", "code": code})
    assert (text_of(result), error_of(result)) == ("Error: boom", error)


def test_probe_needs_a_valid_fs_code(probe: Workspace) -> None:
    result = probe.call_tool("probe_raise", {"kind": "FsError", "message": "m", "code": "NOPE"})
    assert text_of(result).startswith(
        'Error: invalid FsErrorCode "NOPE"; expected one of FS_NOT_FOUND'
    )
    assert result.error is None


def test_probe_is_registered_only_when_asked(ws: Workspace) -> None:
    assert error_of(ws.call_tool("probe_raise", {"kind": "Exception", "message": "m"})) == (
        "ToolNotFoundError",
        "UNKNOWN_TOOL",
    )


# -- bad input never escapes as an exception ------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
FIELDS = st.sampled_from(
    ["file_path", "content", "old_string", "new_string", "offset", "limit", "replace_all"]
)


@given(
    tool=st.sampled_from(["read", "write", "edit", "probe_raise", "nope"]),
    arguments=JSON | st.dictionaries(FIELDS, JSON, max_size=5) | st.text(),
)
def test_any_arguments_give_a_result(
    tmp_path_factory: pytest.TempPathFactory, tool: str, arguments: object
) -> None:
    root = tmp_path_factory.mktemp("fuzz")
    result = open_workspace(root, probe=True, sandbox="workspace-write").call_tool(tool, arguments)
    assert len(result.content) == 1
    if result.is_error:
        assert result.content[0].text.startswith("Error: ")
    for dirpath, _, files in os.walk(root):
        assert not [f for f in files if f.endswith(".tmp")], dirpath


# -- the remedy (§4.3) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "remedy"),
    [
        ("FS_STALE_VERSION", "re-read the file, then retry"),
        ("FS_NOT_OBSERVED", "read the file, then retry"),
    ],
)
def test_remedy_appends_one_instruction_and_chains_the_original(code: str, remedy: str) -> None:
    original = FsError("cannot do it", code)
    remedied = remediate_fs_error(original)
    assert isinstance(remedied, FsError)
    assert remedied is not original
    assert remedied.message == f"cannot do it — {remedy}"
    assert remedied.code == original.code
    assert remedied.cause is original
    assert original.message == "cannot do it"


@pytest.mark.parametrize(
    "value",
    [
        FsError("x", "FS_NOT_FOUND"),
        FsError("x", "FS_SANDBOX_DENIED"),
        FsError("x", "FS_EDIT_NOT_FOUND"),
        HarnessError("x", "FS_STALE_VERSION"),
        ToolArgsError(["v"]),
        ValueError("x"),
        "FS_STALE_VERSION",
        {"code": "FS_STALE_VERSION"},
        None,
    ],
    ids=repr,
)
def test_remedy_returns_everything_else_as_the_same_object(value: object) -> None:
    assert remediate_fs_error(value) is value


def test_sandbox_marker_replaces_only_denials() -> None:
    denial = FsError(
        'cannot write "/x": file access denied under read-only mode', "FS_SANDBOX_DENIED"
    )
    marked = mark_sandbox_denial(denial, "read-only")
    assert (marked.message, marked.code, marked.cause) == (
        "[sandbox: file access denied under read-only mode]",
        "FS_SANDBOX_DENIED",
        denial,
    )
    assert remediate_fs_error(marked) is marked
    other = FsError("x", "FS_NOT_FOUND")
    assert mark_sandbox_denial(other, "read-only") is other
