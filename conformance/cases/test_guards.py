"""SPEC §3.2–§3.3, §4.1: guarded mutations, with the suite changing files between tool calls."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from conformance import spec
from conformance.client import Session, ToolOutcome
from conformance.disk import Disk

STALE = spec.fs("FS_STALE_VERSION")
UNOBSERVED = spec.fs("FS_NOT_OBSERVED")


def _read(session: Session, path: str) -> None:
    assert session.read(path).error is None, f"could not read {path}"


@pytest.mark.case("GRD-001")
def test_unread_file_is_not_overwritten(session: Session, disk: Disk) -> None:
    """refuse to overwrite a file this session never read, leaving it byte-identical"""
    disk.write("a.txt", "keep\n")
    assert session.write("a.txt", "clobber\n").error == UNOBSERVED
    assert disk.read("a.txt") == b"keep\n"


@pytest.mark.case("GRD-002")
def test_new_file_needs_no_read(session: Session, disk: Disk) -> None:
    """create a file that does not exist without a read"""
    assert session.write("new.txt", "hi\n").text == spec.write_output(
        disk.display("new.txt"), created=True
    )


@pytest.mark.case("GRD-003")
def test_read_file_is_replaced(session: Session, disk: Disk) -> None:
    """replace a file after reading it"""
    disk.write("a.txt", "one\n")
    _read(session, "a.txt")
    assert session.write("a.txt", "two\n").text == spec.write_output(
        disk.display("a.txt"), created=False
    )
    assert disk.read("a.txt") == b"two\n"


@pytest.mark.case("GRD-004")
def test_external_write_makes_a_write_stale(session: Session, disk: Disk) -> None:
    """refuse a write based on an old read, keeping the other writer's content"""
    disk.write("a.txt", "one\n")
    _read(session, "a.txt")
    disk.replace("a.txt", "theirs\n")
    assert session.write("a.txt", "mine\n").error == STALE
    assert disk.read("a.txt") == b"theirs\n"


@pytest.mark.case("GRD-005")
def test_stale_edit_is_stale_before_it_is_not_found(session: Session, disk: Disk) -> None:
    """check the version before matching: an edit of old text in a changed file is stale"""
    disk.write("c.ini", "port = 8080\n")
    _read(session, "c.ini")
    disk.replace("c.ini", "port = 9090\n")
    result = session.edit("c.ini", "port = 8080", "port = 8081")
    assert (result.text, result.error) == (
        spec.error_text(spec.changed("edit", disk.display("c.ini")) + spec.REREAD),
        STALE,
    )


@pytest.mark.case("GRD-006")
def test_same_size_rewrite_is_stale_for_edit(session: Session, disk: Disk) -> None:
    """see a same-size rewrite with the mtime restored as a change (edit)"""
    disk.write("v.txt", "v1.0.0\n")
    _read(session, "v.txt")
    disk.same_size_rewrite("v.txt", "v2.0.0\n")
    assert session.edit("v.txt", "v2.0.0", "v2.0.1").error == STALE
    assert disk.read("v.txt") == b"v2.0.0\n"


@pytest.mark.case("GRD-007")
def test_same_size_rewrite_is_stale_for_write(session: Session, disk: Disk) -> None:
    """see a same-size rewrite with the mtime restored as a change (write)"""
    disk.write("v.txt", "v1.0.0\n")
    _read(session, "v.txt")
    disk.same_size_rewrite("v.txt", "v2.0.0\n")
    assert session.write("v.txt", "v3\n").error == STALE
    assert disk.read("v.txt") == b"v2.0.0\n"


@pytest.mark.case("GRD-008")
def test_own_mutations_are_observations(session: Session, disk: Disk) -> None:
    """count the session's own successful write and edit as fresh observations"""
    assert session.write("a.txt", "one\n").error is None
    assert session.edit("a.txt", "one", "two").error is None
    assert session.edit("a.txt", "two", "three").error is None
    assert session.write("a.txt", "four\n").error is None
    assert disk.read("a.txt") == b"four\n"


@pytest.mark.case("GRD-009")
def test_failed_read_keeps_the_observation(session: Session, disk: Disk) -> None:
    """keep the previous observation when a read fails"""
    disk.write("a.txt", "one\ntwo\n")
    _read(session, "a.txt")
    assert session.read("a.txt", offset=9).error == spec.fs("FS_NOT_FOUND")
    assert session.write("a.txt", "fresh\n").error is None


