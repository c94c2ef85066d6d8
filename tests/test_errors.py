"""SPEC §1: the error taxonomy."""

from __future__ import annotations

import copy
import inspect
import pickle
import traceback

import pytest

from reference import (
    FsError,
    FsErrorCode,
    HarnessError,
    LlmError,
    ToolArgsError,
    ToolNotFoundError,
    error_chain,
    is_harness_error,
    to_error,
)
from reference.errors import redactor, render_value, secret_values


def test_message_is_str_and_code_stays_out_of_it() -> None:
    err = HarnessError("disk full", "FS_IO_ERROR")
    assert str(err) == err.message == "disk full"
    assert err.code == "FS_IO_ERROR"
    assert "FS_IO_ERROR" not in str(err)


@pytest.mark.parametrize(
    ("err", "name"),
    [
        (HarnessError("m", "C"), "HarnessError"),
        (FsError("m", "FS_NOT_FOUND"), "FsError"),
        (LlmError("m", "AUTH"), "LlmError"),
        (ToolArgsError(["v"]), "ToolArgsError"),
        (ToolNotFoundError("x"), "ToolNotFoundError"),
    ],
)
def test_name_defaults_to_the_concrete_class(err: HarnessError, name: str) -> None:
    assert err.name == name


def test_subclass_gets_its_name_without_doing_anything() -> None:
    class QuotaError(HarnessError):
        pass

    assert QuotaError("m", "QUOTA").name == "QuotaError"


def test_exception_cause_is_chained_as_dunder_cause() -> None:
    original = OSError(28, "No space left on device")
    err = HarnessError("cannot write", "FS_IO_ERROR", cause=original)
    assert err.cause is original
    assert err.__cause__ is original
    shown = "".join(traceback.format_exception(err))
    assert "The above exception was the direct cause" in shown


def _wrap(original: BaseException) -> None:
    try:
        raise original
    except BaseException as exc:
        raise HarnessError("wrapped", "WRAPPED") from exc


def _raise_during(implicit: bool) -> None:
    try:
        raise ValueError("during")
    except ValueError:
        if implicit:
            raise HarnessError("m", "C")  # noqa: B904 - the implicit context is the point
        raise HarnessError("m", "C") from None


def test_raise_from_makes_the_original_the_cause() -> None:
    original = ValueError("bad")
    with pytest.raises(HarnessError) as info:
        _wrap(original)
    assert info.value.cause is original


def test_non_exception_cause_is_kept_but_not_as_dunder_cause() -> None:
    payload = {"code": 500}
    err = HarnessError("upstream", "UNKNOWN", cause=payload)
    assert err.cause is payload
    assert err.__cause__ is None


def test_raise_from_none_clears_an_exception_cause() -> None:
    with pytest.raises(HarnessError) as info:
        raise HarnessError("m", "C", cause=ValueError("x")) from None
    assert info.value.cause is None


@pytest.mark.parametrize("implicit", [True, False])
def test_context_is_never_a_cause(implicit: bool) -> None:
    with pytest.raises(HarnessError) as info:
        _raise_during(implicit)
    assert isinstance(info.value.__context__, ValueError)
    assert info.value.cause is None


@pytest.mark.parametrize(
    ("message", "code", "exc"),
    [(1, "C", TypeError), ("m", 2, TypeError), ("m", "", ValueError), (None, "C", TypeError)],
)
def test_construction_validates_message_and_code(
    message: object, code: object, exc: type[Exception]
) -> None:
    with pytest.raises(exc):
        HarnessError(message, code)  # type: ignore[arg-type]


def test_is_harness_error_is_an_isinstance_check() -> None:
    class LookAlike(Exception):
        code = "C"
        name = "HarnessError"

    assert is_harness_error(FsError("m", "FS_NOT_FOUND"))
    assert not is_harness_error(LookAlike("m"))
    assert not is_harness_error({"code": "C", "message": "m"})


