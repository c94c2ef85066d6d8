"""The local filesystem provider: the only code in the harness that calls ``os`` on user files.

Guarantees, all inside one per-key critical section:

* a mutation checks, in order: target missing → not a regular file → writable → version →
  content (UTF-8, matching); a failed check touches nothing;
* publication is atomic and in two phases: *stage* the new bytes in an exclusive temp file
  beside the target (written, fsynced), then *commit* with ``os.replace`` (update) or
  ``os.link`` (create-if-absent, so a file that appeared after the check is never clobbered);
  the temp file never outlives the call;
* the racy rule's hashing (see ``_is_racy``) runs on a worker thread beside the encoding and
  I/O it would otherwise follow, so guarding a large file costs little; every verdict is still
  given in the order above;
* every ``OSError`` becomes an ``FsError`` here, once, with the ``OSError`` chained as cause.

Locks are per process: two processes writing one file are still caught by the version check,
but not serialized.
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import os
import secrets
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from typing import Final, NoReturn

from reference.fs.types import (
    CreateIfAbsent,
    EditIntent,
    EditOutcome,
    EditRequest,
    FsError,
    ReplaceIfVersion,
    Target,
    TextSink,
    Version,
    WriteIntent,
    WriteOutcome,
    fs_error,
)

CHUNK_BYTES: Final = 64 * 1024
BINARY_SNIFF_BYTES: Final = 8192
RACY_WINDOW_NS: Final = 2_000_000_000
_NO_LINKS: Final = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS})
_NO_DIR_FSYNC: Final = frozenset({errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EBADF})

StatFn = Callable[[str | int], os.stat_result]
Parts = Sequence[bytes | memoryview]

# hashlib releases the GIL, so a digest computed here overlaps the caller's own work.
_DIGESTS: Final = ThreadPoolExecutor(max_workers=2, thread_name_prefix="reference-fs-digest")


class _KeyLocks:
    """One lock per target key, dropped again when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, tuple[threading.Lock, int]] = {}

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.get(key, (threading.Lock(), 0))
            self._locks[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._guard:
                lock, users = self._locks[key]
                if users == 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, users - 1)


# Module-wide so that two sessions (two providers) in one process serialize on the same file.
_LOCKS: Final = _KeyLocks()


@contextmanager
def _os_errors(op: str, path: str) -> Iterator[None]:
    """Translate any ``OSError`` raised inside into the provider's ``FsError`` for ``op``."""
    try:
        yield
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise fs_error("permission", op=op, p=path, cause=exc) from exc
        reason = os.strerror(exc.errno if exc.errno else errno.EIO).lower()
        raise fs_error("io", op=op, p=path, reason=reason, cause=exc) from exc


