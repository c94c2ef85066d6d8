"""Changes the suite makes to a workspace between tool calls, as a person or program would, and
real faults made on real (small) filesystems.

Each change is chosen to be visible to a correct harness whatever the timestamp granularity:
``replace`` and ``recreate`` make a new inode with new content; ``same_size_rewrite`` changes
bytes in place and restores the mtime (only the ctime or the content hash can tell).

Faults come from the kernel, not from mocks: a tiny tmpfs fills up (``ENOSPC``), is remounted
read-only (``EROFS``), and an ext4 image whose backing file is cut short fails reads (``EIO``).
They need root and the right to mount; elsewhere the case is skipped with that reason.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

BACKDATED_NS: Final = 1_000_000_000 * 1_000_000_000  # 2001-09-09, long before any run


class Disk:
    """The workspace directory as the outside world sees it."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._unique = itertools.count(1)

    def path(self, relpath: str) -> Path:
        """Absolute path of ``relpath`` inside the workspace."""
        return self.root / relpath

    def display(self, relpath: str) -> str:
        """The display path a harness shows for ``relpath`` given relative to the root."""
        return os.path.normpath(os.path.join(self.root, relpath))

    def write(self, relpath: str, content: str | bytes) -> None:
        """Create or overwrite in place (parents created)."""
        path = self.path(relpath)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)

    def backdate(self, relpath: str) -> None:
        """Set the file's times far in the past.

        A write racing on this file then always leaves a different mtime, so a case about who
        wins a race does not also depend on whether a rewrite fell in the same timestamp tick
        (GRD-006 and GRD-007 judge that, on purpose).
        """
        os.utime(self.path(relpath), ns=(BACKDATED_NS, BACKDATED_NS))

    def replace(self, relpath: str, content: str | bytes) -> None:
        """Save the way many editors do: a new file renamed over the old one (a new inode)."""
        temp = self.path(f"{relpath}.suite-{next(self._unique)}")
        temp.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        os.replace(temp, self.path(relpath))

    def same_size_rewrite(self, relpath: str, content: str) -> None:
        """Rewrite in place with the same byte length, then restore the old mtime."""
        path = self.path(relpath)
        data = content.encode("utf-8")
        before = os.stat(path)
        if len(data) != before.st_size:
            raise ValueError(f"{relpath}: {len(data)} bytes do not match {before.st_size}")
        with open(path, "r+b") as out:
            out.write(data)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    def delete(self, relpath: str) -> None:
        """Remove the file."""
        self.path(relpath).unlink()

    def symlink(self, relpath: str, target: str | os.PathLike[str]) -> None:
        """Make ``relpath`` a symlink to ``target``."""
        self.path(relpath).symlink_to(target)

    def read(self, relpath: str) -> bytes:
        """The file's bytes."""
        return self.path(relpath).read_bytes()

    def exists(self, relpath: str) -> bool:
        """Whether anything is at ``relpath`` (a dangling symlink counts as nothing)."""
        return self.path(relpath).exists()


def permissions_enforced() -> bool:
    """Whether file permissions bind this process (root bypasses them; a user namespace not)."""
    with tempfile.TemporaryDirectory() as directory:
        probe = Path(directory) / "read-only"
        probe.write_text("x")
        probe.chmod(0o444)
        try:
            with open(probe, "a"):
                return False
        except PermissionError:
            return True


def _run(*command: str) -> str:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise OSError(f"{' '.join(command)}: {(done.stderr or done.stdout).strip()}")
    return done.stdout.strip()


def _cannot(what: str, exc: Exception) -> None:
    pytest.skip(f"cannot make {what} on this machine (needs root and the right to mount): {exc}")


@contextlib.contextmanager
def small_filesystem(mountpoint: Path, size_kb: int) -> Iterator[Path]:
    """A real tmpfs of ``size_kb`` KiB at ``mountpoint``: writing past it gives ENOSPC."""
    mountpoint.mkdir(parents=True, exist_ok=True)
    try:
        _run("mount", "-t", "tmpfs", "-o", f"size={size_kb}k,mode=0755", "tmpfs", str(mountpoint))
    except (OSError, FileNotFoundError) as exc:
        _cannot("a small filesystem", exc)
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True, check=False)


def remount_read_only(mountpoint: Path) -> None:
    """Make a mounted filesystem read-only: writes then fail with EROFS."""
    _run("mount", "-o", "remount,ro", str(mountpoint))


@contextlib.contextmanager
def failing_device(mountpoint: Path, files: dict[str, bytes]) -> Iterator[Path]:
    """An ext4 filesystem holding ``files`` whose device fails reads (EIO) from then on.

    The files are written and synced, the filesystem is unmounted, its backing image is cut
    short, and it is mounted again: reading the files' blocks (or the directory's) now fails
    with EIO from the block layer.
    """
    work = Path(tempfile.mkdtemp(prefix="conformance-eio-"))
    image = work / "disk.img"
    loop = ""
    mounted = False
    try:
        try:
            image.write_bytes(b"")
            os.truncate(image, 8 * 1024 * 1024)
            _run("mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-b", "1024", str(image))
            loop = _run("losetup", "-f", "--show", str(image))
            mountpoint.mkdir(parents=True, exist_ok=True)
            _run("mount", loop, str(mountpoint))
            mounted = True
            # The filler takes the blocks after the metadata, so the files land past 4 MiB.
            (mountpoint / ".filler").write_bytes(b"\0" * (4 * 1024 * 1024))
            for name, data in files.items():
                (mountpoint / name).write_bytes(data)
            _run("umount", str(mountpoint))
            mounted = False
            os.truncate(image, 3 * 1024 * 1024)  # the metadata stays; the files' blocks go
            _run("mount", "-o", "ro,errors=continue", loop, str(mountpoint))
            mounted = True
        except (OSError, FileNotFoundError) as exc:
            _cannot("a failing device", exc)
        yield mountpoint
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True, check=False)
        if loop:
            subprocess.run(["losetup", "-d", loop], capture_output=True, check=False)
        shutil.rmtree(work, ignore_errors=True)