@pytest.mark.parametrize(
    ("value", "rendered"),
    [
        ("plain text", "plain text"),
        ({"code": 500}, '{"code":500}'),
        ([1, "é"], '[1,"é"]'),
        (None, "null"),
        (True, "true"),
        (float("nan"), "nan"),
        (object.__new__(type("Opaque", (), {"__str__": lambda self: "opaque"})), "opaque"),
    ],
)
def test_render_value(value: object, rendered: str) -> None:
    assert render_value(value) == rendered


def test_render_value_falls_back_when_str_raises() -> None:
    class Broken:
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert render_value(Broken()) == "<unrenderable value>"


def test_to_error_returns_exceptions_unchanged() -> None:
    exc = KeyError("k")
    assert to_error(exc) is exc


def test_to_error_wraps_other_values_as_unknown() -> None:
    payload = {"code": 500, "detail": "no"}
    err = to_error(payload)
    assert isinstance(err, HarnessError)
    assert (err.message, err.code, err.cause) == ('{"code":500,"detail":"no"}', "UNKNOWN", payload)


def test_error_chain_follows_causes() -> None:
    root = OSError("disk gone")
    middle = HarnessError("cannot write", "FS_IO_ERROR", cause=root)
    outer = HarnessError("save failed", "SAVE", cause=middle)
    assert error_chain(outer) == "save failed: cannot write: disk gone"


def test_error_chain_omits_a_cause_that_repeats_the_message() -> None:
    inner = ValueError("same words")
    assert error_chain(HarnessError("same words", "C", cause=inner)) == "same words"


def test_error_chain_renders_non_exception_causes() -> None:
    err = HarnessError("upstream", "UNKNOWN", cause={"code": 500})
    assert error_chain(err) == 'upstream: {"code":500}'
    assert error_chain({"code": 1}) == '{"code":1}'


def test_error_chain_omits_only_a_cause_equal_to_the_message() -> None:
    assert error_chain(HarnessError("outer", "C", cause="")) == "outer: "
    assert error_chain(HarnessError("outer", "C", cause=None)) == "outer"
    assert error_chain(HarnessError("outer", "C", cause="outer")) == "outer"


def test_error_chain_uses_the_class_name_for_an_empty_message() -> None:
    assert error_chain(HarnessError("outer", "C", cause=KeyboardInterrupt())) == (
        "outer: KeyboardInterrupt"
    )


def test_error_chain_marks_a_cycle() -> None:
    a = HarnessError("a", "A")
    b = HarnessError("b", "B", cause=a)
    a.__cause__ = b
    assert error_chain(a) == "a: b: <circular cause>"


def test_error_chain_lists_group_members_and_renders_a_shared_cause_in_full() -> None:
    shared = OSError("shared root")
    group = ExceptionGroup(
        "two failed",
        [HarnessError("one", "C1", cause=shared), HarnessError("two", "C2", cause=shared)],
    )
    assert error_chain(group) == "two failed [one: shared root; two: shared root]"


