"""SPEC §3.3–§3.4: the provider's exact messages and codes, and the order of its checks."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from conformance.cases import case, needs
from conformance.causes import signature
from conformance.client import Client, Result, Session, Spelled
from conformance.disk import Disk, permissions_enforced
from conformance.display import OUTSIDE, show
from conformance.rules import cite
from conformance.spec import Wording, fs
from conformance.verdict import ConformanceFailure, Judge


def observe(session: Session, path: str) -> None:
    """A read that must succeed: the session's fresh observation."""
    session.read(path).accepted("policy.record")


@case("PRV-001", rules=["fs.resolve.parent-segment", "fs.msg.parent-segment"])
def test_parent_segment_is_a_file(session: Session, disk: Disk, w: Wording) -> None:
    """refuse a path through a file: 'cannot resolve "<p>": a parent path segment is not a directory'"""
    disk.write("file.txt", "x\n")
    for path in ["file.txt/child.txt", "file.txt/deeper/child.txt"]:

        def text(op: str, path: str = path) -> str:
            return w.fs_error("fs.parent_segment", op=op, p=disk.display(path))

        code = fs("FS_NOT_FOUND")
        session.read(path).refused("fs.resolve.parent-segment").says(
            text("read"), "fs.msg.parent-segment"
        ).code(code, "fs.msg.parent-segment")
        session.write(path, "x").refused("fs.resolve.parent-segment").says(
            text("write"), "fs.msg.parent-segment"
        ).code(code, "fs.msg.parent-segment")
        session.edit(path, "a", "b").refused("fs.resolve.parent-segment").says(
            text("edit"), "fs.resolve.parent-segment"
        ).code(code, "fs.msg.parent-segment")


@case("PRV-002", rules=["fs.msg.read-missing"])
def test_read_missing(session: Session, disk: Disk, w: Wording) -> None:
    """report a missing file on read: 'cannot read "<p>": not found'"""
    result = session.read("nope.txt").refused("fs.msg.read-missing")
    result.says(w.fs_error("fs.read_missing", p=disk.display("nope.txt")), "fs.msg.read-missing")
    result.code(fs("FS_NOT_FOUND"), "fs.msg.read-missing")


@case("PRV-003", rules=["fs.msg.not-regular", "fs.order.write"])
def test_directory_is_not_a_regular_file(session: Session, disk: Disk, w: Wording) -> None:
    """refuse a directory for read and write: 'cannot <op> "<p>": not a regular file'"""
    disk.path("dir").mkdir()
    p = disk.display("dir")
    for op, result in [("read", session.read("dir")), ("write", session.write("dir", "x"))]:
        result.refused("fs.msg.not-regular").says(
            w.fs_error("fs.not_regular", op=op, p=p), "fs.msg.not-regular"
        )
        result.code(fs("FS_NOT_REGULAR_FILE"), "fs.order.write")


def _bounded(judge: Judge, call: Callable[[], Result]) -> Result:
    """Run a tool call that must not block; fail (not hang) if it does, naming the call."""
    box: list[Result] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            box.append(call())
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=20)
    if errors:
        raise errors[0]
    if not box:
        blocked = judge.calls[-1] if judge.calls else None  # recorded before it was sent
        what = "the call" if blocked is None else f"{blocked.tool} {show(blocked.arguments)}"
        # The call's own verdict, under the rule it broke; the case cannot go on (the harness is
        # still blocked), so no level of it is reported as passed.
        judge.cut_short = True
        judge.record(
            "behaviour",
            False,
            f"{what} blocked for 20 s instead of answering; {cite('fs.nonblocking')}",
            "fs.nonblocking",
            signature=signature(
                "fs.nonblocking", None if blocked is None else blocked.situation, "blocks"
            ),
            call=None if blocked is None else blocked.index,
        )
        raise ConformanceFailure(judge.violations)
    return box[0]


