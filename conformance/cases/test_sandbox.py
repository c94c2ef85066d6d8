"""SPEC §3.5 and §4.4: the sandbox fence and the marker the model sees."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance import display
from conformance.basetemp import HARNESS_TMP
from conformance.cases import case, needs
from conformance.client import Client, Session
from conformance.disk import Disk
from conformance.outcomes import NOT_APPLICABLE
from conformance.spec import Wording, fs
from conformance.verdict import Judge

DENIED = fs("FS_SANDBOX_DENIED")
WORKSPACE_WRITE = "sandbox:workspace-write"


@pytest.fixture
def outside(root: Path) -> Path:
    """A directory beside the workspace, holding one file nobody may change."""
    directory = root.parent / display.OUTSIDE
    directory.mkdir()
    (directory / "target.txt").write_text("untouched\n")
    return directory


@pytest.fixture
def fenced(open_session: Callable[..., Session]) -> Session:
    return open_session(sandbox="workspace-write")


def denied(session: Session, w: Wording, tool: str, path: str, *extra: str,
           mode: str = "workspace-write", rule: str = "sandbox.workspace-write") -> None:  # fmt: skip
    """A fenced mutation: refused, nothing touched, the marker shown, FS_SANDBOX_DENIED."""
    result = session.write(path, extra[0]) if tool == "write" else session.edit(path, *extra)
    result.refused(rule).says(w.marker(mode), "marker.sandbox").code(DENIED, "sandbox.denied")


@case("SBX-001", rules=["sandbox.workspace-write", "sandbox.denied", "marker.sandbox"])
@needs(options=[WORKSPACE_WRITE])
def test_dotdot_escape(fenced: Session, outside: Path, w: Wording) -> None:
    """fence a path that climbs out with '..', showing '[sandbox: file access denied under <mode> mode]'"""
    # Not ``Spelled``: to a harness that takes absolute paths the climb is sent normalized, as a
    # harness may refuse any '..' for a reason of its own, which would mask the fence.
    denied(fenced, w, "write", "../outside/target.txt", "escaped\n")
    denied(fenced, w, "write", "../outside/new.txt", "escaped\n")
    denied(fenced, w, "edit", "../outside/target.txt", "untouched", "x")


@case("SBX-002", rules=["sandbox.workspace-write", "sandbox.denied"])
@needs(options=[WORKSPACE_WRITE], paths=["any", "absolute"])
def test_absolute_escape(fenced: Session, outside: Path, w: Wording) -> None:
    """fence an absolute path outside the workspace"""
    denied(fenced, w, "write", str(outside / "target.txt"), "escaped\n")
    denied(fenced, w, "edit", str(outside / "target.txt"), "untouched", "x")


@case("SBX-003", rules=["sandbox.workspace-write", "fs.resolve.key"])
@needs(options=[WORKSPACE_WRITE])
def test_symlinked_directory_escape(fenced: Session, disk: Disk, outside: Path, w: Wording) -> None:
    """fence a symlinked directory inside the workspace that points outside"""
    disk.symlink("link", outside)
    denied(fenced, w, "write", "link/target.txt", "escaped\n")
    denied(fenced, w, "write", "link/new.txt", "escaped\n")


@case("SBX-004", rules=["sandbox.workspace-write", "sandbox.reads"])
@needs(options=[WORKSPACE_WRITE])
def test_symlinked_file_escape(fenced: Session, disk: Disk, outside: Path, w: Wording) -> None:
    """fence a symlinked file inside the workspace that points outside, even after a read"""
    disk.symlink("inside-looking.txt", outside / "target.txt")
    fenced.read("inside-looking.txt").accepted("sandbox.reads")
    denied(fenced, w, "write", "inside-looking.txt", "escaped\n")
    denied(fenced, w, "edit", "inside-looking.txt", "untouched", "x")


@case("SBX-005", rules=["sandbox.before-policy"])
@needs(options=[WORKSPACE_WRITE])
def test_fence_speaks_before_the_policy(fenced: Session, outside: Path, w: Wording) -> None:
    """check the fence before the observation policy: no 'read it first' for a fenced path"""
    denied(fenced, w, "edit", "../outside/never-read.txt", "a", "b", rule="sandbox.before-policy")
    denied(
        fenced,
        w,
        "write",
        "../outside/target.txt",
        "unread overwrite\n",
        rule="sandbox.before-policy",
    )


@case("SBX-006", rules=["sandbox.read-only", "sandbox.reads"])
@needs(options=["sandbox:read-only"])
def test_read_only_mode(open_session: Callable[..., Session], disk: Disk, w: Wording) -> None:
    """fence every mutation in read-only mode, inside the workspace too"""
    session = open_session(sandbox="read-only")
    disk.write("a.txt", "one\n")
    session.read("a.txt").accepted("sandbox.reads")
    denied(session, w, "write", "a.txt", "x", mode="read-only", rule="sandbox.read-only")
    denied(session, w, "edit", "a.txt", "one", "x", mode="read-only", rule="sandbox.read-only")
    denied(session, w, "write", "new.txt", "x", mode="read-only", rule="sandbox.read-only")


@case("SBX-007", rules=["sandbox.reads"])
@needs(options=[WORKSPACE_WRITE])
def test_reads_are_not_fenced(fenced: Session, outside: Path, w: Wording) -> None:
    """never fence reads"""
    fenced.read("../outside/target.txt").accepted("sandbox.reads").says(
        w.read_output(str(outside / "target.txt"), "untouched\n"), "sandbox.reads")  # fmt: skip


@case("SBX-008", rules=["sandbox.full-access"])
@needs(options=["sandbox:danger-full-access"])
def test_danger_full_access(open_session: Callable[..., Session]) -> None:
    """fence nothing in danger-full-access mode"""
    session = open_session(sandbox="danger-full-access")
    session.write("../free.txt", "ok\n").accepted(
        "sandbox.full-access", changes={"../free.txt": "ok\n"}
    )


@case("SBX-009", rules=["sandbox.writable-roots"])
@needs(options=[WORKSPACE_WRITE, "writableRoots"])
def test_extra_writable_roots(open_session: Callable[..., Session], root: Path, w: Wording) -> None:
    """allow mutations under extra writable roots, and nowhere else"""
    extra = root.parent / display.EXTRA
    extra.mkdir()
    session = open_session(sandbox="workspace-write", writableRoots=[str(extra)])
    session.write("../extra/new.txt", "ok\n").accepted(
        "sandbox.writable-roots", changes={"../extra/new.txt": "ok\n"}
    )
    denied(session, w, "write", "../elsewhere.txt", "no\n", rule="sandbox.writable-roots")


@case("SBX-010", rules=["sandbox.workspace-write"])
@needs(options=[WORKSPACE_WRITE])
def test_inside_the_workspace_is_writable(fenced: Session, disk: Disk, w: Wording) -> None:
    """allow every mutation inside the workspace under workspace-write"""
    fenced.write("new.txt", "one\n").accepted("sandbox.workspace-write", changes={"new.txt": "one\n"}).says(
        w.write_output(disk.display("new.txt"), created=True), "write.output")  # fmt: skip
    fenced.edit("new.txt", "one", "two").accepted(
        "sandbox.workspace-write", changes={"new.txt": "two\n"}
    )
    fenced.write("sub/deeper.txt", "x\n").accepted(
        "sandbox.workspace-write", changes={"sub/deeper.txt": "x\n"}
    )


@case("SBX-011", rules=["sandbox.workspace-write"])
@needs(options=[WORKSPACE_WRITE])
def test_a_sibling_whose_name_starts_with_the_roots(
    fenced: Session, root: Path, w: Wording, judge: Judge
) -> None:
    """fence a sibling directory whose name merely starts with the workspace's name"""
    sibling = root.parent / f"{root.name}2"
    sibling.mkdir()
    denied(fenced, w, "write", f"../{root.name}2/x.txt", "escaped\n")
    judge.equal(f"the sibling {root.name}2/", sorted(os.listdir(sibling)), [],
                rule="sandbox.workspace-write")  # fmt: skip