class LocalFs:
    """The ``FsProvider`` over the local disk.

    ``stat`` and ``clock`` are injectable so tests can simulate coarse timestamps; ``stat`` is
    called with a path or an open descriptor, like ``os.stat``.
    """

    def __init__(
        self,
        *,
        max_read_bytes: int | None = None,
        stat: StatFn | None = None,
        clock: Callable[[], int] | None = None,
    ) -> None:
        if max_read_bytes is not None and (
            not isinstance(max_read_bytes, int)
            or isinstance(max_read_bytes, bool)
            or max_read_bytes < 0
        ):
            raise ValueError(f"max_read_bytes must be a non-negative integer: {max_read_bytes!r}")
        self.max_read_bytes = max_read_bytes
        self._stat: StatFn = stat if stat is not None else _os_stat
        self._clock = clock if clock is not None else _now_ns

    # -- resolution ---------------------------------------------------------------------------

    def resolve(self, path: str, cwd: str) -> Target:
        """Resolve lexically for display, and through symlinks (non-strictly) for the key."""
        display = os.path.normpath(os.path.join(cwd, path))
        if "\0" in display:
            raise fs_error("nul_in_path", p=display)
        key = os.path.realpath(display)
        try:
            parent = self._stat(os.path.dirname(key))
        except NotADirectoryError as exc:
            raise fs_error("parent_not_dir", p=display, cause=exc) from exc
        except OSError:
            # Missing parents are created by write; anything else surfaces in the operation.
            return Target(display, key)
        if not stat.S_ISDIR(parent.st_mode):
            raise fs_error("parent_not_dir", p=display)
        return Target(display, key)

    def authorize(self, target: Target, op: str) -> None:
        """The local disk has no fence of its own."""

    # -- read ---------------------------------------------------------------------------------

    def read_text(self, target: Target, sink: TextSink) -> Version:
        """Stream strict UTF-8 text to ``sink`` in chunks; memory stays bounded by a chunk."""
        p = target.display_path
        with _os_errors("read", p):
            st = self._existing(target)
            if st is None:
                raise fs_error("read_missing", p=p)
            if not stat.S_ISREG(st.st_mode):
                raise fs_error("not_regular", op="read", p=p)
            if self.max_read_bytes is not None and st.st_size > self.max_read_bytes:
                raise fs_error("too_large", p=p, size=st.st_size, limit=self.max_read_bytes)
            with self._open_regular("read", target) as (fd, st):
                hasher = hashlib.sha256() if self._is_racy(st) else None
                head = _read_at_least(fd, BINARY_SNIFF_BYTES)
                if b"\0" in head[:BINARY_SNIFF_BYTES]:
                    raise fs_error("binary", op="read", p=p)
                decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
                chunk = head
                try:
                    while chunk:
                        if hasher is not None:
                            hasher.update(chunk)
                        sink(decoder.decode(chunk))
                        chunk = os.read(fd, CHUNK_BYTES)
                    sink(decoder.decode(b"", final=True))
                except UnicodeDecodeError as exc:
                    raise fs_error("invalid_utf8", op="read", p=p, cause=exc) from exc
                return Version(_stamp(st), None if hasher is None else hasher.hexdigest())

    # -- write --------------------------------------------------------------------------------

    def write(self, target: Target, content: str, intent: WriteIntent) -> WriteOutcome:
        """Publish ``content``, creating missing parent directories, if ``intent`` holds."""
        p, key = target.display_path, target.key
        with _LOCKS.hold(key), _os_errors("write", p):
            st = self._existing(target)
            verdict = _Verdict("write", p)
            if st is None:
                if isinstance(intent, ReplaceIfVersion):
                    raise fs_error("write_vanished", p=p)
            else:
                self._check_writable_regular("write", target, st)
                if isinstance(intent, CreateIfAbsent):
                    raise fs_error("exists_unread", p=p)
                if isinstance(intent, ReplaceIfVersion):
                    verdict.compare(intent.version, st, lambda: _file_sha256(key))
            try:
                data = content.encode("utf-8")
            except UnicodeEncodeError as exc:
                verdict.give()
                raise fs_error("invalid_utf8", op="write", p=p, cause=exc) from exc
            created_dirs = _make_parents(os.path.dirname(key)) if st is None else []
            try:
                mode = None if st is None else stat.S_IMODE(st.st_mode)
                exclusive = isinstance(intent, CreateIfAbsent)
                digest = self._publish(target, (data,), mode, exclusive, verdict)
            except BaseException:
                _remove_dirs(created_dirs)
                raise
            return WriteOutcome(self._version_after(key, digest), created=st is None)

    # -- edit ---------------------------------------------------------------------------------

    def edit(self, target: Target, request: EditRequest, intent: EditIntent) -> EditOutcome:
        """Replace text in the file if ``intent`` holds; matching runs after the version check.

        Matching works on the UTF-8 bytes: a well-formed needle can only match at character
        boundaries, so counts and replacements are exactly those of the decoded text.
        """
        p, key = target.display_path, target.key
        with _LOCKS.hold(key), _os_errors("edit", p):
            st = self._existing(target)
            if st is None:
                raise fs_error("changed", op="edit", p=p)
            self._check_writable_regular("edit", target, st)
            with self._open_regular("edit", target) as (fd, st):
                data = _read_all(fd, st.st_size)
            verdict = _Verdict("edit", p)
            if intent is not None:
                verdict.compare(intent.version, st, lambda: _sha256((data,)))
            not_text = _text_error(data, "edit", p)
            verdict.give()
            if not_text is not None:
                raise not_text
            old, new = _encode(request.old, "edit", p), _encode(request.new, "edit", p)
            parts, count = _replaced(data, old, new, request.replace_all, p)
            digest = self._publish(target, parts, stat.S_IMODE(st.st_mode), False, verdict)
            return EditOutcome(self._version_after(key, digest), replacements=count)

    # -- helpers ------------------------------------------------------------------------------

    def _existing(self, target: Target) -> os.stat_result | None:
        try:
            return self._stat(target.key)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def _check_writable_regular(self, op: str, target: Target, st: os.stat_result) -> None:
        if not stat.S_ISREG(st.st_mode):
            raise fs_error("not_regular", op=op, p=target.display_path)
        # Replacing would succeed (the directory is writable), but the user marked the file
        # read-only; honour that instead of silently swapping the inode.
        if not os.access(target.key, os.W_OK):
            raise fs_error("permission", op=op, p=target.display_path)

    @contextmanager
    def _open_regular(self, op: str, target: Target) -> Iterator[tuple[int, os.stat_result]]:
        """Open a file the caller already stat'ed as regular, and confirm it still is."""
        p = target.display_path
        # O_NONBLOCK: a FIFO swapped in after the caller's stat must not hang the open.
        fd = os.open(target.key, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            st = self._stat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise fs_error("not_regular", op=op, p=p)
            yield fd, st
        finally:
            os.close(fd)

    def _is_racy(self, st: os.stat_result) -> bool:
        # Timestamps can tick coarser than a read-then-rewrite; within the window the stamp
        # alone cannot prove nothing changed, so the content hash is kept as well.
        return self._clock() - st.st_ctime_ns < RACY_WINDOW_NS

    def _version_after(self, key: str, digest: Future[str]) -> Version:
        st = self._stat(key)
        return Version(_stamp(st), digest.result() if self._is_racy(st) else None)

    def _publish(
        self, target: Target, parts: Parts, mode: int | None, exclusive: bool, verdict: _Verdict
    ) -> Future[str]:
        """Stage ``parts``, take the version verdict, commit; return the new content's digest."""
        key = target.key
        digest = _DIGESTS.submit(_sha256, parts)
        directory = os.path.dirname(key)
        temp = os.path.join(directory, f".{os.path.basename(key)[:200]}.{secrets.token_hex(6)}.tmp")
        try:
            self._stage(temp, parts, mode)
            verdict.give()
            if exclusive:
                self._link_new(target, temp, parts)
            else:
                os.replace(temp, key)
        finally:
            _unlink_quietly(temp)
        _fsync_dir(directory)
        return digest

    def _stage(self, temp: str, parts: Parts, mode: int | None) -> None:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        try:
            _write_all(fd, parts)
            if mode is not None:
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)

    def _link_new(self, target: Target, temp: str, parts: Parts) -> None:
        try:
            os.link(temp, target.key)
        except FileExistsError:
            self._lost_create_race(target)
        except OSError as exc:
            if exc.errno not in _NO_LINKS:
                raise
            self._create_exclusively(target, parts)

    def _create_exclusively(self, target: Target, parts: Parts) -> None:
        """Fallback where hard links are unsupported: never clobbers, but is not atomic."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        try:
            fd = os.open(target.key, flags, 0o666)
        except FileExistsError:
            self._lost_create_race(target)
        try:
            _write_all(fd, parts)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            _unlink_quietly(target.key)
            raise
        os.close(fd)

    def _lost_create_race(self, target: Target) -> NoReturn:
        # Someone created the file between our check and publication.
        st = self._stat(target.key)
        if stat.S_ISREG(st.st_mode):
            raise fs_error("exists_unread", p=target.display_path)
        raise fs_error("not_regular", op="write", p=target.display_path)


def _os_stat(path: str | int) -> os.stat_result:
    # Looked up on every call (not bound at import), so a patched ``os`` is honoured.
    return os.stat(path)


def _now_ns() -> int:
    return time.time_ns()


def _stamp(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def _encode(text: str, op: str, path: str) -> bytes:
    try:
        return text.encode("utf-8", errors="strict")
    except UnicodeEncodeError as exc:
        raise fs_error("invalid_utf8", op=op, p=path, cause=exc) from exc


def _read_at_least(fd: int, size: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    while total < size:
        chunk = os.read(fd, max(size - total, CHUNK_BYTES))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return b"".join(parts)


def _read_all(fd: int, size_hint: int) -> bytes:
    # One read of the size the stat promised (plus one byte to see the end) avoids a join.
    data = os.read(fd, size_hint + 1)
    parts = [data]
    while chunk := os.read(fd, CHUNK_BYTES * 16):
        parts.append(chunk)
    return data if len(parts) == 1 else b"".join(parts)


def _sha256(parts: Parts) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part)
    return hasher.hexdigest()


def _file_sha256(key: str) -> str:
    fd = os.open(key, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as source:
        return hashlib.file_digest(source, "sha256").hexdigest()


def _text_error(data: bytes, op: str, path: str) -> FsError | None:
    """The ``FS_NOT_TEXT`` error ``data`` deserves, if any."""
    if b"\0" in data:
        return fs_error("binary", op=op, p=path)
    try:
        data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        return fs_error("invalid_utf8", op=op, p=path, cause=exc)
    return None


def _write_all(fd: int, parts: Parts) -> None:
    for part in parts:
        view = memoryview(part)
        while view:
            view = view[os.write(fd, view) :]


def _replaced(
    data: bytes, old: bytes, new: bytes, replace_all: bool, path: str
) -> tuple[Parts, int]:
    """The new content (as parts) and the number of replacements; raises for 0 or ambiguous."""
    first = data.find(old)
    if first < 0:
        raise fs_error("edit_not_found", p=path)
    if replace_all:
        return (data.replace(old, new),), data.count(old)
    if data.find(old, first + len(old)) >= 0:
        raise fs_error("edit_ambiguous", p=path, n=data.count(old))
    # Three slices of the original: no copy of the whole file is made.
    view = memoryview(data)
    return (view[:first], new, view[first + len(old) :]), 1


class _Verdict:
    """A version check whose content hash may still be computing; ``give`` waits and rules.

    The stamp comparison is immediate. When the observation was racy and the stamp matches,
    only the content hash can tell, and it is computed in the background while the caller gets
    on with work that is safe to throw away (encoding, staging a temp file).
    """

    def __init__(self, op: str, path: str) -> None:
        self._op, self._path = op, path
        self._pending: Future[str] | None = None
        self._expected: str | None = None

    def compare(self, version: Version, st: os.stat_result, digest: Callable[[], str]) -> None:
        if _stamp(st) != version.stamp:
            raise fs_error("changed", op=self._op, p=self._path)
        if version.sha256 is not None:
            self._expected = version.sha256
            self._pending = _DIGESTS.submit(digest)

    def give(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None and pending.result() != self._expected:
            raise fs_error("changed", op=self._op, p=self._path)


def _make_parents(directory: str) -> list[str]:
    """Create missing directories down to ``directory``; return those made, outermost first."""
    missing: list[str] = []
    current = directory
    while not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    created: list[str] = []
    try:
        for path in reversed(missing):
            try:
                os.mkdir(path)
            except FileExistsError:
                continue  # a concurrent writer made it; it is not ours to remove
            created.append(path)
    except BaseException:
        _remove_dirs(created)
        raise
    return created


def _remove_dirs(created: list[str]) -> None:
    for path in reversed(created):
        try:
            os.rmdir(path)
        except OSError:
            return


def _unlink_quietly(path: str) -> None:
    with suppress(FileNotFoundError):
        os.unlink(path)


def _fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in _NO_DIR_FSYNC:
            raise
    finally:
        os.close(fd)


__all__ = ["FsError", "LocalFs"]
