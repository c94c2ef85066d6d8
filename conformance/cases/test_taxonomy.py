"""SPEC §1: the error taxonomy — codes, names, causes, helpers, subclasses."""

from __future__ import annotations

from conformance.cases import case, needs
from conformance.causes import to_error_uncoded
from conformance.client import Client, cause_ref
from conformance.display import show
from conformance.harness.contract import Json, JsonObject
from conformance.spec import FS_CODES, Wording, chain_of, render_value
from conformance.verdict import Judge

pytestmark = needs("taxonomy")

HARNESS_KINDS = ["HarnessError", "FsError", "LlmError"]
DEFAULTS: dict[str, JsonObject] = {
    "HarnessError": {"code": "SOME_CODE"},
    "FsError": {"code": "FS_IO_ERROR"},
    "LlmError": {"code": "SERVER"},
    "ToolArgsError": {"violations": ["v"]},
    "ToolNotFoundError": {"toolName": "x"},
}


def _error(client: Client, kind: str, message: str = "m", **spec: Json) -> str:
    return client.error(kind, message, **{**DEFAULTS.get(kind, {}), **spec})


def _rejected(client: Client, judge: Judge, kind: str, spec: JsonObject, rule: str) -> None:
    answer = client.try_error(kind, **spec)
    judge.true(
        "rejected" in answer, f"make_error accepted a {kind} built from {show(spec)}", rule=rule
    )


@case("TAX-001", rules=["err.code-distinct", "contract.inspect"])
def test_code_stays_out_of_the_message(client: Client, judge: Judge) -> None:
    """keep the code out of the message and out of the error's string form"""
    described = client.inspect(client.error("HarnessError", "disk full", code="FS_IO_ERROR"))
    judge.equal("the error's (message, code)", (described["message"], described["code"]),
                ("disk full", "FS_IO_ERROR"), rule="err.code-distinct")  # fmt: skip
    judge.true("FS_IO_ERROR" not in described["text"],
               f"the error's string form {described['text']!r} shows its code", rule="err.code-distinct")  # fmt: skip


@case("TAX-031", rules=["err.str"])
@needs("native")
def test_the_string_form_is_the_bare_message(client: Client, judge: Judge) -> None:
    """make str(err) exactly the message, where the language's string form is the message"""
    described = client.inspect(client.error("HarnessError", "disk full", code="FS_IO_ERROR"))
    judge.equal("the error's string form", described["text"], "disk full", rule="err.str")


@case("TAX-002", rules=["err.name", "err.is-harness-error"])
def test_name_is_the_concrete_class(client: Client, judge: Judge) -> None:
    """name every error after its concrete class, and count each as a HarnessError"""
    for kind in ["HarnessError", "FsError", "LlmError", "ToolArgsError", "ToolNotFoundError"]:
        described = client.inspect(_error(client, kind))
        judge.equal(f"a {kind}'s (name, isHarnessError)", (described["name"], described["isHarnessError"]),
                    (kind, True), rule="err.name")  # fmt: skip


@case("TAX-003", rules=["err.cause.exception"])
def test_exception_cause_is_chained(client: Client, judge: Judge) -> None:
    """chain an exception given as cause, as the very same object"""
    original = client.error("Exception", "root problem")
    for kind in HARNESS_KINDS:
        cause = client.inspect(_error(client, kind, cause={"handle": original}))["cause"]
        judge.equal(f"the cause of a {kind} built with an exception cause", cause_ref(cause),
                    {"handle": original}, rule="err.cause.exception")  # fmt: skip


@case("TAX-004", rules=["err.cause.value"])
def test_non_exception_cause_is_kept(client: Client, judge: Judge) -> None:
    """keep a non-exception cause (a dict, a string) as the cause value; None is no cause"""
    for value in [{"code": 500}, "upstream said no"]:
        described = client.inspect(
            client.error("HarnessError", "m", code="C", cause={"value": value})
        )
        judge.equal(f"the cause of an error built with the value {show(value)}", described["cause"],
                    {"value": value}, rule="err.cause.value")  # fmt: skip
    none = client.inspect(client.error("HarnessError", "m", code="C", cause={"value": None}))
    judge.true(none["cause"] in (None, {"value": None}), f"a None cause reads back as {show(none['cause'])}",
               rule="err.cause.value")  # fmt: skip


