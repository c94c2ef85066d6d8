"""SPEC §2.1–§2.1c: the tool registry — rendering, structured errors, argument validation."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance.cases import case, needs
from conformance.causes import code_signature
from conformance.client import Client, Result, Session
from conformance.disk import Disk
from conformance.display import show
from conformance.harness.contract import Json
from conformance.harness.transport import HarnessCallError
from conformance.spec import TYPE_WORDS, Wording
from conformance.verdict import Judge

INVALID = ("ToolArgsError", "INVALID_ARGS")


@pytest.fixture
def probe(open_session: Callable[..., Session]) -> Session:
    return open_session(probe=True)


def invalid(result: Result, w: Wording, *violations: str, rule: str) -> None:
    """Refused before the tool ran, with exactly these violations, as a ToolArgsError."""
    result.refused("args.before-run").says(w.violations(*violations), rule).code(INVALID, rule)


@case("REG-001", rules=["tool.error.text", "tool.error.structured", "probe.raise"])
@needs(options=["probe"])
def test_harness_error_becomes_text_and_structure(probe: Session, w: Wording) -> None:
    """render a raised HarnessError as 'Error: <message>' with {name, code}"""
    result = probe.probe("HarnessError", "quota exhausted", "QUOTA").refused("tool.error.text")
    result.says(w.error("quota exhausted"), "tool.error.text").code(
        ("HarnessError", "QUOTA"), "tool.error.structured"
    )


@case("REG-002", rules=["tool.error.structured", "err.name"])
@needs(options=["probe"])
def test_subclasses_report_their_own_name(probe: Session) -> None:
    """report an FsError and an LlmError by their own names and codes"""
    probe.probe("FsError", "disk unavailable", "FS_IO_ERROR").refused("tool.error.text").code(
        ("FsError", "FS_IO_ERROR"), "tool.error.structured")  # fmt: skip
    probe.probe("LlmError", "overloaded", "SERVER").refused("tool.error.text").code(
        ("LlmError", "SERVER"), "err.name")  # fmt: skip


@case("REG-003", rules=["tool.error.plain", "tool.result.wire"])
@needs(options=["probe"])
def test_plain_exception_has_no_structure(probe: Session, judge: Judge, w: Wording) -> None:
    """render a plain exception with the same text and no structured error"""
    result = probe.probe("Exception", "something broke").refused("tool.error.text")
    result.says(w.error("something broke"), "tool.error.plain").code(None, "tool.error.plain")
    # an error it carries is the one fact the code's verdict names: one cause
    sig = (
        None
        if result.error is None
        else code_signature("", None, "probe_raise", result.error, None)
    )
    judge.true("error" not in result.wire, 'the result of a plain exception carries an "error" key',
               rule="tool.result.wire", level="wording", signature=sig,
               call=result.record.index if sig else None)  # fmt: skip


@case("REG-024", rules=["contract.tool-error.any", "contract.tool-error"])
@needs("taxonomy", "toolErrors", options=["probe"])
def test_the_error_behind_a_plain_exception(probe: Session, client: Client, judge: Judge) -> None:
    """let the error behind every failed result be inspected, a plain exception's too"""
    for kind, message, code in [("Exception", "something broke", None),
                                ("FsError", "disk unavailable", "FS_IO_ERROR")]:  # fmt: skip
        result = probe.probe(kind, message, code).refused("tool.error.text")
        handle = probe.tool_error(result.call_id)
        if not judge.true(handle is not None, f"tool_error gave no error behind the failed "
                          f"probe_raise of a {kind}", rule="contract.tool-error.any"):  # fmt: skip
            continue
        assert handle is not None
        described = client.inspect(handle)
        judge.equal(f"the error behind the probe_raise of a {kind} (harness error, message)",
                    [described["isHarnessError"], described["message"]],
                    [kind != "Exception", message], rule="contract.tool-error.any")  # fmt: skip
    ok = probe.call("probe_echo", {"todos": []}).accepted("contract.tool-error.any")
    judge.true(probe.tool_error(ok.call_id) is None, "tool_error gave an error behind a call that "
               "succeeded", rule="contract.tool-error.any")  # fmt: skip


@case("REG-004", rules=["tool.unknown"])
def test_unknown_tool(session: Session, w: Wording) -> None:
    """answer an unknown tool with 'unknown tool "<name>"' and UNKNOWN_TOOL"""
    result = session.call("delete_file", {"file_path": "a.txt"}).refused("tool.unknown")
    result.says(w.error(w("tool.unknown", name="delete_file")), "tool.unknown").code(
        ("ToolNotFoundError", "UNKNOWN_TOOL"), "tool.unknown"
    )


