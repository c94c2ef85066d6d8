"""Changes the suite makes to a workspace between tool calls, as a person or program would.

Each one is chosen to be visible to a correct harness whatever the timestamp granularity:
``replace`` and ``recreate`` make a new inode with new content; ``same_size_rewrite`` changes
bytes in place and restores the mtime (only the ctime or the content hash can tell).
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path


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

    def replace(self, relpath: str, content: str) -> None:
        """Save the way many editors do: a new file renamed over the old one (a new inode)."""
        temp = self.path(f"{relpath}.suite-{next(self._unique)}")
        temp.write_bytes(content.encode("utf-8"))
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

    def leftovers(self) -> list[str]:
        """Files anywhere under the root that are neither expected content nor ours: temp files."""
        found = []
        for directory, _, files in os.walk(self.root):
            found += [os.path.join(directory, f) for f in files if f.endswith(".tmp")]
        return sorted(found)