@case("TAX-005", rules=["err.validate"])
def test_construction_validates(client: Client, judge: Judge) -> None:
    """refuse a non-string message, and a missing, empty or non-string code"""
    specs: list[JsonObject] = [{"message": 1, "code": "C"}, {"message": None, "code": "C"},
                               {"message": "m", "code": ""}, {"message": "m", "code": 5}, {"message": "m"}]  # fmt: skip
    for spec in specs:
        _rejected(client, judge, "HarnessError", spec, "err.validate")


@case("TAX-006", rules=["err.is-harness-error"])
def test_is_harness_error_is_strict(client: Client, judge: Judge) -> None:
    """not count a plain exception, nor a group of harness errors, as a HarnessError"""
    plain = client.inspect(client.error("Exception", "plain"))
    judge.equal(
        "isHarnessError of a plain exception",
        plain["isHarnessError"],
        False,
        rule="err.is-harness-error",
    )
    member = _error(client, "HarnessError")
    group = client.inspect(client.error("ExceptionGroup", "g", members=[member]))
    judge.equal(
        "isHarnessError of an ExceptionGroup",
        group["isHarnessError"],
        False,
        rule="err.is-harness-error",
    )


@case("TAX-007", rules=["err.to-error.exception"])
@needs(methods=["to_error"])
def test_to_error_returns_exceptions_unchanged(client: Client, judge: Judge) -> None:
    """return an exception from to_error unchanged (the same object)"""
    for handle in [
        client.error("Exception"),
        _error(client, "HarnessError"),
        _error(client, "FsError"),
    ]:
        back, same = client.to_error({"handle": handle})
        judge.equal("to_error of an exception", ({"handle": back}, same), ({"handle": handle}, True),
                    rule="err.to-error.exception")  # fmt: skip


@case("TAX-008", rules=["err.to-error.value", "err.render"])
@needs(methods=["to_error"])
def test_to_error_wraps_values_as_unknown(client: Client, judge: Judge) -> None:
    """wrap a returned failure value as HarnessError UNKNOWN with the value as cause"""
    for value, message in [
        ({"code": 500}, '{"code":500}'),
        ("quota exhausted", "quota exhausted"),
        (None, "null"),
    ]:
        handle, same = client.to_error({"value": value})
        described = client.inspect(handle)
        judge.equal(f"to_error of {show(value)}: (same, name, code)", (same, described["name"], described["code"]),
                    (False, "HarnessError", "UNKNOWN"), rule="err.to-error.value",
                    signature=to_error_uncoded(same, described["code"]))  # fmt: skip
        judge.equal(f"the message of to_error({show(value)})", described["message"], message, rule="err.render",
                    level="wording")  # fmt: skip
        if value is not None:
            # no cause on an error that is not the HarnessError UNKNOWN either: that defect's
            judge.equal(f"the cause of to_error({show(value)})", described["cause"], {"value": value},
                        rule="err.to-error.value", signature=to_error_uncoded(same, described["code"]))  # fmt: skip


@case("TAX-009", rules=["err.render", "chain.value", "json.compact"])
def test_values_render_as_compact_json(client: Client, judge: Judge) -> None:
    """render values as compact JSON in their key order, without escaping non-ASCII or <>&"""
    for value, text in [({"msg": "é", "n": [1, 2]}, '{"msg":"é","n":[1,2]}'), ("just text", "just text"),
                        (None, "null"), ({"z": 1, "a": "<&>"}, '{"z":1,"a":"<&>"}'), ([True, False], "[true,false]")]:  # fmt: skip
        judge.equal(
            f"error_chain of the value {show(value)}",
            client.chain({"value": value}),
            text,
            rule="err.render",
        )
    escapes = {"t": 'q"\\ \n\t\r\b\f\u0001\u001f\u007f/\u2028é'}
    judge.equal("error_chain of a value holding every kind of escape", client.chain({"value": escapes}),
                '{"t":"q\\"\\\\ \\n\\t\\r\\b\\f\\u0001\\u001f\u007f/\u2028é"}', rule="json.compact")  # fmt: skip