@case("REG-005", rules=["args.missing"])
def test_missing_required(session: Session, w: Wording) -> None:
    """report a missing required property: 'missing required property "<path>"'"""
    invalid(session.call("read", {}), w, w("args.missing", path="file_path"), rule="args.missing")


@case("REG-006", rules=["args.type"])
def test_type_violations(session: Session, client: Client, w: Wording) -> None:
    """report wrong types: '"<path>" must be a string / an integer / a boolean'"""
    invalid(
        session.call("read", {"file_path": 7}),
        w,
        w("args.type", path="file_path", type=TYPE_WORDS["string"]),
        rule="args.type",
    )
    a = session.spell("a")
    # An option the harness does not declare is no property of its schema: not sent.
    if client.profile.supports("readWindow"):
        invalid(session.call("read", {"file_path": a, "offset": "1"}), w,
                w("args.type", path="offset", type=TYPE_WORDS["integer"]), rule="args.type")  # fmt: skip
    if client.profile.supports("replaceAll"):
        arguments: Json = {
            "file_path": a,
            "old_string": "x",
            "new_string": "y",
            "replace_all": "yes",
        }
        invalid(
            session.call("edit", arguments),
            w,
            w("args.type", path="replace_all", type=TYPE_WORDS["boolean"]),
            rule="args.type",
        )


@case("REG-007", rules=["args.undeclared", "tool.schemas-closed"])
def test_undeclared_property(session: Session, w: Wording) -> None:
    """refuse an undeclared property: '"<path>" is not a declared property (additionalProperties: false)'"""
    a = session.spell("a")
    for tool, arguments in [
        ("read", {"file_path": a, "mode": "fast"}),
        ("write", {"file_path": a, "content": "x", "mode": "fast"}),
        ("edit", {"file_path": a, "old_string": "x", "new_string": "y", "mode": "fast"}),
    ]:
        invalid(
            session.call(tool, arguments),
            w,
            w("args.undeclared", path="mode"),
            rule="tool.schemas-closed",
        )


@case("REG-008", rules=["args.not-object"])
def test_arguments_must_be_an_object(session: Session, w: Wording) -> None:
    """refuse arguments that are not a JSON object: '"arguments" must be an object'"""
    for raw in ['["a.txt"]', '"a.txt"', "null", "3"]:
        invalid(session.call("read", raw), w, w("args.not_object"), rule="args.not-object")


@case("REG-009", rules=["args.not-json"])
def test_arguments_must_be_json(session: Session, w: Wording) -> None:
    """refuse argument text that is not JSON: '"arguments" is not valid JSON'"""
    for raw in [
        '{"file_path": "a.txt"',
        "",
        "{file_path: a}",
        '{"file_path": NaN}',
        '{"offset": Infinity}',
    ]:
        invalid(session.call("read", raw), w, w("args.not_json"), rule="args.not-json")


@case("REG-010", rules=["args.order"])
def test_violation_order(session: Session, client: Client, w: Wording) -> None:
    """order violations: missing (required order), present (properties order), undeclared (argument order)"""
    if client.profile.supports("replaceAll"):
        arguments: Json = {"zeta": 1, "replace_all": "no", "old_string": 2, "alpha": 3}
        missing, present = (
            ["file_path", "new_string"],
            [("old_string", "string"), ("replace_all", "boolean")],
        )
    else:  # the same three orders without the option the harness does not declare
        arguments = {"zeta": 1, "new_string": 2, "old_string": 3, "alpha": 4}
        missing, present = ["file_path"], [("old_string", "string"), ("new_string", "string")]
    invalid(session.call("edit", arguments), w,
            *[w("args.missing", path=path) for path in missing],
            *[w("args.type", path=path, type=TYPE_WORDS[kind]) for path, kind in present],
            w("args.undeclared", path="zeta"), w("args.undeclared", path="alpha"), rule="args.order")  # fmt: skip


@case("REG-011", rules=["args.integer", "args.integer-value"])
@needs(options=["readWindow"])
def test_integers(session: Session, disk: Disk, w: Wording) -> None:
    """accept 1.0 as an integer; refuse 1.5 and booleans"""
    disk.write("a.txt", "a\nb\n")
    path = session.spell("a.txt")
    session.call("read", f'{{"file_path": "{path}", "offset": 2.0, "limit": 1.0}}').accepted("args.integer").says(
        w.read_output(disk.display("a.txt"), "a\nb\n", 2, 1), "args.integer-value")  # fmt: skip
    invalid(session.call("read", {"file_path": path, "offset": 1.5}), w,
            w("args.type", path="offset", type=TYPE_WORDS["integer"]), rule="args.integer")  # fmt: skip
    invalid(session.call("read", {"file_path": path, "limit": True}), w,
            w("args.type", path="limit", type=TYPE_WORDS["integer"]), rule="args.integer")  # fmt: skip