@case("PRV-004", rules=["fs.nonblocking", "fs.msg.not-regular"])
def test_fifo_is_not_a_regular_file(session: Session, disk: Disk, w: Wording, client: Client,
                                    open_session: Callable[..., Session], judge: Judge) -> None:  # fmt: skip
    """refuse a FIFO for read, write and edit without ever blocking on it"""
    os.mkfifo(disk.path("pipe"))
    p = disk.display("pipe")
    code = fs("FS_NOT_REGULAR_FILE")
    read = _bounded(judge, lambda: session.read("pipe")).refused("fs.nonblocking")
    read.says(w.fs_error("fs.not_regular", op="read", p=p), "fs.msg.not-regular").code(
        code, "fs.msg.not-regular"
    )
    write = _bounded(judge, lambda: session.write("pipe", "x")).refused("fs.nonblocking")
    write.says(w.fs_error("fs.not_regular", op="write", p=p), "fs.msg.not-regular").code(
        code, "fs.msg.not-regular"
    )
    edit = _bounded(judge, lambda: session.edit("pipe", "a", "b")).refused("fs.nonblocking")
    edit.code(fs("FS_NOT_OBSERVED"), "policy.edit-intent")
    # The guard refuses that edit before the file is opened; only with the guard off (and in
    # PRV-031, with it satisfied) is the FIFO check of edit reached.
    if client.profile.supports("unguarded"):
        unguarded = open_session(policy=False)
        edit = _bounded(judge, lambda: unguarded.edit("pipe", "a", "b")).refused("fs.nonblocking")
        edit.says(w.fs_error("fs.not_regular", op="edit", p=p), "fs.msg.not-regular").code(
            code, "fs.msg.not-regular"
        )


def _mutate(session: Session, op: str, name: str) -> Result:
    return session.edit(name, "one", "two") if op == "edit" else session.write(name, "two\n")


@case("PRV-031", rules=["fs.msg.not-regular", "fs.order.write", "fs.order.edit", "fs.nonblocking"])
def test_a_read_file_replaced_by_something_else(
    session: Session, disk: Disk, w: Wording, judge: Judge
) -> None:
    """refuse a write and an edit of a file read, then replaced by a directory or a FIFO, as not a regular file"""
    # With the guard satisfied, the type check is the first to speak (before the version).
    for name, make in [("dir.txt", os.mkdir), ("fifo.txt", os.mkfifo)]:
        disk.write(name, "one\n")
        observe(session, name)
        disk.delete(name)
        make(disk.path(name))
        p = disk.display(name)
        for op in ("edit", "write"):
            result = _bounded(judge, partial(_mutate, session, op, name)).refused(f"fs.order.{op}")
            result.says(w.fs_error("fs.not_regular", op=op, p=p), "fs.msg.not-regular")
            result.code(fs("FS_NOT_REGULAR_FILE"), f"fs.order.{op}")


@case("PRV-005", rules=["fs.msg.not-regular", "fs.order.edit"])
@needs(options=["unguarded"])
def test_edit_of_a_directory(open_session: Callable[..., Session], disk: Disk, w: Wording) -> None:
    """refuse to edit a directory: 'cannot edit "<p>": not a regular file'"""
    disk.path("dir").mkdir()
    result = open_session(policy=False).edit("dir", "a", "b").refused("fs.msg.not-regular")
    result.says(
        w.fs_error("fs.not_regular", op="edit", p=disk.display("dir")), "fs.msg.not-regular"
    )
    result.code(fs("FS_NOT_REGULAR_FILE"), "fs.order.edit")


@case("PRV-006", rules=["fs.msg.binary"])
def test_read_binary(session: Session, disk: Disk, w: Wording) -> None:
    """refuse a NUL byte in the first 8192 bytes on read: 'cannot read "<p>": binary file'"""
    disk.write("blob.bin", b"a" * 8191 + b"\0")
    result = session.read("blob.bin").refused("fs.msg.binary")
    result.says(w.fs_error("fs.binary", op="read", p=disk.display("blob.bin")), "fs.msg.binary")
    result.code(fs("FS_NOT_TEXT"), "fs.msg.binary")


@case("PRV-007", rules=["fs.msg.binary", "read.output"])
def test_read_nul_after_the_sniff_is_text(session: Session, disk: Disk, w: Wording) -> None:
    """show a file whose first NUL comes after byte 8192"""
    disk.write("late.txt", b"a" * 8192 + b"\0tail\n")
    result = session.read("late.txt").accepted("fs.msg.binary")
    result.says(w.read_output(disk.display("late.txt"), "a" * 8192 + "\0tail\n"), "read.output")