@case("TAX-010", rules=["chain.join"])
def test_chain_joins_causes(client: Client, judge: Judge) -> None:
    """render error_chain as the messages of the chain joined by ': '"""
    root = client.error("Exception", "disk gone")
    middle = client.error("FsError", "cannot write", code="FS_IO_ERROR", cause={"handle": root})
    outer = client.error("HarnessError", "save failed", code="SAVE", cause={"handle": middle})
    judge.equal(
        "error_chain",
        client.chain({"handle": outer}),
        "save failed: cannot write: disk gone",
        rule="chain.join",
    )


@case("TAX-011", rules=["chain.repeat"])
def test_chain_omits_a_repeated_cause(client: Client, judge: Judge) -> None:
    """omit a cause whose rendered chain repeats the message, but keep one rendered as ''"""
    inner = client.error("Exception", "same words")
    outer = client.error("HarnessError", "same words", code="C", cause={"handle": inner})
    judge.equal("error_chain of a wrapper repeating its cause", client.chain({"handle": outer}), "same words",
                rule="chain.repeat")  # fmt: skip
    blank = client.error("HarnessError", "outer", code="C", cause={"value": ""})
    judge.equal("error_chain of an error whose cause renders as ''", client.chain({"handle": blank}), "outer: ",
                rule="chain.repeat")  # fmt: skip


@case("TAX-012", rules=["chain.value"])
def test_chain_renders_value_causes(client: Client, judge: Judge) -> None:
    """render a non-exception cause at the end of the chain"""
    outer = client.error("HarnessError", "upstream", code="UNKNOWN", cause={"value": {"code": 500}})
    judge.equal(
        "error_chain", client.chain({"handle": outer}), 'upstream: {"code":500}', rule="chain.value"
    )


@case("TAX-013", rules=["chain.circular"])
def test_chain_marks_cycles(client: Client, judge: Judge) -> None:
    """render a cause already on the current path as <circular cause>"""
    a = client.error("HarnessError", "a", code="A")
    b = client.error("HarnessError", "b", code="B", cause={"handle": a})
    client.set_cause(a, b)
    judge.equal("error_chain of a two-error cycle", client.chain({"handle": a}), "a: b: <circular cause>",
                rule="chain.circular")  # fmt: skip


@case("TAX-014", rules=["chain.group", "chain.circular"])
def test_chain_lists_group_members(client: Client, judge: Judge) -> None:
    """list a group's members in brackets, rendering a cause shared by two in full"""
    shared = client.error("Exception", "shared root")
    one = client.error("HarnessError", "one", code="C1", cause={"handle": shared})
    two = client.error("HarnessError", "two", code="C2", cause={"handle": shared})
    group = client.error("ExceptionGroup", "two failed", members=[one, two])
    judge.equal("error_chain of a group", client.chain({"handle": group}),
                "two failed [one: shared root; two: shared root]", rule="chain.group")  # fmt: skip


@case("TAX-015", rules=["chain.empty"])
def test_chain_names_an_empty_message_by_class(client: Client, judge: Judge) -> None:
    """render an exception with an empty message by its class name"""
    empty = client.error("Exception", "")
    outer = client.error("HarnessError", "outer", code="C", cause={"handle": empty})
    judge.equal("error_chain", client.chain({"handle": outer}), f"outer: {client.inspect(empty)['name']}",
                rule="chain.empty")  # fmt: skip


