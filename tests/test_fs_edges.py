"""SPEC §3 at the edges of the local and sandbox providers: races, faults and boundaries.

The states here are reached by injection, never by timing: a stat that swaps a file right after
the check looked at it, ``os`` functions that fail at one chosen call, reads the OS cuts short,
constants set to a boundary. Each test states what the provider must do there, with the exact
code, message, log line or bytes on disk.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import logging
import os
import re
import shutil
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Final

import pytest

from reference.fs import (
    CreateIfAbsent,
    EditRequest,
    ExpectVersion,
    FsError,
    FsErrorCode,
    LocalFs,
    ReplaceIfVersion,
    SandboxFs,
    Target,
    Version,
    check_sandbox_mode,
)
from reference.fs import local as local_module
from reference.fs.local import COMPARE_BYTES, RACY_WINDOW_NS, REALPATH_TRIES, TEMP_NAME, StatFn

FROZEN_NS: Final = 1_700_000_000_000_000_000
IN_WINDOW: Final = FROZEN_NS + 1_000_000  # a clock reading that makes a frozen ctime racy
LONG_AGO: Final = FROZEN_NS + 60_000_000_000  # one that makes it old
EIO: Final = "[Errno 5] Input/output error"
ABANDONED: Final = local_module._temp_name("x.txt")  # as a stager that died named it
REMOVED: Final = f"removed {ABANDONED}, abandoned by a process that died while staging it"
STALE: Final = 'cannot {op} "{p}": file changed since it was read'
REDIRECTED: Final = 'cannot {op} "{p}": the path changed while it was being written'
NOT_REGULAR: Final = 'cannot {op} "{p}": not a regular file'


@pytest.fixture(autouse=True)
def fresh_sweep(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a fresh process: no directory has been swept of temp files yet."""
    monkeypatch.setattr(local_module, "_SWEPT", set())


@pytest.fixture
def fs_log(caplog: pytest.LogCaptureFixture) -> Callable[[], list[tuple[int, str]]]:
    """The provider's log records so far, as ``(level, message)``."""
    caplog.set_level(logging.DEBUG, logger="reference.fs")

    def records() -> list[tuple[int, str]]:
        return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "reference.fs"]

    return records


def _fails(call: Callable[[], object], code: FsErrorCode, message: str) -> FsError:
    with pytest.raises(FsError) as info:
        call()
    assert (info.value.code, info.value.message) == (code, message)
    return info.value


def _read(local: LocalFs, target: Target) -> tuple[str, Version]:
    chunks: list[str] = []
    version = local.read_text(target, chunks.append)
    return "".join(chunks), version


def _frozen(
    path: str | int, *, dir_fd: int | None = None, follow_symlinks: bool = True
) -> os.stat_result:
    """``os.stat`` with timestamps that never tick."""
    st = os.stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
    extra = {n: getattr(st, n) for n in ("st_atime_ns", "st_blksize", "st_blocks", "st_rdev")}
    extra["st_mtime_ns"] = extra["st_ctime_ns"] = FROZEN_NS
    return os.stat_result(tuple(st), extra)


def _stamp(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def _temps(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if TEMP_NAME.fullmatch(name))


def _is(fd: int, path: Path) -> bool:
    """Whether the open descriptor ``fd`` is the file at ``path``."""
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False))
    except OSError:
        return False


def _whole(text: str) -> str:
    """A ``match`` pattern for exactly ``text``."""
    return f"^{re.escape(text)}$"


def _eio() -> OSError:
    return OSError(errno.EIO, "Input/output error")


@contextmanager
def _patched(monkeypatch: pytest.MonkeyPatch, module: object, **fakes: Any) -> Iterator[None]:
    """Replace functions of ``module`` for the duration of the block only."""
    with monkeypatch.context() as patch:
        for name, fake in fakes.items():
            patch.setattr(module, name, fake)
        yield


# -- configuration and error values ---------------------------------------------------------


def test_an_unknown_error_code_is_refused_with_every_code_listed() -> None:
    expected = (
        'invalid FsErrorCode "FS_NOPE"; expected one of FS_NOT_FOUND, FS_NOT_TEXT, '
        "FS_NOT_REGULAR_FILE, FS_TOO_LARGE, FS_PERMISSION_DENIED, FS_SANDBOX_DENIED, "
        "FS_IO_ERROR, FS_STALE_VERSION, FS_NOT_OBSERVED, FS_AMBIGUOUS_EDIT, FS_EDIT_NOT_FOUND"
    )
    with pytest.raises(ValueError, match=_whole(expected)):
        FsError("boom", "FS_NOPE")


@pytest.mark.parametrize("mode", ["bogus", 3])
def test_an_unknown_sandbox_mode_is_refused_with_every_mode_listed(mode: object) -> None:
    expected = (
        f"unknown sandbox mode {mode!r}; "
        "expected one of read-only, workspace-write, danger-full-access"
    )
    with pytest.raises(ValueError, match=_whole(expected)):
        check_sandbox_mode(mode)


def test_an_unknown_pause_point_is_refused_with_the_points_listed() -> None:
    expected = "unknown pause point 'committed'; expected one of ('checked', 'staged', 'waiting')"
    with pytest.raises(ValueError, match=_whole(expected)):
        LocalFs().arm("committed", lambda: None)


# -- the sandbox fence ----------------------------------------------------------------------


@pytest.mark.parametrize("op", ["write", "edit"])
def test_a_fenced_mutation_names_the_operation_it_refused(tmp_path: Path, op: str) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    provider = SandboxFs(LocalFs(), "read-only", [str(tmp_path)])
    target = provider.resolve("a.txt", str(tmp_path))
    calls = {
        "write": lambda: provider.write(target, "new\n", None),
        "edit": lambda: provider.edit(target, EditRequest("old", "new"), None),
    }
    _fails(
        calls[op],
        FsErrorCode.FS_SANDBOX_DENIED,
        f'cannot {op} "{tmp_path}/a.txt": file access denied under read-only mode',
    )
    assert (tmp_path / "a.txt").read_text() == "old\n"