@case("PRV-008", rules=["fs.msg.binary"])
def test_edit_binary(session: Session, disk: Disk, w: Wording) -> None:
    """refuse a NUL byte anywhere on edit: 'cannot edit "<p>": binary file'"""
    disk.write("late.txt", b"a" * 9000 + b"\0tail\n")
    observe(session, "late.txt")
    result = session.edit("late.txt", "tail", "x").refused("fs.msg.binary")
    result.says(w.fs_error("fs.binary", op="edit", p=disk.display("late.txt")), "fs.msg.binary")
    result.code(fs("FS_NOT_TEXT"), "fs.msg.binary")


@case("PRV-009", rules=["fs.msg.invalid-utf8"])
def test_read_invalid_utf8(session: Session, disk: Disk, w: Wording) -> None:
    """refuse invalid UTF-8 on read: 'cannot read "<p>": invalid UTF-8 text'"""
    disk.write("latin1.txt", b"caf\xe9\n")
    disk.write("cut.txt", b"caf\xc3")  # ends inside a two-byte sequence: a decoder not finished
    for path in ["latin1.txt", "cut.txt"]:
        result = session.read(path).refused("fs.msg.invalid-utf8")
        result.says(
            w.fs_error("fs.invalid_utf8", op="read", p=disk.display(path)), "fs.msg.invalid-utf8"
        )
        result.code(fs("FS_NOT_TEXT"), "fs.msg.invalid-utf8")


@case("PRV-010", rules=["fs.msg.invalid-utf8", "fs.text.utf8"])
@needs(options=["unguarded"])
def test_edit_invalid_utf8(open_session: Callable[..., Session], disk: Disk, w: Wording) -> None:
    """refuse invalid UTF-8 on edit: 'cannot edit "<p>": invalid UTF-8 text'"""
    disk.write("latin1.txt", b"caf\xe9\n")
    result = open_session(policy=False).edit("latin1.txt", "caf", "x").refused("fs.text.utf8")
    result.says(
        w.fs_error("fs.invalid_utf8", op="edit", p=disk.display("latin1.txt")),
        "fs.msg.invalid-utf8",
    )
    result.code(fs("FS_NOT_TEXT"), "fs.msg.invalid-utf8")


@case("PRV-011", rules=["fs.msg.too-large"])
@needs(options=["maxReadBytes"])
def test_too_large(open_session: Callable[..., Session], disk: Disk, w: Wording) -> None:
    """refuse a file over max_read_bytes: 'cannot read "<p>": <size> bytes exceeds the <max>-byte limit'"""
    session = open_session(maxReadBytes=100)
    disk.write("big.txt", "x" * 101)
    disk.write("fits.txt", "x" * 100)
    result = session.read("big.txt").refused("fs.msg.too-large")
    result.says(
        w.fs_error("fs.too_large", p=disk.display("big.txt"), size=101, limit=100),
        "fs.msg.too-large",
    )
    result.code(fs("FS_TOO_LARGE"), "fs.msg.too-large")
    session.read("fits.txt").accepted("fs.msg.too-large")


@case("PRV-012", rules=["fs.writable", "fs.msg.permission", "fs.order.write"])
@pytest.mark.skipif(
    not permissions_enforced(),
    reason="file permissions are not enforced here (root): run the suite under `unshare -U` "
    "or as a normal user",
)
def test_permission_denied(session: Session, disk: Disk, w: Wording) -> None:
    """refuse a file the process may not write: 'cannot write "<p>": permission denied'"""
    disk.write("ro.txt", "keep\n")
    # Read-only before it is read: the observation is current, so only the permission can
    # refuse (a chmod after the read changes the ctime, and a stale refusal would pass).
    disk.path("ro.txt").chmod(0o444)
    observe(session, "ro.txt")
    p = disk.display("ro.txt")
    for op, result in [
        ("write", session.write("ro.txt", "x")),
        ("edit", session.edit("ro.txt", "keep", "x")),
    ]:
        result.refused("fs.writable").says(
            w.fs_error("fs.permission", op=op, p=p), "fs.msg.permission"
        )
        result.code(fs("FS_PERMISSION_DENIED"), "fs.msg.permission")
    # Read-only and changed since the read: the permission speaks before the version.
    disk.replace("ro.txt", "theirs\n")
    disk.path("ro.txt").chmod(0o444)
    session.write("ro.txt", "x").refused("fs.order.write").code(
        fs("FS_PERMISSION_DENIED"), "fs.order.write"
    )
    assert stat.S_IMODE(os.stat(disk.path("ro.txt")).st_mode) == 0o444


