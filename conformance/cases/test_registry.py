"""SPEC §2.1 and §2.1a: the tool registry — rendering, structured errors, argument validation."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance import spec
from conformance.client import Client, Session, ToolOutcome
from conformance.contract import Json
from conformance.disk import Disk

INVALID = ("ToolArgsError", "INVALID_ARGS")


@pytest.fixture
def probe(open_session: Callable[..., Session]) -> Session:
    return open_session(probe=True)


def _violations(result: ToolOutcome) -> list[str]:
    prefix = "Error: invalid arguments: "
    assert result.error == INVALID, result
    assert result.text.startswith(prefix), result.text
    return result.text[len(prefix) :].split("; ")


@pytest.mark.case("REG-001")
def test_harness_error_becomes_text_and_structure(probe: Session) -> None:
    """render a raised HarnessError as 'Error: <message>' with {name, code}"""
    result = probe.probe("HarnessError", "quota exhausted", "QUOTA")
    assert (result.text, result.is_error, result.error) == (
        "Error: quota exhausted",
        True,
        ("HarnessError", "QUOTA"),
    )


@pytest.mark.case("REG-002")
def test_subclasses_report_their_own_name(probe: Session) -> None:
    """report an FsError and an LlmError by their own names and codes"""
    assert probe.probe("FsError", "disk unavailable", "FS_IO_ERROR").error == (
        "FsError",
        "FS_IO_ERROR",
    )
    assert probe.probe("LlmError", "overloaded", "SERVER").error == ("LlmError", "SERVER")


@pytest.mark.case("REG-003")
def test_plain_exception_has_no_structure(probe: Session) -> None:
    """render a plain exception with the same text and no structured error"""
    result = probe.probe("Exception", "something broke")
    assert (result.text, result.is_error, result.error) == ("Error: something broke", True, None)
    assert "error" not in result.wire


@pytest.mark.case("REG-004")
def test_unknown_tool(session: Session) -> None:
    """answer an unknown tool with 'unknown tool "<name>"' and UNKNOWN_TOOL"""
    result = session.call("delete_file", {"file_path": "a.txt"})
    assert (result.text, result.error) == (
        'Error: unknown tool "delete_file"',
        ("ToolNotFoundError", "UNKNOWN_TOOL"),
    )


@pytest.mark.case("REG-005")
def test_missing_required(session: Session) -> None:
    """report a missing required property: 'missing required property "<path>"'"""
    assert _violations(session.call("read", {})) == ['missing required property "file_path"']


@pytest.mark.case("REG-006")
def test_type_violations(session: Session) -> None:
    """report wrong types: '"<path>" must be a string / an integer / a boolean'"""
    assert _violations(session.call("read", {"file_path": 7})) == ['"file_path" must be a string']
    assert _violations(session.call("read", {"file_path": "a", "offset": "1"})) == [
        '"offset" must be an integer'
    ]
    arguments: Json = {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": "yes"}
    assert _violations(session.call("edit", arguments)) == ['"replace_all" must be a boolean']


@pytest.mark.case("REG-007")
def test_undeclared_property(session: Session) -> None:
    """refuse an undeclared property: '"<path>" is not a declared property (additionalProperties: false)'"""
    assert _violations(session.call("read", {"file_path": "a", "mode": "fast"})) == [
        '"mode" is not a declared property (additionalProperties: false)'
    ]


@pytest.mark.case("REG-008")
def test_arguments_must_be_an_object(session: Session) -> None:
    """refuse arguments that are not a JSON object: '"arguments" must be an object'"""
    for raw in ['["a.txt"]', '"a.txt"', "null", "3"]:
        assert _violations(session.call("read", raw)) == ['"arguments" must be an object'], raw


@pytest.mark.case("REG-009")
def test_arguments_must_be_json(session: Session) -> None:
    """refuse argument text that is not JSON: '"arguments" is not valid JSON'"""
    for raw in ['{"file_path": "a.txt"', "", "{file_path: a}"]:
        assert _violations(session.call("read", raw)) == ['"arguments" is not valid JSON'], raw


@pytest.mark.case("REG-010")
def test_violation_order(session: Session) -> None:
    """order violations: missing (required order), present (properties order), undeclared (argument order)"""
    arguments: Json = {"zeta": 1, "replace_all": "no", "old_string": 2, "alpha": 3}
    assert _violations(session.call("edit", arguments)) == [
        'missing required property "file_path"',
        'missing required property "new_string"',
        '"old_string" must be a string',
        '"replace_all" must be a boolean',
        '"zeta" is not a declared property (additionalProperties: false)',
        '"alpha" is not a declared property (additionalProperties: false)',
    ]


@pytest.mark.case("REG-011")
def test_integers(session: Session, disk: Disk) -> None:
    """accept 1.0 as an integer; refuse 1.5 and booleans"""
    disk.write("a.txt", "a\nb\n")
    assert session.call(
        "read", '{"file_path": "a.txt", "offset": 2.0, "limit": 1.0}'
    ).text == spec.read_output(disk.display("a.txt"), "a\nb\n", 2, 1)
    assert _violations(session.call("read", {"file_path": "a.txt", "offset": 1.5})) == [
        '"offset" must be an integer'
    ]
    assert _violations(session.call("read", {"file_path": "a.txt", "limit": True})) == [
        '"limit" must be an integer'
    ]


@pytest.mark.case("REG-012")
def test_null_is_a_value(session: Session) -> None:
    """treat null as a value, not an absence"""
    assert _violations(session.call("read", {"file_path": "a.txt", "offset": None})) == [
        '"offset" must be an integer'
    ]
    assert _violations(session.call("read", {"file_path": None})) == [
        '"file_path" must be a string'
    ]


@pytest.mark.case("REG-013")
def test_enum_violation(probe: Session) -> None:
    """word an enum violation as '"<path>" must be one of <compact JSON list>'"""
    assert _violations(probe.call("probe_raise", {"kind": "Bogus", "message": "m"})) == [
        '"kind" must be one of ["HarnessError","FsError","LlmError","Exception"]'
    ]


@pytest.mark.case("REG-014")
def test_invalid_fs_code_is_a_plain_failure(probe: Session) -> None:
    """turn an FsError built with an invalid code into a plain failure (text, no code)"""
    result = probe.probe("FsError", "m", "FS_NOPE")
    assert result.is_error
    assert result.error is None
    assert result.text.startswith("Error: ")


@pytest.mark.case("REG-015")
def test_wire_form(session: Session, disk: Disk) -> None:
    """shape results as {callId, content, isError, error?}, omitting error when there is none"""
    disk.write("a.txt", "a\n")
    ok = session.read("a.txt").wire
    assert set(ok) == {"callId", "content", "isError"}
    assert ok["isError"] is False
    failed = session.read("nope").wire
    assert set(failed) == {"callId", "content", "isError", "error"}
    assert failed["content"] == [
        {"type": "text", "text": spec.error_text(spec.read_missing(disk.display("nope")))}
    ]


@pytest.mark.case("REG-016")
def test_call_ids_per_session(client: Client, disk: Disk) -> None:
    """number direct calls call_1, call_2, … per session"""
    with client.session(str(disk.root)) as first, client.session(str(disk.root)) as second:
        assert [first.read("x").call_id for _ in range(3)] == ["call_1", "call_2", "call_3"]
        assert second.read("x").call_id == "call_1"


@pytest.mark.case("REG-017")
def test_any_json_arguments_give_a_result(probe: Session, disk: Disk) -> None:
    """answer arguments of any JSON shape with a result that names the problem"""
    shapes: list[Json] = [
        None,
        True,
        0,
        -1.5,
        "",
        "{",
        "[]",
        [],
        [None],
        {},
        {"file_path": {"nested": ["x"]}},
        {"file_path": "a", "content": None},
        {"file_path": "a", "old_string": [], "new_string": {}},
        {"": ""},
    ]
    for tool in ["read", "write", "edit", "probe_raise"]:
        for shape in shapes:
            result = probe.call(tool, shape)
            assert result.is_error, (tool, shape)
            assert result.text.startswith("Error: "), (tool, shape)
    assert disk.leftovers() == []