@case("SBX-012", rules=["sandbox.workspace-write", "fs.resolve.display"])
@needs(options=[WORKSPACE_WRITE])
def test_a_root_opened_through_a_symlink(
    open_session: Callable[..., Session], root: Path, w: Wording
) -> None:
    """judge a workspace opened through a symlink by its real path, and show paths under the alias"""
    alias = root.parent / "alias"
    alias.symlink_to(root)
    session = open_session(alias, sandbox="workspace-write")
    session.write("new.txt", "one\n").accepted("sandbox.workspace-write", changes={"new.txt": "one\n"}).says(
        w.write_output(str(alias / "new.txt"), created=True), "fs.resolve.display")  # fmt: skip
    denied(session, w, "write", "../escaped.txt", "x")


@case("SBX-013", rules=["sandbox.denied", "sandbox.workspace-write", "tool.changes-only-target"])
@needs(options=[WORKSPACE_WRITE])
def test_a_fenced_write_creates_no_parents(
    fenced: Session, root: Path, w: Wording, judge: Judge
) -> None:
    """create no parent directory for a fenced write"""
    denied(fenced, w, "write", "../made/up/deep.txt", "x")
    made = (root.parent / "made").exists()
    judge.true(not made, "the directory ../made was created", rule="tool.changes-only-target")


@case("SBX-014", rules=["sandbox.temp-writable", "sandbox.writable-roots"])
@needs(options=[WORKSPACE_WRITE])
def test_the_temp_directory_is_writable_only_if_declared(
    client: Client, fenced: Session, root: Path, w: Wording
) -> None:
    """write into the temp directory under workspace-write only if tempWritable says so"""
    temp = client.scratch.get(HARNESS_TMP)
    if temp is None:
        pytest.skip(
            f"{NOT_APPLICABLE}the suite sets the temp directory (TMPDIR) only of a harness in a "
            "child process"
        )
    target = temp / "sbx-014.txt"
    # Relative where the harness allows it, so the verdict reads the same on every run.
    path = str(target) if client.profile.paths == "absolute" else os.path.relpath(target, root)
    result = fenced.write(path, "in temp\n")
    if client.profile.supports("tempWritable"):
        result.accepted(
            "sandbox.temp-writable", changes={f"<{HARNESS_TMP}>/sbx-014.txt": "in temp\n"}
        )
        # One more writable root, and still nothing else.
        denied(fenced, w, "write", "../beside.txt", "no\n", rule="sandbox.writable-roots")
    else:
        result.refused("sandbox.temp-writable").says(
            w.marker("workspace-write"), "marker.sandbox").code(DENIED, "sandbox.denied")  # fmt: skip
