"""SPEC §4.1: the deleted-target dead end, pinned fail-closed, and the way out of it."""

from __future__ import annotations

import pytest

from conformance.cases import case
from conformance.client import Session
from conformance.disk import Disk
from conformance.spec import Wording, fs

STALE = fs("FS_STALE_VERSION")


@pytest.fixture
def deleted(session: Session, disk: Disk) -> str:
    """A file the session read, which someone else then deleted; returns its display path."""
    disk.write("draft.txt", "first draft\n")
    session.read("draft.txt").accepted("policy.record")
    disk.delete("draft.txt")
    return disk.display("draft.txt")


@case("DEL-001", rules=["policy.dead-end", "fs.msg.write-vanished"])
def test_write_to_a_deleted_target(session: Session, deleted: str, w: Wording) -> None:
    """refuse a guarded write to a deleted file with 'file no longer exists' and the remedy"""
    result = session.write("draft.txt", "better\n").refused("policy.dead-end")
    result.says(
        w.remedied("fs.write_vanished", "FS_STALE_VERSION", p=deleted), "fs.msg.write-vanished"
    )
    result.code(STALE, "fs.msg.write-vanished")


@case("DEL-002", rules=["policy.dead-end", "fs.msg.edit-changed"])
def test_edit_of_a_deleted_target(session: Session, deleted: str, w: Wording) -> None:
    """refuse a guarded edit of a deleted file as 'file changed since it was read' with the remedy"""
    result = session.edit("draft.txt", "first", "better").refused("policy.dead-end")
    result.says(
        w.remedied("fs.changed", "FS_STALE_VERSION", op="edit", p=deleted), "fs.msg.edit-changed"
    )
    result.code(STALE, "fs.msg.edit-changed")


@case("DEL-003", rules=["policy.dead-end", "fs.msg.read-missing"])
def test_reread_of_a_deleted_target_fails(session: Session, deleted: str, w: Wording) -> None:
    """fail the re-read with FS_NOT_FOUND and no remedy"""
    result = session.read("draft.txt").refused("policy.dead-end")
    result.says(w.fs_error("fs.read_missing", p=deleted), "fs.msg.read-missing")
    result.code(fs("FS_NOT_FOUND"), "fs.msg.read-missing")


@case("DEL-004", rules=["policy.dead-end", "policy.failed-read"])
def test_retries_fail_the_same_way(session: Session, deleted: str, w: Wording) -> None:
    """keep failing closed after the failed re-read, creating nothing (the remedy is no promise)"""
    session.read("draft.txt").refused("policy.failed-read")
    for _ in range(2):
        session.write("draft.txt", "better\n").refused("policy.dead-end").says(
            w.remedied("fs.write_vanished", "FS_STALE_VERSION", p=deleted), "policy.dead-end")  # fmt: skip
        session.edit("draft.txt", "first", "x").refused("policy.dead-end").says(
            w.remedied("fs.changed", "FS_STALE_VERSION", op="edit", p=deleted), "policy.dead-end")  # fmt: skip
        session.read("draft.txt").refused("policy.failed-read")


@case("DEL-005", rules=["policy.dead-end", "fs.msg.changed"])
def test_reappeared_target_still_needs_a_read(
    session: Session, disk: Disk, deleted: str, w: Wording
) -> None:
    """refuse to replace the file once it exists again until it is freshly read"""
    session.write("draft.txt", "better\n").refused("policy.dead-end")
    disk.write("draft.txt", "second draft\n")
    result = session.write("draft.txt", "better\n").refused("policy.dead-end")
    result.says(
        w.remedied("fs.changed", "FS_STALE_VERSION", op="write", p=deleted), "fs.msg.changed"
    )
    result.code(STALE, "fs.msg.changed")


@case("DEL-006", rules=["policy.dead-end", "policy.record"])
def test_fresh_read_ends_the_dead_end(
    session: Session, disk: Disk, deleted: str, w: Wording
) -> None:
    """accept write and edit again once the reappeared file has been read"""
    disk.write("draft.txt", "second draft\n")
    session.read("draft.txt").accepted("policy.dead-end")
    session.write("draft.txt", "better draft\n").accepted("policy.dead-end", changes={"draft.txt": "better draft\n"}).says(
        w.write_output(deleted, created=False), "write.output")  # fmt: skip
    session.edit("draft.txt", "better", "best").accepted(
        "policy.record", changes={"draft.txt": "best draft\n"}
    )


@case("DEL-007", rules=["policy.dead-end", "fs.msg.write-vanished", "fs.msg.edit-changed"])
def test_a_deleted_directory_is_not_recreated(session: Session, disk: Disk, w: Wording) -> None:
    """refuse a write or edit into a directory deleted since the read, recreating nothing"""
    disk.write("sub/notes.txt", "first draft\n")
    session.read("sub/notes.txt").accepted("policy.record")
    disk.delete("sub/notes.txt")
    disk.path("sub").rmdir()
    shown = disk.display("sub/notes.txt")
    session.write("sub/notes.txt", "better\n").refused("policy.dead-end").says(
        w.remedied("fs.write_vanished", "FS_STALE_VERSION", p=shown), "fs.msg.write-vanished")  # fmt: skip
    session.edit("sub/notes.txt", "first", "x").refused("policy.dead-end").says(
        w.remedied("fs.changed", "FS_STALE_VERSION", op="edit", p=shown), "fs.msg.edit-changed")  # fmt: skip
