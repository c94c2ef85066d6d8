"""SPEC §3.3–§3.4: the provider's exact messages and codes, and how it publishes, via the tools."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable

import pytest

from conformance import spec
from conformance.client import Session, ToolOutcome
from conformance.disk import Disk


def _expect(result: ToolOutcome, message: str, code: str) -> None:
    assert (result.text, result.error) == (spec.error_text(message), spec.fs(code))


def _observe(session: Session, path: str) -> None:
    assert session.read(path).error is None, f"could not read {path}"


@pytest.mark.case("PRV-001")
def test_parent_segment_is_a_file(session: Session, disk: Disk) -> None:
    """refuse a path through a file: 'cannot resolve "<p>": a parent path segment is not a directory'"""
    disk.write("file.txt", "x\n")
    for path in ["file.txt/child.txt", "file.txt/deeper/child.txt"]:
        message = spec.parent_not_dir(disk.display(path))
        _expect(session.read(path), message, "FS_NOT_FOUND")
        _expect(session.write(path, "x"), message, "FS_NOT_FOUND")
        _expect(session.edit(path, "a", "b"), message, "FS_NOT_FOUND")
    assert disk.read("file.txt") == b"x\n"


@pytest.mark.case("PRV-002")
def test_read_missing(session: Session, disk: Disk) -> None:
    """report a missing file on read: 'cannot read "<p>": not found'"""
    _expect(session.read("nope.txt"), spec.read_missing(disk.display("nope.txt")), "FS_NOT_FOUND")


@pytest.mark.case("PRV-003")
def test_directory_is_not_a_regular_file(session: Session, disk: Disk) -> None:
    """refuse a directory for read and write: 'cannot <op> "<p>": not a regular file'"""
    disk.path("dir").mkdir()
    p = disk.display("dir")
    _expect(session.read("dir"), spec.not_regular("read", p), "FS_NOT_REGULAR_FILE")
    _expect(session.write("dir", "x"), spec.not_regular("write", p), "FS_NOT_REGULAR_FILE")
    assert disk.path("dir").is_dir()


def _bounded(call: Callable[[], ToolOutcome]) -> ToolOutcome:
    """Run a tool call that must not block; fail (not hang) if it does."""
    box: list[ToolOutcome] = []
    worker = threading.Thread(target=lambda: box.append(call()), daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert box, "the call blocked: special files must be opened without blocking"
    return box[0]


@pytest.mark.case("PRV-004")
def test_fifo_is_not_a_regular_file(open_session: Callable[..., Session], disk: Disk) -> None:
    """refuse a FIFO for read, write and edit without ever blocking on it"""
    os.mkfifo(disk.path("pipe"))
    p = disk.display("pipe")
    session = open_session(policy=False)
    _expect(
        _bounded(lambda: session.read("pipe")), spec.not_regular("read", p), "FS_NOT_REGULAR_FILE"
    )
    _expect(
        _bounded(lambda: session.write("pipe", "x")),
        spec.not_regular("write", p),
        "FS_NOT_REGULAR_FILE",
    )
    _expect(
        _bounded(lambda: session.edit("pipe", "a", "b")),
        spec.not_regular("edit", p),
        "FS_NOT_REGULAR_FILE",
    )


@pytest.mark.case("PRV-005")
def test_edit_of_a_directory(open_session: Callable[..., Session], disk: Disk) -> None:
    """refuse to edit a directory: 'cannot edit "<p>": not a regular file'"""
    disk.path("dir").mkdir()
    result = open_session(policy=False).edit("dir", "a", "b")
    _expect(result, spec.not_regular("edit", disk.display("dir")), "FS_NOT_REGULAR_FILE")


@pytest.mark.case("PRV-006")
def test_read_binary(session: Session, disk: Disk) -> None:
    """refuse a NUL byte in the first 8192 bytes on read: 'cannot read "<p>": binary file'"""
    disk.write("blob.bin", b"a" * 8191 + b"\0")
    _expect(session.read("blob.bin"), spec.binary("read", disk.display("blob.bin")), "FS_NOT_TEXT")


@pytest.mark.case("PRV-007")
def test_read_nul_after_the_sniff_is_text(session: Session, disk: Disk) -> None:
    """show a file whose first NUL comes after byte 8192"""
    disk.write("late.txt", b"a" * 8192 + b"\0tail\n")
    result = session.read("late.txt")
    assert result.error is None
    assert result.text == spec.read_output(disk.display("late.txt"), "a" * 8192 + "\0tail\n")


@pytest.mark.case("PRV-008")
def test_edit_binary(session: Session, disk: Disk) -> None:
    """refuse a NUL byte anywhere on edit: 'cannot edit "<p>": binary file'"""
    disk.write("late.txt", b"a" * 9000 + b"\0tail\n")
    _observe(session, "late.txt")
    _expect(
        session.edit("late.txt", "tail", "x"),
        spec.binary("edit", disk.display("late.txt")),
        "FS_NOT_TEXT",
    )
    assert disk.read("late.txt") == b"a" * 9000 + b"\0tail\n"


@pytest.mark.case("PRV-009")
def test_read_invalid_utf8(session: Session, disk: Disk) -> None:
    """refuse invalid UTF-8 on read: 'cannot read "<p>": invalid UTF-8 text'"""
    disk.write("latin1.txt", b"caf\xe9\n")
    _expect(
        session.read("latin1.txt"),
        spec.invalid_utf8("read", disk.display("latin1.txt")),
        "FS_NOT_TEXT",
    )


@pytest.mark.case("PRV-010")
def test_edit_invalid_utf8(open_session: Callable[..., Session], disk: Disk) -> None:
    """refuse invalid UTF-8 on edit: 'cannot edit "<p>": invalid UTF-8 text'"""
    disk.write("latin1.txt", b"caf\xe9\n")
    result = open_session(policy=False).edit("latin1.txt", "caf", "x")
    _expect(result, spec.invalid_utf8("edit", disk.display("latin1.txt")), "FS_NOT_TEXT")
    assert disk.read("latin1.txt") == b"caf\xe9\n"


@pytest.mark.case("PRV-011")
def test_too_large(open_session: Callable[..., Session], disk: Disk) -> None:
    """refuse a file over max_read_bytes: 'cannot read "<p>": <size> bytes exceeds the <max>-byte limit'"""
    session = open_session(maxReadBytes=100)
    disk.write("big.txt", "x" * 101)
    disk.write("fits.txt", "x" * 100)
    _expect(
        session.read("big.txt"), spec.too_large(disk.display("big.txt"), 101, 100), "FS_TOO_LARGE"
    )
    assert session.read("fits.txt").error is None


@pytest.mark.case("PRV-012")
@pytest.mark.skipif(
    os.geteuid() == 0, reason="root bypasses file permissions; run as a normal user"
)
def test_permission_denied(session: Session, disk: Disk) -> None:
    """refuse a file the process may not write: 'cannot write "<p>": permission denied'"""
    disk.write("ro.txt", "keep\n")
    _observe(session, "ro.txt")
    disk.path("ro.txt").chmod(0o444)
    _expect(
        session.write("ro.txt", "x"),
        spec.permission("write", disk.display("ro.txt")),
        "FS_PERMISSION_DENIED",
    )
    _expect(
        session.edit("ro.txt", "keep", "x"),
        spec.permission("edit", disk.display("ro.txt")),
        "FS_PERMISSION_DENIED",
    )
    assert disk.read("ro.txt") == b"keep\n"
    assert stat.S_IMODE(os.stat(disk.path("ro.txt")).st_mode) == 0o444


@pytest.mark.case("PRV-013")
def test_other_os_errors(session: Session, disk: Disk) -> None:
    """report other OS errors by their lower-cased reason: 'cannot read "<p>": file name too long'"""
    name = "n" * 300
    _expect(
        session.read(name),
        spec.io_error("read", disk.display(name), "file name too long"),
        "FS_IO_ERROR",
    )


@pytest.mark.case("PRV-014")
def test_edit_not_found(session: Session, disk: Disk) -> None:
    """report an absent old_string: 'old_string was not found in "<p>"'"""
    disk.write("a.txt", "hello world\n")
    _observe(session, "a.txt")
    _expect(
        session.edit("a.txt", "goodbye", "x"),
        spec.edit_not_found(disk.display("a.txt")),
        "FS_EDIT_NOT_FOUND",
    )


@pytest.mark.case("PRV-015")
def test_edit_ambiguous(session: Session, disk: Disk) -> None:
    """report an old_string found n>1 times, with n, unless replace_all is set"""
    disk.write("a.txt", "item\nitem\nitem\n")
    _observe(session, "a.txt")
    _expect(
        session.edit("a.txt", "item", "x"),
        spec.edit_ambiguous(disk.display("a.txt"), 3),
        "FS_AMBIGUOUS_EDIT",
    )
    assert disk.read("a.txt") == b"item\nitem\nitem\n"


@pytest.mark.case("PRV-016")
def test_write_of_lone_surrogates(session: Session, disk: Disk) -> None:
    """refuse content that cannot be UTF-8 (a lone surrogate) and write nothing"""
    disk.write("a.txt", "keep\n")
    _observe(session, "a.txt")
    result = session.call("write", '{"file_path": "a.txt", "content": "x\\ud800y"}')
    _expect(result, spec.invalid_utf8("write", disk.display("a.txt")), "FS_NOT_TEXT")
    new = session.call("write", '{"file_path": "new.txt", "content": "\\udfff"}')
    _expect(new, spec.invalid_utf8("write", disk.display("new.txt")), "FS_NOT_TEXT")
    assert disk.read("a.txt") == b"keep\n"
    assert not disk.exists("new.txt")


@pytest.mark.case("PRV-017")
def test_edit_with_lone_surrogates(session: Session, disk: Disk) -> None:
    """refuse edit strings that cannot be UTF-8 and write nothing"""
    disk.write("a.txt", "keep\n")
    _observe(session, "a.txt")
    for raw in [
        '{"file_path": "a.txt", "old_string": "keep", "new_string": "\\ud800"}',
        '{"file_path": "a.txt", "old_string": "k\\ud800", "new_string": "x"}',
    ]:
        _expect(
            session.call("edit", raw),
            spec.invalid_utf8("edit", disk.display("a.txt")),
            "FS_NOT_TEXT",
        )
    assert disk.read("a.txt") == b"keep\n"


@pytest.mark.case("PRV-018")
def test_unguarded_edit_of_a_missing_file(open_session: Callable[..., Session], disk: Disk) -> None:
    """call an unguarded edit of a missing file stale: 'cannot edit "<p>": file changed since it was read'"""
    result = open_session(policy=False).edit("gone.txt", "a", "b")
    _expect(
        result, spec.changed("edit", disk.display("gone.txt")) + spec.REREAD, "FS_STALE_VERSION"
    )
    assert not disk.exists("gone.txt")


@pytest.mark.case("PRV-019")
def test_crlf_is_kept(session: Session, disk: Disk) -> None:
    """keep CRLF line endings through edit and write (no newline translation)"""
    disk.write("w.txt", b"one\r\ntwo\r\n")
    _observe(session, "w.txt")
    assert session.edit("w.txt", "two", "2").error is None
    assert disk.read("w.txt") == b"one\r\n2\r\n"
    assert session.write("w.txt", "a\r\nb\r\n").error is None
    assert disk.read("w.txt") == b"a\r\nb\r\n"


@pytest.mark.case("PRV-020")
def test_write_creates_parents(session: Session, disk: Disk) -> None:
    """create missing parent directories on write"""
    result = session.write("deep/er/new.txt", "made\n")
    assert (result.text, result.error) == (
        spec.write_output(disk.display("deep/er/new.txt"), created=True),
        None,
    )
    assert disk.read("deep/er/new.txt") == b"made\n"


@pytest.mark.case("PRV-021")
def test_write_through_a_symlink(session: Session, disk: Disk) -> None:
    """publish to the link's target: the symlink stays, the target changes"""
    disk.write("real.txt", "old\n")
    disk.symlink("link.txt", "real.txt")
    _observe(session, "link.txt")
    assert session.write("link.txt", "new\n").error is None
    assert disk.path("link.txt").is_symlink()
    assert disk.read("real.txt") == b"new\n"


@pytest.mark.case("PRV-022")
def test_update_keeps_permission_bits(session: Session, disk: Disk) -> None:
    """keep the target's permission bits when replacing it"""
    disk.write("run.sh", "echo 1\n")
    disk.path("run.sh").chmod(0o751)
    _observe(session, "run.sh")
    assert session.write("run.sh", "echo 2\n").error is None
    assert session.edit("run.sh", "2", "3").error is None
    assert stat.S_IMODE(os.stat(disk.path("run.sh")).st_mode) == 0o751


@pytest.mark.case("PRV-023")
def test_no_temp_files_are_left(session: Session, disk: Disk) -> None:
    """leave no temporary file behind, after successes and failures alike"""
    disk.write("a.txt", "one\n")
    session.write("a.txt", "refused\n")
    _observe(session, "a.txt")
    session.write("a.txt", "two\n")
    disk.replace("a.txt", "three\n")
    session.write("a.txt", "stale\n")
    session.edit("a.txt", "three", "stale")
    assert [name for name in os.listdir(disk.root) if name != "a.txt"] == []
