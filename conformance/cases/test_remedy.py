"""SPEC §4.3: the model-boundary remedy — the wrapper itself, and the five texts the model sees."""

from __future__ import annotations

import pytest

from conformance import spec
from conformance.client import Client, Session
from conformance.disk import Disk

GUARDED = spec.REMEDIES


@pytest.mark.case("REM-001")
def test_stale_version_gets_the_reread_remedy(client: Client) -> None:
    """append ' — re-read the file, then retry' to FS_STALE_VERSION"""
    original = client.error(
        "FsError", 'cannot write "/w/a": file changed since it was read', code="FS_STALE_VERSION"
    )
    ref, same = client.remediate({"handle": original})
    assert same is False
    assert client.inspect(str(ref["handle"]))["message"] == (
        'cannot write "/w/a": file changed since it was read — re-read the file, then retry'
    )


@pytest.mark.case("REM-002")
def test_not_observed_gets_the_read_remedy(client: Client) -> None:
    """append ' — read the file, then retry' to FS_NOT_OBSERVED"""
    original = client.error("FsError", 'edit requires reading "/w/a" first', code="FS_NOT_OBSERVED")
    ref, _ = client.remediate({"handle": original})
    assert client.inspect(str(ref["handle"]))["message"] == (
        'edit requires reading "/w/a" first — read the file, then retry'
    )


@pytest.mark.case("REM-003")
def test_remedy_keeps_the_code(client: Client) -> None:
    """keep the code of a remedied error unchanged"""
    for code in GUARDED:
        ref, _ = client.remediate({"handle": client.error("FsError", "m", code=code)})
        described = client.inspect(str(ref["handle"]))
        assert (described["name"], described["code"]) == ("FsError", code)


@pytest.mark.case("REM-004")
def test_remedy_chains_the_original(client: Client) -> None:
    """chain the original error as the remedied error's cause"""
    for code in GUARDED:
        original = client.error("FsError", "m", code=code)
        ref, _ = client.remediate({"handle": original})
        cause = client.inspect(str(ref["handle"]))["cause"]
        assert isinstance(cause, dict)
        assert cause["handle"] == original


@pytest.mark.case("REM-005")
def test_remedy_leaves_the_original_alone(client: Client) -> None:
    """build a new error, leaving the original's message untouched"""
    for code in GUARDED:
        original = client.error("FsError", "as the provider said", code=code)
        ref, same = client.remediate({"handle": original})
        assert (same, ref["handle"] != original) == (False, True)
        assert client.inspect(original)["message"] == "as the provider said"


@pytest.mark.case("REM-006")
def test_other_fs_errors_pass_through(client: Client) -> None:
    """return every other FsError unchanged: the same object"""
    for code in spec.FS_CODES:
        if code not in GUARDED:
            original = client.error("FsError", "m", code=code)
            assert client.remediate({"handle": original}) == ({"handle": original}, True), code


@pytest.mark.case("REM-007")
def test_non_fs_errors_pass_through(client: Client) -> None:
    """return non-FsError errors unchanged, even one carrying a guarded code"""
    for kind, extra in [
        ("HarnessError", {"code": "FS_STALE_VERSION"}),
        ("HarnessError", {"code": "FS_NOT_OBSERVED"}),
        ("LlmError", {"code": "FS_STALE_VERSION"}),
        ("ToolArgsError", {"violations": ["v"]}),
        ("Exception", {}),
    ]:
        original = client.error(kind, "m", **extra)  # type: ignore[arg-type]
        assert client.remediate({"handle": original}) == ({"handle": original}, True), kind


@pytest.mark.case("REM-008")
def test_non_error_values_pass_through(client: Client) -> None:
    """return non-error values unchanged"""
    for value in ["FS_STALE_VERSION", {"code": "FS_STALE_VERSION"}, None, 3]:
        assert client.remediate({"value": value}) == ({"value": value}, True), value


def _observed(session: Session, disk: Disk, path: str, content: str) -> None:
    disk.write(path, content)
    assert session.read(path).error is None


@pytest.mark.case("REM-009")
def test_stale_write_text(session: Session, disk: Disk) -> None:
    """show a stale write as '…: file changed since it was read — re-read the file, then retry'"""
    _observed(session, disk, "a.txt", "one\n")
    disk.replace("a.txt", "two, from someone else\n")
    result = session.write("a.txt", "three\n")
    p = disk.display("a.txt")
    assert (result.text, result.error) == (
        spec.error_text(spec.changed("write", p) + spec.REREAD),
        spec.fs("FS_STALE_VERSION"),
    )


@pytest.mark.case("REM-010")
def test_vanished_write_text(session: Session, disk: Disk) -> None:
    """show a write to a deleted file as '…: file no longer exists — re-read the file, then retry'"""
    _observed(session, disk, "a.txt", "one\n")
    disk.delete("a.txt")
    result = session.write("a.txt", "three\n")
    assert (result.text, result.error) == (
        spec.error_text(spec.write_vanished(disk.display("a.txt")) + spec.REREAD),
        spec.fs("FS_STALE_VERSION"),
    )


@pytest.mark.case("REM-011")
def test_stale_edit_text(session: Session, disk: Disk) -> None:
    """show a stale edit as '…: file changed since it was read — re-read the file, then retry'"""
    _observed(session, disk, "a.txt", "one\n")
    disk.replace("a.txt", "one, changed\n")
    result = session.edit("a.txt", "one", "1")
    assert (result.text, result.error) == (
        spec.error_text(spec.changed("edit", disk.display("a.txt")) + spec.REREAD),
        spec.fs("FS_STALE_VERSION"),
    )


@pytest.mark.case("REM-012")
def test_overwrite_unread_text(session: Session, disk: Disk) -> None:
    """show an overwrite of an unread file as '… without reading it first — read the file, then retry'"""
    disk.write("a.txt", "keep\n")
    result = session.write("a.txt", "clobber\n")
    assert (result.text, result.error) == (
        spec.error_text(spec.exists_unread(disk.display("a.txt")) + spec.READ_FIRST),
        spec.fs("FS_NOT_OBSERVED"),
    )


@pytest.mark.case("REM-013")
def test_edit_before_read_text(session: Session, disk: Disk) -> None:
    """give the policy's own refusal the remedy too: 'edit requires reading "<p>" first — read …'"""
    disk.write("a.txt", "keep\n")
    result = session.edit("a.txt", "keep", "x")
    assert (result.text, result.error) == (
        spec.error_text(spec.edit_unobserved(disk.display("a.txt")) + spec.READ_FIRST),
        spec.fs("FS_NOT_OBSERVED"),
    )


@pytest.mark.case("REM-014")
def test_read_gets_no_remedy(session: Session, disk: Disk) -> None:
    """apply no remedy to read failures"""
    result = session.read("missing.txt")
    assert (result.text, result.error) == (
        spec.error_text(spec.read_missing(disk.display("missing.txt"))),
        spec.fs("FS_NOT_FOUND"),
    )