@case("PRV-013", rules=["fs.msg.os-error", "fs.reason"])
def test_other_os_errors(session: Session, disk: Disk, w: Wording) -> None:
    """report other OS errors by their lower-cased reason: 'cannot read "<p>": file name too long'"""
    name = "n" * 300
    for op, result in [("read", session.read(name)), ("write", session.write(name, "x"))]:
        result.refused("fs.msg.os-error")
        result.says(
            w.fs_error("fs.io", op=op, p=disk.display(name), reason=w("reason.ENAMETOOLONG")),
            "fs.msg.os-error",
        )
        result.code(fs("FS_IO_ERROR"), "fs.msg.os-error")


@case("PRV-014", rules=["fs.msg.edit-not-found"])
def test_edit_not_found(session: Session, disk: Disk, w: Wording) -> None:
    """report an absent old_string: 'old_string was not found in "<p>"'"""
    disk.write("a.txt", "hello world\n")
    disk.write("empty.txt", "")
    for path in ["a.txt", "empty.txt"]:
        observe(session, path)
        result = session.edit(path, "goodbye", "x").refused("fs.msg.edit-not-found")
        result.says(w.fs_error("fs.edit_not_found", p=disk.display(path)), "fs.msg.edit-not-found")
        result.code(fs("FS_EDIT_NOT_FOUND"), "fs.msg.edit-not-found")


@case("PRV-015", rules=["fs.msg.ambiguous"])
def test_edit_ambiguous(session: Session, disk: Disk, w: Wording) -> None:
    """report an old_string found n>1 times, with n, unless replace_all is set"""
    disk.write("a.txt", "item\nitem\nitem\n")
    observe(session, "a.txt")
    result = session.edit("a.txt", "item", "x").refused("fs.msg.ambiguous")
    result.says(w.fs_error("fs.ambiguous", p=disk.display("a.txt"), n=3), "fs.msg.ambiguous")
    result.code(fs("FS_AMBIGUOUS_EDIT"), "fs.msg.ambiguous")


@case("PRV-016", rules=["fs.text.unencodable", "fs.publish.identical"])
@needs(options=["surrogates"])
def test_write_of_lone_surrogates(session: Session, disk: Disk, w: Wording) -> None:
    """refuse content that cannot be UTF-8 (a lone surrogate) and write nothing"""
    disk.write("a.txt", "keep\n")
    observe(session, "a.txt")
    # new/b.txt: a refused write creates no parent directory either
    for path, raw in [("a.txt", "x\\ud800y"), ("new.txt", "\\udfff"), ("new/b.txt", "\\udfff")]:
        arguments = f'{{"file_path": "{session.spell(path)}", "content": "{raw}"}}'
        result = session.call("write", arguments).refused("fs.text.unencodable")
        result.says(
            w.fs_error("fs.invalid_utf8", op="write", p=disk.display(path)), "fs.text.unencodable"
        )
        result.code(fs("FS_NOT_TEXT"), "fs.text.unencodable")


@case("PRV-017", rules=["fs.text.unencodable"])
@needs(options=["surrogates"])
def test_edit_with_lone_surrogates(session: Session, disk: Disk, w: Wording) -> None:
    """refuse edit strings that cannot be UTF-8 and write nothing"""
    disk.write("a.txt", "keep\n")
    observe(session, "a.txt")
    path = session.spell("a.txt")
    for raw in [
        f'{{"file_path": "{path}", "old_string": "keep", "new_string": "\\ud800"}}',
        f'{{"file_path": "{path}", "old_string": "k\\ud800", "new_string": "x"}}',
    ]:
        result = session.call("edit", raw).refused("fs.text.unencodable")
        result.says(
            w.fs_error("fs.invalid_utf8", op="edit", p=disk.display("a.txt")), "fs.text.unencodable"
        )
        result.code(fs("FS_NOT_TEXT"), "fs.text.unencodable")


@case("PRV-018", rules=["fs.msg.edit-changed", "remedy.texts"])
@needs(options=["unguarded"])
def test_unguarded_edit_of_a_missing_file(
    open_session: Callable[..., Session], disk: Disk, w: Wording
) -> None:
    """call an unguarded edit of a missing file stale: 'cannot edit "<p>": file changed since it was read'"""
    result = open_session(policy=False).edit("gone.txt", "a", "b").refused("fs.msg.edit-changed")
    result.says(
        w.remedied("fs.changed", "FS_STALE_VERSION", op="edit", p=disk.display("gone.txt")),
        "remedy.texts",
    )
    result.code(fs("FS_STALE_VERSION"), "fs.msg.edit-changed")


