"""SPEC §3: the local provider — resolution, versions, intents, publication, messages."""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import pytest
from pyfakefs.fake_filesystem import FakeFilesystem
from pyfakefs.helpers import set_uid

from reference.fs import (
    CreateIfAbsent,
    EditRequest,
    ExpectVersion,
    FsError,
    FsErrorCode,
    LocalFs,
    ReplaceIfVersion,
    Target,
    Version,
)
from reference.fs.local import CHUNK_BYTES
from tests.conftest import leftovers


def _read(local: LocalFs, target: Target) -> tuple[str, Version]:
    chunks: list[str] = []
    version = local.read_text(target, chunks.append)
    return "".join(chunks), version


def _fails(call: Callable[[], object], code: FsErrorCode, message: str) -> FsError:
    with pytest.raises(FsError) as info:
        call()
    assert (info.value.code, info.value.message) == (code, message)
    return info.value


@pytest.fixture
def local() -> LocalFs:
    return LocalFs()


# -- resolution -----------------------------------------------------------------------------


def test_display_path_is_lexical_and_key_is_realpath(local: LocalFs, tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    target = local.resolve("link/../link/./a.txt", str(tmp_path))
    assert target.display_path == f"{tmp_path}/link/a.txt"
    assert target.key == os.path.realpath(tmp_path / "real" / "a.txt")


@pytest.mark.parametrize("slashes", ["/", "//", "///", "////"])
def test_leading_slashes_show_as_one(local: LocalFs, tmp_path: Path, slashes: str) -> None:
    # Empty segments are dropped (SPEC {fs.resolve.display}), two leading slashes too, as
    # Node's path.resolve drops them; POSIX normpath alone keeps exactly two.
    spelled = slashes + str(tmp_path).lstrip("/") + "//a.txt"
    assert local.resolve(spelled, "/elsewhere").display_path == f"{tmp_path}/a.txt"
    assert local.resolve("a.txt", slashes + str(tmp_path).lstrip("/")).display_path == (
        f"{tmp_path}/a.txt"
    )


def test_tilde_is_not_expanded(local: LocalFs, tmp_path: Path) -> None:
    assert local.resolve("~/x", str(tmp_path)).display_path == f"{tmp_path}/~/x"


def test_absolute_path_ignores_cwd(local: LocalFs, tmp_path: Path) -> None:
    assert local.resolve(str(tmp_path / "a"), "/elsewhere").display_path == f"{tmp_path}/a"


def test_dangling_symlink_resolves_to_its_target(local: LocalFs, tmp_path: Path) -> None:
    (tmp_path / "dangling").symlink_to(tmp_path / "not-yet" / "t.txt")
    assert local.resolve("dangling", str(tmp_path)).key == os.path.realpath(
        tmp_path / "not-yet" / "t.txt"
    )


@pytest.mark.parametrize("path", ["file.txt/child", "file.txt/deeper/child"])
def test_resolve_refuses_a_file_as_a_parent_segment(
    local: LocalFs, tmp_path: Path, path: str
) -> None:
    (tmp_path / "file.txt").write_text("x")
    _fails(
        lambda: local.resolve(path, str(tmp_path)),
        FsErrorCode.FS_NOT_FOUND,
        f'cannot resolve "{tmp_path}/{path}": a parent path segment is not a directory',
    )


def test_resolve_refuses_a_nul_character_even_one_cancelled_by_dotdot(
    local: LocalFs, tmp_path: Path
) -> None:
    for path in ["a\0b", "x\0/../y.txt"]:
        with pytest.raises(ValueError, match=r"^file_path must not contain NUL characters$"):
            local.resolve(path, str(tmp_path))


def test_resolve_refuses_a_path_that_is_not_unicode(local: LocalFs, tmp_path: Path) -> None:
    _fails(
        lambda: local.resolve("bad\ud800.txt", str(tmp_path)),
        FsErrorCode.FS_NOT_FOUND,
        f'cannot resolve "{tmp_path}/bad\ufffd.txt": path is not valid UTF-8',
    )


# -- versions -------------------------------------------------------------------------------


def test_version_is_built_from_one_stat(local: LocalFs, tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("hello\n")
    st = os.stat(path)
    _, version = _read(local, local.resolve("a.txt", str(tmp_path)))
    assert (
        version.stamp == f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"
    )


def test_fresh_observation_is_racy_and_keeps_the_content_hash(
    local: LocalFs, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    _, version = _read(local, local.resolve("a.txt", str(tmp_path)))
    assert version.digest == hashlib.sha256(b"hello\n").hexdigest()


def test_old_observation_keeps_no_hash(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    later = LocalFs(clock=lambda: time.time_ns() + 60_000_000_000)
    _, version = _read(later, later.resolve("a.txt", str(tmp_path)))
    assert version.digest is None


FROZEN_NS = 1_700_000_000_000_000_000


def _frozen_stat(
    path: str | int, *, dir_fd: int | None = None, follow_symlinks: bool = True
) -> os.stat_result:
    """A stat whose timestamps never tick: the coarsest granularity a kernel could have."""
    st = os.stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
    extra = {
        name: getattr(st, name)
        for name in ("st_atime_ns", "st_blksize", "st_blocks", "st_rdev")
        if hasattr(st, name)
    }
    extra["st_mtime_ns"] = extra["st_ctime_ns"] = FROZEN_NS
    return os.stat_result(tuple(st), extra)


def _same_size_rewrite(path: Path, content: bytes) -> None:
    st = os.stat(path)
    assert len(content) == st.st_size
    with open(path, "r+b") as out:
        out.write(content)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_same_size_rewrite_with_mtime_restored_is_stale(local: LocalFs, tmp_path: Path) -> None:
    path = tmp_path / "v.txt"
    path.write_text("v1.0.0\n")
    target = local.resolve("v.txt", str(tmp_path))
    _, seen = _read(local, target)
    _same_size_rewrite(path, b"v2.0.0\n")
    _fails(
        lambda: local.edit(target, EditRequest("v1", "v9"), ExpectVersion(seen)),
        FsErrorCode.FS_STALE_VERSION,
        f'cannot edit "{tmp_path}/v.txt": file changed since it was read',
    )


def test_rewrite_inside_one_timestamp_tick_is_stale(tmp_path: Path) -> None:
    # The timestamps never move, so the stamp cannot tell the rewrite apart; the observation
    # is racy (ctime within 2 s of "now"), so its content hash does.
    local = LocalFs(stat=_frozen_stat, clock=lambda: FROZEN_NS + 1_000_000)
    path = tmp_path / "v.txt"
    path.write_text("v1.0.0\n")
    target = local.resolve("v.txt", str(tmp_path))
    _, seen = _read(local, target)
    assert seen.digest is not None
    _same_size_rewrite(path, b"v2.0.0\n")
    _, after = _read(local, target)
    assert after.stamp == seen.stamp
    _fails(
        lambda: local.write(target, "v3\n", ReplaceIfVersion(seen)),
        FsErrorCode.FS_STALE_VERSION,
        f'cannot write "{tmp_path}/v.txt": file changed since it was read',
    )
    _fails(
        lambda: local.edit(target, EditRequest("v1", "v9"), ExpectVersion(seen)),
        FsErrorCode.FS_STALE_VERSION,
        f'cannot edit "{tmp_path}/v.txt": file changed since it was read',
    )


def test_without_the_racy_hash_a_same_tick_rewrite_would_go_unseen(tmp_path: Path) -> None:
    # The control for the test above: a clock that calls every observation old drops the hash,
    # and the frozen stamp alone accepts the rewritten file. This is the bug the rule prevents.
    local = LocalFs(stat=_frozen_stat, clock=lambda: FROZEN_NS + 60_000_000_000)
    path = tmp_path / "v.txt"
    path.write_text("v1.0.0\n")
    target = local.resolve("v.txt", str(tmp_path))
    _, seen = _read(local, target)
    assert seen.digest is None
    _same_size_rewrite(path, b"v2.0.0\n")
    local.edit(target, EditRequest("v2", "v9"), ExpectVersion(seen))
    assert path.read_text() == "v9.0.0\n"


def test_replaced_inode_changes_the_version(local: LocalFs, tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("same\n")
    target = local.resolve("a.txt", str(tmp_path))
    _, seen = _read(local, target)
    replacement = tmp_path / "b.txt"
    replacement.write_text("same\n")
    os.replace(replacement, path)
    _, now = _read(local, target)
    assert now.stamp != seen.stamp


# -- intents --------------------------------------------------------------------------------


def test_create_if_absent_creates_a_new_file(local: LocalFs, tmp_path: Path) -> None:
    outcome = local.write(local.resolve("new.txt", str(tmp_path)), "hi\n", CreateIfAbsent())
    assert outcome.created
    assert (tmp_path / "new.txt").read_text() == "hi\n"


def test_create_if_absent_refuses_an_existing_file(local: LocalFs, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("keep\n")
    _fails(
        lambda: local.write(local.resolve("a.txt", str(tmp_path)), "x", CreateIfAbsent()),
        FsErrorCode.FS_NOT_OBSERVED,
        f'cannot overwrite existing "{tmp_path}/a.txt" without reading it first',
    )
    assert (tmp_path / "a.txt").read_text() == "keep\n"


def test_create_if_absent_never_overwrites_a_file_created_after_the_check(
    local: LocalFs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_link = os.link

    def competitor_wins(src: str, dst: str, **where: Any) -> None:
        fd = os.open(dst, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=where["dst_dir_fd"])
        os.write(fd, b"competitor\n")
        os.close(fd)
        real_link(src, dst, **where)

    monkeypatch.setattr(os, "link", competitor_wins)
    _fails(
        lambda: local.write(local.resolve("a.txt", str(tmp_path)), "mine\n", CreateIfAbsent()),
        FsErrorCode.FS_NOT_OBSERVED,
        f'cannot overwrite existing "{tmp_path}/a.txt" without reading it first',
    )
    assert (tmp_path / "a.txt").read_text() == "competitor\n"
    assert leftovers(tmp_path) == []


def test_without_hard_links_create_falls_back_to_an_exclusive_create(
    local: LocalFs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(src: str, dst: str, **where: Any) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    local.write(local.resolve("a.txt", str(tmp_path)), "made\n", CreateIfAbsent())
    assert (tmp_path / "a.txt").read_text() == "made\n"
    assert leftovers(tmp_path) == []


def test_replace_if_version_on_a_vanished_file(local: LocalFs, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    target = local.resolve("a.txt", str(tmp_path))
    _, seen = _read(local, target)
    (tmp_path / "a.txt").unlink()
    _fails(
        lambda: local.write(target, "y", ReplaceIfVersion(seen)),
        FsErrorCode.FS_STALE_VERSION,
        f'cannot write "{tmp_path}/a.txt": file no longer exists',
    )
    assert not (tmp_path / "a.txt").exists()


@pytest.mark.parametrize("intent", [None, "guarded"])
def test_edit_of_a_missing_file_is_stale(
    local: LocalFs, tmp_path: Path, intent: str | None
) -> None:
    expect = ExpectVersion(Version("0:0:0:0:0")) if intent else None
    _fails(
        lambda: local.edit(local.resolve("gone.txt", str(tmp_path)), EditRequest("a", "b"), expect),
        FsErrorCode.FS_STALE_VERSION,
        f'cannot edit "{tmp_path}/gone.txt": file changed since it was read',
    )


def test_edit_checks_the_version_before_matching(local: LocalFs, tmp_path: Path) -> None:
    path = tmp_path / "c.ini"
    path.write_text("port = 8080\n")
    target = local.resolve("c.ini", str(tmp_path))
    _, seen = _read(local, target)
    path.write_text("port = 9090\n")
    _fails(
        lambda: local.edit(target, EditRequest("port = 8080", "port = 1"), ExpectVersion(seen)),
        FsErrorCode.FS_STALE_VERSION,
        f'cannot edit "{tmp_path}/c.ini": file changed since it was read',
    )


def test_not_a_regular_file_is_checked_before_the_version(local: LocalFs, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    target = local.resolve("d", str(tmp_path))
    stale = Version("0:0:0:0:0")
    _fails(
        lambda: local.write(target, "x", ReplaceIfVersion(stale)),
        FsErrorCode.FS_NOT_REGULAR_FILE,
        f'cannot write "{tmp_path}/d": not a regular file',
    )
    _fails(
        lambda: local.edit(target, EditRequest("a", "b"), ExpectVersion(stale)),
        FsErrorCode.FS_NOT_REGULAR_FILE,
        f'cannot edit "{tmp_path}/d": not a regular file',
    )


def test_version_is_checked_before_content(local: LocalFs, tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("x\n")
    target = local.resolve("a.txt", str(tmp_path))
    _, seen = _read(local, target)
    path.write_text("changed\n")
    _fails(
        lambda: local.write(target, "bad \udc80", ReplaceIfVersion(seen)),
        FsErrorCode.FS_STALE_VERSION,
        f'cannot write "{tmp_path}/a.txt": file changed since it was read',
    )


# -- content --------------------------------------------------------------------------------


def test_crlf_is_kept_through_edit_and_write(local: LocalFs, tmp_path: Path) -> None:
    path = tmp_path / "w.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    target = local.resolve("w.txt", str(tmp_path))
    text, _ = _read(local, target)
    assert text == "one\r\ntwo\r\n"
    local.edit(target, EditRequest("two", "2"), None)
    assert path.read_bytes() == b"one\r\n2\r\n"
    local.write(target, "a\r\nb\r\n", None)
    assert path.read_bytes() == b"a\r\nb\r\n"


@pytest.mark.parametrize("op", ["write", "edit-old", "edit-new"])
def test_lone_surrogates_are_not_text_and_nothing_is_written(
    local: LocalFs, tmp_path: Path, op: str
) -> None:
    path = tmp_path / "a.txt"
    path.write_text("abc\n")
    target = local.resolve("a.txt", str(tmp_path))
    name = "write" if op == "write" else "edit"
    calls = {
        "write": lambda: local.write(target, "x\ud800", None),
        "edit-old": lambda: local.edit(target, EditRequest("a\ud800", "b"), None),
        "edit-new": lambda: local.edit(target, EditRequest("a", "b\ud800"), None),
    }
    err = _fails(
        calls[op], FsErrorCode.FS_NOT_TEXT, f'cannot {name} "{tmp_path}/a.txt": invalid UTF-8 text'
    )
    assert isinstance(err.cause, UnicodeEncodeError)
    assert path.read_text() == "abc\n"
    assert leftovers(tmp_path) == []


def test_read_sniffs_nul_only_in_the_first_8192_bytes(local: LocalFs, tmp_path: Path) -> None:
    (tmp_path / "head.bin").write_bytes(b"abc\0def")
    (tmp_path / "tail.txt").write_bytes(b"a" * 8192 + b"\0tail")
    _fails(
        lambda: _read(local, local.resolve("head.bin", str(tmp_path))),
        FsErrorCode.FS_NOT_TEXT,
        f'cannot read "{tmp_path}/head.bin": binary file',
    )
    text, _ = _read(local, local.resolve("tail.txt", str(tmp_path)))
    assert text.endswith("\0tail")


def test_edit_refuses_a_nul_anywhere(local: LocalFs, tmp_path: Path) -> None:
    (tmp_path / "tail.txt").write_bytes(b"a" * 9000 + b"\0tail")
    _fails(
        lambda: local.edit(
            local.resolve("tail.txt", str(tmp_path)), EditRequest("tail", "x"), None
        ),
        FsErrorCode.FS_NOT_TEXT,
        f'cannot edit "{tmp_path}/tail.txt": binary file',
    )


def test_binary_is_reported_before_invalid_utf8(local: LocalFs, tmp_path: Path) -> None:
    (tmp_path / "mixed").write_bytes(b"\xff\xfe" + b"\0")
    _fails(
        lambda: _read(local, local.resolve("mixed", str(tmp_path))),
        FsErrorCode.FS_NOT_TEXT,
        f'cannot read "{tmp_path}/mixed": binary file',
    )


@pytest.mark.parametrize("op", ["read", "edit"])
def test_invalid_utf8_anywhere_is_not_text(local: LocalFs, tmp_path: Path, op: str) -> None:
    (tmp_path / "latin1.txt").write_bytes(b"ok\n" * 50_000 + b"caf\xe9\n")
    target = local.resolve("latin1.txt", str(tmp_path))
    call = (
        (lambda: _read(local, target))
        if op == "read"
        else (lambda: local.edit(target, EditRequest("ok", "no"), None))
    )
    err = _fails(
        call, FsErrorCode.FS_NOT_TEXT, f'cannot {op} "{tmp_path}/latin1.txt": invalid UTF-8 text'
    )
    assert isinstance(err.cause, UnicodeDecodeError)


def test_read_streams_in_chunks(local: LocalFs, tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("é" * 100_000)
    chunks: list[str] = []
    local.read_text(local.resolve("big.txt", str(tmp_path)), chunks.append)
    assert len([c for c in chunks if c]) > 1
    assert max(len(c) for c in chunks) <= CHUNK_BYTES
    assert "".join(chunks) == "é" * 100_000


def test_max_read_bytes_refuses_larger_files(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * 11)
    local = LocalFs(max_read_bytes=10)
    _fails(
        lambda: _read(local, local.resolve("big.txt", str(tmp_path))),
        FsErrorCode.FS_TOO_LARGE,
        f'cannot read "{tmp_path}/big.txt": 11 bytes exceeds the 10-byte limit',
    )
    (tmp_path / "ok.txt").write_text("x" * 10)
    assert _read(local, local.resolve("ok.txt", str(tmp_path)))[0] == "x" * 10


@pytest.mark.parametrize("bad", [-1, True, 1.5, "10"])
def test_max_read_bytes_must_be_a_non_negative_integer(bad: object) -> None:
    with pytest.raises(ValueError, match="max_read_bytes"):
        LocalFs(max_read_bytes=bad)  # type: ignore[arg-type]


def test_read_of_a_missing_file(local: LocalFs, tmp_path: Path) -> None:
    _fails(
        lambda: _read(local, local.resolve("nope.txt", str(tmp_path))),
        FsErrorCode.FS_NOT_FOUND,
        f'cannot read "{tmp_path}/nope.txt": not found',
    )


@pytest.mark.parametrize("op", ["read", "write", "edit"])
def test_a_fifo_is_not_a_regular_file_and_never_blocks(
    local: LocalFs, tmp_path: Path, op: str
) -> None:
    os.mkfifo(tmp_path / "pipe")
    target = local.resolve("pipe", str(tmp_path))
    calls = {
        "read": lambda: _read(local, target),
        "write": lambda: local.write(target, "x", None),
        "edit": lambda: local.edit(target, EditRequest("a", "b"), None),
    }
    _fails(
        calls[op],
        FsErrorCode.FS_NOT_REGULAR_FILE,
        f'cannot {op} "{tmp_path}/pipe": not a regular file',
    )


def test_a_device_is_not_a_regular_file(local: LocalFs, tmp_path: Path) -> None:
    (tmp_path / "null").symlink_to("/dev/null")
    _fails(
        lambda: _read(local, local.resolve("null", str(tmp_path))),
        FsErrorCode.FS_NOT_REGULAR_FILE,
        f'cannot read "{tmp_path}/null": not a regular file',
    )


def test_a_fifo_swapped_in_after_the_stat_is_caught_by_fstat(
    tmp_path: Path,
) -> None:
    (tmp_path / "pipe").write_text("regular at first\n")
    swapped = False

    def swapping_stat(
        path: str | int, *, dir_fd: int | None = None, follow_symlinks: bool = True
    ) -> os.stat_result:
        nonlocal swapped
        st = os.stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
        if isinstance(path, str) and not swapped:
            swapped = True
            os.unlink(tmp_path / "pipe")
            os.mkfifo(tmp_path / "pipe")
        return st

    local = LocalFs(stat=swapping_stat)
    _fails(
        lambda: _read(local, Target(f"{tmp_path}/pipe", str(tmp_path / "pipe"))),
        FsErrorCode.FS_NOT_REGULAR_FILE,
        f'cannot read "{tmp_path}/pipe": not a regular file',
    )


def test_other_os_errors_name_the_reason_without_errno_or_filename(
    local: LocalFs, tmp_path: Path
) -> None:
    name = "n" * 300
    err = _fails(
        lambda: _read(local, local.resolve(name, str(tmp_path))),
        FsErrorCode.FS_IO_ERROR,
        f'cannot read "{tmp_path}/{name}": file name too long',
    )
    assert isinstance(err.cause, OSError)
    assert err.cause.errno == errno.ENAMETOOLONG


# -- publication ----------------------------------------------------------------------------


def test_write_through_a_symlink_keeps_the_link(local: LocalFs, tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old\n")
    (tmp_path / "link.txt").symlink_to("real.txt")
    local.write(local.resolve("link.txt", str(tmp_path)), "new\n", None)
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "new\n"


def test_update_keeps_the_permission_bits(local: LocalFs, tmp_path: Path) -> None:
    path = tmp_path / "script.sh"
    path.write_text("echo 1\n")
    path.chmod(0o751)
    target = local.resolve("script.sh", str(tmp_path))
    local.write(target, "echo 2\n", None)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o751
    local.edit(target, EditRequest("2", "3"), None)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o751


NOBODY: Final = 65534


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file another owner")
def test_an_update_by_root_keeps_the_owner_so_a_set_id_program_stays_its_owners(
    local: LocalFs, tmp_path: Path
) -> None:
    """As root, an update made another user's set-user-ID program root's, set-user-ID still."""
    path = tmp_path / "tool.sh"
    path.write_text("echo 1\n")
    os.chown(path, NOBODY, NOBODY)
    path.chmod(0o4755)
    target = local.resolve("tool.sh", str(tmp_path))
    local.write(target, "echo 2\n", None)
    after = os.stat(path)
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (NOBODY, NOBODY, 0o4755)
    local.edit(target, EditRequest("2", "3"), None)
    after = os.stat(path)
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (NOBODY, NOBODY, 0o4755)
    assert path.read_text() == "echo 3\n"


def test_an_update_that_may_not_keep_the_owner_is_published_as_its_own(
    local: LocalFs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not root: the owner cannot be given away, and the update goes on as this user's file."""
    path = tmp_path / "notes.txt"
    path.write_text("old\n")
    held = os.stat(path)
    asked: list[tuple[int, int]] = []
    real_fstat = os.fstat

    def fstat(fd: int) -> os.stat_result:  # the staged file looks another user's
        st = real_fstat(fd)
        if (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino):
            return st
        fields = list(st)
        fields[stat.ST_UID] = held.st_uid + 1
        return os.stat_result(fields)

    def fchown(fd: int, uid: int, gid: int) -> None:
        asked.append((uid, gid))
        raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "fstat", fstat)
    monkeypatch.setattr(os, "fchown", fchown)
    local.write(local.resolve("notes.txt", str(tmp_path)), "new\n", None)
    assert asked == [(held.st_uid, held.st_gid)]
    assert path.read_text() == "new\n"
    assert leftovers(tmp_path) == []


def test_create_applies_the_umask(local: LocalFs, tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        local.write(local.resolve("new.txt", str(tmp_path)), "x", CreateIfAbsent())
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new.txt").st_mode) == 0o640


def test_write_creates_missing_parents(local: LocalFs, tmp_path: Path) -> None:
    local.write(local.resolve("a/b/c.txt", str(tmp_path)), "deep\n", CreateIfAbsent())
    assert (tmp_path / "a" / "b" / "c.txt").read_text() == "deep\n"


def test_a_failed_write_removes_the_parents_it_created(
    local: LocalFs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*args: object, **where: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    _fails(
        lambda: local.write(local.resolve("a/b/c.txt", str(tmp_path)), "x", None),
        FsErrorCode.FS_IO_ERROR,
        f'cannot write "{tmp_path}/a/b/c.txt": no space left on device',
    )
    assert os.listdir(tmp_path) == []


def test_a_failed_write_removes_parents_deeper_than_path_max(
    local: LocalFs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Made one component at a time, so their absolute path may pass PATH_MAX (4096 on Linux):
    # they are removed the same way, each by name under its parent's descriptor.
    deep = "/".join(f"{i:02}" + "x" * 198 for i in range(24))
    assert len(os.fsencode(f"{tmp_path}/{deep}")) > os.pathconf("/", "PC_PATH_MAX")

    def full(*args: object, **where: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    _fails(
        lambda: local.write(local.resolve(f"{deep}/c.txt", str(tmp_path)), "x", None),
        FsErrorCode.FS_IO_ERROR,
        f'cannot write "{tmp_path}/{deep}/c.txt": no space left on device',
    )
    assert os.listdir(tmp_path) == []


def test_enospc_at_replace_leaves_the_original_intact(
    local: LocalFs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.txt"
    path.write_text("original\n")

    def full(*args: object, **where: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    err = _fails(
        lambda: local.write(local.resolve("a.txt", str(tmp_path)), "new\n", None),
        FsErrorCode.FS_IO_ERROR,
        f'cannot write "{tmp_path}/a.txt": no space left on device',
    )
    assert isinstance(err.cause, OSError)
    assert err.cause.errno == errno.ENOSPC
    assert path.read_text() == "original\n"
    assert leftovers(tmp_path) == []


def test_enospc_while_writing_the_temp_file_leaves_the_original_intact(
    fs: FakeFilesystem,
) -> None:
    fs.create_file("/w/a.txt", contents="original\n")
    fs.set_disk_usage(100)
    local = LocalFs()
    err = _fails(
        lambda: local.write(local.resolve("a.txt", "/w"), "x" * 500, None),
        FsErrorCode.FS_IO_ERROR,
        'cannot write "/w/a.txt": no space left on device',
    )
    assert isinstance(err.cause, OSError)
    with open("/w/a.txt") as source:
        assert source.read() == "original\n"
    assert os.listdir("/w") == ["a.txt"]


def test_permission_denied_for_a_read_only_file(fs: FakeFilesystem) -> None:
    fs.create_file("/w/ro.txt", contents="keep\n", st_mode=stat.S_IFREG | 0o444)
    fs.create_file("/w/secret.txt", contents="s\n", st_mode=stat.S_IFREG | 0o000)
    set_uid(1000)
    local = LocalFs()
    target = local.resolve("ro.txt", "/w")
    _fails(
        lambda: local.write(target, "x", None),
        FsErrorCode.FS_PERMISSION_DENIED,
        'cannot write "/w/ro.txt": permission denied',
    )
    _fails(
        lambda: local.edit(target, EditRequest("keep", "x"), None),
        FsErrorCode.FS_PERMISSION_DENIED,
        'cannot edit "/w/ro.txt": permission denied',
    )
    err = _fails(
        lambda: _read(local, local.resolve("secret.txt", "/w")),
        FsErrorCode.FS_PERMISSION_DENIED,
        'cannot read "/w/secret.txt": permission denied',
    )
    assert isinstance(err.cause, PermissionError)
    with open("/w/ro.txt") as source:
        assert source.read() == "keep\n"
    assert sorted(os.listdir("/w")) == ["ro.txt", "secret.txt"]


# -- concurrency ----------------------------------------------------------------------------


def _race(path: Path) -> list[str]:
    """Two sessions read one version, then write it from two threads at once."""
    path.write_text("base\n")
    sessions = [LocalFs(), LocalFs()]
    target = sessions[0].resolve(str(path), "/")
    seen = [_read(session, target)[1] for session in sessions]
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def write(index: int) -> None:
        barrier.wait()
        try:
            content = f"writer {index}\n" * 1000
            sessions[index].write(target, content, ReplaceIfVersion(seen[index]))
            outcomes.append("ok")
        except FsError as err:
            outcomes.append(err.code)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_two_sessions_writing_one_version_at_once_exactly_one_wins(tmp_path: Path) -> None:
    for round_ in range(20):
        path = tmp_path / f"shared{round_}.txt"
        assert sorted(_race(path)) == ["FS_STALE_VERSION", "ok"]
        assert path.read_text() in ("writer 0\n" * 1000, "writer 1\n" * 1000)
        assert leftovers(tmp_path) == []


def test_the_directory_lock_is_released_after_use(local: LocalFs, tmp_path: Path) -> None:
    local.write(local.resolve("a.txt", str(tmp_path)), "x", None)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # would raise if still held
    finally:
        os.close(fd)