def test_a_key_that_is_not_an_absolute_path_lies_outside_every_root(tmp_path: Path) -> None:
    provider = SandboxFs(LocalFs(), "workspace-write", [str(tmp_path)])
    _fails(
        lambda: provider.authorize(Target("a.txt", "a.txt"), "write"),
        FsErrorCode.FS_SANDBOX_DENIED,
        'cannot write "a.txt": file access denied under workspace-write mode',
    )


# -- resolution -----------------------------------------------------------------------------


@pytest.mark.parametrize("code_point", [0xD800, 0xDBFF, 0xDC00, 0xDFFF])
def test_every_surrogate_up_to_udfff_makes_a_path_not_unicode(
    tmp_path: Path, code_point: int
) -> None:
    surrogate = chr(code_point)
    # U+E000, the first code point past the surrogates, is shown as it is.
    _fails(
        lambda: LocalFs().resolve(f"x\ue000{surrogate}.txt", str(tmp_path)),
        FsErrorCode.FS_NOT_FOUND,
        f'cannot resolve "{tmp_path}/x\ue000\ufffd.txt": path is not valid UTF-8',
    )


def test_the_first_code_point_past_the_surrogates_resolves(tmp_path: Path) -> None:
    target = LocalFs().resolve("x\ue000.txt", str(tmp_path))
    assert (target.display_path, target.key) == (
        f"{tmp_path}/x\ue000.txt",
        os.path.realpath(tmp_path / "x\ue000.txt"),
    )


def test_resolution_records_the_identity_of_the_parent_directory(tmp_path: Path) -> None:
    st = os.stat(tmp_path)
    assert LocalFs().resolve("a.txt", str(tmp_path)).parent == (st.st_dev, st.st_ino)
    assert LocalFs().resolve("missing/a.txt", str(tmp_path)).parent is None


@pytest.mark.parametrize("below", ["a.txt", "deeper/a.txt"])
def test_a_file_as_a_parent_is_named_and_a_deeper_one_chains_the_os_error(
    tmp_path: Path, below: str
) -> None:
    (tmp_path / "f").write_text("x")
    err = _fails(
        lambda: LocalFs().resolve(f"f/{below}", str(tmp_path)),
        FsErrorCode.FS_NOT_FOUND,
        f'cannot resolve "{tmp_path}/f/{below}": a parent path segment is not a directory',
    )
    # Only the deeper path makes the stat of the parent fail (ENOTDIR); a file parent is seen.
    assert isinstance(err.cause, NotADirectoryError) == (below == "deeper/a.txt")


@pytest.mark.parametrize("settles_at", [None, REALPATH_TRIES])
def test_realpath_is_tried_a_fixed_number_of_times_before_an_io_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settles_at: int | None
) -> None:
    real_realpath = os.path.realpath
    failures: list[OSError] = []
    calls = 0

    def unsettled(path: Any, *args: Any, **kwargs: Any) -> str:
        nonlocal calls
        calls += 1
        if calls == settles_at:
            result: str = real_realpath(path, *args, **kwargs)
            return result
        failures.append(OSError("the path keeps changing"))  # an OSError without errno
        raise failures[-1]

    local = LocalFs()
    if settles_at is None:
        with _patched(monkeypatch, os.path, realpath=unsettled):
            err = _fails(
                lambda: local.resolve("a.txt", str(tmp_path)),
                FsErrorCode.FS_IO_ERROR,
                f'cannot resolve "{tmp_path}/a.txt": input/output error',
            )
        assert err.cause is failures[-1]
    else:
        with _patched(monkeypatch, os.path, realpath=unsettled):
            target = local.resolve("a.txt", str(tmp_path))
        assert target.key == os.path.realpath(tmp_path / "a.txt")
    assert calls == REALPATH_TRIES


# -- read -----------------------------------------------------------------------------------


def test_a_file_ending_inside_a_multibyte_character_is_not_text(tmp_path: Path) -> None:
    (tmp_path / "cut.txt").write_bytes("café".encode()[:-1])
    local = LocalFs()
    err = _fails(
        lambda: _read(local, local.resolve("cut.txt", str(tmp_path))),
        FsErrorCode.FS_NOT_TEXT,
        f'cannot read "{tmp_path}/cut.txt": invalid UTF-8 text',
    )
    assert isinstance(err.cause, UnicodeDecodeError)


@contextmanager
def _short_reads(monkeypatch: pytest.MonkeyPatch, most: int) -> Iterator[None]:
    """Every ``os.read`` returns at most ``most`` bytes, as a pipe or a network disk may."""
    real_read = os.read

    def short(fd: int, size: int) -> bytes:
        return real_read(fd, min(size, most))

    with _patched(monkeypatch, os, read=short):
        yield


@pytest.mark.parametrize("most", [1000, 8191, 8192])
def test_a_nul_in_the_first_8192_bytes_is_found_however_the_reads_are_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, most: int
) -> None:
    (tmp_path / "late.bin").write_bytes(b"a" * 8191 + b"\0" + b"a" * 100)
    local = LocalFs()
    target = local.resolve("late.bin", str(tmp_path))
    with _short_reads(monkeypatch, most):
        _fails(
            lambda: _read(local, target),
            FsErrorCode.FS_NOT_TEXT,
            f'cannot read "{tmp_path}/late.bin": binary file',
        )


@pytest.mark.parametrize(
    ("most", "pieces"),
    [
        (1000, [9000] + [1000] * 11 + [0]),
        (8191, [16382, 3618, 0]),
        (8192, [8192, 8192, 3616, 0]),
    ],
)
def test_read_sniffs_whole_reads_up_to_8192_bytes_then_passes_each_read_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, most: int, pieces: list[int]
) -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(20_000))
    (tmp_path / "t.txt").write_text(text)
    local = LocalFs()
    chunks: list[str] = []
    with _short_reads(monkeypatch, most):
        local.read_text(local.resolve("t.txt", str(tmp_path)), chunks.append)
    assert ([len(chunk) for chunk in chunks], "".join(chunks)) == (pieces, text)


