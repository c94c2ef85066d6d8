"""The local filesystem provider: the only code in the harness that calls ``os`` on user files.

A mutation (``write``, ``edit``) goes like this:

1. **Reach the directory without following symlinks.** The target's key is a realpath, resolved
   and fenced once. The provider walks it from ``/`` one component at a time with
   ``O_DIRECTORY | O_NOFOLLOW``, so a component swapped for a symlink since is refused
   (``FS_SANDBOX_DENIED``, "the path changed"), and checks that the directory it reached is the
   one seen at resolution. Everything after works relative to that directory's descriptor.
   A directory the walk creates is remembered by its parent's descriptor and its identity, so
   a failed mutation removes it there, never by a path that could lead elsewhere.
2. **Lock the directory** with ``flock``: the critical section excludes every other writer in
   this directory, threads and other processes alike (SPEC {fs.cas.processes}).
3. **Check**, in the spec's order: target missing → not a regular file → not writable →
   version → content (UTF-8, matching). A failed check touches nothing.
4. **Stage** the new bytes in an exclusive temp file named ``.<name>.<hex>.reference-tmp``,
   locked while staged (so a later sweep can tell a dead stager's file from a live one), written,
   given the replaced file's owner (where this process may) and permission bits, and fsynced.
5. **Commit** with ``rename`` (update) or ``link`` (create-if-absent: a competitor that appeared
   meanwhile is never clobbered). This is the commit point: from here on the call succeeds,
   and what fails afterwards (removing the temp name, syncing the directory, reading the new
   version) is logged (``logging.getLogger("reference.fs")``), never returned.

Temp files left by a process that died are swept the first time this process mutates their
directory: only names ``_temp_name`` made (their last hex digits check the rest), so a file of
the same shape that a model or another program made stays. Every ``OSError`` becomes an
``FsError`` here, once, with the ``OSError`` chained.

Racy observations (SPEC §3.2) keep the bytes a write or edit just published instead of hashing
them; the next check compares the file with them directly when its stat still matches. Only
files over ``RETAIN_MAX_BYTES`` and observations made by ``read`` keep a SHA-256 digest. A write
streams the file through one reused buffer for that comparison; an edit compares the bytes it
reads anyway.

Not covered: a directory that another program moves out of the workspace *after* this walk
(the file then lies where the directory went), hard links that make one file appear inside and
outside the fence, bind mounts, and network filesystems whose ``flock`` is local only.
"""

from __future__ import annotations

import codecs
import errno
import fcntl
import functools
import hashlib
import logging
import os
import re
import secrets
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, Final, NoReturn, Protocol

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
COMPARE_BYTES: Final = 1024 * 1024
BINARY_SNIFF_BYTES: Final = 8192
RACY_WINDOW_NS: Final = 2_000_000_000
RETAIN_MAX_BYTES: Final = 64 * 1024 * 1024
TEMP_SUFFIX: Final = ".reference-tmp"
TEMP_KEEP_BYTES: Final = 100  # of the target's name; with the rest, a temp name stays < 255 bytes
TEMP_NAME: Final = re.compile(r"\..*\.[0-9a-f]{12}" + re.escape(TEMP_SUFFIX))
"""The shape of a temp file's name; ``is_own_temp`` tells one ``_temp_name`` made from a
look-alike."""
_CHECK_HEX: Final = 6
PAUSE_POINTS: Final = ("checked", "staged", "waiting")
REALPATH_TRIES: Final = 8
_NO_LINKS: Final = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS})
_NO_DIR_FSYNC: Final = frozenset({errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EBADF})
_DIRECTORY: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ: Final = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
_CREATE: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC

log: Final = logging.getLogger("reference.fs")


class ProviderLog:
    """Where the provider reports what it cannot return: ``log``, each message redacted whole.

    A log line is failure text like any other, so a session's secrets never reach it (SPEC
    {secret.redact.everywhere}): the provider is given the session's redactor.
    """

    def __init__(self, redact: Callable[[str], str] = str) -> None:
        self._redact = redact

    def info(self, message: str, *args: object) -> None:
        """Log ``message % args`` at INFO, redacted."""
        self._log(logging.INFO, message, args)

    def warning(self, message: str, *args: object) -> None:
        """Log ``message % args`` at WARNING, redacted."""
        self._log(logging.WARNING, message, args)

    def _log(self, level: int, message: str, args: tuple[object, ...]) -> None:
        if log.isEnabledFor(level):
            # stacklevel: the record names the provider's line that logged, not this one.
            log.log(level, "%s", self._redact(message % args), stacklevel=3)


_UNREDACTED: Final = ProviderLog()

Parts = Sequence[bytes | memoryview]


class StatFn(Protocol):
    """``os.stat``'s signature; injectable so tests can simulate coarse timestamps."""

    def __call__(
        self, path: str | int, *, dir_fd: int | None = ..., follow_symlinks: bool = ...
    ) -> os.stat_result: ...


