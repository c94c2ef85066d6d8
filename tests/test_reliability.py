"""Reliability proofs for the reference harness: driven races, faults, crashes, secrets, the log.

SPEC §3.3 ({fs.publish.*}, {fs.cas.*}), §1.4 (secrets) and §2.2 ({log.*}). Races are driven
(pause points, barriers, patched hooks), never hoped for, so every test here is deterministic.
The helpers that drive them (``sweep_faults``, ``run_cas_rounds``, ``start_stager``) are
public: ``bench/stress_reliability.py`` runs them at stress counts.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import gc
import json
import logging
import multiprocessing
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference import FsError, FsErrorCode, LlmError, open_workspace
from reference.fs import CreateIfAbsent, EditRequest, LocalFs, ReplaceIfVersion, SandboxFs
from reference.fs import local as local_module
from reference.loop import AgentLoop
from reference.model import ModelResponse, ToolCallRequest
from reference.session import SessionLog
from reference.tools import ToolExecutionResult, define_tool
from reference.workspace import Workspace

REPO: Final = Path(__file__).resolve().parents[1]
TEMP_NAME: Final = local_module.TEMP_NAME
FS_LOGGER: Final = "reference.fs"
STAGED_BYTES: Final = 16 * 1024 * 1024


@pytest.fixture(autouse=True)
def fresh_sweep(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a fresh process would: no directory swept yet."""
    # The provider sweeps a directory once per process, keyed by inode; tmp_path inodes get
    # reused, so without this a test could silently skip the sweep it means to prove.
    monkeypatch.setattr(local_module, "_SWEPT", set())


def tree(root: Path) -> dict[str, object]:
    """Every entry under ``root``: a file's bytes, ``"dir"``, or ``"-> <target>"`` for a link."""
    found: dict[str, object] = {}
    for directory, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, root)
            if os.path.islink(path):
                found[relative] = "-> " + os.readlink(path)
            elif os.path.isdir(path):
                found[relative] = "dir"
            else:
                found[relative] = Path(path).read_bytes()
    return found


def temps(directory: Path) -> list[str]:
    """The provider's temp files in ``directory`` (named ``.<name>.<12 hex>.reference-tmp``)."""
    return sorted(name for name in os.listdir(directory) if TEMP_NAME.fullmatch(name))


def text_of(result: ToolExecutionResult) -> str:
    """The single text block of a tool result."""
    assert len(result.content) == 1
    return result.content[0].text


def error_of(result: ToolExecutionResult) -> tuple[str, str] | None:
    """The structured error of a result as ``(name, code)``."""
    return None if result.error is None else (result.error.name, str(result.error.code))


def write_output(path: str, created: bool) -> str:
    """The model-visible text of a successful write (SPEC {write.output})."""
    outcome = "Created file" if created else "Updated file"
    return f"<path>{path}</path>\n<type>file</type>\n<content>\n{outcome}\n</content>"


# -- no redirect: a directory swapped for a symlink mid-mutation ----------------------------

SEED: Final = b"x = 1\n"
REDIRECTED: Final = 'cannot {op} "{p}": the path changed while it was being written'
SANDBOX_MARKER: Final = "Error: [sandbox: file access denied under workspace-write mode]"


@dataclass
class Swap:
    """A workspace whose ``real/`` can be swapped for a symlink to a directory outside."""

    root: Path
    outside: Path
    done: int = 0

    def __call__(self) -> None:
        """Move ``real/`` away (inside the workspace) and put ``real -> outside`` in its place."""
        os.rename(self.root / "real", self.root / "real.moved")
        os.symlink(self.outside, self.root / "real")
        self.done += 1


@pytest.fixture
def swap(tmp_path: Path) -> Swap:
    """``ws/real/x.txt`` inside, and a decoy ``outside/x.txt`` with the same bytes."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "real").mkdir(parents=True)
    outside.mkdir()
    (root / "real" / "x.txt").write_bytes(SEED)
    (outside / "x.txt").write_bytes(SEED)
    return Swap(root, outside)


def _after_swap(swap: Swap, **moved: bytes) -> dict[str, object]:
    """The workspace tree once ``real`` was swapped: the moved directory holds ``moved``."""
    files = {"x.txt": SEED, **moved}
    return {
        "real": f"-> {swap.outside}",
        "real.moved": "dir",
        **{f"real.moved/{name}": data for name, data in files.items()},
    }


@pytest.mark.parametrize("op", ["write", "edit"])
def test_a_directory_swapped_after_the_fence_is_refused(
    swap: Swap, monkeypatch: pytest.MonkeyPatch, op: str
) -> None:
    provider = SandboxFs(LocalFs(), "workspace-write", [str(swap.root)])
    name = "pwn.txt" if op == "write" else "x.txt"
    target = provider.resolve(f"real/{name}", str(swap.root))
    fence = provider.authorize

    def fence_then_swap(checked: Any, what: str) -> None:
        fence(checked, what)
        swap()

    monkeypatch.setattr(provider, "authorize", fence_then_swap)
    mutate: Callable[[], object] = (
        (lambda: provider.write(target, "pwned\n", None))
        if op == "write"
        else (lambda: provider.edit(target, EditRequest("x = 1", "x = 2"), None))
    )
    with pytest.raises(FsError) as info:
        mutate()
    assert (info.value.code, info.value.message) == (
        FsErrorCode.FS_SANDBOX_DENIED,
        REDIRECTED.format(op=op, p=f"{swap.root}/real/{name}"),
    )
    assert swap.done == 1
    assert tree(swap.root) == _after_swap(swap)
    assert tree(swap.outside) == {"x.txt": SEED}


REDIRECT_CASES: Final[dict[str, tuple[str, dict[str, object], bool, dict[str, bytes]]]] = {
    # name: (tool, arguments, read first, what the moved-away directory holds if it goes through)
    "write-new": (
        "write",
        {"file_path": "real/pwn.txt", "content": "pwned\n"},
        False,
        {"pwn.txt": b"pwned\n"},
    ),
    "write-update": (
        "write",
        {"file_path": "real/x.txt", "content": "pwned\n"},
        True,
        {"x.txt": b"pwned\n"},
    ),
    "edit": (
        "edit",
        {"file_path": "real/x.txt", "old_string": "1", "new_string": "2"},
        True,
        {"x.txt": b"x = 2\n"},
    ),
}


@pytest.mark.parametrize("point", ["fence", "checked", "staged"])
@pytest.mark.parametrize("mutation", list(REDIRECT_CASES))
def test_a_directory_swapped_for_a_symlink_never_sends_a_write_outside(
    swap: Swap, monkeypatch: pytest.MonkeyPatch, mutation: str, point: str
) -> None:
    tool, arguments, read_first, landed = REDIRECT_CASES[mutation]
    ws = open_workspace(swap.root, sandbox="workspace-write")
    path = f"{swap.root}/{arguments['file_path']}"
    if read_first:
        assert not ws.call_tool("read", {"file_path": arguments["file_path"]}).is_error
    if point == "fence":
        fence = SandboxFs.authorize

        def fence_then_swap(self: SandboxFs, target: Any, op: str) -> None:
            fence(self, target, op)
            if not swap.done:
                swap()

        monkeypatch.setattr(SandboxFs, "authorize", fence_then_swap)
    else:
        ws.arm_pause(point, swap)
    result = ws.call_tool(tool, arguments)
    assert swap.done == 1
    assert tree(swap.outside) == {"x.txt": SEED}
    if point == "fence":
        # Swapped after the fence, before the walk: refused, nothing written anywhere.
        assert (text_of(result), error_of(result)) == (
            SANDBOX_MARKER,
            ("FsError", "FS_SANDBOX_DENIED"),
        )
        err = ws.failure(result.call_id)
        assert isinstance(err, FsError)
        assert isinstance(err.cause, FsError)
        assert err.cause.message == REDIRECTED.format(op=tool, p=path)
        assert tree(swap.root) == _after_swap(swap)
        return
    # Swapped after the walk: the write lands in the directory that was checked, now moved.
    if tool == "write":
        assert text_of(result) == write_output(path, created=mutation == "write-new")
    else:
        assert text_of(result) == f"The file {path} has been updated successfully."
    assert tree(swap.root) == _after_swap(swap, **landed)


# -- the walk names a swapped component as a redirect, however the race falls ---------------


def test_a_symlink_planted_between_mkdir_and_open_is_a_redirect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    provider = SandboxFs(LocalFs(), "workspace-write", [str(root)])
    target = provider.resolve("sub/pwn.txt", str(root))  # "sub" is missing: write creates it
    real_mkdir = os.mkdir

    def plant_then_mkdir(path: str, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        # Another program wins the race for the name: our mkdir then finds it taken.
        os.symlink(outside, path, dir_fd=dir_fd)
        real_mkdir(path, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "mkdir", plant_then_mkdir)
    with pytest.raises(FsError) as info:
        provider.write(target, "pwned\n", CreateIfAbsent())
    assert (info.value.code, info.value.message) == (
        FsErrorCode.FS_SANDBOX_DENIED,
        REDIRECTED.format(op="write", p=f"{root}/sub/pwn.txt"),
    )
    assert tree(root) == {"sub": f"-> {outside}"}
    assert tree(outside) == {}


@dataclass
class MovedParents:
    """A write of ``a/b/f.txt`` whose new ``a/`` is moved aside and replaced by a symlink."""

    root: Path
    outside: Path

    def __call__(self) -> None:
        """At ``staged``: ``a`` becomes ``a_moved`` (inside), and ``a -> outside`` appears."""
        os.rename(self.root / "a", self.root / "a_moved")
        os.symlink(self.outside, self.root / "a")


@pytest.fixture
def moved_parents(tmp_path: Path) -> MovedParents:
    """An empty workspace, and outside it an empty ``b/`` that a cleanup by path would remove."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    (outside / "b").mkdir(parents=True)
    return MovedParents(root, outside)