@pytest.mark.parametrize(("age", "racy"), [(RACY_WINDOW_NS - 1, True), (RACY_WINDOW_NS, False)])
def test_an_observation_is_racy_for_less_than_two_seconds_after_the_ctime(
    tmp_path: Path, age: int, racy: bool
) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    local = LocalFs(stat=_frozen, clock=lambda: FROZEN_NS + age)
    _, version = _read(local, local.resolve("a.txt", str(tmp_path)))
    assert version.digest == (hashlib.sha256(b"hello\n").hexdigest() if racy else None)


# -- checks that find the directory or the file changed since resolution --------------------


def _refuse_mkdir(tried: list[str]) -> Callable[..., None]:
    """An ``os.mkdir`` that records and refuses: nothing here may try to create a directory."""

    def refuse(path: str, *args: Any, **kwargs: Any) -> None:
        tried.append(path)
        raise PermissionError(errno.EACCES, "Permission denied")

    return refuse


def test_a_stale_write_into_a_vanished_directory_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("x\n")
    local = LocalFs()
    target = local.resolve("sub/a.txt", str(tmp_path))
    _, seen = _read(local, target)
    shutil.rmtree(tmp_path / "sub")
    tried: list[str] = []
    with _patched(monkeypatch, os, mkdir=_refuse_mkdir(tried)):
        _fails(
            lambda: local.write(target, "y\n", ReplaceIfVersion(seen)),
            FsErrorCode.FS_STALE_VERSION,
            f'cannot write "{tmp_path}/sub/a.txt": file no longer exists',
        )
    assert (tried, os.listdir(tmp_path)) == ([], [])


def test_invalid_text_for_a_missing_directory_is_refused_before_creating_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = LocalFs()
    target = local.resolve("new/a.txt", str(tmp_path))
    tried: list[str] = []
    with _patched(monkeypatch, os, mkdir=_refuse_mkdir(tried)):
        _fails(
            lambda: local.write(target, "bad \ud800", None),
            FsErrorCode.FS_NOT_TEXT,
            f'cannot write "{tmp_path}/new/a.txt": invalid UTF-8 text',
        )
    assert (tried, os.listdir(tmp_path)) == ([], [])


@pytest.mark.parametrize("intent", [None, "guarded"])
def test_an_edit_in_a_missing_directory_is_stale_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, intent: str | None
) -> None:
    local = LocalFs()
    target = local.resolve("gone/a.txt", str(tmp_path))
    expect = ExpectVersion(Version("0:0:0:0:0")) if intent else None
    tried: list[str] = []
    with _patched(monkeypatch, os, mkdir=_refuse_mkdir(tried)):
        _fails(
            lambda: local.edit(target, EditRequest("a", "b"), expect),
            FsErrorCode.FS_STALE_VERSION,
            STALE.format(op="edit", p=f"{tmp_path}/gone/a.txt"),
        )
    assert (tried, os.listdir(tmp_path)) == ([], [])


ROOT_INTENTS: Final[dict[str, object]] = {
    "none": None,
    "create": CreateIfAbsent(),
    "replace": ReplaceIfVersion(Version("0:0:0:0:0")),
    "expect": ExpectVersion(Version("0:0:0:0:0")),
}


@pytest.mark.parametrize(
    ("op", "intent"),
    [
        ("write", "none"),
        ("write", "create"),
        ("write", "replace"),
        ("edit", "none"),
        ("edit", "expect"),
    ],
)
def test_the_root_directory_is_not_a_regular_file_and_nothing_is_staged_in_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, op: str, intent: str
) -> None:
    # "/" has no name in a parent: looked up as "" it would seem missing (SPEC {fs.msg.not-regular}).
    local = LocalFs()
    target = local.resolve("/", str(tmp_path))
    assert (target.display_path, target.key) == ("/", "/")
    creates: list[str] = []
    swept: list[object] = []
    real_open = os.open

    def no_create(path: Any, flags: int, mode: int = 0o777, **kwargs: Any) -> int:
        if flags & os.O_CREAT:  # never let a test make anything in /
            creates.append(path)
            raise PermissionError(errno.EACCES, "Permission denied")
        fd: int = real_open(path, flags, mode, **kwargs)
        return fd

    chosen: Any = ROOT_INTENTS[intent]
    mutate: Callable[[], object] = (
        (lambda: local.write(target, "x\n", chosen))
        if op == "write"
        else (lambda: local.edit(target, EditRequest("a", "b"), chosen))
    )
    with (
        _patched(monkeypatch, os, open=no_create),
        _patched(monkeypatch, local_module, _sweep_once=lambda *args: swept.append(args)),
    ):
        _fails(mutate, FsErrorCode.FS_NOT_REGULAR_FILE, NOT_REGULAR.format(op=op, p="/"))
    assert (creates, swept) == ([], [])


@pytest.mark.parametrize("op", ["write", "edit"])
def test_a_directory_replaced_after_resolution_is_a_redirect(tmp_path: Path, op: str) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("old\n")
    local = LocalFs()
    target = local.resolve("sub/a.txt", str(tmp_path))
    (tmp_path / "sub").rename(tmp_path / "sub.moved")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("old\n")
    calls = {
        "write": lambda: local.write(target, "new\n", None),
        "edit": lambda: local.edit(target, EditRequest("old", "new"), None),
    }
    _fails(
        calls[op],
        FsErrorCode.FS_SANDBOX_DENIED,
        REDIRECTED.format(op=op, p=f"{tmp_path}/sub/a.txt"),
    )
    assert (tmp_path / "sub" / "a.txt").read_text() == "old\n"
    assert (tmp_path / "sub.moved" / "a.txt").read_text() == "old\n"