@case("TAX-016", rules=["llm.validate"])
def test_llm_error_validates(client: Client, judge: Judge) -> None:
    """validate LlmError: message, status 100-599, positive finite retry, non-empty request id"""
    invalid: list[JsonObject] = [{"message": ""}, {"status": 99}, {"status": 600}, {"retryAfterMs": 0},
                                 {"retryAfterMs": -5}, {"requestId": ""}, {"status": True}, {"status": 429.5}]  # fmt: skip
    for bad in invalid:
        _rejected(
            client, judge, "LlmError", {"message": "m", "code": "SERVER", **bad}, "llm.validate"
        )
    valid: list[JsonObject] = [{"status": 100}, {"status": 599}, {"retryAfterMs": 0.5}, {"requestId": "r"},
                               {"status": 429, "retryAfterMs": 1500, "requestId": "r-1"}]  # fmt: skip
    for ok in valid:
        answer = client.try_error("LlmError", "slow down", code="RATE_LIMIT", **ok)
        judge.true("handle" in answer, f"make_error refused a valid LlmError {show(ok)}: {answer.get('rejected')}",
                   rule="llm.validate")  # fmt: skip


@case("TAX-017", rules=["llm.failure"])
def test_llm_error_failure(client: Client, judge: Judge) -> None:
    """expose LlmError's failure mapping, omitting absent keys"""
    bare = client.inspect(client.error("LlmError", "m", code="AUTH"))
    judge.equal(
        "the failure of a bare LlmError",
        bare.get("failure"),
        {"message": "m", "code": "AUTH"},
        rule="llm.failure",
    )
    full = client.inspect(
        client.error(
            "LlmError", "slow", code="RATE_LIMIT", status=429, retryAfterMs=1500, requestId="r1"
        )
    )
    judge.equal("the failure of a full LlmError", full.get("failure"),
                {"message": "slow", "code": "RATE_LIMIT", "status": 429, "providerRetryAfterMs": 1500, "requestId": "r1"},
                rule="llm.failure")  # fmt: skip


@case("TAX-018", rules=["args-error.message"])
def test_tool_args_error(client: Client, judge: Judge, w: Wording) -> None:
    """word ToolArgsError as 'invalid arguments: <v1>; <v2>' with code INVALID_ARGS"""
    described = client.inspect(client.error("ToolArgsError", violations=["first", "second"]))
    judge.equal("the ToolArgsError's (code, violations)", (described["code"], described.get("violations")),
                ("INVALID_ARGS", ["first", "second"]), rule="args-error.message")  # fmt: skip
    # Its message is what a tool result shows: a harness's wording table re-pins it.
    judge.equal("the ToolArgsError's message", described["message"], w("args.invalid", violations="first; second"),
                rule="args-error.message", level="wording")  # fmt: skip


@case("TAX-019", rules=["tool-not-found.message"])
def test_tool_not_found_error(client: Client, judge: Judge, w: Wording) -> None:
    """word ToolNotFoundError as 'unknown tool "<name>"' with code UNKNOWN_TOOL"""
    described = client.inspect(client.error("ToolNotFoundError", toolName="delete_file"))
    judge.equal("the ToolNotFoundError's code", described["code"], "UNKNOWN_TOOL", rule="tool-not-found.message")  # fmt: skip
    judge.equal("the ToolNotFoundError's message", described["message"], w("tool.unknown", name="delete_file"),
                rule="tool-not-found.message", level="wording")  # fmt: skip


@case("TAX-020", rules=["fs-error.codes"])
def test_fs_error_codes(client: Client, judge: Judge) -> None:
    """accept exactly the eleven FsErrorCodes for an FsError"""
    for code in FS_CODES:
        judge.equal(f"the code of an FsError built with {code}", client.inspect(client.error("FsError", "m", code=code))["code"],
                    code, rule="fs-error.codes")  # fmt: skip
    for code in ["FS_NOPE", "UNKNOWN", "fs_not_found", "FS_NOT_FOUND "]:
        _rejected(client, judge, "FsError", {"message": "m", "code": code}, "fs-error.codes")