@pytest.mark.case("GRD-010")
def test_failed_read_does_not_refresh(session: Session, disk: Disk) -> None:
    """not refresh a stale observation with a read that failed"""
    disk.write("a.txt", "one\n")
    _read(session, "a.txt")
    disk.replace("a.txt", "\0binary now")
    assert session.read("a.txt").error == spec.fs("FS_NOT_TEXT")
    assert session.write("a.txt", "x").error == STALE


@pytest.mark.case("GRD-011")
def test_symlink_aliases_share_one_observation(session: Session, disk: Disk) -> None:
    """share one guard between a file and its symlink aliases"""
    disk.write("real.txt", "one\n")
    disk.symlink("alias.txt", "real.txt")
    _read(session, "alias.txt")
    assert session.write("real.txt", "two\n").error is None
    assert session.edit("alias.txt", "two", "three").error is None
    disk.replace("real.txt", "theirs\n")
    assert session.edit("alias.txt", "theirs", "x").error == STALE


@pytest.mark.case("GRD-012")
def test_observations_are_per_session(open_session: Callable[..., Session], disk: Disk) -> None:
    """keep observations per session: another session's read does not count"""
    disk.write("a.txt", "one\n")
    first, second = open_session(), open_session()
    _read(first, "a.txt")
    assert second.write("a.txt", "x").error == UNOBSERVED
    assert first.write("a.txt", "y").error is None


def _race(sessions: list[Session], name: str) -> list[ToolOutcome]:
    """Both sessions write ``name`` at the same moment."""
    barrier = threading.Barrier(len(sessions))
    outcomes: list[ToolOutcome] = []

    def write(index: int) -> None:
        barrier.wait()
        outcomes.append(sessions[index].write(name, f"writer {index}\n" * 500))

    threads = [threading.Thread(target=write, args=(i,)) for i in range(len(sessions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


@pytest.mark.case("GRD-013")
def test_concurrent_guarded_writes(open_session: Callable[..., Session], disk: Disk) -> None:
    """let exactly one of two guarded writes based on the same version succeed"""
    for round_ in range(10):
        name = f"shared{round_}.txt"
        disk.write(name, "base\n")
        sessions = [open_session(), open_session()]
        for session in sessions:
            _read(session, name)
        outcomes = _race(sessions, name)
        assert sorted(str(o.error) for o in outcomes) == sorted([str(None), str(STALE)])
        assert disk.read(name) in (b"writer 0\n" * 500, b"writer 1\n" * 500)
    assert disk.leftovers() == []


@pytest.mark.case("GRD-014")
def test_without_policy_tools_are_unguarded(
    open_session: Callable[..., Session], disk: Disk
) -> None:
    """run unguarded without the observation policy: write and edit without a read"""
    session = open_session(policy=False)
    disk.write("a.txt", "one\n")
    assert session.write("a.txt", "two\n").error is None
    assert session.edit("a.txt", "two", "three").error is None
    assert disk.read("a.txt") == b"three\n"


@pytest.mark.case("GRD-015")
def test_recreated_file_is_still_unread(session: Session, disk: Disk) -> None:
    """refuse to replace a file that was deleted and recreated since it was read"""
    disk.write("a.txt", "one\n")
    _read(session, "a.txt")
    disk.delete("a.txt")
    disk.write("a.txt", "recreated\n")
    result = session.write("a.txt", "mine\n")
    assert (result.text, result.error) == (
        spec.error_text(spec.changed("write", disk.display("a.txt")) + spec.REREAD),
        STALE,
    )
    assert disk.read("a.txt") == b"recreated\n"


@pytest.mark.case("GRD-016")
def test_edit_of_a_missing_unread_path(session: Session, disk: Disk) -> None:
    """ask for a read before editing a path never read, even if it does not exist"""
    result = session.edit("nowhere.txt", "a", "b")
    assert (result.text, result.error) == (
        spec.error_text(spec.edit_unobserved(disk.display("nowhere.txt")) + spec.READ_FIRST),
        UNOBSERVED,
    )


@pytest.mark.case("GRD-017")
def test_stale_file_recovers_after_a_fresh_read(session: Session, disk: Disk) -> None:
    """accept the mutation once the changed file has been read again"""
    disk.write("a.txt", "one\n")
    _read(session, "a.txt")
    disk.replace("a.txt", "two\n")
    assert session.edit("a.txt", "two", "2").error == STALE
    _read(session, "a.txt")
    assert session.edit("a.txt", "two", "2").error is None
    assert disk.read("a.txt") == b"2\n"