@pytest.mark.parametrize("op", ["write", "edit"])
def test_a_file_swapped_for_a_symlink_after_resolution_is_a_redirect(
    tmp_path: Path, op: str
) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    (tmp_path / "other.txt").write_text("old\n")
    local = LocalFs()
    target = local.resolve("a.txt", str(tmp_path))
    (tmp_path / "a.txt").unlink()
    (tmp_path / "a.txt").symlink_to("other.txt")
    calls = {
        "write": lambda: local.write(target, "new\n", None),
        "edit": lambda: local.edit(target, EditRequest("old", "new"), None),
    }
    _fails(
        calls[op],
        FsErrorCode.FS_SANDBOX_DENIED,
        REDIRECTED.format(op=op, p=f"{tmp_path}/a.txt"),
    )
    assert os.readlink(tmp_path / "a.txt") == "other.txt"
    assert (tmp_path / "other.txt").read_text() == "old\n"
    assert _temps(tmp_path) == []


def _swap_after_check(swap: Callable[[], None]) -> StatFn:
    """A frozen stat that runs ``swap`` right after the check's look at the entry."""
    done = False

    def stat_then_swap(
        path: str | int, *, dir_fd: int | None = None, follow_symlinks: bool = True
    ) -> os.stat_result:
        nonlocal done
        st = _frozen(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
        if dir_fd is not None and not done:
            done = True
            swap()
        return st

    return stat_then_swap


SWAPS: Final = {
    # kind: (code, message template)
    "fifo": (FsErrorCode.FS_NOT_REGULAR_FILE, NOT_REGULAR),
    "another file": (FsErrorCode.FS_STALE_VERSION, STALE),
}


@pytest.mark.parametrize("kind", list(SWAPS))
@pytest.mark.parametrize("op", ["write", "edit"])
def test_a_file_swapped_between_the_check_and_its_reading_is_caught(
    tmp_path: Path, op: str, kind: str
) -> None:
    path = tmp_path / "a.txt"
    path.write_text("old\n")

    def swap() -> None:
        if kind == "fifo":
            path.unlink()
            os.mkfifo(path)
        else:  # the same bytes, in another inode
            (tmp_path / "b.txt").write_text("old\n")
            os.replace(tmp_path / "b.txt", path)

    reader = LocalFs(stat=_frozen, clock=lambda: IN_WINDOW)
    target = reader.resolve("a.txt", str(tmp_path))
    _, seen = _read(reader, target)  # racy: a write compares the bytes too
    local = LocalFs(stat=_swap_after_check(swap), clock=lambda: IN_WINDOW)
    calls = {
        "write": lambda: local.write(target, "new\n", ReplaceIfVersion(seen)),
        "edit": lambda: local.edit(target, EditRequest("old", "new"), None),
    }
    code, message = SWAPS[kind]
    _fails(calls[op], code, message.format(op=op, p=f"{tmp_path}/a.txt"))
    if kind == "another file":
        assert path.read_text() == "old\n"
    assert _temps(tmp_path) == []


@pytest.mark.parametrize("op", ["write", "edit"])
def test_a_read_only_filesystem_is_an_io_error_that_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, op: str
) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    local = LocalFs()
    target = local.resolve("a.txt", str(tmp_path))
    calls = {
        "write": lambda: local.write(target, "new\n", None),
        "edit": lambda: local.edit(target, EditRequest("old", "new"), None),
    }
    with _patched(
        monkeypatch,
        os,
        access=lambda *args, **kwargs: False,
        fstatvfs=lambda fd: SimpleNamespace(f_flag=os.ST_RDONLY),
    ):
        err = _fails(
            calls[op],
            FsErrorCode.FS_IO_ERROR,
            f'cannot {op} "{tmp_path}/a.txt": read-only file system',
        )
    assert isinstance(err.cause, OSError)
    assert (err.cause.errno, err.cause.strerror) == (errno.EROFS, "Read-only file system")
    assert (tmp_path / "a.txt").read_text() == "old\n"


# -- the walk: a component that is not a directory ------------------------------------------


@pytest.mark.parametrize("kind", ["a file", "a symlink to a file", "nothing by then"])
def test_a_component_that_is_no_longer_a_directory_is_named_for_what_is_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "f").write_text("f\n")
    local = LocalFs()
    target = local.resolve("sub/a.txt", str(tmp_path))
    (tmp_path / "sub").rmdir()
    real_open = os.open

    def refuse_sub(path: Any, flags: int, mode: int = 0o777, **kwargs: Any) -> int:
        if path == "sub":  # O_NOFOLLOW met a symlink, which is gone when looked at again
            raise OSError(errno.ELOOP, "Too many levels of symbolic links")
        fd: int = real_open(path, flags, mode, **kwargs)
        return fd

    p = f"{tmp_path}/sub/a.txt"
    if kind == "a file":
        (tmp_path / "sub").write_text("in the way\n")
        code, message = (
            FsErrorCode.FS_NOT_FOUND,
            (f'cannot resolve "{p}": a parent path segment is not a directory'),
        )
    else:
        if kind == "a symlink to a file":
            (tmp_path / "sub").symlink_to(tmp_path / "f")
        code, message = FsErrorCode.FS_SANDBOX_DENIED, REDIRECTED.format(op="write", p=p)
    fakes = {"open": refuse_sub} if kind == "nothing by then" else {}
    with _patched(monkeypatch, os, **fakes):
        err = _fails(lambda: local.write(target, "new\n", None), code, message)
    assert isinstance(err.cause, OSError)
    assert err.cause.errno in (errno.ENOTDIR, errno.ELOOP)
    assert (tmp_path / "f").read_text() == "f\n"


def test_created_parent_directories_get_0o777_less_the_umask(tmp_path: Path) -> None:
    local = LocalFs()
    old = os.umask(0)
    try:
        local.write(local.resolve("p/q/a.txt", str(tmp_path)), "x\n", CreateIfAbsent())
    finally:
        os.umask(old)
    modes = [stat.S_IMODE(os.stat(tmp_path / d).st_mode) for d in ("p", "p/q")]
    assert modes == [0o777, 0o777]


# -- faults inside the walk and the lock: the first failure is the one reported ------------


