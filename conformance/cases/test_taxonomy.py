"""SPEC §1: the error taxonomy — codes, names, causes, helpers, subclasses."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable

import pytest

from conformance.client import Client
from conformance.contract import JsonObject, NativeHarness
from conformance.spec import FS_CODES

HARNESS_KINDS = ["HarnessError", "FsError", "LlmError"]


def _error(client: Client, kind: str, message: str = "m", **spec: object) -> str:
    defaults: dict[str, object] = {
        "HarnessError": {"code": "SOME_CODE"},
        "FsError": {"code": "FS_IO_ERROR"},
        "LlmError": {"code": "SERVER"},
        "ToolArgsError": {"violations": ["v"]},
        "ToolNotFoundError": {"toolName": "x"},
    }.get(kind, {})  # type: ignore[assignment]
    return client.error(kind, message, **{**defaults, **spec})


@pytest.mark.case("TAX-001")
def test_code_stays_out_of_the_message(client: Client) -> None:
    """keep the code out of the message: str(err) is exactly the message"""
    described = client.inspect(client.error("HarnessError", "disk full", code="FS_IO_ERROR"))
    assert (described["message"], described["text"], described["code"]) == (
        "disk full",
        "disk full",
        "FS_IO_ERROR",
    )


@pytest.mark.case("TAX-002")
def test_name_is_the_concrete_class(client: Client) -> None:
    """name every error after its concrete class, and count each as a HarnessError"""
    for kind in ["HarnessError", "FsError", "LlmError", "ToolArgsError", "ToolNotFoundError"]:
        described = client.inspect(_error(client, kind))
        assert (described["name"], described["isHarnessError"]) == (kind, True), kind


@pytest.mark.case("TAX-003")
def test_exception_cause_is_chained(client: Client) -> None:
    """chain an exception given as cause, as the very same object"""
    original = client.error("Exception", "root problem")
    for kind in HARNESS_KINDS:
        described = client.inspect(_error(client, kind, cause={"handle": original}))
        cause = described["cause"]
        assert isinstance(cause, dict)
        assert cause["handle"] == original, kind


@pytest.mark.case("TAX-004")
def test_non_exception_cause_is_kept(client: Client) -> None:
    """keep a non-exception cause (a dict, a string) as the cause value"""
    for value in [{"code": 500}, "upstream said no"]:
        described = client.inspect(
            client.error("HarnessError", "m", code="C", cause={"value": value})
        )
        assert described["cause"] == {"value": value}


@pytest.mark.case("TAX-005")
def test_construction_validates(client: Client) -> None:
    """refuse a non-string message, and a missing, empty or non-string code"""
    for spec in [
        {"message": 1, "code": "C"},
        {"message": None, "code": "C"},
        {"message": "m", "code": ""},
        {"message": "m", "code": 5},
        {"message": "m"},
    ]:
        answer = client.try_error("HarnessError", **spec)  # type: ignore[arg-type]
        assert "rejected" in answer, spec


@pytest.mark.case("TAX-006")
def test_is_harness_error_is_strict(client: Client) -> None:
    """not count a plain exception as a HarnessError"""
    assert client.inspect(client.error("Exception", "plain"))["isHarnessError"] is False


@pytest.mark.case("TAX-007")
def test_to_error_returns_exceptions_unchanged(client: Client) -> None:
    """return an exception from to_error unchanged (the same object)"""
    for kind in ["Exception", "HarnessError"]:
        handle = _error(client, kind, code="C") if kind == "HarnessError" else client.error(kind)
        assert client.to_error({"handle": handle}) == (handle, True)


@pytest.mark.case("TAX-008")
def test_to_error_wraps_values_as_unknown(client: Client) -> None:
    """wrap a returned failure value as HarnessError UNKNOWN with the value as cause"""
    for value, message in [({"code": 500}, '{"code":500}'), ("quota exhausted", "quota exhausted")]:
        handle, same = client.to_error({"value": value})
        described = client.inspect(handle)
        assert same is False
        assert (described["name"], described["code"], described["message"]) == (
            "HarnessError",
            "UNKNOWN",
            message,
        )
        assert described["cause"] == {"value": value}


@pytest.mark.case("TAX-009")
def test_values_render_as_compact_json(client: Client) -> None:
    """render non-string values as compact JSON without escaping non-ASCII"""
    assert client.chain({"value": {"msg": "é", "n": [1, 2]}}) == '{"msg":"é","n":[1,2]}'
    assert client.chain({"value": "just text"}) == "just text"
    assert client.chain({"value": None}) == "null"


@pytest.mark.case("TAX-010")
def test_chain_joins_causes(client: Client) -> None:
    """render error_chain as the messages of the chain joined by ': '"""
    root = client.error("Exception", "disk gone")
    middle = client.error("FsError", "cannot write", code="FS_IO_ERROR", cause={"handle": root})
    outer = client.error("HarnessError", "save failed", code="SAVE", cause={"handle": middle})
    assert client.chain({"handle": outer}) == "save failed: cannot write: disk gone"


@pytest.mark.case("TAX-011")
def test_chain_omits_a_repeated_cause(client: Client) -> None:
    """omit a cause whose rendered chain repeats the message"""
    inner = client.error("Exception", "same words")
    outer = client.error("HarnessError", "same words", code="C", cause={"handle": inner})
    assert client.chain({"handle": outer}) == "same words"


@pytest.mark.case("TAX-012")
def test_chain_renders_value_causes(client: Client) -> None:
    """render a non-exception cause at the end of the chain"""
    outer = client.error("HarnessError", "upstream", code="UNKNOWN", cause={"value": {"code": 500}})
    assert client.chain({"handle": outer}) == 'upstream: {"code":500}'


@pytest.mark.case("TAX-013")
def test_chain_marks_cycles(client: Client) -> None:
    """render a cause already on the current path as <circular cause>"""
    a = client.error("HarnessError", "a", code="A")
    b = client.error("HarnessError", "b", code="B", cause={"handle": a})
    client.set_cause(a, b)
    assert client.chain({"handle": a}) == "a: b: <circular cause>"


@pytest.mark.case("TAX-014")
def test_chain_lists_group_members(client: Client) -> None:
    """list a group's members in brackets, rendering a cause shared by two in full"""
    shared = client.error("Exception", "shared root")
    one = client.error("HarnessError", "one", code="C1", cause={"handle": shared})
    two = client.error("HarnessError", "two", code="C2", cause={"handle": shared})
    group = client.error("ExceptionGroup", "two failed", members=[one, two])
    assert client.chain({"handle": group}) == "two failed [one: shared root; two: shared root]"