def _without_handles(described: object) -> object:
    if isinstance(described, dict):
        return {k: _without_handles(v) for k, v in described.items() if k != "handle"}
    return described


@case("TAX-021", rules=["err.pickle"])
@needs("native")
def test_errors_survive_pickle_and_copy(client: Client, judge: Judge) -> None:
    """keep message, code, name and cause through pickle, copy and deepcopy"""
    root = client.error("Exception", "root")
    specs: list[tuple[str, JsonObject]] = [
        ("HarnessError", {"code": "C", "cause": {"handle": root}}),
        ("HarnessError", {"code": "C", "cause": {"value": {"code": 500}}}),
        ("FsError", {"code": "FS_IO_ERROR", "cause": {"handle": root}}),
        ("LlmError", {"code": "RATE_LIMIT", "status": 429, "retryAfterMs": 5, "requestId": "r"}),
        ("ToolArgsError", {"violations": ["a", "b"]}),
        ("ToolNotFoundError", {"toolName": "x"}),
    ]
    for kind, spec in specs:
        handle = client.error(kind, "message", **spec)
        original = client.inspect(handle)
        for how in ("pickle", "copy", "deepcopy"):
            back = client.roundtrip(handle, how)
            judge.equal(f"a {kind} after {how}", _without_handles(client.inspect(back)), _without_handles(original),
                        rule="err.pickle")  # fmt: skip
            judge.equal(f"the error_chain of a {kind} after {how}", client.chain({"handle": back}),
                        client.chain({"handle": handle}), rule="err.pickle")  # fmt: skip


@case("TAX-022", rules=["err.repr"])
@needs("native")
def test_repr_names_class_message_and_code(client: Client, judge: Judge) -> None:
    """show the class, the message and the code in repr()"""
    shown = client.native_repr(client.error("FsError", "gone away", code="FS_NOT_FOUND"))
    judge.equal(
        "repr of an FsError",
        shown,
        "FsError('gone away', code='FS_NOT_FOUND')",
        rule="err.repr",
        level="wording",
    )


@case("TAX-023", rules=["err.cause.raise-from"])
@needs("native")
def test_raise_from_none_clears_the_cause(client: Client, judge: Judge) -> None:
    """make the original the cause with raise … from, and clear it with raise … from None"""
    original = client.error("Exception", "original")
    err = client.error("HarnessError", "m", code="C")
    judge.equal("the cause after raise … from original", client.native_raise(err, original)["cause"],
                {"handle": original}, rule="err.cause.raise-from")  # fmt: skip
    judge.equal("the cause after raise … from None", client.native_raise(err, None)["cause"], None,
                rule="err.cause.raise-from")  # fmt: skip


@case("TAX-024", rules=["err.cause.context"])
@needs("native")
def test_context_is_not_a_cause(client: Client, judge: Judge) -> None:
    """never treat the implicit __context__ as a cause"""
    err = client.error("HarnessError", "m", code="C")
    answer = client.native_raise(err, "context")
    judge.equal("(context set, cause) after raising while handling another error",
                (answer.get("context"), answer["cause"]), (True, None), rule="err.cause.context")  # fmt: skip


@case("TAX-025", rules=["chain.circular", "chain.group"])
def test_a_group_that_reaches_itself(client: Client, judge: Judge) -> None:
    """end a branch that leads back to its own group in <circular cause>"""
    member = client.error("HarnessError", "member", code="M")
    group = client.error("ExceptionGroup", "group", members=[member])
    client.set_cause(member, group)
    judge.equal("error_chain of a group whose member's cause is the group", client.chain({"handle": group}),
                "group [member: <circular cause>]", rule="chain.circular")  # fmt: skip