@case("PRV-019", rules=["fs.text.utf8", "edit.occurrences"])
def test_crlf_is_kept(session: Session, disk: Disk) -> None:
    """keep CRLF line endings through edit and write; an LF needle does not match a CRLF"""
    # One file per step: a step that goes wrong must not rewrite what the next step checks.
    for name in ("needle.txt", "edit.txt", "write.txt"):
        disk.write(name, b"one\r\ntwo\r\n")
        observe(session, name)
    session.edit("needle.txt", "one\ntwo", "x").refused("edit.occurrences").code(
        fs("FS_EDIT_NOT_FOUND"), "edit.occurrences"
    )
    session.edit("edit.txt", "two", "2").accepted(
        "fs.text.utf8", changes={"edit.txt": b"one\r\n2\r\n"}
    )
    session.write("write.txt", "a\r\nb\r\n").accepted(
        "fs.text.utf8", changes={"write.txt": b"a\r\nb\r\n"}
    )


@case("PRV-032", rules=["fs.text.utf8", "fs.text.mixed-endings"])
def test_mixed_line_endings_are_kept(session: Session, disk: Disk) -> None:
    """keep every line ending of a mixed file (LF, CRLF, a lone CR) outside the edited text"""
    mixed = b"a\r\nb\nc\rd\r\n\ne\r\n"
    disk.write("m.txt", mixed)
    observe(session, "m.txt")
    # The calls cite fs.text.utf8, which mixed-endings spells out: a harness that rewrites line
    # endings shows one root cause here and in PRV-019, not one per rule.
    session.edit("m.txt", "b", "B").accepted(
        "fs.text.utf8", changes={"m.txt": b"a\r\nB\nc\rd\r\n\ne\r\n"}
    )
    session.edit("m.txt", "d\r\n\ne", "D\nE").accepted(
        "fs.text.utf8", changes={"m.txt": b"a\r\nB\nc\rD\nE\r\n"}
    )
    session.write("m.txt", "1\n2\r\n3\r").accepted(
        "fs.text.utf8", changes={"m.txt": b"1\n2\r\n3\r"}
    )


@case("PRV-020", rules=["fs.publish.parents", "write.output"])
def test_write_creates_parents(session: Session, disk: Disk, w: Wording) -> None:
    """create missing parent directories on write"""
    result = session.write("deep/er/new.txt", "made\n").accepted(
        "fs.publish.parents", changes={"deep/er/new.txt": "made\n"}
    )
    result.says(w.write_output(disk.display("deep/er/new.txt"), created=True), "write.output")


@case("PRV-021", rules=["fs.resolve.key"])
def test_write_through_a_symlink(session: Session, disk: Disk) -> None:
    """publish to the link's target: the symlink stays, the target changes"""
    disk.write("real.txt", "old\n")
    disk.symlink("link.txt", "real.txt")
    observe(session, "link.txt")
    session.write("link.txt", "new\n").accepted("fs.resolve.key", changes={"real.txt": "new\n"})


@case("PRV-034", rules=["fs.resolve.display", "fs.resolve.key"])
def test_dotdot_after_a_symlinked_directory(
    session: Session, disk: Disk, root: Path, w: Wording
) -> None:
    """take 'link/../x' as the workspace's x ('..' first), never the x beside the link's target"""
    # The link leads out of the workspace to a directory with its own notes.txt beside it:
    # following the link before collapsing '..' (the OS opening the path as spelled) reaches
    # that file, while the model is shown the workspace's.
    target = root.parent / OUTSIDE / "dir"
    target.mkdir(parents=True)
    (target.parent / "notes.txt").write_text("notes: beside the link's target\n")
    disk.write("notes.txt", "notes: in the workspace\n")
    disk.symlink("link", target)
    read = session.read(Spelled("link/../notes.txt")).accepted("fs.resolve.key")
    read.says(w.read_output(disk.display("notes.txt"), "notes: in the workspace\n"),
              "fs.resolve.key")  # fmt: skip
    # An edit, not a write, changes the file read: every call here is judged in the situation
    # of its '..' spelling, so a harness that refuses every overwrite would show that defect
    # here as one of resolution.
    session.edit(Spelled("link/../notes.txt"), "notes:", "NOTES:").accepted(
        "fs.resolve.key", changes={"notes.txt": "NOTES: in the workspace\n"}
    )
    session.write(Spelled("link/../new.txt"), "made\n").accepted(
        "fs.resolve.key", changes={"new.txt": "made\n"}
    )


