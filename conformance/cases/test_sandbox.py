"""SPEC §3.5 and §4.4: the sandbox fence and the marker the model sees."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance import spec
from conformance.client import Session, ToolOutcome
from conformance.disk import Disk

DENIED = spec.fs("FS_SANDBOX_DENIED")


@pytest.fixture
def outside(root: Path) -> Path:
    """A directory beside the workspace, holding one file nobody may change."""
    directory = root.parent / "outside"
    directory.mkdir()
    (directory / "target.txt").write_text("untouched\n")
    return directory


def _untouched(outside: Path) -> None:
    assert sorted(os.listdir(outside)) == ["target.txt"]
    assert (outside / "target.txt").read_bytes() == b"untouched\n"


def _marked(result: ToolOutcome, mode: str = "workspace-write") -> None:
    assert (result.text, result.error) == (spec.error_text(spec.sandbox_marker(mode)), DENIED)


@pytest.fixture
def fenced(open_session: Callable[..., Session]) -> Session:
    return open_session(sandbox="workspace-write")


@pytest.mark.case("SBX-001")
def test_dotdot_escape(fenced: Session, outside: Path) -> None:
    """fence a path that climbs out with '..', showing '[sandbox: file access denied under <mode> mode]'"""
    _marked(fenced.write("../outside/target.txt", "escaped\n"))
    _marked(fenced.write("../outside/new.txt", "escaped\n"))
    _marked(fenced.edit("../outside/target.txt", "untouched", "x"))
    _untouched(outside)


@pytest.mark.case("SBX-002")
def test_absolute_escape(fenced: Session, outside: Path) -> None:
    """fence an absolute path outside the workspace"""
    _marked(fenced.write(str(outside / "target.txt"), "escaped\n"))
    _marked(fenced.edit(str(outside / "target.txt"), "untouched", "x"))
    _untouched(outside)


@pytest.mark.case("SBX-003")
def test_symlinked_directory_escape(fenced: Session, disk: Disk, outside: Path) -> None:
    """fence a symlinked directory inside the workspace that points outside"""
    disk.symlink("link", outside)
    _marked(fenced.write("link/target.txt", "escaped\n"))
    _marked(fenced.write("link/new.txt", "escaped\n"))
    _untouched(outside)


@pytest.mark.case("SBX-004")
def test_symlinked_file_escape(fenced: Session, disk: Disk, outside: Path) -> None:
    """fence a symlinked file inside the workspace that points outside, even after a read"""
    disk.symlink("inside-looking.txt", outside / "target.txt")
    assert fenced.read("inside-looking.txt").error is None
    _marked(fenced.write("inside-looking.txt", "escaped\n"))
    _marked(fenced.edit("inside-looking.txt", "untouched", "x"))
    _untouched(outside)


@pytest.mark.case("SBX-005")
def test_fence_speaks_before_the_policy(fenced: Session, outside: Path) -> None:
    """check the fence before the observation policy: no 'read it first' for a fenced path"""
    _marked(fenced.edit("../outside/never-read.txt", "a", "b"))
    _marked(fenced.write("../outside/target.txt", "unread overwrite\n"))
    _untouched(outside)


@pytest.mark.case("SBX-006")
def test_read_only_mode(open_session: Callable[..., Session], disk: Disk) -> None:
    """fence every mutation in read-only mode, inside the workspace too"""
    session = open_session(sandbox="read-only")
    disk.write("a.txt", "one\n")
    assert session.read("a.txt").error is None
    _marked(session.write("a.txt", "x"), "read-only")
    _marked(session.edit("a.txt", "one", "x"), "read-only")
    _marked(session.write("new.txt", "x"), "read-only")
    assert sorted(os.listdir(disk.root)) == ["a.txt"]
    assert disk.read("a.txt") == b"one\n"


@pytest.mark.case("SBX-007")
def test_reads_are_not_fenced(fenced: Session, outside: Path) -> None:
    """never fence reads"""
    result = fenced.read("../outside/target.txt")
    assert (result.text, result.error) == (
        spec.read_output(str(outside / "target.txt"), "untouched\n"),
        None,
    )


@pytest.mark.case("SBX-008")
def test_danger_full_access(open_session: Callable[..., Session], root: Path) -> None:
    """fence nothing in danger-full-access mode"""
    session = open_session(sandbox="danger-full-access")
    assert session.write("../free.txt", "ok\n").error is None
    assert (root.parent / "free.txt").read_bytes() == b"ok\n"


@pytest.mark.case("SBX-009")
def test_extra_writable_roots(open_session: Callable[..., Session], root: Path) -> None:
    """allow mutations under extra writable roots, and nowhere else"""
    extra = root.parent / "extra"
    extra.mkdir()
    session = open_session(sandbox="workspace-write", writableRoots=[str(extra)])
    assert session.write("../extra/new.txt", "ok\n").error is None
    _marked(session.write("../elsewhere.txt", "no\n"))
    assert not (root.parent / "elsewhere.txt").exists()


@pytest.mark.case("SBX-010")
def test_inside_the_workspace_is_writable(fenced: Session, disk: Disk) -> None:
    """allow every mutation inside the workspace under workspace-write"""
    assert fenced.write("new.txt", "one\n").text == spec.write_output(
        disk.display("new.txt"), created=True
    )
    assert fenced.edit("new.txt", "one", "two").error is None
    assert fenced.write("sub/deeper.txt", "x\n").error is None
    assert disk.read("new.txt") == b"two\n"