def _close_fails_for(path: Path, error: OSError) -> Callable[[int], None]:
    """``os.close`` that releases ``fd`` as Linux does, then reports ``error`` for ``path``."""
    real_close = os.close

    def close(fd: int) -> None:
        mine = _is(fd, path)
        real_close(fd)
        if mine:
            raise error

    return close


def test_a_failed_walk_reports_its_failure_even_when_closing_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    local = LocalFs()
    target = local.resolve("sub/a.txt", str(tmp_path))
    real_open = os.open

    def open_fails(path: Any, flags: int, mode: int = 0o777, **kwargs: Any) -> int:
        if path == "sub":
            raise _eio()
        fd: int = real_open(path, flags, mode, **kwargs)
        return fd

    bad_fd = OSError(errno.EBADF, "Bad file descriptor")
    with _patched(monkeypatch, os, open=open_fails, close=_close_fails_for(tmp_path, bad_fd)):
        err = _fails(
            lambda: local.write(target, "x\n", None),
            FsErrorCode.FS_IO_ERROR,
            f'cannot write "{tmp_path}/sub/a.txt": input/output error',
        )
    assert isinstance(err.cause, OSError)
    assert err.cause.errno == errno.EIO


def test_a_failed_lock_reports_its_failure_even_when_closing_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = LocalFs()
    target = local.resolve("a.txt", str(tmp_path))
    real_flock = fcntl.flock

    def no_locks(fd: int, operation: int) -> None:
        if _is(fd, tmp_path):
            raise OSError(errno.ENOLCK, "No locks available")
        real_flock(fd, operation)

    bad_fd = OSError(errno.EBADF, "Bad file descriptor")
    with (
        _patched(monkeypatch, fcntl, flock=no_locks),
        _patched(monkeypatch, os, close=_close_fails_for(tmp_path, bad_fd)),
    ):
        err = _fails(
            lambda: local.write(target, "x\n", None),
            FsErrorCode.FS_IO_ERROR,
            f'cannot write "{tmp_path}/a.txt": no locks available',
        )
    assert isinstance(err.cause, OSError)
    assert err.cause.errno == errno.ENOLCK
    assert os.listdir(tmp_path) == []


def test_a_directory_whose_close_fails_after_success_is_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fs_log: Callable[[], list[tuple[int, str]]]
) -> None:
    local = LocalFs()
    target = local.resolve("a.txt", str(tmp_path))
    with _patched(monkeypatch, os, close=_close_fails_for(tmp_path, _eio())):
        local.write(target, "new\n", None)
    assert (tmp_path / "a.txt").read_text() == "new\n"
    directory = os.path.realpath(tmp_path)
    assert fs_log() == [(logging.WARNING, f'could not close the directory "{directory}": {EIO}')]


# -- staging and publication ----------------------------------------------------------------


def test_the_staged_name_keeps_the_first_100_bytes_of_the_name(tmp_path: Path) -> None:
    name = "a" * 99 + "bc" + "d" * 50 + ".txt"
    local = LocalFs()
    staged: list[str] = []
    local.arm("staged", lambda: staged.extend(n for n in os.listdir(tmp_path) if n != name))
    local.write(local.resolve(name, str(tmp_path)), "x\n", None)
    assert len(staged) == 1
    assert re.fullmatch(r"\." + "a" * 99 + r"b\.[0-9a-f]{12}\.reference-tmp", staged[0])
    assert os.listdir(tmp_path) == [name]


@pytest.mark.parametrize(
    ("name", "kept"),
    [
        ("文" * 80 + ".txt", "文" * 33),  # 244 bytes; the 34th character would split at 100
        ("🙂" * 62 + ".txt", "🙂" * 25),  # 252 bytes: four a character
        ("é" * 125 + ".txt", "é" * 50),  # 254 bytes
    ],
    ids=["3-byte", "4-byte", "2-byte"],
)
@pytest.mark.parametrize("op", ["write", "edit"])
def test_a_long_multibyte_name_stages_under_a_name_cut_in_bytes(
    tmp_path: Path, name: str, kept: str, op: str
) -> None:
    # A valid name (at most 255 bytes) gets a valid temp name: cut to 100 bytes, not 100
    # characters, and never inside a character.
    assert len(os.fsencode(name)) <= 255
    (tmp_path / name).write_text("old\n")
    local = LocalFs()
    staged: list[str] = []
    local.arm("staged", lambda: staged.extend(n for n in os.listdir(tmp_path) if n != name))
    target = local.resolve(name, str(tmp_path))
    if op == "write":
        local.write(target, "new\n", None)
    else:
        local.edit(target, EditRequest("old", "new"), None)
    assert (tmp_path / name).read_text() == "new\n"
    [temp] = staged
    assert re.fullmatch(rf"\.{kept}\.[0-9a-f]{{12}}\.reference-tmp", temp)
    assert TEMP_NAME.fullmatch(temp)  # the sweep still knows it for ours
    assert os.listdir(tmp_path) == [name]


def _no_links(*args: Any, **kwargs: Any) -> None:
    raise OSError(errno.EPERM, "Operation not permitted")


@pytest.mark.parametrize("how", ["update", "create", "create without hard links"])
def test_a_clean_publication_logs_nothing_and_leaves_no_temp(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fs_log: Callable[[], list[tuple[int, str]]],
    how: str,
) -> None:
    if how == "update":
        (tmp_path / "a.txt").write_text("old\n")
    if how == "create without hard links":
        monkeypatch.setattr(os, "link", _no_links)
    local = LocalFs()
    intent = None if how == "update" else CreateIfAbsent()
    outcome = local.write(local.resolve("a.txt", str(tmp_path)), "new\n", intent)
    assert outcome.created == (how != "update")
    assert (tmp_path / "a.txt").read_text() == "new\n"
    assert (fs_log(), _temps(tmp_path)) == ([], [])


def _fail_dir_fsync(real: Callable[[int], None]) -> Callable[[int], None]:
    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise _eio()
        real(fd)

    return fsync