@case("PRV-022", rules=["fs.publish.mode"])
def test_update_keeps_permission_bits(session: Session, disk: Disk) -> None:
    """keep the target's permission bits when replacing it"""
    disk.write("run.sh", "echo 1\n")
    disk.path("run.sh").chmod(0o751)
    observe(session, "run.sh")
    session.write("run.sh", "echo 2\n").accepted("fs.publish.mode", changes={"run.sh": "echo 2\n"})
    session.edit("run.sh", "2", "3").accepted("fs.publish.mode", changes={"run.sh": "echo 3\n"})


@case("PRV-023", rules=["fs.publish.identical", "fs.publish.atomic", "tool.changes-only-target"])
def test_no_temp_files_are_left(session: Session, disk: Disk) -> None:
    """leave no temporary file behind, after successes and failures alike"""
    disk.write("a.txt", "one\n")
    session.write("a.txt", "refused\n").refused("fs.publish.identical")
    observe(session, "a.txt")
    session.write("a.txt", "two\n").accepted("fs.publish.atomic", changes={"a.txt": "two\n"})
    disk.replace("a.txt", "three\n")
    session.write("a.txt", "stale\n").refused("fs.publish.identical")
    session.edit("a.txt", "three", "stale").refused("fs.publish.identical")


@case("PRV-024", rules=["fs.text.utf8"])
def test_bom_is_ordinary_text(session: Session, disk: Disk, w: Wording) -> None:
    """show a byte-order mark as text and keep it through edit and write"""
    # One file per step, so each shows its own bytes.
    for name in ("read.txt", "edit.txt", "drop.txt", "write.txt"):
        disk.write(name, "\ufeffhello\nworld\n")
    session.read("read.txt").accepted("fs.text.utf8").says(
        w.read_output(disk.display("read.txt"), "\ufeffhello\nworld\n"), "fs.text.utf8"
    )
    for name in ("edit.txt", "drop.txt", "write.txt"):
        observe(session, name)
    session.edit("edit.txt", "world", "there").accepted(
        "fs.text.utf8", changes={"edit.txt": "\ufeffhello\nthere\n"}
    )
    session.edit("drop.txt", "\ufeffhello", "hi").accepted(
        "fs.text.utf8", changes={"drop.txt": "hi\nworld\n"}
    )
    # An overwrite holds exactly the content sent: the old file's BOM is not carried over.
    session.write("write.txt", "plain\n").accepted("fs.text.utf8", changes={"write.txt": "plain\n"})


@case("PRV-025", rules=["fs.text.utf8", "fs.msg.invalid-utf8"])
def test_an_invalid_byte_far_away_makes_the_file_not_text(
    session: Session, disk: Disk, client: Client, open_session: Callable[..., Session]
) -> None:
    """refuse to edit a file with a Latin-1 byte far from the text being replaced"""
    data = b"needle here\n" + b"x" * 200_000 + b"\ncaf\xe9\n"
    disk.write("far.txt", data)
    session.read("far.txt").refused("fs.text.utf8")
    # A guarded session cannot edit it (the read that would allow it fails), so the encoding
    # check is reached only where the guard is off; a guarded edit would be refused unread.
    if client.profile.supports("unguarded"):
        unguarded = open_session(policy=False)
        unguarded.edit("far.txt", "needle", "pin").refused("fs.text.utf8").code(
            fs("FS_NOT_TEXT"), "fs.msg.invalid-utf8"
        )


@case("PRV-026", rules=["edit.occurrences", "fs.msg.ambiguous"])
@needs(options=["replaceAll"])
def test_overlapping_occurrences(session: Session, disk: Disk, w: Wording) -> None:
    """count occurrences without overlap, left to right, for matching and replace_all"""
    disk.write("a.txt", "aaa\n")
    observe(session, "a.txt")
    session.edit("a.txt", "aa", "b").accepted("edit.occurrences", changes={"a.txt": "ba\n"})
    disk.write("b.txt", "aaaa\n")
    observe(session, "b.txt")
    # refused as ambiguous whatever the count (fs.msg.ambiguous); the count told is two
    session.edit("b.txt", "aa", "b").refused("fs.msg.ambiguous").says(
        w.fs_error("fs.ambiguous", p=disk.display("b.txt"), n=2), "edit.occurrences")  # fmt: skip
    session.edit("b.txt", "aa", "b", replace_all=True).accepted(
        "edit.occurrences", changes={"b.txt": "bb\n"}
    )


