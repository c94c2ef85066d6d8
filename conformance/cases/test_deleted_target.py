"""SPEC §4.1: the deleted-target dead end, pinned fail-closed, and the way out of it."""

from __future__ import annotations

import os

import pytest

from conformance import spec
from conformance.client import Session
from conformance.disk import Disk

STALE = spec.fs("FS_STALE_VERSION")


@pytest.fixture
def deleted(session: Session, disk: Disk) -> str:
    """A file the session read, which someone else then deleted; returns its display path."""
    disk.write("draft.txt", "first draft\n")
    assert session.read("draft.txt").error is None
    disk.delete("draft.txt")
    return disk.display("draft.txt")


def _nothing_created(disk: Disk) -> None:
    assert os.listdir(disk.root) == []


@pytest.mark.case("DEL-001")
def test_write_to_a_deleted_target(session: Session, disk: Disk, deleted: str) -> None:
    """refuse a guarded write to a deleted file with 'file no longer exists' and the remedy"""
    result = session.write("draft.txt", "better\n")
    assert (result.text, result.error) == (
        spec.error_text(spec.write_vanished(deleted) + spec.REREAD),
        STALE,
    )
    _nothing_created(disk)


@pytest.mark.case("DEL-002")
def test_edit_of_a_deleted_target(session: Session, disk: Disk, deleted: str) -> None:
    """refuse a guarded edit of a deleted file as 'file changed since it was read' with the remedy"""
    result = session.edit("draft.txt", "first", "better")
    assert (result.text, result.error) == (
        spec.error_text(spec.changed("edit", deleted) + spec.REREAD),
        STALE,
    )
    _nothing_created(disk)


@pytest.mark.case("DEL-003")
def test_reread_of_a_deleted_target_fails(session: Session, disk: Disk, deleted: str) -> None:
    """fail the re-read with FS_NOT_FOUND and no remedy"""
    result = session.read("draft.txt")
    assert (result.text, result.error) == (
        spec.error_text(spec.read_missing(deleted)),
        spec.fs("FS_NOT_FOUND"),
    )


@pytest.mark.case("DEL-004")
def test_retries_fail_the_same_way(session: Session, disk: Disk, deleted: str) -> None:
    """keep failing closed after the failed re-read, creating nothing (the remedy is no promise)"""
    session.read("draft.txt")
    for _ in range(2):
        assert session.write("draft.txt", "better\n").text == spec.error_text(
            spec.write_vanished(deleted) + spec.REREAD
        )
        assert session.edit("draft.txt", "first", "x").text == spec.error_text(
            spec.changed("edit", deleted) + spec.REREAD
        )
        session.read("draft.txt")
    _nothing_created(disk)


@pytest.mark.case("DEL-005")
def test_reappeared_target_still_needs_a_read(session: Session, disk: Disk, deleted: str) -> None:
    """refuse to replace the file once it exists again until it is freshly read"""
    session.write("draft.txt", "better\n")
    disk.write("draft.txt", "second draft\n")
    result = session.write("draft.txt", "better\n")
    assert (result.text, result.error) == (
        spec.error_text(spec.changed("write", deleted) + spec.REREAD),
        STALE,
    )
    assert disk.read("draft.txt") == b"second draft\n"


@pytest.mark.case("DEL-006")
def test_fresh_read_ends_the_dead_end(session: Session, disk: Disk, deleted: str) -> None:
    """accept write and edit again once the reappeared file has been read"""
    disk.write("draft.txt", "second draft\n")
    assert session.read("draft.txt").error is None
    assert session.write("draft.txt", "better draft\n").text == spec.write_output(
        deleted, created=False
    )
    assert session.edit("draft.txt", "better", "best").error is None
    assert disk.read("draft.txt") == b"best draft\n"
