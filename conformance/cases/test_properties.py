"""Property cases (hypothesis): the rules of §1, §2.1 and §4.3 for arbitrary inputs.

Each runs from a fixed seed derived from its case ID (``--hypothesis-seed`` explores others), so
the same harness gets the same verdict on every run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance import spec
from conformance.cases import case, needs
from conformance.causes import (
    code_signature,
    passthrough_copied,
    subject_signature,
    to_error_uncoded,
)
from conformance.client import Client, Session, cause_ref
from conformance.display import show
from conformance.harness.contract import Json, JsonObject
from conformance.strategies import CODES, FS_CODE, NON_EMPTY_TEXT, TEXT
from conformance.verdict import Judge

GUARDED = spec.REMEDIES
# JSON whose compact rendering is the same in every language (no floats).
INDEX_KEY: Final = re.compile(r"0|[1-9][0-9]*")
KEYS: Final = TEXT.filter(lambda key: INDEX_KEY.fullmatch(key) is None)
"""Object keys whose given order every language keeps ({err.render}: not array indices)."""
EXACT_JSON: st.SearchStrategy[Json] = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=10,
)


@pytest.fixture(scope="module")
def probe(client: Client, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    with client.session(str(tmp_path_factory.mktemp("probe")), probe=True) as session:
        yield session


@case(
    "PROP-001",
    rules=[
        "remedy.stale",
        "remedy.not-observed",
        "remedy.code",
        "remedy.cause",
        "remedy.passthrough",
    ],
)
@needs("taxonomy")
@given(message=TEXT, code=FS_CODE)
def test_remedy_for_every_fs_error(client: Client, judge: Judge, message: str, code: str) -> None:
    """remedy exactly the two guarded codes: same code, original as cause, exactly one remedy"""
    original = client.error("FsError", message, code=code)
    ref, same = client.remediate({"handle": original})
    if code not in GUARDED:
        judge.equal(
            f"remediate of an {code} FsError",
            (ref, same),
            ({"handle": original}, True),
            rule="remedy.passthrough",
            signature=passthrough_copied(client.is_copy({"handle": original}, (ref, same))),
        )
        return
    described = client.inspect(str(ref.get("handle")))
    got = (str(described["name"]), str(described["code"]))
    judge.equal(f"remediate of an {code} FsError gave (same, name, code)", (same, *got),
                (False, "FsError", code), rule="remedy.code",
                signature=code_signature("remedy.code", None, None, got, ("FsError", code), remedied=True)
                if got != ("FsError", code) else None)  # fmt: skip
    judge.equal(f"the remedied {code} message", described["message"], message + client.wording(GUARDED[code]),
                rule="remedy.stale" if code == "FS_STALE_VERSION" else "remedy.not-observed", level="wording")  # fmt: skip
    judge.equal(
        "the remedied error's cause",
        cause_ref(described["cause"]),
        {"handle": original},
        rule="remedy.cause",
        signature=subject_signature("remedy.cause", "remedied-cause-lost"),
    )


@case("PROP-002", rules=["remedy.passthrough"])
@needs("taxonomy")
@given(kind=st.sampled_from(["HarnessError", "LlmError", "Exception"]), message=NON_EMPTY_TEXT,
       code=CODES | FS_CODE, value=EXACT_JSON)  # fmt: skip
def test_remedy_passes_everything_else(client: Client, judge: Judge, kind: str, message: str, code: str,
                                       value: Json) -> None:  # fmt: skip
    """return every non-FsError error, and every plain value, as the same object"""
    handle = (
        client.error(kind, message, code=code)
        if kind != "Exception"
        else client.error(kind, message)
    )
    passed = client.remediate({"handle": handle})
    judge.equal(f"remediate of a {kind} with code {code}", passed, ({"handle": handle}, True), rule="remedy.passthrough",
                signature=passthrough_copied(client.is_copy({"handle": handle}, passed)))  # fmt: skip
    passed = client.remediate({"value": value})
    judge.equal(f"remediate of the value {show(value)}", passed, ({"value": value}, True), rule="remedy.passthrough",
                signature=passthrough_copied(client.is_copy({"value": value}, passed)))  # fmt: skip


@case("PROP-003", rules=["tool.error.structured", "tool.error.plain", "tool.error.text"])
@needs(options=["probe"])
@given(kind=st.sampled_from(spec.PROBE_KINDS), message=NON_EMPTY_TEXT, code=CODES, fs_code=FS_CODE)
def test_registry_reports_every_harness_error(probe: Session, client: Client, kind: str, message: str, code: str,
                                              fs_code: str) -> None:  # fmt: skip
    """report name and code of any HarnessError subclass raised by a tool, and none otherwise"""
    code = fs_code if kind == "FsError" else code
    result = probe.probe(kind, message, code).refused("tool.error.text")
    result.says(client.wording.error(message), "tool.error.text")
    result.code(None if kind == "Exception" else (kind, code), "tool.error.structured")


@case("PROP-004", rules=["err.to-error.value", "err.to-error.exception", "err.render"])
@needs("taxonomy", methods=["to_error"])
@given(value=EXACT_JSON, kind=st.sampled_from(["Exception", "HarnessError", "FsError"]))
def test_to_error(client: Client, judge: Judge, value: Json, kind: str) -> None:
    """wrap every non-exception value as UNKNOWN with it as cause; return exceptions unchanged"""
    handle, same = client.to_error({"value": value})
    described = client.inspect(handle)
    judge.equal(f"to_error of {show(value)}: (same, name, code)", (same, described["name"], described["code"]),
                (False, "HarnessError", "UNKNOWN"), rule="err.to-error.value",
                signature=to_error_uncoded(same, described["code"]))  # fmt: skip
    judge.equal(f"the message of to_error({show(value)})", described["message"], spec.render_value(value), rule="err.render",
                level="wording")  # fmt: skip
    # A null cause value and no cause are the same thing (SPEC §1.1: cause is None either way).
    expected = [None, {"value": None}] if value is None else [{"value": value}]
    judge.true(described["cause"] in expected, f"the cause of to_error({show(value)}) is {show(described['cause'])}",
               rule="err.to-error.value", signature=to_error_uncoded(same, described["code"]))  # fmt: skip
    code = {"HarnessError": "C", "FsError": "FS_IO_ERROR"}.get(kind)
    error = client.error(kind, "m", code=code) if code else client.error(kind, "m")
    handle, same = client.to_error({"handle": error})
    judge.equal(
        f"to_error of a {kind}",
        ({"handle": handle}, same),
        ({"handle": error}, True),
        rule="err.to-error.exception",
    )


CHAIN_LINKS = st.lists(
    st.tuples(
        st.sampled_from(["HarnessError", "FsError", "LlmError", "Exception"]), NON_EMPTY_TEXT
    ),
    min_size=1,
    max_size=6,
)


def _build_chain(client: Client, links: list[tuple[str, str]], tail: Json | None) -> str:
    """Build a linear chain, innermost last in ``links``; return the outermost handle."""
    built: list[tuple[str, Json, JsonObject]] = []
    for index, (drawn, message) in enumerate(reversed(links)):
        # Only harness errors carry a non-exception cause.
        kind = "HarnessError" if drawn == "Exception" and index == 0 and tail is not None else drawn
        extra: JsonObject = (
            {}
            if kind == "Exception"
            else {"code": {"FsError": "FS_IO_ERROR"}.get(kind, f"C{index}")}
        )
        built.append((kind, message, extra))
    return client.chained(built, None if tail is None else {"value": tail})


@case("PROP-005", rules=["chain.join", "chain.repeat", "chain.value"])
@needs("taxonomy")
@given(links=CHAIN_LINKS, tail=st.none() | EXACT_JSON.filter(lambda v: v is not None))
def test_error_chain_of_any_chain(
    client: Client, judge: Judge, links: list[tuple[str, str]], tail: Json | None
) -> None:
    """render any chain as its messages joined by ': ', omitting a cause equal to its message"""
    handle = _build_chain(client, links, tail)
    rendered_tail = None if tail is None else spec.render_value(tail)
    judge.equal("error_chain", client.chain({"handle": handle}), spec.chain_of([m for _, m in links], rendered_tail),
                rule="chain.join")  # fmt: skip


HARNESS_LINKS = st.lists(
    st.tuples(st.sampled_from(["HarnessError", "FsError", "LlmError"]), NON_EMPTY_TEXT),
    min_size=1,
    max_size=6,
)
LEAVES = (
    st.none()
    | EXACT_JSON.filter(lambda v: v is not None)
    | NON_EMPTY_TEXT.map(lambda m: ("Exception", m))
)


@case("PROP-006", rules=["err.pickle"])
@needs("taxonomy", "native")
@given(links=HARNESS_LINKS, leaf=LEAVES)
def test_causes_survive_pickling(
    client: Client, judge: Judge, links: list[tuple[str, str]], leaf: object
) -> None:
    """keep every message, code, name and cause of any harness error chain through pickling"""
    # A plain exception may only be the innermost cause: the language's own exceptions are not
    # required to keep *their* causes through pickling.
    if isinstance(leaf, tuple):
        handle = _build_chain(client, [*links, leaf], None)
    else:
        handle = _build_chain(client, links, leaf)
    copy = client.roundtrip(handle, "pickle")
    judge.equal(
        "error_chain after pickling",
        client.chain({"handle": copy}),
        client.chain({"handle": handle}),
        rule="err.pickle",
    )
    original, restored = client.inspect(handle), client.inspect(copy)
    while isinstance(original, dict) and "name" in original:
        assert isinstance(restored, dict)
        for key in ("name", "code", "message", "text", "isHarnessError"):
            judge.equal(
                f"the {key} after pickling", restored.get(key), original[key], rule="err.pickle"
            )
        original, restored = original["cause"], restored["cause"]
    judge.equal("the innermost cause after pickling", restored, original, rule="err.pickle")