@pytest.mark.case("TAX-015")
def test_chain_names_an_empty_message_by_class(client: Client) -> None:
    """render an exception with an empty message by its class name"""
    empty = client.error("Exception", "")
    outer = client.error("HarnessError", "outer", code="C", cause={"handle": empty})
    assert client.chain({"handle": outer}) == f"outer: {client.inspect(empty)['name']}"


@pytest.mark.case("TAX-016")
def test_llm_error_validates(client: Client) -> None:
    """validate LlmError: message, status 100-599, positive finite retry, non-empty request id"""
    invalid: list[JsonObject] = [
        {"message": ""},
        {"status": 99},
        {"status": 600},
        {"retryAfterMs": 0},
        {"retryAfterMs": -5},
        {"requestId": ""},
    ]
    for bad in invalid:
        spec: JsonObject = {"message": "m", "code": "SERVER", **bad}
        assert "rejected" in client.try_error("LlmError", **spec), bad
    ok = {"status": 429, "retryAfterMs": 1500, "requestId": "r-1"}
    assert "handle" in client.try_error("LlmError", "slow down", code="RATE_LIMIT", **ok)


@pytest.mark.case("TAX-017")
def test_llm_error_failure(client: Client) -> None:
    """expose LlmError's failure mapping, omitting absent keys"""
    bare = client.inspect(client.error("LlmError", "m", code="AUTH"))
    assert bare["failure"] == {"message": "m", "code": "AUTH"}
    full = client.inspect(
        client.error(
            "LlmError", "slow", code="RATE_LIMIT", status=429, retryAfterMs=1500, requestId="r1"
        )
    )
    assert full["failure"] == {
        "message": "slow",
        "code": "RATE_LIMIT",
        "status": 429,
        "providerRetryAfterMs": 1500,
        "requestId": "r1",
    }