@case("TAX-026", rules=["err.cause.exception", "chain.join"])
def test_a_cause_rechained_after_construction(client: Client, judge: Judge) -> None:
    """follow a cause re-chained after construction, not the one given at first"""
    first = client.error("Exception", "first cause")
    second = client.error("Exception", "second cause")
    err = client.error("HarnessError", "outer", code="C", cause={"handle": first})
    client.set_cause(err, second)
    judge.equal("the cause after re-chaining", cause_ref(client.inspect(err)["cause"]), {"handle": second},
                rule="err.cause.exception")  # fmt: skip
    judge.equal(
        "error_chain after re-chaining",
        client.chain({"handle": err}),
        "outer: second cause",
        rule="chain.join",
    )


@case("TAX-027", rules=["chain.deep"])
def test_a_very_deep_chain(client: Client, judge: Judge) -> None:
    """render a chain of 3,000 causes in full"""
    links: list[tuple[str, Json, JsonObject]] = [("Exception", "e0", {})]
    links += [("HarnessError", f"e{index}", {"code": "C"}) for index in range(1, 3000)]
    handle = client.chained(links)
    rendered = client.chain({"handle": handle})
    judge.equal(
        "the number of links error_chain rendered",
        len(rendered.split(": ")),
        3000,
        rule="chain.deep",
    )


@case("TAX-028", rules=["contract.make-error", "contract.value-causes"])
def test_make_error_takes_exactly_what_is_asked(client: Client, judge: Judge) -> None:
    """give other kinds a value cause exactly as declared (valueCauses); chain a group's cause"""
    everywhere = client.profile.supports("valueCauses", "all")
    for kind in ["Exception", "ToolArgsError", "ExceptionGroup"]:
        spec: JsonObject = {"message": "m", "cause": {"value": {"x": 1}}, **DEFAULTS.get(kind, {})}
        if kind == "ExceptionGroup":
            spec["members"] = [client.error("Exception", "a")]
        if not everywhere:
            _rejected(client, judge, kind, spec, "contract.value-causes")
            continue
        answer = client.try_error(kind, **spec)
        judge.true("handle" in answer, f"make_error refused a {kind} with a value cause although "
                   f"valueCauses is all: {answer.get('rejected')}", rule="contract.value-causes")  # fmt: skip
        if "handle" in answer:
            judge.equal(f"the cause of a {kind} built with a value cause", client.inspect(answer["handle"])["cause"],
                        {"value": {"x": 1}}, rule="contract.value-causes")  # fmt: skip
    root = client.error("Exception", "root")
    group = client.error(
        "ExceptionGroup", "g", members=[client.error("Exception", "a")], cause={"handle": root}
    )
    judge.equal("error_chain of a group with a cause", client.chain({"handle": group}), "g [a]: root",
                rule="chain.group")  # fmt: skip


@case("TAX-029", rules=["chain.value", "err.render"])
def test_a_value_cause_of_every_json_shape(client: Client, judge: Judge) -> None:
    """render value causes of every JSON shape at the end of the chain"""
    values: list[Json] = [0, -1, 2.5, True, [], {}, "", "x: y", {"nested": {"a": [1, "b"]}}]
    for value in values:
        handle = client.error("HarnessError", "outer", code="C", cause={"value": value})
        judge.equal(f"error_chain with the value cause {show(value)}", client.chain({"handle": handle}),
                    chain_of(["outer"], render_value(value)), rule="chain.value")  # fmt: skip


@case("TAX-030", rules=["chain.unrenderable"])
@needs("native")
def test_an_unrenderable_node_collapses_alone(client: Client, judge: Judge) -> None:
    """render a node whose message cannot be made as <unrenderable value>, and go on to its cause"""
    broken = client.unrenderable()
    outer = client.error("HarnessError", "outer", code="C", cause={"handle": broken})
    judge.equal("error_chain over an unrenderable cause", client.chain({"handle": outer}),
                "outer: <unrenderable value>", rule="chain.unrenderable")  # fmt: skip
    client.set_cause(broken, client.error("Exception", "root"))
    judge.equal("error_chain past the unrenderable node", client.chain({"handle": outer}),
                "outer: <unrenderable value>: root", rule="chain.unrenderable")  # fmt: skip