@case("PRV-033", rules=["edit.literal"])
def test_new_string_is_inserted_as_given(session: Session, disk: Disk) -> None:
    """insert new_string as given: replacement patterns ($&, $$, \\g<0>…) in it are plain text"""
    # JavaScript's String.prototype.replace expands the first; Python's re.sub the second.
    for name, patterns in [("a.txt", "$&$& $$ $1 $` $'"), ("b.txt", "\\g<0> \\0")]:
        disk.write(name, "before item after\n")
        observe(session, name)
        session.edit(name, "item", patterns).accepted(
            "edit.literal", changes={name: f"before {patterns} after\n"}
        )


@case("PRV-027", rules=["fs.order.edit", "fs.msg.binary"])
@needs(options=["unguarded"])
def test_binary_speaks_before_invalid_utf8_on_edit(
    open_session: Callable[..., Session], disk: Disk
) -> None:
    """refuse an edit of a file that is both binary and invalid UTF-8 as binary"""
    disk.write("both.bin", b"caf\xe9\0\n")
    result = open_session(policy=False).edit("both.bin", "caf", "x").refused("fs.order.edit")
    result.code(fs("FS_NOT_TEXT"), "fs.order.edit")


@case("PRV-028", rules=["fs.order.edit", "fs.msg.invalid-utf8"])
@needs(options=["surrogates", "unguarded"])
def test_file_speaks_before_the_edit_strings(
    open_session: Callable[..., Session], disk: Disk, w: Wording
) -> None:
    """refuse an edit of invalid UTF-8 with unencodable strings for the file, then strings before matching"""
    session = open_session(policy=False)
    disk.write("bad.txt", b"caf\xe9\n")
    path = session.spell("bad.txt")
    raw = f'{{"file_path": "{path}", "old_string": "x\\ud800", "new_string": "y"}}'
    session.call("edit", raw).refused("fs.order.edit").says(
        w.fs_error("fs.invalid_utf8", op="edit", p=disk.display("bad.txt")), "fs.order.edit")  # fmt: skip
    disk.write("ok.txt", "fine\n")
    raw = f'{{"file_path": "{session.spell("ok.txt")}", "old_string": "absent\\ud800", "new_string": "y"}}'
    session.call("edit", raw).refused("fs.order.edit").says(
        w.fs_error("fs.invalid_utf8", op="edit", p=disk.display("ok.txt")), "fs.order.edit")  # fmt: skip


@case("PRV-029", rules=["fs.resolve.parent-segment", "fs.order.edit"])
def test_resolution_speaks_before_the_policy(session: Session, disk: Disk, w: Wording) -> None:
    """refuse an edit of a never-read path through a file as unresolvable, not unread"""
    disk.write("file.txt", "x\n")
    result = session.edit("file.txt/inner.txt", "a", "b").refused("fs.resolve.parent-segment")
    result.says(
        w.fs_error("fs.parent_segment", op="edit", p=disk.display("file.txt/inner.txt")),
        "fs.resolve.parent-segment",
    )
    result.code(fs("FS_NOT_FOUND"), "fs.resolve.parent-segment")


@case("PRV-030", rules=["fs.resolve.unicode"])
@needs(options=["surrogates"])
def test_a_path_that_is_not_unicode(session: Session, disk: Disk, w: Wording) -> None:
    """refuse a path holding a lone surrogate with a worded FsError, for every tool"""
    for tool, extra in [
        ("read", ""),
        ("write", ', "content": "x"'),
        ("edit", ', "old_string": "a", "new_string": "b"'),
    ]:
        raw = f'{{"file_path": "{session.spell("bad")}\\ud800.txt"{extra}}}'
        result = session.call(tool, raw).refused("fs.resolve.unicode")
        result.says(
            w.fs_error("fs.path_unicode", op=tool, p=disk.display("bad\ufffd.txt")),
            "fs.resolve.unicode",
        )
        result.code(fs("FS_NOT_FOUND"), "fs.resolve.unicode")