@pytest.mark.case("TAX-018")
def test_tool_args_error(client: Client) -> None:
    """word ToolArgsError as 'invalid arguments: <v1>; <v2>' with code INVALID_ARGS"""
    described = client.inspect(client.error("ToolArgsError", violations=["first", "second"]))
    assert (described["message"], described["code"]) == (
        "invalid arguments: first; second",
        "INVALID_ARGS",
    )
    assert described["violations"] == ["first", "second"]


@pytest.mark.case("TAX-019")
def test_tool_not_found_error(client: Client) -> None:
    """word ToolNotFoundError as 'unknown tool "<name>"' with code UNKNOWN_TOOL"""
    described = client.inspect(client.error("ToolNotFoundError", toolName="delete_file"))
    assert (described["message"], described["code"]) == (
        'unknown tool "delete_file"',
        "UNKNOWN_TOOL",
    )


@pytest.mark.case("TAX-020")
def test_fs_error_codes(client: Client) -> None:
    """accept exactly the eleven FsErrorCodes for an FsError"""
    for code in FS_CODES:
        assert client.inspect(client.error("FsError", "m", code=code))["code"] == code
    for code in ["FS_NOPE", "UNKNOWN", "fs_not_found"]:
        assert "rejected" in client.try_error("FsError", "m", code=code), code


def _without_handles(described: object) -> object:
    if isinstance(described, dict):
        return {k: _without_handles(v) for k, v in described.items() if k != "handle"}
    return described


ROUND_TRIPS: dict[str, Callable[[BaseException], BaseException]] = {
    "pickle": lambda e: pickle.loads(pickle.dumps(e)),
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
}


@pytest.mark.case("TAX-021")
def test_errors_survive_pickle_and_copy(client: Client, native: NativeHarness) -> None:
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
        for how, round_trip in ROUND_TRIPS.items():
            back = native.adopt_error(round_trip(native.native_error(handle)))
            assert _without_handles(client.inspect(back)) == _without_handles(original), (kind, how)
            assert client.chain({"handle": back}) == client.chain({"handle": handle}), (kind, how)


@pytest.mark.case("TAX-022")
def test_repr_names_class_message_and_code(client: Client, native: NativeHarness) -> None:
    """show the class, the message and the code in repr()"""
    shown = repr(native.native_error(client.error("FsError", "gone away", code="FS_NOT_FOUND")))
    assert all(part in shown for part in ("FsError", "gone away", "FS_NOT_FOUND")), shown


def _raise_from(err: BaseException, cause: BaseException | None) -> None:
    raise err from cause


def _raise_while_handling(err: BaseException) -> None:
    try:
        raise ValueError("during handling")
    except ValueError:
        raise err  # noqa: B904 - the implicit context is the point


@pytest.mark.case("TAX-023")
def test_raise_from_none_clears_the_cause(client: Client, native: NativeHarness) -> None:
    """make the original the cause with raise … from, and clear it with raise … from None"""
    original = native.native_error(client.error("Exception", "original"))
    err = native.native_error(client.error("HarnessError", "m", code="C"))
    for cause, expected in [(original, original), (None, None)]:
        with pytest.raises(type(err)) as info:
            _raise_from(err, cause)
        assert getattr(info.value, "cause", "missing") is expected


@pytest.mark.case("TAX-024")
def test_context_is_not_a_cause(client: Client, native: NativeHarness) -> None:
    """never treat the implicit __context__ as a cause"""
    err = native.native_error(client.error("HarnessError", "m", code="C"))
    with pytest.raises(type(err)) as info:
        _raise_while_handling(err)
    assert info.value.__context__ is not None
    assert getattr(info.value, "cause", "missing") is None