@case("REG-012", rules=["args.null"])
def test_null_is_a_value(session: Session, client: Client, w: Wording) -> None:
    """treat null as a value, not an absence"""
    if client.profile.supports("readWindow"):
        invalid(session.call("read", {"file_path": session.spell("a.txt"), "offset": None}), w,
                w("args.type", path="offset", type=TYPE_WORDS["integer"]), rule="args.null")  # fmt: skip
    invalid(session.call("read", {"file_path": None}), w,
            w("args.type", path="file_path", type=TYPE_WORDS["string"]), rule="args.null")  # fmt: skip


@case("REG-013", rules=["args.enum"])
@needs(options=["probe"])
def test_enum_violation(probe: Session, w: Wording) -> None:
    """word an enum violation as '"<path>" must be one of <compact JSON list>'"""
    invalid(probe.call("probe_raise", {"kind": "Bogus", "message": "m"}), w,
            w("args.enum", path="kind", values='["HarnessError","FsError","LlmError","Exception"]'), rule="args.enum")  # fmt: skip


@case("REG-014", rules=["fs-error.codes", "probe.raise", "tool.error.plain"])
@needs(options=["probe"])
def test_invalid_fs_code_is_a_plain_failure(probe: Session) -> None:
    """turn an FsError built with an invalid code into a plain failure (text, no code)"""
    probe.probe("FsError", "m", "FS_NOPE").refused("probe.raise").code(None, "fs-error.codes")


@case("REG-015", rules=["tool.result.wire", "tool.result.shape", "fs.msg.read-missing"])
def test_wire_form(session: Session, disk: Disk, judge: Judge, w: Wording) -> None:
    """shape results as {callId, content, isError, error?}, omitting error when there is none"""
    disk.write("a.txt", "a\n")
    ok = session.read("a.txt").accepted("tool.result.wire")
    judge.equal("the keys of a successful result", sorted(ok.wire), ["callId", "content", "isError"],
                rule="tool.result.wire")  # fmt: skip
    failed = session.read("nope").refused("tool.result.wire")
    content = failed.wire.get("content")
    block = content[0] if isinstance(content, list) and len(content) == 1 else None
    shaped = (
        isinstance(block, dict) and sorted(block) == ["text", "type"] and block["type"] == "text"
    )
    if judge.true(shaped,
                  f"the content of a failed result is {show(content, 120)}, not one text block",
                  rule="tool.result.shape", level="wording"):  # fmt: skip
        # Its words are the missing file's (PRV-002's rule): other words are that one defect.
        failed.says(w.fs_error("fs.read_missing", p=disk.display("nope")), "fs.msg.read-missing")


@case("REG-016", rules=["tool.call-ids"])
def test_call_ids_per_session(client: Client, disk: Disk, judge: Judge) -> None:
    """number direct calls call_1, call_2, … per session"""
    with client.session(str(disk.root)) as first, client.session(str(disk.root)) as second:
        ids = [first.read("x").call_id for _ in range(3)]
        judge.equal(
            "the call ids of one session", ids, ["call_1", "call_2", "call_3"], rule="tool.call-ids"
        )
        judge.equal(
            "the first call id of another session",
            second.read("x").call_id,
            "call_1",
            rule="tool.call-ids",
        )


@case("REG-017", rules=["tool.error.text", "args.before-run"])
def test_any_json_arguments_give_a_result(session: Session, judge: Judge, w: Wording) -> None:
    """answer arguments of any JSON shape with a refusal that names the problem"""
    # The failure wording around the message ("Error: " in the spec's; a table may re-pin it).
    before, _, after = w.error("\0").partition("\0")
    shapes: list[Json] = [None, True, 0, -1.5, "", "{", "[]", [], [None], {}, {"file_path": {"nested": ["x"]}},
                          {"file_path": "a", "content": None}, {"file_path": "a", "old_string": [], "new_string": {}},
                          {"": ""}]  # fmt: skip
    for tool in ["read", "write", "edit"]:
        for shape in shapes:
            result = session.call(tool, shape).refused("args.before-run")
            worded = result.text.startswith(before) and result.text.endswith(after)
            judge.true(worded or not judge.runs("wording"),
                       f"{tool} with arguments {show(shape)} answered {show(result.text, 80)}",
                       rule="tool.error.text", level="wording")  # fmt: skip