# Directories whose abandoned temp files this process has already swept, by (device, inode).
_SWEPT: Final[set[tuple[int, int]]] = set()
_SWEPT_LOCK: Final = threading.Lock()


@contextmanager
def _os_errors(op: str, path: str) -> Iterator[None]:
    """Translate any ``OSError`` raised inside into the provider's ``FsError`` for ``op``."""
    try:
        yield
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise fs_error("permission", op=op, p=path) from exc
        reason = os.strerror(exc.errno if exc.errno else errno.EIO).lower()
        raise fs_error("io", op=op, p=path, reason=reason) from exc


def _os_stat(
    path: str | int, *, dir_fd: int | None = None, follow_symlinks: bool = True
) -> os.stat_result:
    # Looked up on every call (not bound at import), so a patched ``os`` is honoured.
    return os.stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)


class LocalFs:
    """The ``FsProvider`` over the local disk.

    ``stat`` and ``clock`` are injectable so tests can simulate coarse timestamps. ``arm``
    installs a pause point for the next mutation (SPEC §6.4). ``redact`` scrubs the lines it
    logs of a session's secrets.
    """

    def __init__(
        self,
        *,
        max_read_bytes: int | None = None,
        stat: StatFn | None = None,
        clock: Callable[[], int] | None = None,
        redact: Callable[[str], str] = str,
    ) -> None:
        if max_read_bytes is not None and (
            not isinstance(max_read_bytes, int)
            or isinstance(max_read_bytes, bool)
            or max_read_bytes < 0
        ):
            raise ValueError(f"max_read_bytes must be a non-negative integer: {max_read_bytes!r}")
        self.max_read_bytes = max_read_bytes
        self._stat: StatFn = stat if stat is not None else _os_stat
        self._clock = clock if clock is not None else time.time_ns
        self._armed: dict[str, Callable[[], None]] = {}
        self._log = ProviderLog(redact)

    # -- resolution ---------------------------------------------------------------------------

    def resolve(self, path: str, cwd: str) -> Target:
        """Resolve lexically for display, and through symlinks (non-strictly) for the key."""
        if "\0" in path:
            # The tools refuse it before resolving (SPEC §4.2); a direct caller gets the same.
            raise ValueError("file_path must not contain NUL characters")
        display = os.path.normpath(os.path.join(cwd, path))
        if display.startswith("//"):  # POSIX normpath keeps exactly two; every segment counts
            display = display[1:]
        if any(0xD800 <= ord(c) <= 0xDFFF for c in display):
            shown = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in display)
            raise fs_error("path_unicode", p=shown)
        try:
            key = _realpath(display)
        except OSError as exc:
            reason = os.strerror(exc.errno if exc.errno else errno.EIO).lower()
            raise fs_error("io", op="resolve", p=display, reason=reason) from exc
        try:
            parent = self._stat(os.path.dirname(key))
        except NotADirectoryError as exc:
            raise fs_error("parent_not_dir", p=display) from exc
        except OSError:
            # Missing parents are created by write; anything else surfaces in the operation.
            return Target(display, key)
        if not stat.S_ISDIR(parent.st_mode):
            raise fs_error("parent_not_dir", p=display)
        return Target(display, key, (parent.st_dev, parent.st_ino))

    def authorize(self, target: Target, op: str) -> None:
        """The local disk has no fence of its own."""

    def arm(self, point: str, on_pause: Callable[[], None]) -> None:
        """Call ``on_pause`` when the next mutation reaches ``point`` (a ``PAUSE_POINTS`` one)."""
        if point not in PAUSE_POINTS:
            raise ValueError(f"unknown pause point {point!r}; expected one of {PAUSE_POINTS}")
        self._armed[point] = on_pause

    def disarm(self) -> None:
        """Forget every pause armed and not reached: the mutation it was for has ended."""
        self._armed.clear()

    def _pause(self, point: str) -> None:
        on_pause = self._armed.pop(point, None)
        if on_pause is not None:
            on_pause()

    # -- read ---------------------------------------------------------------------------------

    def read_text(self, target: Target, sink: TextSink) -> Version:
        """Stream strict UTF-8 text to ``sink`` in chunks; memory stays bounded by a chunk."""
        p = target.display_path
        with _os_errors("read", p):
            try:
                st = self._stat(target.key)
            except (FileNotFoundError, NotADirectoryError) as exc:
                raise fs_error("read_missing", p=p) from exc
            if not stat.S_ISREG(st.st_mode):
                raise fs_error("not_regular", op="read", p=p)
            if self.max_read_bytes is not None and st.st_size > self.max_read_bytes:
                raise fs_error("too_large", p=p, size=st.st_size, limit=self.max_read_bytes)
            fd = os.open(target.key, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            try:
                st = self._stat(fd)
                if not stat.S_ISREG(st.st_mode):  # a FIFO swapped in after the stat
                    raise fs_error("not_regular", op="read", p=p)
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
                    raise fs_error("invalid_utf8", op="read", p=p) from exc
            finally:
                os.close(fd)
            return Version(_stamp(st), None if hasher is None else hasher.hexdigest())

    # -- write --------------------------------------------------------------------------------

    def write(self, target: Target, content: str, intent: WriteIntent) -> WriteOutcome:
        """Publish ``content``, creating missing parent directories, if ``intent`` holds."""
        p, name = target.display_path, os.path.basename(target.key)
        try:
            with _os_errors("write", p):
                _refuse_the_root(name, "write", p)
                place = self._reach(target, "write", create=False)
                if place is None:  # a directory on the way is missing, so is the target
                    if isinstance(intent, ReplaceIfVersion):
                        raise fs_error("write_vanished", p=p)
                    _encode(content, "write", p)
                    place = self._reach(target, "write", create=True)
                    assert place is not None
                with place:
                    st = place.lstat(name)
                    if st is None:
                        if isinstance(intent, ReplaceIfVersion):
                            raise fs_error("write_vanished", p=p)
                    else:
                        place.check_writable_regular("write", name, st, p)
                        if isinstance(intent, CreateIfAbsent):
                            raise fs_error("exists_unread", p=p)
                        if isinstance(intent, ReplaceIfVersion) and not self._unchanged(
                            intent.version, st, lambda seen: place.holds(name, st, seen, p)
                        ):
                            raise fs_error("changed", op="write", p=p)
                    data = _encode(content, "write", p)
                    self._pause("checked")
                    exclusive = isinstance(intent, CreateIfAbsent)
                    parts = (data,)
                    version = self._publish(
                        place, name, target, parts, like=st, exclusive=exclusive
                    )
                    return WriteOutcome(version, created=st is None)
        finally:
            self._armed.clear()

    # -- edit ---------------------------------------------------------------------------------

    def edit(self, target: Target, request: EditRequest, intent: EditIntent) -> EditOutcome:
        """Replace text in the file if ``intent`` holds; matching runs after the version check.

        Matching works on the UTF-8 bytes: a well-formed needle can only match at character
        boundaries, so counts and replacements are exactly those of the decoded text.
        """
        p, name = target.display_path, os.path.basename(target.key)
        try:
            with _os_errors("edit", p):
                _refuse_the_root(name, "edit", p)
                place = self._reach(target, "edit", create=False)
                if place is None:
                    raise fs_error("changed", op="edit", p=p)
                with place:
                    st = place.lstat(name)
                    if st is None:
                        raise fs_error("changed", op="edit", p=p)
                    place.check_writable_regular("edit", name, st, p)
                    data, st = place.read(name, st, "edit", p)
                    if intent is not None and not self._unchanged(
                        intent.version, st, lambda seen: _holds(data, seen)
                    ):
                        raise fs_error("changed", op="edit", p=p)
                    not_text = _text_error(data, "edit", p)
                    if not_text is not None:
                        raise not_text
                    old, new = _encode(request.old, "edit", p), _encode(request.new, "edit", p)
                    parts, count = _replaced(data, old, new, request.replace_all, p)
                    self._pause("checked")
                    version = self._publish(place, name, target, parts, like=st, exclusive=False)
                    return EditOutcome(version, replacements=count)
        finally:
            self._armed.clear()

    # -- the steps of a mutation ----------------------------------------------------------------

    def _reach(self, target: Target, op: str, *, create: bool) -> _Place | None:
        """The key's directory, opened without following symlinks and locked; None if missing."""
        directory = os.path.dirname(target.key)
        p = target.display_path
        fd, created = _walk(directory, op, p, create=create)
        if fd is None:
            return None
        try:
            st = os.fstat(fd)
            if (
                target.parent is not None
                and not created
                and (st.st_dev, st.st_ino) != target.parent
            ):
                raise fs_error("redirected", op=op, p=p)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                # Another mutation holds the directory: say so (SPEC §6.4 ``waiting``), so a
                # suite racing the two can let that one finish instead of waiting out a bound.
                self._pause("waiting")
                fcntl.flock(fd, fcntl.LOCK_EX)
            place = _Place(fd, directory, created, self._stat, self._log)
            _sweep_once(place, (st.st_dev, st.st_ino))
            return place
        except BaseException:
            with suppress(OSError):  # the failure being raised is the one to report
                os.close(fd)
            _remove_made(created)
            raise

    def _is_racy(self, st: os.stat_result) -> bool:
        # Timestamps can tick coarser than a read-then-rewrite; within the window the stamp
        # alone cannot prove nothing changed, so the content is kept as well.
        return self._clock() - st.st_ctime_ns < RACY_WINDOW_NS

    def _unchanged(
        self, seen: Version, st: os.stat_result, holds: Callable[[Version], bool]
    ) -> bool:
        """Whether the file at ``st`` is still what ``seen`` observed.

        ``holds`` answers for a racy observation whether the file's bytes are still the ones
        it kept (or hashed).
        """
        if seen.stamp is not None and _stamp(st) != seen.stamp:
            return False
        if seen.racy:
            return holds(seen)
        return seen.stamp is not None

    def _publish(
        self,
        place: _Place,
        name: str,
        target: Target,
        parts: Parts,
        *,
        like: os.stat_result | None,
        exclusive: bool,
    ) -> Version:
        """Stage ``parts``, commit them, and return the version now published."""
        temp = _temp_name(name)
        opened: int | None = None  # until the exclusive create of ``temp`` has returned
        try:
            fd = published = opened = os.open(temp, _CREATE, 0o666, dir_fd=place.fd)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # "alive" for as long as it is staged
            _write_all(fd, parts)
            if like is not None:  # an update: the file it replaces
                _keep_owner(fd, like)
                os.fchmod(fd, stat.S_IMODE(like.st_mode))
            os.fsync(fd)
            self._pause("staged")
            if exclusive:
                published = self._link_new(place, temp, name, target, parts=parts, fd=fd)
            else:
                os.replace(temp, name, src_dir_fd=place.fd, dst_dir_fd=place.fd)
        except BaseException as exc:
            # A create that failed made nothing. One interrupted right after it returned (so
            # ``opened`` was never set) did make ``temp``: a random name, no one else's to lose.
            try:
                if opened is not None or not isinstance(exc, OSError):
                    _unlink_quietly(temp, place.fd)
            finally:
                if opened is not None:
                    os.close(opened)
            raise
        # The commit point: what fails from here on is logged, and the call still succeeds.
        after_commit = functools.partial(_after_commit, self._log, target.display_path)
        try:
            if exclusive:
                after_commit("remove the staged name", lambda: _unlink(temp, place.fd))
            after_commit("sync the directory", lambda: _fsync_dir(place.fd))
            st = after_commit("read the new version", lambda: self._stat(published))
        finally:
            # Closed also when an interruption propagates ({tool.base-exception}): the staged
            # descriptor holds its lock. close releases it even when it reports an error.
            if published != fd:
                after_commit("close the published file", lambda: os.close(published))
            after_commit("close the staged file", lambda: os.close(fd))
        return self._version_of(st, parts)

    def _version_of(self, st: os.stat_result | None, parts: Parts) -> Version:
        """The observation a mutation leaves: its stamp, and the bytes themselves when racy."""
        if st is not None and not self._is_racy(st):
            return Version(_stamp(st))
        stamp = None if st is None else _stamp(st)
        if sum(len(part) for part in parts) <= RETAIN_MAX_BYTES:
            return Version(stamp, content=tuple(parts))
        return Version(stamp, digest=_sha256(parts))

    def _link_new(
        self, place: _Place, temp: str, name: str, target: Target, *, parts: Parts, fd: int
    ) -> int:
        """Publish without ever clobbering; return the descriptor of the file published."""
        try:
            os.link(temp, name, src_dir_fd=place.fd, dst_dir_fd=place.fd, follow_symlinks=False)
        except FileExistsError as exc:
            self._lost_create_race(place, name, target, exc)
        except OSError as exc:
            if exc.errno not in _NO_LINKS:
                raise
            # The staged name goes after the commit, as after a link (see ``_publish``).
            return _create_exclusively(place, name, parts, target, self)
        return fd

    def _lost_create_race(
        self, place: _Place, name: str, target: Target, exc: FileExistsError
    ) -> NoReturn:
        # Someone created the file between our check and publication: ``exc`` says so.
        st = place.lstat(name)
        if st is not None and stat.S_ISREG(st.st_mode):
            raise fs_error("exists_unread", p=target.display_path) from exc
        raise fs_error("not_regular", op="write", p=target.display_path) from exc


class _Place:
    """A locked directory on the way to a target, and what the walk created to reach it."""

    def __init__(
        self,
        fd: int,
        path: str,
        created: list[_Made],
        stat_fn: StatFn,
        log: ProviderLog = _UNREDACTED,
    ) -> None:
        self.fd = fd
        self.path = path
        self.created = created
        self._stat = stat_fn
        self.log = log

    def __enter__(self) -> _Place:
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        try:
            os.close(self.fd)  # releases the lock
        except OSError as error:
            # The descriptor and its lock are released all the same. After success the content
            # is published (past the commit point); after a failure, that failure is the news.
            self.log.warning('could not close the directory "%s": %s', self.path, error)
        if kind is not None:  # the mutation failed: the parents it made go again
            _remove_made(self.created)
            return
        for made in self.created:
            if made.parent is None:
                continue
            try:
                os.close(made.parent)
            except OSError as error:  # past the commit point, like the directory's own
                self.log.warning('could not close the directory "%s": %s', made.where, error)

    def lstat(self, name: str) -> os.stat_result | None:
        """The entry ``name`` itself (a symlink is not followed), or None if there is none."""
        try:
            return self._stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def check_writable_regular(self, op: str, name: str, st: os.stat_result, p: str) -> None:
        """Not a regular file, or not writable, speaks before the version (SPEC §3.3)."""
        if stat.S_ISLNK(st.st_mode):  # the key was a realpath when resolved
            raise _loop_error(self.fd, name, op, p) or fs_error("redirected", op=op, p=p)
        if not stat.S_ISREG(st.st_mode):
            raise fs_error("not_regular", op=op, p=p)
        # Replacing would succeed (the directory is writable), but the user marked the file
        # read-only; honour that instead of silently swapping the inode.
        if not os.access(name, os.W_OK, dir_fd=self.fd):
            if os.fstatvfs(self.fd).f_flag & os.ST_RDONLY:
                cause = OSError(errno.EROFS, os.strerror(errno.EROFS))
                reason = os.strerror(errno.EROFS).lower()
                raise fs_error("io", op=op, p=p, reason=reason, cause=cause)
            raise fs_error("permission", op=op, p=p)

    def holds(self, name: str, seen: os.stat_result, version: Version, p: str) -> bool:
        """Whether the file ``seen`` still holds what a racy ``version`` kept, read in chunks.

        A write needs no copy of the old file, so none is made: the bytes stream through one
        reused buffer instead of a fresh allocation as large as the file.
        """
        fd = os.open(name, _READ, dir_fd=self.fd)
        try:
            st = self._stat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise fs_error("not_regular", op="write", p=p)
            if (st.st_dev, st.st_ino) != (seen.st_dev, seen.st_ino):
                return False
            return _stream_holds(fd, version)
        finally:
            os.close(fd)

    def read(
        self, name: str, seen: os.stat_result, op: str, p: str
    ) -> tuple[bytes, os.stat_result]:
        """The whole file, from the very inode ``seen``; never blocks on a FIFO swapped in."""
        fd = os.open(name, _READ, dir_fd=self.fd)
        try:
            st = self._stat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise fs_error("not_regular", op=op, p=p)
            if (st.st_dev, st.st_ino) != (seen.st_dev, seen.st_ino):
                raise fs_error("changed", op=op, p=p)
            return _read_all(fd, st.st_size), st
        finally:
            os.close(fd)


HELD_MADE: Final = 32
"""How many of the directories one walk makes keep a descriptor of their parent (``_Made``):
deeper ones are found again by name, so a deep new path holds no more descriptors than this."""


class _Made:
    """A directory the walk created: its name in a parent held open, and its (device, inode).

    A failed mutation removes it by that name under that descriptor, never by path: a path
    follows symlinks and is bounded by PATH_MAX, a descriptor is neither (SPEC
    {fs.publish.no-redirect}). So each is removed where it is now, even moved. Beyond the first
    ``HELD_MADE`` of a walk, ``parent`` is None: such a directory is found again by name under
    the one made before it, and stays where a move or a swap broke that chain.
    """

    def __init__(self, parent: int | None, where: str, name: str) -> None:
        self.parent = parent  # a descriptor of its own, closed when the mutation ends
        self.where = where  # the parent's path, for the log only
        self.name = name
        # None only between mkdir and the stat after it: whatever directory is there is ours.
        self.identity: tuple[int, int] | None = None

    def remove_if_still_there(self, parent: int) -> None:
        """Remove it from ``parent`` if the entry is still the very directory made, and empty."""
        st = os.stat(self.name, dir_fd=parent, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode) and self.identity in (None, (st.st_dev, st.st_ino)):
            # rmdir never follows a symlink in the name's place; the parent is pinned.
            os.rmdir(self.name, dir_fd=parent)

    def open_if_still_there(self, parent: int) -> int | None:
        """Open it under ``parent`` without following a symlink, if it is the very directory
        made; None if another is there now (OSError if nothing, or no directory, is)."""
        fd = os.open(self.name, _DIRECTORY, dir_fd=parent)
        st = os.fstat(fd)
        if self.identity in (None, (st.st_dev, st.st_ino)):
            return fd
        os.close(fd)
        return None


def _make(fd: int, current: str, part: str, created: list[_Made]) -> None:
    """Create the directory ``part`` under ``fd`` (``current``); record it if we made it."""
    made = _Made(os.dup(fd) if len(created) < HELD_MADE else None, current, part)
    # Recorded before mkdir, so an interruption right after mkdir returns still removes it.
    created.append(made)
    try:
        os.mkdir(part, 0o777, dir_fd=fd)
    except FileExistsError:
        created.remove(made)  # someone else made it; it is not ours to remove
        if made.parent is not None:
            os.close(made.parent)
        return
    st = os.stat(part, dir_fd=fd, follow_symlinks=False)
    made.identity = (st.st_dev, st.st_ino)


def _remove_made(created: list[_Made]) -> None:
    """After a failure: remove (innermost first) what the walk made, and close its parents."""
    held, deep = created[:HELD_MADE], created[HELD_MADE:]
    if deep:
        _remove_deep(held[-1], deep)
    for made in reversed(held):
        assert made.parent is not None
        with suppress(OSError):  # one moved away, refilled or gone stays as it is
            made.remove_if_still_there(made.parent)
        with suppress(OSError):  # the failure being raised is the one to report
            os.close(made.parent)


def _remove_deep(last_held: _Made, deep: list[_Made]) -> None:
    """Remove the made directories past ``last_held``, innermost first, each opened by name
    under the one made before it: as far as each is still the very directory made there."""
    assert last_held.parent is not None
    parents: list[int] = []  # parents[i] holds deep[i]
    try:
        with suppress(OSError):  # a link of the chain moved or swapped: the rest stays
            for made in [last_held, *deep[:-1]]:
                opened = made.open_if_still_there(parents[-1] if parents else last_held.parent)
                if opened is None:
                    break
                parents.append(opened)
        for made, parent in reversed(list(zip(deep, parents, strict=False))):
            with suppress(OSError):  # refilled or gone: it stays as it is
                made.remove_if_still_there(parent)
    finally:
        for fd in parents:
            with suppress(OSError):
                os.close(fd)


def _walk(directory: str, op: str, p: str, *, create: bool) -> tuple[int | None, list[_Made]]:
    """Open ``directory`` (absolute, a realpath) from ``/`` without following any symlink.

    Missing components are created when ``create`` is set; otherwise the walk answers None.
    A component that is (now) a symlink is a redirect; one that is a file, a bad parent.
    """
    fd = os.open("/", _DIRECTORY)
    created: list[_Made] = []
    current = "/"
    try:
        for part in directory.split("/"):
            if not part:
                continue
            child = _open_component(fd, part, current, created, op=op, p=p, create=create)
            if child is None:
                with suppress(OSError):
                    os.close(fd)
                return None, []
            # Hold the child before closing its parent: close releases the descriptor even when
            # it reports an error, so the one left to clean up is always ``fd``.
            previous, fd = fd, child
            os.close(previous)
            current = os.path.join(current, part)
    except BaseException:
        with suppress(OSError):  # the failure being raised is the one to report
            os.close(fd)
        _remove_made(created)
        raise
    return fd, created


def _open_component(
    fd: int, part: str, current: str, created: list[_Made], *, op: str, p: str, create: bool
) -> int | None:
    """Open one component under ``fd`` without following it; None if missing and not created."""
    try:
        try:
            return os.open(part, _DIRECTORY, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                return None
            _make(fd, current, part, created)
            # Inside the outer ``try``: whatever took the name meanwhile is judged like the rest.
            return os.open(part, _DIRECTORY, dir_fd=fd)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        error = _not_a_directory(fd, part, op, p, exc)
        raise error from error.__cause__  # ``exc``, or for a loop the ELOOP behind it


def _not_a_directory(fd: int, part: str, op: str, p: str, exc: OSError) -> FsError:
    """Why ``part`` could not be opened as a directory: redirected, a loop, or a file in the way.

    The answer chains its cause: ``exc``, or for a loop the ELOOP of following the link.
    """
    # O_NOFOLLOW refused a symlink (ELOOP; ENOTDIR when O_DIRECTORY is checked first, as on
    # Linux). Look again without following: only a file there now is a bad parent. A symlink
    # that loops is a loop; any other symlink, a directory again, or nothing at all means the
    # path changed under the walk.
    try:
        st = os.stat(part, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return fs_error("redirected", op=op, p=p, cause=exc)
    loop = _loop_error(fd, part, op, p) if stat.S_ISLNK(st.st_mode) else None
    if loop is not None:
        return loop
    if exc.errno == errno.ELOOP or stat.S_ISLNK(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return fs_error("redirected", op=op, p=p, cause=exc)
    return fs_error("parent_not_dir", p=p, cause=exc)


def _loop_error(fd: int, name: str, op: str, p: str) -> FsError | None:
    """Read's answer for the symlink at ``name`` if it cannot be resolved (ELOOP); else None.

    A realpath resolves every symlink it can, so the only one a key keeps is one that loops.
    Any other symlink found where the key has none appeared after resolution: a redirect.
    """
    try:
        os.stat(name, dir_fd=fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return fs_error("io", op=op, p=p, reason=os.strerror(exc.errno).lower(), cause=exc)
    return None


def _sweep_once(place: _Place, identity: tuple[int, int]) -> None:
    """Remove temp files a dead process left in this directory (once per directory)."""
    with _SWEPT_LOCK:
        if identity in _SWEPT:
            return
        _SWEPT.add(identity)
    try:
        names = [n for n in os.listdir(place.fd) if is_own_temp(n)]
    except OSError:
        return
    for name in names:
        _remove_if_abandoned(place, name)


def _remove_if_abandoned(place: _Place, name: str) -> None:
    try:
        fd = os.open(name, _READ, dir_fd=place.fd)
    except OSError:
        return  # gone already, or not a plain file of ours
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # its stager is alive
        held, now = os.fstat(fd), os.stat(name, dir_fd=place.fd, follow_symlinks=False)
        if (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino):
            os.unlink(name, dir_fd=place.fd)
            place.log.info("removed %s, abandoned by a process that died while staging it", name)
    except OSError as exc:
        place.log.warning("could not sweep %s: %s", name, exc)
    finally:
        with suppress(OSError):  # housekeeping: a sweep never fails the mutation it serves
            os.close(fd)


def _create_exclusively(place: _Place, name: str, parts: Parts, target: Target, fs: LocalFs) -> int:
    """Fallback where hard links are unsupported: never clobbers, but is not atomic."""
    opened: int | None = None  # until the exclusive create has returned
    try:
        fd = opened = os.open(name, _CREATE, 0o666, dir_fd=place.fd)
        _write_all(fd, parts)
        os.fsync(fd)
    except BaseException as exc:
        if opened is not None:
            os.close(opened)
            _unlink_quietly(name, place.fd)
        elif isinstance(exc, FileExistsError):
            fs._lost_create_race(place, name, target, exc)
        elif not isinstance(exc, OSError):
            # Interrupted right after the create returned: the empty file there is ours. (This
            # name is not random: a file with bytes in it can only be someone else's. So can an
            # empty one, made in the instant before an interruption that came before the
            # create: rarer than one after it, which would leave a file the write never made.)
            _unlink_if_empty(name, place.fd)
        raise
    return fd


def _after_commit(provider_log: ProviderLog, path: str, what: str, step: Callable[[], Any]) -> Any:
    """Run a step after the commit point: a failure is logged, never raised."""
    try:
        return step()
    except OSError as exc:
        provider_log.warning('after publishing "%s": could not %s: %s', path, what, exc)
        return None


def _refuse_the_root(name: str, op: str, p: str) -> None:
    """``/`` is a directory like any other, but has no name in a parent to look it up by."""
    if not name:  # a realpath ends in a name unless it is "/" itself
        raise fs_error("not_regular", op=op, p=p)


def _realpath(path: str) -> str:
    """``os.path.realpath``, looked at again when a symlink on the way changes under it."""
    # Python 3.11's non-strict realpath still raises when a component that lstat saw as a
    # symlink is something else by the time readlink reads it (EINVAL) or is gone (ENOENT).
    # The change is transient: another look sees a settled path, which the fence then judges
    # and the walk re-checks. Only a path that keeps changing gives up.
    for _ in range(REALPATH_TRIES - 1):
        with suppress(OSError):
            return os.path.realpath(path)
    return os.path.realpath(path)


def _keep_owner(fd: int, like: os.stat_result) -> None:
    """Give the staged file the owner and group of the file it replaces, where this process may.

    Root may: without it, an update by root made another user's file root's, and with its
    permission bits kept (SPEC {fs.publish.mode}) a set-user-ID program became root's. Set
    before the mode, since changing the owner clears the set-ID bits. Where the process may
    not, the file is its own, as a new file would be: its set-ID bits then name no one else.
    """
    held = os.fstat(fd)
    if (held.st_uid, held.st_gid) != (like.st_uid, like.st_gid):
        # Best effort: EPERM where the process may not, EINVAL for an owner a user namespace
        # does not map, ENOSYS or EOPNOTSUPP where the filesystem has no owners to give.
        with suppress(OSError):
            os.fchown(fd, like.st_uid, like.st_gid)


def _temp_name(name: str) -> str:
    """``.<name>.<6 random hex><6 check hex>.reference-tmp``, the name cut to
    ``TEMP_KEEP_BYTES`` bytes.

    Cut in bytes, not characters (NAME_MAX counts bytes), and never inside a UTF-8 sequence,
    so the temp name of every valid name is a valid name too. The check digits are what
    ``is_own_temp`` looks for.
    """
    encoded = os.fsencode(name)
    end = min(len(encoded), TEMP_KEEP_BYTES)
    while end < len(encoded) and encoded[end] & 0xC0 == 0x80:  # a continuation byte
        end -= 1
    stem = f".{os.fsdecode(encoded[:end])}.{secrets.token_hex((12 - _CHECK_HEX) // 2)}"
    return f"{stem}{_check(stem)}{TEMP_SUFFIX}"


def _check(stem: str) -> str:
    return hashlib.sha256(os.fsencode(stem)).hexdigest()[:_CHECK_HEX]


def is_own_temp(name: str) -> bool:
    """Whether ``name`` is one ``_temp_name`` made, not merely one of its shape.

    A file a model wrote, or another program made, under a name of that shape is not the
    sweep's to remove (SPEC {fs.publish.temp-names}): by chance its check digits match one
    time in sixteen million. A name forged on purpose passes, and is removed only when no
    one holds its lock, as any abandoned temp file. A temp file named before names carried
    check digits cannot be told from a look-alike, so it is no longer swept.
    """
    if not TEMP_NAME.fullmatch(name):
        return False
    digits = len(name) - len(TEMP_SUFFIX)
    return _check(name[: digits - _CHECK_HEX]) == name[digits - _CHECK_HEX : digits]


def _stamp(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def _encode(text: str, op: str, path: str) -> bytes:
    try:
        return text.encode("utf-8", errors="strict")
    except UnicodeEncodeError as exc:
        raise fs_error("invalid_utf8", op=op, p=path) from exc


def _same_bytes(parts: Parts, data: bytes) -> bool:
    """Whether ``data`` is exactly the concatenation of ``parts`` (no copy is made)."""
    position = 0
    for part in parts:
        # ``startswith`` compares in place with memcmp; comparing memoryviews goes item by
        # item, some 25 times slower, which made a racy rewrite of a large file cost double.
        if not data.startswith(part, position):
            return False
        position += len(part)
    return position == len(data)


def _holds(data: bytes, seen: Version) -> bool:
    """Whether ``data`` is the content a racy ``seen`` kept: the very bytes, or their digest."""
    if seen.content is not None:
        return _same_bytes(seen.content, data)
    return hashlib.sha256(data).hexdigest() == seen.digest


_THREAD: Final = threading.local()


def _compare_buffer() -> bytearray:
    """This thread's read buffer for comparisons, made once.

    A fresh megabyte per check is zero pages the kernel maps in on first touch; that alone
    cost a racy 1 MB rewrite a few per cent of its time.
    """
    buffer: bytearray | None = getattr(_THREAD, "compare", None)
    if buffer is None:
        buffer = _THREAD.compare = bytearray(COMPARE_BYTES)
    return buffer


def _stream_holds(fd: int, seen: Version) -> bool:
    """``_holds`` for the rest of ``fd``, read through one reused buffer."""
    buffer = _compare_buffer()
    hasher = hashlib.sha256() if seen.content is None else None
    parts = [memoryview(part) for part in seen.content or ()]
    index = offset = 0  # where in ``parts`` the next byte read must match
    while read := os.readv(fd, [buffer]):
        if hasher is not None:
            hasher.update(memoryview(buffer)[:read])
            continue
        done = 0
        while done < read:
            if index == len(parts):
                return False  # the file is longer
            part = parts[index]
            take = min(read - done, len(part) - offset)
            # ``startswith`` over [done, done + take) compares in place (memcmp).
            if not buffer.startswith(part[offset : offset + take], done, done + take):
                return False
            done, offset = done + take, offset + take
            if offset == len(part):
                index, offset = index + 1, 0
    if hasher is not None:
        return hasher.hexdigest() == seen.digest
    return sum(len(part) for part in parts[index:]) == offset  # nothing left unmatched


def _read_at_least(fd: int, size: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    while total < size:
        chunk = os.read(fd, CHUNK_BYTES)
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return b"".join(parts)


def _read_all(fd: int, size_hint: int) -> bytes:
    # One read of the size the stat promised (plus one byte to see the end) is usually all;
    # ``join`` hands a lone part back as it is, without a copy.
    parts = [os.read(fd, size_hint + 1)]
    while chunk := os.read(fd, CHUNK_BYTES * 16):
        parts.append(chunk)
    return b"".join(parts)


def _sha256(parts: Parts) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part)
    return hasher.hexdigest()


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


def _unlink(name: str, dir_fd: int) -> None:
    os.unlink(name, dir_fd=dir_fd)


def _unlink_quietly(name: str, dir_fd: int) -> None:
    with suppress(FileNotFoundError):
        os.unlink(name, dir_fd=dir_fd)


def _unlink_if_empty(name: str, dir_fd: int) -> None:
    with suppress(OSError):
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISREG(st.st_mode) and st.st_size == 0:
            os.unlink(name, dir_fd=dir_fd)


def _fsync_dir(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in _NO_DIR_FSYNC:
            raise


__all__ = ["FsError", "LocalFs"]