AFTER_COMMIT: Final = [
    "remove the staged name",
    "sync the directory",
    "read the new version",
    "close the published file",
    "close the staged file",
]


@pytest.mark.parametrize("step", AFTER_COMMIT)
def test_a_failure_after_the_commit_point_is_logged_and_the_write_succeeds(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fs_log: Callable[[], list[tuple[int, str]]],
    step: str,
) -> None:
    path = tmp_path / "a.txt"
    real_close, real_unlink, real_stat = os.close, os.unlink, os.stat

    def unlink(name: Any, *args: Any, **kwargs: Any) -> None:
        if TEMP_NAME.fullmatch(os.fspath(name)):
            raise _eio()
        real_unlink(name, *args, **kwargs)

    def stat_fd(target: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if isinstance(target, int):
            raise _eio()
        return real_stat(target, *args, **kwargs)

    def close_fails(published_only: bool) -> Callable[[int], None]:
        # The staged file; or, without hard links, the published one (the file at ``path``).
        def close(fd: int) -> None:
            fails = stat.S_ISREG(os.fstat(fd).st_mode) and (_is(fd, path) or not published_only)
            real_close(fd)
            if fails:
                raise _eio()

        return close

    options: dict[str, dict[str, Any]] = {
        "remove the staged name": {"unlink": unlink},
        "sync the directory": {"fsync": _fail_dir_fsync(os.fsync)},
        "read the new version": {"stat": stat_fd},
        "close the published file": {"link": _no_links, "close": close_fails(True)},
        "close the staged file": {"close": close_fails(False)},
    }
    fakes = options[step]
    local = LocalFs()
    target = local.resolve("a.txt", str(tmp_path))
    with _patched(monkeypatch, os, **fakes):
        outcome = local.write(target, "new\n", CreateIfAbsent())
    assert outcome.created
    assert path.read_text() == "new\n"
    assert fs_log() == [
        (logging.WARNING, f'after publishing "{tmp_path}/a.txt": could not {step}: {EIO}')
    ]
    if step == "read the new version":  # the content alone then identifies the version
        assert (outcome.version.stamp, outcome.version.content) == (None, (b"new\n",))
    else:
        assert outcome.version == Version(_stamp(os.stat(path)))
    # A staged name that could not be removed is swept by the next mutation's process.
    assert len(_temps(tmp_path)) == (step == "remove the staged name")


def test_a_staged_name_already_gone_when_the_commit_fails_reports_the_commit_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt").write_text("original\n")
    local = LocalFs()
    target = local.resolve("a.txt", str(tmp_path))

    def gone_then_full(src: str, dst: str, *, src_dir_fd: int, dst_dir_fd: int) -> None:
        os.unlink(src, dir_fd=src_dir_fd)
        raise OSError(errno.ENOSPC, "No space left on device")

    with _patched(monkeypatch, os, replace=gone_then_full):
        _fails(
            lambda: local.write(target, "new\n", None),
            FsErrorCode.FS_IO_ERROR,
            f'cannot write "{tmp_path}/a.txt": no space left on device',
        )
    assert os.listdir(tmp_path) == ["a.txt"]
    assert (tmp_path / "a.txt").read_text() == "original\n"


def test_publication_links_the_staged_file_never_what_a_planted_symlink_points_at(
    tmp_path: Path,
) -> None:
    root, secret = tmp_path / "ws", tmp_path / "secret.txt"
    root.mkdir()
    secret.write_text("secret\n")
    local = LocalFs()

    def plant() -> None:
        [temp] = _temps(root)
        (root / temp).unlink()
        (root / temp).symlink_to(secret)

    local.arm("staged", plant)
    local.write(local.resolve("a.txt", str(root)), "mine\n", CreateIfAbsent())
    assert (os.stat(secret).st_nlink, secret.read_text()) == (1, "secret\n")
    assert not os.path.samestat(os.lstat(root / "a.txt"), os.stat(secret))


@pytest.mark.parametrize("competitor", ["file", "directory"])
@pytest.mark.parametrize("how", ["link", "without hard links"])
def test_a_competitor_that_creates_the_name_first_is_never_clobbered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, competitor: str
) -> None:
    path = tmp_path / "a.txt"
    real_link, real_open = os.link, os.open

    def compete() -> None:
        if competitor == "file":
            path.write_text("competitor\n")
        else:
            path.mkdir()

    def link_loses(src: str, dst: str, **where: Any) -> None:
        compete()
        real_link(src, dst, **where)

    def open_loses(name: Any, flags: int, mode: int = 0o777, **kwargs: Any) -> int:
        if name == "a.txt" and flags & os.O_EXCL:
            compete()
        fd: int = real_open(name, flags, mode, **kwargs)
        return fd

    local = LocalFs()
    target = local.resolve("a.txt", str(tmp_path))
    fakes = {"link": link_loses} if how == "link" else {"link": _no_links, "open": open_loses}
    with _patched(monkeypatch, os, **fakes):
        if competitor == "file":
            _fails(
                lambda: local.write(target, "mine\n", CreateIfAbsent()),
                FsErrorCode.FS_NOT_OBSERVED,
                f'cannot overwrite existing "{path}" without reading it first',
            )
        else:
            _fails(
                lambda: local.write(target, "mine\n", CreateIfAbsent()),
                FsErrorCode.FS_NOT_REGULAR_FILE,
                NOT_REGULAR.format(op="write", p=path),
            )
    assert os.listdir(tmp_path) == ["a.txt"]
    if competitor == "file":
        assert path.read_text() == "competitor\n"
    else:
        assert path.is_dir()


def test_a_failed_create_without_hard_links_removes_what_it_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.txt"
    real_write = os.write

    def full_at_the_target(fd: int, data: Any) -> int:
        if _is(fd, path):
            raise OSError(errno.ENOSPC, "No space left on device")
        written: int = real_write(fd, data)
        return written

    local = LocalFs()
    target = local.resolve("a.txt", str(tmp_path))
    with _patched(monkeypatch, os, link=_no_links, write=full_at_the_target):
        err = _fails(
            lambda: local.write(target, "mine\n", CreateIfAbsent()),
            FsErrorCode.FS_IO_ERROR,
            f'cannot write "{path}": no space left on device',
        )
    assert isinstance(err.cause, OSError)
    assert err.cause.errno == errno.ENOSPC
    assert os.listdir(tmp_path) == []


