"""Property cases (hypothesis): the rules of §1, §2.1 and §4.3 for arbitrary inputs."""

from __future__ import annotations

import pickle
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance import spec
from conformance.client import Client, Session
from conformance.contract import Json, JsonObject, NativeHarness
from conformance.strategies import CODES, FS_CODE, NON_EMPTY_TEXT, TEXT

GUARDED = spec.REMEDIES
# JSON whose compact rendering is the same in every language (no floats).
EXACT_JSON: st.SearchStrategy[Json] = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=10,
)


@pytest.fixture(scope="module")
def probe(client: Client, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    with client.session(str(tmp_path_factory.mktemp("probe")), probe=True) as session:
        yield session


@pytest.mark.case("PROP-001")
@given(message=TEXT, code=FS_CODE)
def test_remedy_for_every_fs_error(client: Client, message: str, code: str) -> None:
    """remedy exactly the two guarded codes: same code, original as cause, exactly one remedy"""
    original = client.error("FsError", message, code=code)
    ref, same = client.remediate({"handle": original})
    if code not in GUARDED:
        assert (ref, same) == ({"handle": original}, True)
        return
    described = client.inspect(str(ref["handle"]))
    cause = described["cause"]
    assert same is False
    assert (described["name"], described["code"], described["message"]) == (
        "FsError",
        code,
        message + GUARDED[code],
    )
    assert isinstance(cause, dict)
    assert cause["handle"] == original


@pytest.mark.case("PROP-002")
@given(
    kind=st.sampled_from(["HarnessError", "LlmError", "Exception"]),
    message=NON_EMPTY_TEXT,
    code=CODES | FS_CODE,
    value=EXACT_JSON,
)
def test_remedy_passes_everything_else(
    client: Client, kind: str, message: str, code: str, value: Json
) -> None:
    """return every non-FsError error, and every plain value, as the same object"""
    handle = (
        client.error(kind, message, code=code)
        if kind != "Exception"
        else client.error(kind, message)
    )
    assert client.remediate({"handle": handle}) == ({"handle": handle}, True)
    assert client.remediate({"value": value}) == ({"value": value}, True)


@pytest.mark.case("PROP-003")
@given(kind=st.sampled_from(spec.PROBE_KINDS), message=NON_EMPTY_TEXT, code=CODES, fs_code=FS_CODE)
def test_registry_reports_every_harness_error(
    probe: Session, kind: str, message: str, code: str, fs_code: str
) -> None:
    """report name and code of any HarnessError subclass raised by a tool, and none otherwise"""
    code = fs_code if kind == "FsError" else code
    result = probe.probe(kind, message, code)
    expected = None if kind == "Exception" else (kind, code)
    assert (result.text, result.is_error, result.error) == (
        spec.error_text(message),
        True,
        expected,
    )


@pytest.mark.case("PROP-004")
@given(value=EXACT_JSON, kind=st.sampled_from(["Exception", "HarnessError", "FsError"]))
def test_to_error(client: Client, value: Json, kind: str) -> None:
    """wrap every non-exception value as UNKNOWN with it as cause; return exceptions unchanged"""
    handle, same = client.to_error({"value": value})
    described = client.inspect(handle)
    assert same is False
    assert (described["name"], described["code"], described["message"]) == (
        "HarnessError",
        "UNKNOWN",
        spec.render_value(value),
    )
    # A null cause value and no cause are the same thing (SPEC §1.1: cause is None either way).
    assert described["cause"] in ([None, {"value": None}] if value is None else [{"value": value}])
    code = {"HarnessError": "C", "FsError": "FS_IO_ERROR"}.get(kind)
    error = client.error(kind, "m", code=code) if code else client.error(kind, "m")
    assert client.to_error({"handle": error}) == (error, True)


CHAIN_LINKS = st.lists(
    st.tuples(
        st.sampled_from(["HarnessError", "FsError", "LlmError", "Exception"]), NON_EMPTY_TEXT
    ),
    min_size=1,
    max_size=6,
)


def _build_chain(client: Client, links: list[tuple[str, str]], tail: Json | None) -> str:
    """Build a linear chain, innermost last in ``links``; return the outermost handle."""
    cause: JsonObject | None = None if tail is None else {"value": tail}
    handle = ""
    for index, (drawn, message) in enumerate(reversed(links)):
        # Only harness errors carry a non-exception cause.
        value_cause = cause is not None and "value" in cause
        kind = "HarnessError" if drawn == "Exception" and value_cause else drawn
        extra: dict[str, Json] = {"code": {"FsError": "FS_IO_ERROR"}.get(kind, f"C{index}")}
        if kind == "Exception":
            extra = {}
        if cause is not None:
            extra["cause"] = cause
        handle = client.error(kind, message, **extra)
        cause = {"handle": handle}
    return handle


@pytest.mark.case("PROP-005")
@given(links=CHAIN_LINKS, tail=st.none() | EXACT_JSON.filter(lambda v: v is not None))
def test_error_chain_of_any_chain(
    client: Client, links: list[tuple[str, str]], tail: Json | None
) -> None:
    """render any chain as its messages joined by ': ', omitting a cause equal to its message"""
    handle = _build_chain(client, links, tail)
    rendered_tail = None if tail is None else spec.render_value(tail)
    assert client.chain({"handle": handle}) == spec.chain_of([m for _, m in links], rendered_tail)


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


@pytest.mark.case("PROP-006")
@given(links=HARNESS_LINKS, leaf=LEAVES)
def test_causes_survive_pickling(
    client: Client, native: NativeHarness, links: list[tuple[str, str]], leaf: object
) -> None:
    """keep every message, code, name and cause of any harness error chain through pickling"""
    # A plain exception may only be the innermost cause: the language's own exceptions are not
    # required to keep *their* causes through pickling.
    if isinstance(leaf, tuple):
        handle = _build_chain(client, [*links, leaf], None)
    else:
        handle = _build_chain(client, links, leaf)
    copy = native.adopt_error(pickle.loads(pickle.dumps(native.native_error(handle))))
    assert client.chain({"handle": copy}) == client.chain({"handle": handle})
    original, restored = client.inspect(handle), client.inspect(copy)
    while isinstance(original, dict) and "name" in original:
        assert isinstance(restored, dict)
        for key in ("name", "code", "message", "text", "isHarnessError"):
            assert restored[key] == original[key], key
        original, restored = original["cause"], restored["cause"]
    assert restored == original