def test_a_failed_write_never_removes_a_directory_through_a_planted_symlink(
    moved_parents: MovedParents,
) -> None:
    root, outside = moved_parents.root, moved_parents.outside
    ws = open_workspace(root, sandbox="workspace-write")

    def move_and_compete() -> None:
        moved_parents()
        (root / "a_moved" / "b" / "f.txt").write_text("competitor")  # the link now fails

    ws.arm_pause("staged", move_and_compete)
    result = ws.call_tool("write", {"file_path": "a/b/f.txt", "content": "mine"})
    path = f"{root}/a/b/f.txt"
    assert (text_of(result), error_of(result)) == (
        f'Error: cannot overwrite existing "{path}" without reading it first'
        " — read the file, then retry",
        ("FsError", "FS_NOT_OBSERVED"),
    )
    # Cleanup by path would have followed ``a`` and removed ``outside/b`` (SPEC
    # {fs.publish.no-redirect}, {tool.changes-only-target}).
    assert tree(outside) == {"b": "dir"}
    assert tree(root) == {
        "a": f"-> {outside}",
        "a_moved": "dir",
        "a_moved/b": "dir",
        "a_moved/b/f.txt": b"competitor",
    }


def _no_space(*args: object, **where: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _no_links(*args: object, **where: object) -> None:
    raise OSError(errno.EPERM, os.strerror(errno.EPERM))


def _write_on_a_full_disk(
    ws: Workspace,
    root: Path,
    path: str,
    at_staged: Callable[[], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Write ``path`` new, ``at_staged`` running once its bytes are staged, then the disk full
    at publication: the failure the model sees is exactly the write's own."""
    monkeypatch.setattr(os, "link", _no_space)
    ws.arm_pause("staged", at_staged)
    result = ws.call_tool("write", {"file_path": path, "content": "mine"})
    assert (text_of(result), error_of(result)) == (
        f'Error: cannot write "{root}/{path}": no space left on device',
        ("FsError", "FS_IO_ERROR"),
    )


def test_a_failed_write_removes_the_parents_it_made_where_they_now_are(
    moved_parents: MovedParents, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, outside = moved_parents.root, moved_parents.outside
    ws = open_workspace(root, sandbox="workspace-write")
    _write_on_a_full_disk(ws, root, "a/b/f.txt", moved_parents, monkeypatch)
    # ``b`` went from the directory it was made in; the moved ``a_moved`` is no longer at the
    # name it was made under, and what is there now (a symlink) is never followed.
    assert tree(outside) == {"b": "dir"}
    assert tree(root) == {"a": f"-> {outside}", "a_moved": "dir"}


def test_a_failed_write_leaves_a_directory_now_at_a_made_ones_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the very directory the walk made goes again: one another program made at its name
    since (empty, as the walk's was) is that program's."""
    ws = open_workspace(tmp_path)

    def replace_a() -> None:
        os.rename(tmp_path / "a", tmp_path / "a_moved")
        (tmp_path / "a").mkdir()

    _write_on_a_full_disk(ws, tmp_path, "a/b/f.txt", replace_a, monkeypatch)
    # ``b`` went from the directory it was made in (now ``a_moved``); the new ``a`` stays.
    assert tree(tmp_path) == {"a": "dir", "a_moved": "dir"}


def test_a_made_directory_that_is_no_longer_empty_stays_and_the_failure_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = open_workspace(tmp_path)

    def fill_a() -> None:
        (tmp_path / "a" / "other.txt").write_text("theirs")

    _write_on_a_full_disk(ws, tmp_path, "a/b/f.txt", fill_a, monkeypatch)
    assert tree(tmp_path) == {"a": "dir", "a/other.txt": b"theirs"}


def test_a_deep_new_path_holds_few_descriptors_and_a_failure_removes_all_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each made directory held a descriptor of its parent until the write ended, so a write
    making about a thousand levels failed with "too many open files" under a 1024 limit."""
    monkeypatch.setattr(local_module, "HELD_MADE", 3)
    ws = open_workspace(tmp_path)
    dups = 0
    real_dup = os.dup

    def dup(fd: int) -> int:
        nonlocal dups
        dups += 1
        return real_dup(fd)

    monkeypatch.setattr(os, "dup", dup)
    before = _open_fds()
    done = ws.call_tool("write", {"file_path": "a/b/c/d/e/new.txt", "content": "deep"})
    assert not done.is_error, text_of(done)
    assert (dups, (tmp_path / "a/b/c/d/e/new.txt").read_text()) == (3, "deep")
    monkeypatch.setattr(os, "link", _no_space)
    failed = ws.call_tool("write", {"file_path": "v/w/x/y/z/q/new.txt", "content": "deep"})
    assert (text_of(failed), error_of(failed)) == (
        f'Error: cannot write "{tmp_path}/v/w/x/y/z/q/new.txt": no space left on device',
        ("FsError", "FS_IO_ERROR"),
    )
    assert not (tmp_path / "v").exists()  # the held three, and the three found again by name
    assert _open_fds() == before


@pytest.mark.parametrize("then", ["moved away", "another in its place"])
def test_a_deep_made_directory_past_a_broken_link_of_the_chain_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, then: str
) -> None:
    """Past the held ones, a made directory is found again by name under the one before it:
    where that one was moved or replaced, what lies beyond it stays, and the failure is the
    write's own."""
    monkeypatch.setattr(local_module, "HELD_MADE", 1)
    ws = open_workspace(tmp_path)
    before = _open_fds()

    def break_the_chain() -> None:
        os.rename(tmp_path / "a" / "b", tmp_path / "a" / "b_moved")
        if then == "another in its place":
            (tmp_path / "a" / "b").mkdir()

    _write_on_a_full_disk(ws, tmp_path, "a/b/c/f.txt", break_the_chain, monkeypatch)
    expected: dict[str, object] = {"a": "dir", "a/b_moved": "dir", "a/b_moved/c": "dir"}
    if then == "another in its place":
        expected["a/b"] = "dir"
    assert tree(tmp_path) == expected
    assert _open_fds() == before


def test_a_directory_another_made_first_is_not_recorded_and_nothing_is_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = open_workspace(tmp_path)
    before = _open_fds()
    real_mkdir = os.mkdir

    def beaten(name: Any, *args: Any, **kwargs: Any) -> None:
        real_mkdir(name, *args, **kwargs)  # another program, first
        real_mkdir(name, *args, **kwargs)  # ours: FileExistsError

    monkeypatch.setattr(os, "mkdir", beaten)
    monkeypatch.setattr(os, "link", _no_space)
    result = ws.call_tool("write", {"file_path": "a/f.txt", "content": "mine"})
    assert (text_of(result), error_of(result)) == (
        f'Error: cannot write "{tmp_path}/a/f.txt": no space left on device',
        ("FsError", "FS_IO_ERROR"),
    )
    assert tree(tmp_path) == {"a": "dir"}  # theirs: not removed
    assert _open_fds() == before


def test_an_update_keeps_going_when_the_filesystem_refuses_any_owner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a user namespace an unmapped owner is EINVAL, not EPERM: the update failed."""
    (tmp_path / "f.txt").write_text("old\n")
    ws = open_workspace(tmp_path, policy=False)
    real_fstat = os.fstat
    asked: list[int] = []

    def fstat(fd: int) -> os.stat_result:  # the staged file looks another user's than the old
        fields = list(real_fstat(fd))
        fields[stat.ST_UID] += 1
        return os.stat_result(fields)

    def unmapped(fd: int, uid: int, gid: int) -> None:
        asked.append(uid)
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))

    monkeypatch.setattr(os, "fstat", fstat)
    monkeypatch.setattr(os, "fchown", unmapped)
    done = ws.call_tool("write", {"file_path": "f.txt", "content": "new\n"})
    assert not done.is_error, text_of(done)
    assert asked == [os.getuid()]
    assert (tmp_path / "f.txt").read_text() == "new\n"


def test_a_failing_close_of_a_made_directorys_parent_is_logged_where_it_was_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Past the commit point, like the directory's own close: logged, naming the directory."""
    ws = open_workspace(tmp_path)
    caplog.set_level(logging.DEBUG, logger=FS_LOGGER)
    held: list[int] = []
    real_dup, real_close = os.dup, os.close

    def dup(fd: int) -> int:
        held.append(real_dup(fd))
        return held[-1]

    def close(fd: int) -> None:
        real_close(fd)
        if fd in held:
            raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "dup", dup)
    monkeypatch.setattr(os, "close", close)
    result = ws.call_tool("write", {"file_path": "a/b/f.txt", "content": "mine"})
    monkeypatch.setattr(os, "close", real_close)
    assert not result.is_error, text_of(result)
    assert (tmp_path / "a" / "b" / "f.txt").read_text() == "mine"
    # (Not which line logged it: mutmut's trampolines put frames of their own in between.)
    assert [r.getMessage() for r in caplog.records if r.name == FS_LOGGER] == [
        f'could not close the directory "{where}": [Errno 5] Input/output error'
        for where in (tmp_path, tmp_path / "a")
    ]


def test_a_component_swapped_back_before_it_is_classified_is_still_a_redirect(
    swap: Swap, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = SandboxFs(LocalFs(), "workspace-write", [str(swap.root)])
    target = provider.resolve("real/pwn.txt", str(swap.root))
    swap()
    real_open = os.open

    def open_then_swap_back(path: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
        try:
            return real_open(path, flags, mode, **kw)
        except OSError:
            if path == "real":  # the walk met the symlink; the racer puts the directory back
                os.unlink(swap.root / "real")
                os.rename(swap.root / "real.moved", swap.root / "real")
            raise

    monkeypatch.setattr(os, "open", open_then_swap_back)
    with pytest.raises(FsError) as info:
        provider.write(target, "pwned\n", None)
    assert (info.value.code, info.value.message) == (
        FsErrorCode.FS_SANDBOX_DENIED,
        REDIRECTED.format(op="write", p=f"{swap.root}/real/pwn.txt"),
    )
    assert tree(swap.root) == {"real": "dir", "real/x.txt": SEED}
    assert tree(swap.outside) == {"x.txt": SEED}


def test_a_symlink_swapped_back_while_realpath_reads_it_resolves_again(
    swap: Swap, monkeypatch: pytest.MonkeyPatch
) -> None:
    swap()  # ``real`` is the symlink when realpath's lstat looks at it...
    real_readlink = os.readlink

    def swap_back_then_readlink(path: Any, *args: Any, **kwargs: Any) -> str:
        if os.fspath(path) == str(swap.root / "real") and os.path.islink(path):
            # ... and the directory again when its readlink does (EINVAL in Python 3.11).
            os.unlink(swap.root / "real")
            os.rename(swap.root / "real.moved", swap.root / "real")
        result: str = real_readlink(path, *args, **kwargs)
        return result

    monkeypatch.setattr(os, "readlink", swap_back_then_readlink)
    ws = open_workspace(swap.root, sandbox="workspace-write")
    result = ws.call_tool("write", {"file_path": "real/pwn.txt", "content": "pwned\n"})
    path = f"{swap.root}/real/pwn.txt"
    assert (text_of(result), result.error) == (write_output(path, created=True), None)
    assert tree(swap.root) == {"real": "dir", "real/x.txt": SEED, "real/pwn.txt": b"pwned\n"}
    assert tree(swap.outside) == {"x.txt": SEED}


def test_a_path_that_never_settles_is_an_fs_error_without_errno_or_file_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "gone")

    def unsettled(path: Any, *args: Any, **kwargs: Any) -> str:
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL), os.fspath(path))

    # What realpath raises on Python 3.11 and 3.12 when readlink meets a component that keeps
    # changing (3.13's non-strict realpath swallows readlink's errors, so it is raised here).
    workspace = open_workspace(tmp_path)
    monkeypatch.setattr(os.path, "realpath", unsettled)
    result = workspace.call_tool("read", {"file_path": "link/a.txt"})
    assert (text_of(result), error_of(result)) == (
        f'Error: cannot resolve "{tmp_path}/link/a.txt": invalid argument',
        ("FsError", "FS_IO_ERROR"),
    )


# -- a racy observation compares content exactly, chunk by chunk ---------------------------

FROZEN_NS: Final = 1_700_000_000_000_000_000
BIG: Final = 5 * local_module.COMPARE_BYTES // 2  # the comparison crosses buffer boundaries


def _frozen_stat(
    path: str | int, *, dir_fd: int | None = None, follow_symlinks: bool = True
) -> os.stat_result:
    """A stat whose timestamps never tick: a rewrite can only be told apart by its bytes."""
    st = os.stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
    extra = {name: getattr(st, name) for name in ("st_atime_ns", "st_blksize", "st_blocks")}
    extra["st_mtime_ns"] = extra["st_ctime_ns"] = FROZEN_NS
    return os.stat_result(tuple(st), extra)


@pytest.mark.parametrize(
    "flip",
    [None, 0, local_module.COMPARE_BYTES - 1, local_module.COMPARE_BYTES, BIG // 2, BIG - 1],
)
def test_a_same_tick_rewrite_anywhere_in_an_edited_file_is_stale(
    tmp_path: Path, flip: int | None
) -> None:
    # The edit's observation keeps its three parts (head, new text, tail) instead of a hash;
    # a later write compares the file with them through one reused buffer.
    local = LocalFs(stat=_frozen_stat, clock=lambda: FROZEN_NS + 1_000_000)
    path = tmp_path / "big.txt"
    half = "x" * (BIG // 2 - 2)
    path.write_text(f"{half}OLD{half}\n")
    target = local.resolve("big.txt", str(tmp_path))
    outcome = local.edit(target, EditRequest("OLD", "NEW"), None)
    assert outcome.version.content is not None
    assert len(outcome.version.content) == 3
    expected = f"{half}NEW{half}\n".encode()
    assert path.read_bytes() == expected
    if flip is None:
        local.write(target, "done\n", ReplaceIfVersion(outcome.version))
        assert path.read_bytes() == b"done\n"
        return
    rewritten = bytearray(expected)
    rewritten[flip] ^= 1  # one bit: the same size, inode and (frozen) timestamps
    with open(path, "r+b") as out:
        out.write(rewritten)
    with pytest.raises(FsError) as info:
        local.write(target, "done\n", ReplaceIfVersion(outcome.version))
    assert (info.value.code, info.value.message) == (
        FsErrorCode.FS_STALE_VERSION,
        f'cannot write "{path}": file changed since it was read',
    )
    assert path.read_bytes() == rewritten


# -- faults at every syscall of a mutation -------------------------------------------------

OS_CALLS: Final = (
    "open", "close", "read", "readv", "write", "fchmod", "fsync", "replace", "link", "unlink",
    "stat", "fstat", "lstat", "mkdir", "rmdir", "listdir", "access", "fstatvfs", "readlink",
)  # fmt: skip
# Where the kernel can report a full disk; EIO can come from any of them.
ENOSPC_CALLS: Final = frozenset({"open", "write", "fsync", "replace", "link", "mkdir", "close"})
COMMIT_CALLS: Final = frozenset({"replace", "link"})


class Syscalls:
    """Records the ``os``/``fcntl`` calls made while active, or fails exactly the k-th one.

    Fault semantics follow Linux: a failing ``close`` still releases the descriptor, and
    ``os.access`` never raises (CPython answers False on any error).
    """

    def __init__(self, fault_at: int | None = None, code: int = errno.EIO) -> None:
        self.calls: list[str] = []
        self.fault_at = fault_at
        self.code = code
        self.struck: str | None = None
        self._active = False

    @contextmanager
    def active(self) -> Iterator[Syscalls]:
        """Patch the functions for the duration of the block."""
        originals: list[tuple[Any, str, Any]] = [(os, n, getattr(os, n)) for n in OS_CALLS]
        originals.append((fcntl, "flock", fcntl.flock))
        for module, name, real in originals:
            setattr(module, name, self._wrap(name, real))
        self._active = True
        try:
            yield self
        finally:
            self._active = False
            for module, name, real in originals:
                setattr(module, name, real)

    def _wrap(self, name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(real)
        def call(*args: Any, **kwargs: Any) -> Any:
            if not self._active:
                return real(*args, **kwargs)
            index = len(self.calls)
            self.calls.append(name)
            if index != self.fault_at:
                return real(*args, **kwargs)
            self.struck = name
            if name == "access":
                return False
            if name == "close":
                real(*args, **kwargs)
            raise OSError(self.code, os.strerror(self.code))

        return call


def _text(size: int, tag: str) -> str:
    line = f"{tag} the quick brown fox jumps over the lazy dog\n"
    return (line * (size // len(line) + 1))[:size] + f"MARK-{tag}\n"


@dataclass(frozen=True)
class Mutation:
    """One guarded (or unguarded) mutation whose syscalls the sweep fails one by one."""

    name: str
    tool: str
    path: str
    policy: bool
    read_first: bool
    created: bool

    def seed(self, root: Path, size: int) -> None:
        """The workspace before the call."""
        (root / "a.txt").write_text(_text(size, "old"))

    def arguments(self, size: int) -> dict[str, object]:
        """The tool call's arguments."""
        if self.tool == "edit":
            return {"file_path": self.path, "old_string": "MARK-old", "new_string": "MARK-new"}
        return {"file_path": self.path, "content": _text(size, "new")}

    def expected(self, size: int) -> bytes:
        """The target's bytes after the call succeeded."""
        if self.tool == "edit":
            return _text(size, "old").replace("MARK-old", "MARK-new").encode()
        return _text(size, "new").encode()

    def output(self, root: Path) -> str:
        """The model-visible text of success."""
        if self.tool == "edit":
            return f"The file {root / self.path} has been updated successfully."
        return write_output(str(root / self.path), self.created)

    def retried(self, root: Path) -> str:
        """The text of an identical retry: accepted, never refused as stale."""
        if self.tool == "edit":  # the version check passes; the text is simply gone now
            return f'Error: old_string was not found in "{root / self.path}"'
        return write_output(str(root / self.path), created=False)


FAULT_MUTATIONS: Final = (
    Mutation("write-create", "write", "new.txt", policy=False, read_first=False, created=True),
    Mutation("write-update", "write", "a.txt", policy=True, read_first=True, created=False),
    Mutation(
        "write-create-if-absent", "write", "new.txt", policy=True, read_first=False, created=True
    ),
    Mutation(
        "write-create-parents", "write", "p/q/new.txt", policy=True, read_first=False, created=True
    ),
    Mutation("edit", "edit", "a.txt", policy=True, read_first=True, created=False),
)


@dataclass
class FaultReport:
    """What one sweep did: faults injected, where they struck, and any broken invariant."""

    mutation: str
    size: int
    calls: int = 0
    injected: int = 0
    after_commit: int = 0
    failed_after_commit: int = 0
    absorbed: int = 0
    refused: int = 0
    changed_on_failure: int = 0
    absorbed_at: Counter[str] = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)

    def line(self) -> str:
        """One summary line."""
        return (
            f"faults {self.mutation} ({self.size} B): {self.calls} calls, {self.injected} "
            f"injected, {self.after_commit} after the commit point "
            f"({self.failed_after_commit} reported as failures), {self.absorbed} absorbed "
            f"before it {dict(sorted(self.absorbed_at.items()))}, {self.refused} refused "
            f"({self.changed_on_failure} changed a byte); {len(self.violations)} violations"
        )


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@dataclass
class _Run:
    root: Path
    ws: Workspace
    before: dict[str, object]
    syscalls: Syscalls
    result: ToolExecutionResult
    logged: list[str]
    leaked_fds: int


def _run(base: Path, label: str, mutation: Mutation, size: int, syscalls: Syscalls) -> _Run:
    # Every run has the same depth of path, the same files and a fresh sweep, so the calls it
    # makes are the recorded ones up to the fault.
    root = base / label / "ws"
    root.mkdir(parents=True)
    mutation.seed(root, size)
    ws = open_workspace(root, policy=mutation.policy)
    if mutation.read_first:
        assert not ws.call_tool("read", {"file_path": mutation.path, "limit": 1}).is_error
    local_module._SWEPT.clear()
    before = tree(root)
    handler = _Records()
    logger = logging.getLogger(FS_LOGGER)
    logger.addHandler(handler)
    # No collection may run mid-call: it would finalize earlier garbage (a Popen, a pipe)
    # whose os.close calls would be counted, or faulted, as the mutation's own.
    collecting = gc.isenabled()
    gc.disable()
    fds = _open_fds()
    try:
        with syscalls.active():
            result = ws.call_tool(mutation.tool, mutation.arguments(size))
    finally:
        if collecting:
            gc.enable()
        logger.removeHandler(handler)
    return _Run(root, ws, before, syscalls, result, handler.messages, _open_fds() - fds)


@dataclass(frozen=True)
class _Baseline:
    """The fault-free run: every call it made, where it committed, and what it published."""

    calls: list[str]
    commit: int
    published: dict[str, object]


def sweep_faults(base: Path, mutation: Mutation, size: int) -> FaultReport:
    """Fail every syscall of ``mutation`` in turn (EIO, and ENOSPC where the disk can be full)."""
    report = FaultReport(mutation.name, size)
    clean = _run(base, "record", mutation, size, Syscalls())
    assert text_of(clean.result) == mutation.output(clean.root), text_of(clean.result)
    calls = clean.syscalls.calls
    commit = max(i for i, name in enumerate(calls) if name in COMMIT_CALLS)
    baseline = _Baseline(calls, commit, tree(clean.root))
    assert baseline.published[mutation.path] == mutation.expected(size)
    report.calls = len(calls)
    for k, name in enumerate(calls):
        for code in (errno.EIO, errno.ENOSPC) if name in ENOSPC_CALLS else (errno.EIO,):
            report.injected += 1
            label = f"{k}-{errno.errorcode[code]}"
            run = _run(base, label, mutation, size, Syscalls(k, code))
            problems = _judge(run, mutation, baseline, k, report)
            report.violations += [f"{label} ({name}): {problem}" for problem in problems]
            shutil.rmtree(base / label)
    return report


def _judge(
    run: _Run, mutation: Mutation, baseline: _Baseline, k: int, report: FaultReport
) -> list[str]:
    """The invariants of one faulted run: SPEC {fs.publish.identical}, {fs.publish.commit-point}."""
    problems: list[str] = []
    name, after_commit = baseline.calls[k], k > baseline.commit
    if run.syscalls.calls[: k + 1] != baseline.calls[: k + 1] or run.syscalls.struck != name:
        problems.append(f"the run diverged from the recording: {run.syscalls.calls[: k + 1]}")
    if run.leaked_fds:
        problems.append(f"{run.leaked_fds} descriptors leaked")
    path = run.root / mutation.path
    text = text_of(run.result)
    report.after_commit += after_commit
    if run.result.is_error:
        report.refused += 1
        if after_commit:
            report.failed_after_commit += 1
            problems.append(f"failed after the commit point: {text!r}")
        if tree(run.root) != run.before:
            report.changed_on_failure += 1
            problems.append("a refused call changed the workspace")
        problems += _judge_refusal(run, mutation, name)
        return problems
    if after_commit:
        if not run.logged:
            problems.append("a failure after the commit point was not logged")
    else:
        report.absorbed += 1
        report.absorbed_at[name] += 1
    if text != mutation.output(run.root):
        problems.append(f"success reads {text!r}")
    now, stray = tree(run.root), temps(path.parent)
    if name == "unlink" and after_commit and len(stray) == 1:
        # The staged name could not be removed after the link: logged, and swept later.
        del now[os.path.relpath(path.parent / stray[0], run.root)]
    if now != baseline.published:
        problems.append("the workspace is not exactly the published state")
    retry = run.ws.call_tool(mutation.tool, mutation.arguments(report.size))
    if text_of(retry) != mutation.retried(run.root):
        problems.append(f"an identical retry reads {text_of(retry)!r}")
    if stray:
        local_module._SWEPT.clear()  # as the next process to mutate this directory would
        run.ws.call_tool("write", {"file_path": str(path.parent / "next.txt"), "content": ""})
        if temps(path.parent):
            problems.append(f"the staged name was never swept: {temps(path.parent)}")
    return problems


def _judge_refusal(run: _Run, mutation: Mutation, name: str) -> list[str]:
    """A refused run: the exact text and code, and the OSError chained as its cause."""
    problems: list[str] = []
    path = run.root / mutation.path
    if name == "access":  # CPython's os.access answers False on any error
        expected = f'Error: cannot {mutation.tool} "{path}": permission denied'
        code = "FS_PERMISSION_DENIED"
    else:
        reason = os.strerror(run.syscalls.code).lower()
        expected, code = f'Error: cannot {mutation.tool} "{path}": {reason}', "FS_IO_ERROR"
    if (text_of(run.result), error_of(run.result)) != (expected, ("FsError", code)):
        problems.append(f"refused with {text_of(run.result)!r} {error_of(run.result)}")
    err = run.ws.failure(run.result.call_id)
    cause = err.cause if isinstance(err, FsError) else err
    # os.access leaves no OSError to chain; every other fault does (SPEC {fs.os-error.cause}).
    if not (cause is None if name == "access" else isinstance(cause, OSError)):
        problems.append(f"the cause is not the OSError: {err!r}")
    return problems


@pytest.mark.parametrize("mutation", FAULT_MUTATIONS, ids=lambda m: m.name)
def test_a_fault_at_any_syscall_leaves_the_old_bytes_or_publishes_the_new(
    tmp_path: Path, mutation: Mutation
) -> None:
    report = sweep_faults(tmp_path, mutation, 3000)
    print(report.line())  # the closing note quotes these counts (pytest -s)
    assert report.violations == []
    assert report.injected > report.calls > 20
    assert report.after_commit >= 4  # the commit point is inside the sweep, not past its end
    assert report.refused >= 10


# -- an interruption right after a syscall returns ------------------------------------------
# A SIGINT handler raises between two bytecodes: here right after the call, before the next
# statement could record what the call made. Nothing the mutation made may stay.


def _interrupt_after(
    monkeypatch: pytest.MonkeyPatch, name: str, when: Callable[..., object] = lambda *a: True
) -> list[Any]:
    """Make ``os.<name>`` raise KeyboardInterrupt once it has returned; collect its returns."""
    real = getattr(os, name)
    returned: list[Any] = []

    def call_then_interrupt(*args: Any, **kwargs: Any) -> object:
        result = real(*args, **kwargs)
        if not when(*args):
            return result
        returned.append(result)
        monkeypatch.setattr(os, name, real)
        raise KeyboardInterrupt(f"right after os.{name}")

    monkeypatch.setattr(os, name, call_then_interrupt)
    return returned


def test_an_interruption_right_after_mkdir_removes_the_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = open_workspace(tmp_path)
    before = _open_fds()
    _interrupt_after(monkeypatch, "mkdir")
    with pytest.raises(KeyboardInterrupt):
        ws.call_tool("write", {"file_path": "sub/new.txt", "content": "NEW"})
    assert (tree(tmp_path), _open_fds()) == ({}, before)


@pytest.mark.parametrize("created", ["temp file", "target without hard links"])
def test_an_interruption_right_after_an_exclusive_create_removes_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, created: str
) -> None:
    ws = open_workspace(tmp_path)
    before = _open_fds()
    if created == "temp file":
        lost = _interrupt_after(monkeypatch, "open", lambda name, *rest: TEMP_NAME.fullmatch(name))
    else:
        monkeypatch.setattr(os, "link", _no_links)
        lost = _interrupt_after(monkeypatch, "open", lambda name, *rest: name == "new.txt")
    with pytest.raises(KeyboardInterrupt):
        ws.call_tool("write", {"file_path": "new.txt", "content": "NEW"})
    assert tree(tmp_path) == {}
    # The descriptor the interrupted call returned is lost to the harness, as it would be.
    for fd in lost:
        os.close(fd)
    assert _open_fds() == before


@pytest.mark.parametrize("there", ["nothing", "a file with bytes", "a link to an empty file"])
def test_an_interruption_before_the_create_without_hard_links_leaves_what_is_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, there: str
) -> None:
    """Interrupted with no descriptor yet, the fallback removes an empty regular file at the
    target's name (its own create may have returned); anything else there is another's."""
    (tmp_path / "empty").write_bytes(b"")
    ws = open_workspace(tmp_path)
    real_open = os.open

    def compete_then_interrupt(name: Any, *args: Any, **kwargs: Any) -> int:
        if name != "new.txt":
            return real_open(name, *args, **kwargs)
        if there == "a file with bytes":
            (tmp_path / "new.txt").write_text("theirs")
        elif there == "a link to an empty file":
            (tmp_path / "new.txt").symlink_to("empty")
        raise KeyboardInterrupt("before the create")

    monkeypatch.setattr(os, "link", _no_links)
    monkeypatch.setattr(os, "open", compete_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        ws.call_tool("write", {"file_path": "new.txt", "content": "NEW"})
    monkeypatch.setattr(os, "open", real_open)
    expected: dict[str, object] = {"empty": b""}
    if there == "a file with bytes":
        expected["new.txt"] = b"theirs"
    elif there == "a link to an empty file":
        expected["new.txt"] = "-> empty"
    assert tree(tmp_path) == expected


@pytest.mark.parametrize("path", ["new.txt", "a.txt"])
def test_an_interruption_after_the_commit_point_propagates_and_closes_the_staged_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    ws = open_workspace(tmp_path, policy=False)
    before = _open_fds()

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt("while syncing the directory")

    monkeypatch.setattr(local_module, "_fsync_dir", interrupted)
    with pytest.raises(KeyboardInterrupt):  # never a result (SPEC {tool.base-exception})
        ws.call_tool("write", {"file_path": path, "content": "new\n"})
    assert (tmp_path / path).read_text() == "new\n"
    assert temps(tmp_path) == []
    assert _open_fds() == before


# -- SIGKILL while staging -----------------------------------------------------------------

STAGER: Final = """
import sys
from reference.fs import LocalFs

root, name, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
fs = LocalFs()


def pause() -> None:
    print("staged", flush=True)
    sys.stdin.readline()  # blocks until the parent lets go, or kills us


if sys.argv[4] == "pause":
    fs.arm("staged", pause)
fs.write(fs.resolve(name, root), "k" * size, None)
print("done", flush=True)
"""


def start_stager(
    directory: Path, name: str, size: int = STAGED_BYTES, *, pause: bool = True
) -> subprocess.Popen[str]:
    """A child writing ``size`` bytes to ``directory/name``; paused, it prints and waits."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    args = [str(directory), name, str(size), "pause" if pause else "run"]
    return subprocess.Popen(
        [sys.executable, "-c", STAGER, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


def _staged(child: subprocess.Popen[str]) -> None:
    assert child.stdout is not None
    assert child.stdout.readline() == "staged\n"


FOREIGN: Final = {
    ".a.txt.tmp": b"f1",
    "x.reference-tmp.bak": b"f2",
    ".a.txt.0123456789a.reference-tmp": b"f3",  # 11 hex digits: not our name
    ".a.txt.0123456789AB.reference-tmp": b"f4",  # upper case: not our name
    ".a.txt.0123456789ab.reference-tmp": b"f5",  # our shape, but no name we made
}


def test_a_stager_killed_while_staged_leaves_a_temp_the_next_mutation_sweeps(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_bytes(b"original\n")
    for name, data in FOREIGN.items():
        (tmp_path / name).write_bytes(data)
    child = start_stager(tmp_path, "a.txt")
    try:
        _staged(child)
        [temp] = [name for name in temps(tmp_path) if name not in FOREIGN]
        assert temp.startswith(".a.txt.")
        assert (tmp_path / temp).stat().st_size == STAGED_BYTES
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=60) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert [name for name in temps(tmp_path) if name not in FOREIGN] == [temp]
    assert (tmp_path / "a.txt").read_bytes() == b"original\n"
    # The next mutation of that directory, here by another provider, sweeps ours only.
    local = LocalFs()
    local.write(local.resolve("b.txt", str(tmp_path)), "b\n", CreateIfAbsent())
    assert tree(tmp_path) == {"a.txt": b"original\n", "b.txt": b"b\n", **FOREIGN}


def test_a_live_stagers_temp_is_never_swept(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"original\n")
    child = start_stager(tmp_path, "a.txt")
    try:
        _staged(child)
        [temp] = temps(tmp_path)
        fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            # Every other mutation of this directory waits for the stager: the lock is held.
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # And a sweep that ran anyway (ours, without that lock) leaves the live temp alone.
            st = os.fstat(fd)
            place = local_module._Place(fd, str(tmp_path), [], local_module._os_stat)
            local_module._sweep_once(place, (st.st_dev, st.st_ino))
            assert temps(tmp_path) == [temp]
        finally:
            os.close(fd)
        assert child.stdin is not None
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.stdout is not None
        assert child.stdout.readline() == "done\n"
        assert child.wait(timeout=60) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert tree(tmp_path) == {"a.txt": b"k" * STAGED_BYTES}


# -- multi-process compare-and-swap --------------------------------------------------------


CAS_FILE: Final = "shared.txt"


def cas_content(round_: int, writer: int) -> str:
    """What writer ``writer`` writes in round ``round_`` (big enough to be torn if it could)."""
    return f"round {round_} writer {writer}\n" * 2000


CasOutcome = tuple[int, int, str, str]  # round, writer, the line it read, the write's text


def _cas_worker(
    root: str, writer: int, rounds: int, barrier: Barrier, results: Queue[CasOutcome]
) -> None:
    ws = open_workspace(root)  # one session per process
    for round_ in range(rounds):
        read = ws.call_tool("read", {"file_path": CAS_FILE, "limit": 1})
        barrier.wait()  # every writer has read the same version
        content = cas_content(round_, writer)
        result = ws.call_tool("write", {"file_path": CAS_FILE, "content": content})
        results.put((round_, writer, text_of(read).splitlines()[3], text_of(result)))
        barrier.wait()  # the parent checks the file before the next round's reads


@dataclass
class CasReport:
    """Winners per round, and what the file held after each round."""

    processes: int
    rounds: int
    winners: list[list[int]] = field(default_factory=list)
    whole: int = 0
    violations: list[str] = field(default_factory=list)

    def line(self) -> str:
        """One summary line."""
        one = sum(len(w) == 1 for w in self.winners)
        more = sum(len(w) > 1 for w in self.winners)
        return (
            f"cas: {self.processes} processes x {self.rounds} rounds: {one} rounds with exactly "
            f"one winner, {more} with more, {self.rounds - one - more} with none; the file held "
            f"the winner's bytes whole after {self.whole}; {len(self.violations)} violations"
        )


def run_cas_rounds(root: Path, processes: int, rounds: int) -> CasReport:
    """``processes`` sessions, one per process, race to replace one file from one version."""
    # Not fork: the caller may run threads (pytest-xdist, a racer), and a forked child can
    # inherit a lock one of them held.
    context = multiprocessing.get_context("spawn")
    path = root / CAS_FILE
    path.write_text("round -1 writer -1\n")
    barrier = context.Barrier(processes + 1, timeout=120)
    results: Queue[CasOutcome] = context.Queue()
    workers = [
        context.Process(target=_cas_worker, args=(str(root), i, rounds, barrier, results))
        for i in range(processes)
    ]
    for worker in workers:
        worker.start()
    report = CasReport(processes, rounds)
    contents: list[bytes] = []
    try:
        for _ in range(rounds):
            barrier.wait()
            barrier.wait()
            contents.append(path.read_bytes())
        outcomes = [results.get(timeout=120) for _ in range(processes * rounds)]
    finally:
        for worker in workers:
            worker.join(timeout=120)
            if worker.exitcode is None:
                worker.kill()
    report.violations += [f"worker exit {w.exitcode}" for w in workers if w.exitcode != 0]
    stale = (
        f'Error: cannot write "{path}": file changed since it was read — '
        "re-read the file, then retry"
    )
    for round_ in range(rounds):
        mine = [o for o in outcomes if o[0] == round_]
        first_lines = {o[2] for o in mine}
        if len(first_lines) != 1:
            report.violations.append(f"round {round_}: writers read {first_lines}")
        winners = [o[1] for o in mine if o[3] == write_output(str(path), created=False)]
        losers = [o[1] for o in mine if o[3] == stale]
        report.winners.append(winners)
        if len(winners) != 1 or len(winners) + len(losers) != processes:
            report.violations.append(f"round {round_}: {[o[3][:60] for o in mine]}")
            continue
        if contents[round_] != cas_content(round_, winners[0]).encode():
            report.violations.append(f"round {round_}: the file is not the winner's bytes")
        else:
            report.whole += 1
    if temps(root):
        report.violations.append(f"temp files left: {temps(root)}")
    return report


def test_of_four_processes_writing_one_version_exactly_one_wins_each_round(
    tmp_path: Path,
) -> None:
    report = run_cas_rounds(tmp_path, processes=4, rounds=20)
    print(report.line())
    assert report.violations == []
    assert [len(w) for w in report.winners] == [1] * 20


# -- argument fuzzing ----------------------------------------------------------------------

RUNTIME_MESSAGES: Final = (
    "maximum recursion depth",
    "Exceeds the limit",
    "codec can't",
    "Traceback",
    "object has no attribute",
    "is not JSON serializable",
    "unhashable type",
    "NoneType",
    "positional argument",
    "object is not",
)
SUCCESS: Final = {
    "read": re.compile(
        r"<path>[^\n]*</path>\n<type>file</type>\n<content>\n.*\(End of file - total \d+ lines?\)"
        r"\n</content>|<path>[^\n]*</path>\n<type>file</type>\n<content>\n.*\(Showing lines .*"
        r"\n</content>",
        re.S,
    ),
    "write": re.compile(
        r"<path>[^\n]*</path>\n<type>file</type>\n<content>\n(Created|Updated) file\n</content>"
    ),
    "edit": re.compile(
        r"The file [^\n]* has been updated"
        r"( successfully\.|\. All occurrences were successfully replaced\.)"
    ),
}
KEYS: Final = ("file_path", "content", "old_string", "new_string", "replace_all", "offset", "limit")
LONE: Final = st.characters(categories=["Cs"])
CHARS: Final = st.one_of(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E).filter(lambda c: c not in "/."),
    LONE,
    st.sampled_from(["/", "\x00", "é", "\u2028", "\r", "\n", "—", "\U0001f600"]),
)
# Relative paths without "..": the fuzz never reaches outside tmp_path (writes are fenced too).
PATHS: Final = st.one_of(
    st.sampled_from(["a.txt", "a.txt", "dir/b.txt", "dir/new.txt", "new.txt", "dir"]),
    st.sampled_from(["../outside.txt", ".", "~", "a.txt\x00", "\ud800.txt", "a.txt/x"]),
    st.text(CHARS, min_size=1, max_size=12).map(lambda s: s.lstrip("/") or "x"),
)
NUMBERS: Final = st.one_of(
    st.integers(-(10**4000), 10**4000),
    st.floats(),
    st.sampled_from([0, 1, 2.0, 2000, 2001, -1, 1e300, 10**300, float("nan"), float("inf")]),
)
SCALARS: Final = st.one_of(st.none(), st.booleans(), NUMBERS, st.text(CHARS, max_size=12))
VALUES: Final = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(CHARS), inner, max_size=3),
    max_leaves=8,
)
LINES: Final = st.one_of(st.integers(-2, 4), st.sampled_from([2000, 2001, 2.0, 1e300]), NUMBERS)
TEXTS: Final = st.text(CHARS, max_size=30)


def _nested(depth: int) -> object:
    value: object = "x"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def _shaped(tool: str) -> st.SearchStrategy[dict[str, object]]:
    """Arguments of the right shape for ``tool`` (most reach the filesystem)."""
    if tool == "write":
        return st.fixed_dictionaries({"file_path": PATHS, "content": TEXTS})
    if tool == "edit":
        old = st.one_of(st.sampled_from(["line", "a", "\ud800", "", "zz", "\n"]), TEXTS)
        return st.fixed_dictionaries(
            {"file_path": PATHS, "old_string": old, "new_string": TEXTS},
            optional={"replace_all": st.booleans()},
        )
    return st.fixed_dictionaries({"file_path": PATHS}, optional={"offset": LINES, "limit": LINES})


def _bent(tool: str) -> st.SearchStrategy[dict[str, object]]:
    """Right-shaped arguments with one property replaced, added or nested too deep."""
    return st.tuples(
        _shaped(tool),
        st.one_of(st.sampled_from(KEYS), st.text(CHARS, min_size=1, max_size=5)),
        st.one_of(VALUES, st.integers(95, 150).map(_nested)),
    ).map(lambda t: {**t[0], t[1]: t[2]})


def _arguments(tool: str) -> st.SearchStrategy[object]:
    shaped = _shaped("read" if tool == "nope" else tool)
    bent = _bent("read" if tool == "nope" else tool)
    return st.one_of(
        shaped,
        shaped.map(lambda v: json.dumps(v, ensure_ascii=False)),  # raw text, surrogates raw
        shaped.map(json.dumps),  # raw text, surrogates as \\u escapes
        bent,
        bent.map(json.dumps),
        VALUES,
        RAW_TEXT,
    )


RAW_TEXT: Final = st.one_of(
    VALUES.map(lambda v: json.dumps(v, ensure_ascii=False)),
    st.integers(95, 3000).map(lambda d: "[" * d + "]" * d),
    st.integers(95, 3000).map(lambda d: '{"a":' * d + "1" + "}" * d),
    st.integers(90, 6000).map(lambda n: '{"file_path": "a.txt", "offset": ' + "9" * n + "}"),
    st.sampled_from(
        [
            "NaN",
            "1e999",
            "-1e999",
            '{"file_path": "a.txt", "offset": NaN}',
            '{"file_path": "a.txt", "limit": 1e999}',
            '{"file_path": "a.txt", "offset": Infinity}',
            '{"file_path": "a.txt", "offset": 1' + "0" * 99 + "}",
            '{"file_path": "\\ud800"}',
            '{"file_path": "a.txt", "\\udc00": 1}',
            '{"file_path": "a.txt"',
            "",
        ]
    ),
    st.text(CHARS, max_size=40),
)
CALLS: Final = st.sampled_from(["read", "write", "edit", "nope"]).flatmap(
    lambda tool: st.tuples(st.just(tool), _arguments(tool))
)


def _keys_sent(arguments: object) -> list[str]:
    """The property names of the arguments as the tool received them (text is parsed first)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return []
    return [k for k in arguments if isinstance(k, str)] if isinstance(arguments, dict) else []


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with a few files, and a decoy one level up that must never change."""
    base = tmp_path_factory.mktemp("fuzz")
    (base / "outside.txt").write_text("decoy\n")
    root = base / "ws"
    (root / "dir").mkdir(parents=True)
    (root / "a.txt").write_text("line\na line\n")
    (root / "dir" / "b.txt").write_text("b\n")
    return root


@settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(calls=st.lists(CALLS, min_size=1, max_size=4))
def test_fuzzed_arguments_always_give_a_spec_result(
    fuzz_root: Path, calls: list[tuple[str, object]]
) -> None:
    ws = open_workspace(fuzz_root, sandbox="workspace-write")
    ws.call_tool("read", {"file_path": "a.txt"})  # so edits get past the policy
    for name, arguments in calls:
        result = ws.call_tool(name, arguments)
        text = text_of(result)
        if result.is_error:
            assert text.startswith("Error: ")
        else:
            assert SUCCESS[name].fullmatch(text), text
        assert not any(message in text for message in RUNTIME_MESSAGES), text
        try:
            json.dumps(result.to_wire(), ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            # Only a property name the caller sent may come back with its lone surrogate;
            # paths are refused with U+FFFD in their place.
            lone = {c for c in text if 0xD800 <= ord(c) <= 0xDFFF}
            assert lone <= set("".join(_keys_sent(arguments))), text
            assert "is not a declared property" in text, text
    assert (fuzz_root.parent / "outside.txt").read_text() == "decoy\n"


def test_a_huge_parsed_integer_never_reaches_the_model_as_a_runtime_message(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    result = open_workspace(tmp_path).call_tool("read", {"file_path": "a.txt", "offset": 10**5000})
    assert (result.is_error, text_of(result)) == (
        True,
        'Error: invalid arguments: "arguments" is not valid JSON',
    )


# -- secrets never leave through failure text ----------------------------------------------

CANARY: Final = "canary-7f3a9c2e51d04b8e"
PROVIDER_KEY: Final = "sk-provider-0a1b2c3d4e5f"


class CanaryModel:
    """Reads a secret file, calls a failing tool, then returns, raises and raises a secret."""

    api_key: str | None = PROVIDER_KEY

    def __init__(self) -> None:
        self.step = 0

    def respond(self, messages: list[dict[str, object]], tools: list[dict[str, object]]) -> object:
        """Play the next step."""
        self.step += 1
        if self.step == 1:
            calls = (
                ToolCallRequest("read", '{"file_path":"canary.txt"}'),
                ToolCallRequest("boom", "{}"),
            )
            return ModelResponse("", calls)
        if self.step == 2:
            return {"error": f"upstream said {CANARY}", "key": PROVIDER_KEY}
        if self.step == 3:
            raise ConnectionError(f"GET https://api.example.com/v1/chat?key={CANARY}")
        raise LlmError(f"rejected {PROVIDER_KEY}", "AUTH", request_id=f"req-{CANARY}")


def test_a_planted_secret_never_reaches_the_records_or_the_log_file(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "canary.txt").write_text(f"token = {CANARY}\n")
    environ = {"MY_API_KEY": CANARY, "PATH": "/usr/bin"}
    ws = open_workspace(root, environ=environ)

    def boom(args: dict[str, object]) -> str:
        raise RuntimeError(f"tool failed with {CANARY}")

    ws.register(
        define_tool(name="boom", description="", parameters={"type": "object"}, execute=boom)
    )
    loop = AgentLoop(ws, CanaryModel(), environ=environ)
    for prompt in ("one", "two", "three"):
        loop.run_turn(prompt)
    records = loop.log.records()
    read_text = (
        f"<path>{root}/canary.txt</path>\n<type>file</type>\n<content>\n"
        f"1: token = {CANARY}\n\n(End of file - total 1 lines)\n</content>"
    )
    reads = [r for r in records if r["type"] == "tool/result" and _data(r)["callId"] == "call_1"]
    assert [_data(r)["content"] for r in reads] == [[{"type": "text", "text": read_text}]]
    others = json.dumps([r for r in records if r not in reads], ensure_ascii=False)
    assert CANARY not in others
    assert PROVIDER_KEY not in others
    failures = [
        (r["type"], _data(r).get("message") or _data(r).get("content") or _data(r).get("reason"))
        for r in records
        if r["type"] in ("error", "turn/end") or (r["type"] == "tool/result" and r not in reads)
    ]
    assert failures == [
        (
            "tool/result",
            [{"type": "text", "text": "Error: tool failed with [REDACTED]"}],
        ),
        ("error", '{"error":"upstream said [REDACTED]","key":"[REDACTED]"}'),
        (
            "turn/end",
            {
                "kind": "error",
                "message": '{"error":"upstream said [REDACTED]","key":"[REDACTED]"}',
                "code": "UNKNOWN",
            },
        ),
        ("error", "GET https://api.example.com/v1/chat?key=[REDACTED]"),
        (
            "turn/end",
            {"kind": "error", "message": "GET https://api.example.com/v1/chat?key=[REDACTED]"},
        ),
        ("error", "rejected [REDACTED]"),
        ("turn/end", {"kind": "error", "message": "rejected [REDACTED]", "code": "AUTH"}),
    ]
    path = tmp_path / "session.jsonl"
    loop.log.write_jsonl(path)
    data = path.read_bytes()
    assert data.count(CANARY.encode()) == 1  # the read result, verbatim
    assert PROVIDER_KEY.encode() not in data


def test_the_provider_key_never_reaches_a_tools_error_result(tmp_path: Path) -> None:
    ws = open_workspace(tmp_path, environ={})

    def boom(args: dict[str, object]) -> str:
        raise RuntimeError(f"sub-agent call failed: {PROVIDER_KEY}")

    ws.register(
        define_tool(name="boom", description="", parameters={"type": "object"}, execute=boom)
    )
    loop = AgentLoop(ws, CanaryModel(), environ={})
    loop.run_turn("one")
    assert PROVIDER_KEY not in json.dumps(loop.log.records())


def test_the_provider_logs_a_secret_of_the_environment_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # The log is failure text too (SPEC {secret.redact.everywhere}): after the commit point
    # the write succeeds and its failure goes there, as does a sweep's.
    monkeypatch.setenv("DEPLOY_TOKEN", CANARY)
    abandoned = local_module._temp_name(f"notes-{CANARY}.txt")
    (tmp_path / abandoned).write_text("x")
    ws = open_workspace(tmp_path)
    caplog.set_level(logging.DEBUG, logger=FS_LOGGER)

    def eio(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(local_module, "_fsync_dir", eio)
    result = ws.call_tool("write", {"file_path": f"notes-{CANARY}.txt", "content": "x"})
    assert text_of(result) == write_output(f"{tmp_path}/notes-{CANARY}.txt", created=True)
    assert [r.getMessage() for r in caplog.records if r.name == FS_LOGGER] == [
        f"removed {abandoned.replace(CANARY, '[REDACTED]')}, abandoned by a process"
        " that died while staging it",
        f'after publishing "{tmp_path}/notes-[REDACTED].txt": could not sync the directory:'
        " [Errno 5] Input/output error",
    ]
    assert os.listdir(tmp_path) == [f"notes-{CANARY}.txt"]


def _data(record: Mapping[str, object]) -> dict[str, object]:
    value = record["data"]
    assert isinstance(value, dict)
    return value


# -- the session log -----------------------------------------------------------------------


class SurrogateModel:
    """Sends one tool call whose raw arguments hold a lone surrogate, then answers."""

    api_key: str | None = None

    def __init__(self) -> None:
        self.step = 0

    def respond(self, messages: list[dict[str, object]], tools: list[dict[str, object]]) -> object:
        """Play the next step."""
        self.step += 1
        if self.step == 1:
            arguments = '{"file_path": "s\ud800.txt", "content": "x\udfff"}'
            return ModelResponse("writing", (ToolCallRequest("write", arguments),))
        return ModelResponse("done \ud83d")


def _surrogate_log(tmp_path: Path) -> SessionLog:
    root = tmp_path / "ws"
    root.mkdir()
    loop = AgentLoop(open_workspace(root), SurrogateModel(), environ={})
    loop.run_turn("go \udc80")
    return loop.log


def test_a_log_with_lone_surrogates_is_written_whole(
    tmp_path: Path,
) -> None:
    log = _surrogate_log(tmp_path)
    path = tmp_path / "session.jsonl"
    log.write_jsonl(path)
    text = path.read_bytes().decode("utf-8")  # strict: the file is valid UTF-8
    lines = text.split("\n")
    assert lines[-1] == ""
    assert [json.loads(line) for line in lines[:-1]] == log.records()
    assert [json.loads(line)["type"] for line in lines[:-1]] == [
        "session",
        "user/message",
        "assistant/message",
        "tool/call",
        "tool/result",
        "assistant/message",
        "turn/end",
    ]
    back = SessionLog.read_jsonl(path)
    assert back.records() == log.records()
    assert back.events == log.events
    result = _data(log.records()[4])
    assert result["content"] == [
        {
            "type": "text",
            "text": f'Error: cannot resolve "{tmp_path}/ws/s\ufffd.txt": path is not valid UTF-8',
        }
    ]


@pytest.mark.parametrize("failing", ["open", "fsync", "replace"])
def test_a_log_that_cannot_be_written_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    log = _surrogate_log(tmp_path)
    path = tmp_path / "session.jsonl"
    log.write_jsonl(path)
    previous = path.read_bytes()
    log.append(log.events[-1])  # one more record than the file holds

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    with monkeypatch.context() as patched:
        patched.setattr(os, failing, refuse)
        with pytest.raises(OSError, match="Read-only file system"):
            log.write_jsonl(path)
    assert path.read_bytes() == previous
    assert sorted(os.listdir(tmp_path)) == ["session.jsonl", "ws"]


# What bench/stress_reliability.py runs at stress counts.
__all__ = [
    "FAULT_MUTATIONS",
    "CasReport",
    "FaultReport",
    "Mutation",
    "Syscalls",
    "run_cas_rounds",
    "start_stager",
    "sweep_faults",
    "temps",
    "tree",
]