def test_error_chain_collapses_only_the_unrenderable_node() -> None:
    class Broken(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    class Opaque:
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert error_chain(HarnessError("outer", "C", cause=Opaque())) == "outer: <unrenderable value>"
    broken = Broken()
    broken.__cause__ = ValueError("root")
    assert error_chain(HarnessError("outer", "C", cause=broken)) == (
        "outer: <unrenderable value>: root"
    )


def test_error_chain_survives_a_chain_deeper_than_the_recursion_limit() -> None:
    err: BaseException = ValueError("root")
    for depth in range(3000):
        err = HarnessError(f"level {depth}", "C", cause=err)
    assert error_chain(err).endswith("level 0: root")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"status": 99},
        {"status": 600},
        {"status": True},
        {"retry_after_ms": 0},
        {"retry_after_ms": -5},
        {"retry_after_ms": float("inf")},
        {"request_id": ""},
    ],
)
def test_llm_error_validates_its_fields(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - which ValueError is the field's business
        LlmError("m", "SERVER", **kwargs)  # type: ignore[arg-type]


def test_llm_error_needs_a_non_empty_message() -> None:
    with pytest.raises(ValueError, match="message"):
        LlmError("", "SERVER")


def test_llm_error_failure_omits_absent_keys_and_is_read_only() -> None:
    assert dict(LlmError("m", "AUTH").failure) == {"message": "m", "code": "AUTH"}
    full = LlmError("slow down", "RATE_LIMIT", status=429, retry_after_ms=1500, request_id="r1")
    assert dict(full.failure) == {
        "message": "slow down",
        "code": "RATE_LIMIT",
        "status": 429,
        "providerRetryAfterMs": 1500,
        "requestId": "r1",
    }
    with pytest.raises(TypeError):
        full.failure["code"] = "X"  # type: ignore[index]


def test_llm_error_redaction_replaces_longest_secret_first() -> None:
    err = LlmError("bad key sk-live-abcdef123 for id req-abcdef123", "AUTH", request_id="abcdef123")
    clean = err.redacted(["abcdef123", "sk-live-abcdef123"])
    assert clean.message == "bad key [REDACTED] for id req-[REDACTED]"
    assert clean.request_id == "[REDACTED]"
    assert clean.cause is None
    assert err.redacted(["not-present"]) is err


def test_secret_values_come_from_credential_like_variables() -> None:
    environ = {
        "OPENAI_API_KEY": "sk-0123456789",
        "github_token": "ghp-abcdefgh",
        "DB_PASSWORD": "short",
        "HOME": "/root/not-a-secret",
    }
    assert secret_values(environ, api_key="provider-key-1") == (
        "provider-key-1",
        "sk-0123456789",
        "ghp-abcdefgh",
    )


def test_tool_args_error() -> None:
    err = ToolArgsError(['missing required property "a"', '"b" must be a string'])
    assert err.code == "INVALID_ARGS"
    assert err.message == 'invalid arguments: missing required property "a"; "b" must be a string'
    assert err.violations == ('missing required property "a"', '"b" must be a string')


def test_tool_not_found_error() -> None:
    err = ToolNotFoundError("delete_file")
    assert (err.message, err.code, err.name) == (
        'unknown tool "delete_file"',
        "UNKNOWN_TOOL",
        "ToolNotFoundError",
    )
    assert err.tool_name == "delete_file"


def test_fs_error_accepts_only_fs_codes() -> None:
    assert FsError("m", "FS_STALE_VERSION").code == FsErrorCode.FS_STALE_VERSION
    with pytest.raises(ValueError, match='invalid FsErrorCode "NOPE"'):
        FsError("m", "NOPE")


ROUND_TRIPS = [
    pytest.param(lambda e: pickle.loads(pickle.dumps(e)), id="pickle"),
    pytest.param(copy.copy, id="copy"),
    pytest.param(copy.deepcopy, id="deepcopy"),
]


@pytest.mark.parametrize("round_trip", ROUND_TRIPS)
@pytest.mark.parametrize(
    "err",
    [
        HarnessError("m", "C", cause=ValueError("root")),
        HarnessError("m", "C", cause={"code": 500}),
        FsError("cannot write", "FS_IO_ERROR", cause=OSError(28, "full")),
        LlmError("slow", "RATE_LIMIT", status=429, retry_after_ms=10, request_id="r"),
        ToolArgsError(["a", "b"]),
        ToolNotFoundError("x"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_errors_survive_round_trips(err: HarnessError, round_trip: object) -> None:
    assert callable(round_trip)
    back = round_trip(err)
    assert type(back) is type(err)
    assert (back.message, back.code, back.name, str(back)) == (
        err.message,
        err.code,
        err.name,
        str(err),
    )
    assert error_chain(back) == error_chain(err)
    assert type(back.cause) is type(err.cause)
    assert back.__dict__.keys() == err.__dict__.keys()
    assert back.args == err.args == (err.message,)


def test_repr_shows_class_message_and_code() -> None:
    assert repr(FsError("gone", "FS_NOT_FOUND")) == "FsError('gone', code='FS_NOT_FOUND')"


@pytest.mark.parametrize(
    ("make", "kind", "message"),
    [
        (lambda: HarnessError(b"m", "C"), TypeError, "message must be a str, not bytes"),  # type: ignore[arg-type]
        (lambda: HarnessError("m", 7), TypeError, "code must be a str, not int"),  # type: ignore[arg-type]
        (lambda: HarnessError("m", ""), ValueError, "code must be a non-empty string"),
        (lambda: LlmError("", "AUTH"), ValueError, "message must be a non-empty string"),
        (lambda: LlmError("m", "C", status=99), ValueError,
         "status must be an HTTP status code (100-599), not 99"),
        (lambda: LlmError("m", "C", retry_after_ms="5"), ValueError,  # type: ignore[arg-type]
         "retry_after_ms must be positive and finite, not '5'"),
        (lambda: LlmError("m", "C", retry_after_ms=True), ValueError,
         "retry_after_ms must be positive and finite, not True"),
        (lambda: LlmError("m", "C", retry_after_ms=float("inf")), ValueError,
         "retry_after_ms must be positive and finite, not inf"),
        (lambda: LlmError("m", "C", retry_after_ms=0), ValueError,
         "retry_after_ms must be positive and finite, not 0"),
        (lambda: LlmError("m", "C", request_id=""), ValueError,
         "request_id must be a non-empty string, not ''"),
        (lambda: ToolArgsError([]), ValueError, "ToolArgsError needs at least one violation"),
        (lambda: ToolArgsError(["a", 3]), TypeError, "violations must be strings"),  # type: ignore[list-item]
        (lambda: ToolNotFoundError(3), TypeError, "tool name must be a str, not int"),  # type: ignore[arg-type]
    ],
)  # fmt: skip
def test_a_malformed_error_is_refused_with_what_was_wrong(
    make: object, kind: type[Exception], message: str
) -> None:
    assert callable(make)
    with pytest.raises(kind) as caught:
        make()
    assert str(caught.value) == message


def test_an_error_holds_its_message_as_its_only_argument() -> None:
    assert HarnessError("disk full", "FS_IO_ERROR").args == ("disk full",)


def test_an_unknown_tool_error_keeps_the_name_it_was_given() -> None:
    assert ToolNotFoundError("grep").tool_name == "grep"


def test_a_cause_left_out_reads_as_unset_in_the_signature() -> None:
    cause = inspect.signature(HarnessError).parameters["cause"]
    assert str(cause) == "cause: 'object' = <unset>"


def test_a_redacted_provider_error_keeps_everything_but_the_secret() -> None:
    err = LlmError("bad key sk-secret-123", "AUTH", status=401, retry_after_ms=250.0,
                   request_id="req sk-secret-123")  # fmt: skip
    clean = err.redacted(["sk-secret-123"])
    assert dict(clean.failure) == {
        "message": "bad key [REDACTED]",
        "code": "AUTH",
        "status": 401,
        "providerRetryAfterMs": 250.0,
        "requestId": "req [REDACTED]",
    }


def test_the_longest_secret_is_redacted_first() -> None:
    # Lexicographic order would replace the short secret inside the long one first and leave
    # the rest of the long one in the text.
    scrub = redactor(["zzzzzzzz", "aazzzzzzzzzz"])
    assert scrub("key=aazzzzzzzzzz and zzzzzzzz") == "key=[REDACTED] and [REDACTED]"


def test_secrets_are_credential_like_variables_and_the_key_longest_first() -> None:
    environ = {
        "PATH": "/usr/local/bin:/usr/bin",
        "HOME": "/home/someone",
        "GITHUB_TOKEN": "ghp_abcdefgh",
        "DB_PASSWORD": "zzzzzzzzzzzzzzzzzz",
        "SHORT_SECRET": "1234567",
    }
    assert secret_values(environ, api_key="sk-0123456789abcdef") == (
        "sk-0123456789abcdef",
        "zzzzzzzzzzzzzzzzzz",
        "ghp_abcdefgh",
    )