@case("REG-018", rules=["args.enum-after-type"])
@needs(options=["probe"])
def test_a_wrong_type_gets_no_enum_violation(probe: Session, w: Wording) -> None:
    """report only the type violation for a value of the wrong type in an enum"""
    invalid(probe.call("probe_raise", {"kind": 5, "message": "m"}), w,
            w("args.type", path="kind", type=TYPE_WORDS["string"]), rule="args.enum-after-type")  # fmt: skip


@case("REG-019", rules=["probe.code-required"])
@needs(options=["probe"])
def test_a_probe_without_a_code(probe: Session, w: Wording) -> None:
    """refuse a probe of a coded kind without a code as a plain failure"""
    for kind in ["HarnessError", "FsError", "LlmError"]:
        probe.probe(kind, "m").refused("probe.code-required").says(
            w.error(w("probe.code_required", kind=kind)), "probe.code-required").code(None, "probe.code-required")  # fmt: skip
    probe.probe("Exception", "plain", "IGNORED").refused("probe.code-required").code(
        None, "probe.code-required"
    )


@case(
    "REG-020",
    rules=["args.before-run", "args.type", "args.missing", "args.undeclared", "probe.echo"],
)
@needs(options=["probe"])
def test_nested_paths(probe: Session, w: Wording) -> None:
    """name nested violations by path: 'todos[1].title', 'meta.tags[0]', in order"""
    arguments: Json = {
        "todos": [{"done": True}, {"title": 1, "extra": True}, "x"],
        "meta": {"tags": ["ok", 3]},
    }
    invalid(probe.call("probe_echo", arguments), w,
            w("args.missing", path="todos[0].title"),
            w("args.type", path="todos[1].title", type=TYPE_WORDS["string"]),
            w("args.undeclared", path="todos[1].extra"),
            w("args.type", path="todos[2]", type=TYPE_WORDS["object"]),
            w("args.type", path="meta.tags[1]", type=TYPE_WORDS["string"]), rule="args.type")  # fmt: skip


@case("REG-021", rules=["probe.echo", "args.integer-value"])
@needs(options=["probe"])
def test_the_echo_shows_integers_as_integers(probe: Session, w: Wording) -> None:
    """pass integer-valued numbers to the tool as integers (2.0 arrives as 2)"""
    raw = '{"todos": [{"title": "a", "done": true}], "count": 2.0}'
    probe.call("probe_echo", raw).accepted("probe.echo").says(
        '{"count":2,"todos":[{"done":true,"title":"a"}]}', "args.integer-value")  # fmt: skip


@case("REG-022", rules=["tool.base-exception", "probe.interrupt"])
@needs(options=["probe", "probeInterrupt"])
def test_an_interrupt_propagates(probe: Session, judge: Judge) -> None:
    """let an interruption propagate out of the call instead of turning it into a result"""
    try:
        result = probe.call("probe_interrupt", {"message": "stop"})
    except HarnessCallError as exc:
        judge.true(exc.propagated is not None, f"call_tool failed without naming a propagated interruption: {exc}",
                   rule="tool.base-exception")  # fmt: skip
        return
    judge.true(
        False,
        f"the interruption became a result: {show(result.text, 100)}",
        rule="tool.base-exception",
    )


@case("REG-023", rules=["args.limits", "args.not-json"])
def test_argument_text_past_the_limits(session: Session, client: Client, w: Wording) -> None:
    """refuse argument text nested past 100 levels or with huge numbers as not valid JSON"""
    deep = '{"file_path": ' + "[" * 100_000 + "]" * 100_000 + "}"
    too_deep = '{"file_path": ' + "[" * 100 + "]" * 100 + "}"
    a = session.spell("a")
    for raw in [
        deep,
        too_deep,
        f'{{"file_path": "{a}", "offset": 1' + "0" * 100 + "}",
        f'{{"file_path": "{a}", "offset": 1e999}}',
    ]:
        invalid(session.call("read", raw), w, w("args.not_json"), rule="args.limits")
    at_the_limit = '{"file_path": ' + "[" * 99 + "]" * 99 + "}"
    invalid(
        session.call("read", at_the_limit),
        w,
        w("args.type", path="file_path", type=TYPE_WORDS["string"]),
        rule="args.limits",
    )
    if client.profile.supports("readWindow"):  # within the limits, it reaches the schema
        invalid(session.call("read", f'{{"file_path": "{a}", "offset": 1.5' + "0" * 90 + "}"), w,
                w("args.type", path="offset", type=TYPE_WORDS["integer"]), rule="args.limits")  # fmt: skip