def test_a_file_created_without_hard_links_gets_0o666_less_the_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = LocalFs()
    target = local.resolve("a.txt", str(tmp_path))
    old = os.umask(0)
    try:
        with _patched(monkeypatch, os, link=_no_links):
            local.write(target, "x\n", CreateIfAbsent())
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "a.txt").st_mode) == 0o666


# -- the version a mutation leaves ----------------------------------------------------------


@pytest.mark.parametrize("op", ["write", "edit"])
@pytest.mark.parametrize("clock", [IN_WINDOW, LONG_AGO])
def test_a_mutation_leaves_the_stamp_of_the_new_file_and_when_racy_its_bytes(
    tmp_path: Path, op: str, clock: int
) -> None:
    path = tmp_path / "a.txt"
    path.write_text("one old two\n")
    local = LocalFs(stat=_frozen, clock=lambda: clock)
    target = local.resolve("a.txt", str(tmp_path))
    if op == "write":
        version = local.write(target, "one new two\n", None).version
    else:
        version = local.edit(target, EditRequest("old", "new"), None).version
    assert (version.stamp, version.digest) == (_stamp(_frozen(str(path))), None)
    kept = None if version.content is None else b"".join(bytes(p) for p in version.content)
    assert kept == (b"one new two\n" if clock == IN_WINDOW else None)


@pytest.mark.parametrize("limit", [11, 12])
def test_a_racy_mutation_over_the_retain_limit_keeps_a_digest_instead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    monkeypatch.setattr(local_module, "RETAIN_MAX_BYTES", limit)
    local = LocalFs(stat=_frozen, clock=lambda: IN_WINDOW)
    path = tmp_path / "a.txt"
    version = local.write(local.resolve("a.txt", str(tmp_path)), "0123456789\n\n", None).version
    assert len(b"0123456789\n\n") == 12
    stamp = _stamp(_frozen(str(path)))
    if limit == 12:
        assert (version.stamp, version.digest, version.content) == (
            stamp,
            None,
            (b"0123456789\n\n",),
        )
    else:
        digest = hashlib.sha256(b"0123456789\n\n").hexdigest()
        assert (version.stamp, version.digest, version.content) == (stamp, digest, None)


def test_a_racy_read_of_a_file_larger_than_one_buffer_still_matches(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * (COMPARE_BYTES + 10))
    local = LocalFs(stat=_frozen, clock=lambda: IN_WINDOW)
    target = local.resolve("big.txt", str(tmp_path))
    _, seen = _read(local, target)
    assert seen.digest is not None
    local.write(target, "done\n", ReplaceIfVersion(seen))
    assert path.read_bytes() == b"done\n"


@pytest.mark.parametrize(
    ("on_disk", "holds"),
    [(b"abc\n", True), (b"abc\nmore", False), (b"abd\n", False), (b"ab", False)],
)
@pytest.mark.parametrize("op", ["write", "edit"])
def test_a_version_without_a_stamp_is_decided_by_its_bytes_alone(
    tmp_path: Path, op: str, on_disk: bytes, holds: bool
) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(on_disk)
    local = LocalFs()
    target = local.resolve("a.txt", str(tmp_path))
    seen = Version(None, content=(b"abc\n",))
    calls: dict[str, Callable[[], object]] = {
        "write": lambda: local.write(target, "new\n", ReplaceIfVersion(seen)),
        "edit": lambda: local.edit(target, EditRequest("ab", "AB"), ExpectVersion(seen)),
    }
    if holds:
        calls[op]()
        assert path.read_bytes() == (b"new\n" if op == "write" else b"ABc\n")
    else:
        _fails(calls[op], FsErrorCode.FS_STALE_VERSION, STALE.format(op=op, p=path))
        assert path.read_bytes() == on_disk


# -- edit -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("replace_all", "count"), [(False, 1), (True, 3)])
def test_an_edit_reports_how_many_occurrences_it_replaced(
    tmp_path: Path, replace_all: bool, count: int
) -> None:
    path = tmp_path / "a.txt"
    path.write_text("x = 1\n" if not replace_all else "x x x\n")
    local = LocalFs()
    outcome = local.edit(
        local.resolve("a.txt", str(tmp_path)), EditRequest("x", "y", replace_all), None
    )
    assert outcome.replacements == count
    assert path.read_text() == ("y = 1\n" if not replace_all else "y y y\n")


def test_an_empty_old_string_matches_between_every_character(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("ab")
    local = LocalFs()
    _fails(
        lambda: local.edit(local.resolve("a.txt", str(tmp_path)), EditRequest("", "x"), None),
        FsErrorCode.FS_AMBIGUOUS_EDIT,
        f'old_string matched 3 times in "{tmp_path}/a.txt"; '
        "provide a more specific old_string or set replace_all to true",
    )


def test_an_edit_of_an_empty_file_finds_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"")
    local = LocalFs()
    _fails(
        lambda: local.edit(local.resolve("a.txt", str(tmp_path)), EditRequest("a", "b"), None),
        FsErrorCode.FS_EDIT_NOT_FOUND,
        f'old_string was not found in "{tmp_path}/a.txt"',
    )


def test_an_edit_reads_the_whole_file_even_if_it_grew_after_its_stat(tmp_path: Path) -> None:
    file = tmp_path / "a.txt"
    file.write_bytes(b"old\n")
    grown = False

    def stat_then_grow(
        path: str | int, *, dir_fd: int | None = None, follow_symlinks: bool = True
    ) -> os.stat_result:
        nonlocal grown
        st = os.stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
        if isinstance(path, int) and not grown:  # the stat of the opened file
            grown = True
            with open(file, "ab") as out:
                out.write(b"grown\n")
        return st

    local = LocalFs(stat=stat_then_grow)
    local.edit(local.resolve("a.txt", str(tmp_path)), EditRequest("old", "new"), None)
    assert file.read_bytes() == b"new\ngrown\n"


# -- sweeping temp files a dead process left ------------------------------------------------


def _abandon(directory: Path) -> tuple[int, int]:
    """Leave a temp file as a stager that died would; return its identity."""
    directory.mkdir(exist_ok=True)
    (directory / ABANDONED).write_bytes(b"dead\n")
    st = os.stat(directory / ABANDONED)
    return st.st_dev, st.st_ino


def _identity(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def test_each_directory_is_swept_once_on_its_first_mutation(
    tmp_path: Path, fs_log: Callable[[], list[tuple[int, str]]]
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    _abandon(one)
    _abandon(two)
    local = LocalFs()
    local.write(local.resolve("one/a.txt", str(tmp_path)), "1\n", None)
    local.write(local.resolve("two/a.txt", str(tmp_path)), "2\n", None)
    assert (os.listdir(one), os.listdir(two)) == (["a.txt"], ["a.txt"])
    assert fs_log() == [(logging.INFO, REMOVED), (logging.INFO, REMOVED)]
    _abandon(one)  # after this process swept the directory: the next sweep is another's
    local.write(local.resolve("one/a.txt", str(tmp_path)), "3\n", None)
    assert sorted(os.listdir(one)) == [ABANDONED, "a.txt"]


def test_a_temp_name_is_cut_before_a_character_it_would_split() -> None:
    """Byte 100 of ``aéé…`` is the second byte of an ``é`` (0xA9): the cut steps back."""
    temp = local_module._temp_name("a" + "é" * 60)
    assert temp.startswith(".a" + "é" * 49 + ".")
    assert len(temp.encode("utf-8")) <= 255  # no lone surrogate: it is text, and a valid name
    assert local_module.is_own_temp(temp)


def test_a_file_of_the_temp_files_shape_that_they_did_not_make_is_never_swept(
    tmp_path: Path,
) -> None:
    """The sweep went by the shape of the name: a file a model wrote as
    ``.plan.0123456789ab.reference-tmp`` went at the next process's first mutation there."""
    look_alike = ".plan.0123456789ab.reference-tmp"
    assert TEMP_NAME.fullmatch(look_alike)
    _abandon(tmp_path)
    local = LocalFs()
    local.write(local.resolve(look_alike, str(tmp_path)), "the model's plan\n", None)
    local_module._SWEPT.clear()  # the next mutation is another process's first here
    local.write(local.resolve("other.txt", str(tmp_path)), "x\n", None)
    assert sorted(os.listdir(tmp_path)) == sorted([look_alike, "other.txt"])
    assert (tmp_path / look_alike).read_text() == "the model's plan\n"
    assert local_module.is_own_temp(ABANDONED)
    assert not local_module.is_own_temp(look_alike)


def test_a_temp_that_cannot_be_swept_is_logged_and_the_mutation_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fs_log: Callable[[], list[tuple[int, str]]]
) -> None:
    _abandon(tmp_path)
    real_unlink = os.unlink

    def unlink(name: Any, *args: Any, **kwargs: Any) -> None:
        if name == ABANDONED:
            raise _eio()
        real_unlink(name, *args, **kwargs)

    local = LocalFs()
    target = local.resolve("a.txt", str(tmp_path))
    with _patched(monkeypatch, os, unlink=unlink):
        local.write(target, "new\n", None)
    assert sorted(os.listdir(tmp_path)) == [ABANDONED, "a.txt"]
    assert fs_log() == [(logging.WARNING, f"could not sweep {ABANDONED}: {EIO}")]


def test_a_failing_close_during_the_sweep_never_fails_the_mutation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fs_log: Callable[[], list[tuple[int, str]]]
) -> None:
    abandoned = _abandon(tmp_path)
    real_close = os.close

    def close(fd: int) -> None:
        swept = _identity(fd) == abandoned
        real_close(fd)
        if swept:
            raise _eio()

    local = LocalFs()
    target = local.resolve("a.txt", str(tmp_path))
    # Held open, the swept file keeps its inode: no file made later can take its identity.
    keep = os.open(tmp_path / ABANDONED, os.O_RDONLY)
    try:
        with _patched(monkeypatch, os, close=close):
            local.write(target, "new\n", None)
    finally:
        os.close(keep)
    assert os.listdir(tmp_path) == ["a.txt"]
    assert fs_log() == [(logging.INFO, REMOVED)]


def test_a_temp_swapped_for_a_symlink_during_the_sweep_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fs_log: Callable[[], list[tuple[int, str]]]
) -> None:
    abandoned = _abandon(tmp_path)
    real_flock = fcntl.flock

    def lock_then_swap(fd: int, operation: int) -> None:
        real_flock(fd, operation)
        if _identity(fd) == abandoned:  # the name now points at the file it locked
            os.rename(tmp_path / ABANDONED, tmp_path / "moved")
            os.symlink("moved", tmp_path / ABANDONED)

    local = LocalFs()
    target = local.resolve("a.txt", str(tmp_path))
    with _patched(monkeypatch, fcntl, flock=lock_then_swap):
        local.write(target, "new\n", None)
    assert os.readlink(tmp_path / ABANDONED) == "moved"
    assert (tmp_path / "moved").read_bytes() == b"dead\n"
    assert fs_log() == []


def test_comparisons_reuse_one_buffer_per_thread() -> None:
    """A racy check reads into a buffer made once per thread, not a fresh megabyte each time."""
    first = local_module._compare_buffer()
    assert local_module._compare_buffer() is first
    assert len(first) == COMPARE_BYTES
    elsewhere: list[bytearray] = []
    thread = threading.Thread(target=lambda: elsewhere.append(local_module._compare_buffer()))
    thread.start()
    thread.join()
    assert elsewhere[0] is not first
