"""What changed on disk during one harness call: the workspace, what lies around it, and more.

Before and after every tool call the suite takes a snapshot of the directory a case owns (the
workspace root and its siblings) and of the harness child's working and temporary directories.
The difference is what the call did, whatever the harness says it did: a refusal must change
nothing, a success exactly its target, and nothing may appear outside the root it was given.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from conformance import display
from conformance.secrets import clean_cut_bytes

_PREVIEW_BYTES: Final = 48
_HEAD_BYTES: Final = _PREVIEW_BYTES + 8192
"""What a snapshot keeps of a file's start: the preview, and room for a secret that starts in
it to be seen whole (a private key block is a few kilobytes)."""
_CHUNK: Final = 1 << 20


@dataclass(frozen=True)
class Entry:
    """One thing at one path: a file (with a digest of its bytes), a directory, a link…"""

    kind: str
    mode: int
    size: int = 0
    digest: bytes = b""
    head: bytes = b""
    target: str = ""

    def same_content(self, other: Entry) -> bool:
        """Same kind and bytes (or link target); the mode is compared separately."""
        return (self.kind, self.digest, self.target) == (other.kind, other.digest, other.target)


@dataclass(frozen=True)
class Change:
    """One difference between two snapshots."""

    path: str
    before: Entry | None
    after: Entry | None

    def describe(self) -> str:
        """The change in words: ``"a.txt" overwritten (5 → 0 bytes)``."""
        # a harness's own temporary file is named by its shape, not by what it drew this run
        # (a secret in a name is named first: shaping would hide only its random-looking parts)
        quoted = display.quote(display.shaped(display.values(display.watched(self.path))))
        before, after = self.before, self.after
        if before is None and after is not None:
            if after.kind == "file":
                return f"{quoted} created ({_bytes(after)})"
            return f"{quoted} created (a {_kind_word(after.kind)})"
        if after is None:
            return f"{quoted} deleted"
        assert before is not None
        if before.kind != after.kind:
            return (
                f"{quoted} turned from a {_kind_word(before.kind)} into a {_kind_word(after.kind)}"
            )
        parts = []
        if not before.same_content(after):
            if after.kind == "link":
                parts.append(f"re-pointed to {display.show(after.target)}")
            else:
                parts.append(f"overwritten ({before.size} → {_bytes(after)})")
        if before.mode != after.mode:
            parts.append(f"mode {before.mode:o} → {after.mode:o}")
        return f"{quoted} " + ", ".join(parts)


def _bytes(entry: Entry) -> str:
    """``N bytes: "…"``: the size and the first ``_PREVIEW_BYTES`` of the content, named.

    A path of this run's directories a harness wrote into a file is named before the cut (cut
    first, an absolute path showed the run's random directory name, or not, by HOME's length).
    Only a window past the preview is named, cut where it would split a secret: what naming
    brings forward comes from the window, never from past a secret it cut off. The preview is
    then cut where it splits neither a secret nor a name (``<root>``, ``[REDACTED]``).
    Undecodable bytes pass through as they are and are shown as U+FFFD, one each.
    """
    if not entry.size:
        return "0 bytes"
    window = clean_cut_bytes(entry.head, _PREVIEW_BYTES + 2 * display.PLACES.longest())
    text = display.text_to_cut(window.decode("utf-8", errors="surrogateescape"))
    named = text.encode("utf-8", errors="surrogateescape")
    head = clean_cut_bytes(named, _PREVIEW_BYTES, display.PLACES.names())
    shown = display.show(head.decode("utf-8", errors="replace"))
    cut = len(named) > len(head) or entry.size > len(window)
    more = "…" if cut and not shown.endswith("…") else ""
    return f"{entry.size} bytes: {shown}{more}"


def _kind_word(kind: str) -> str:
    return {"file": "file", "dir": "directory", "link": "symlink"}.get(kind, "special file")


Snapshot = dict[str, Entry]


class Watch:
    """The directories one case watches, and how their paths are named in verdicts.

    Making one names its directories in every verdict from then on (``conformance.display``):
    the watched workspace is the case's.
    """

    def __init__(self, base: Path, root: Path, extra: Mapping[str, Path] | None = None) -> None:
        self.base = base
        self.root = root
        self.extra = dict(extra or {})
        self._root = os.fspath(root)
        display.PLACES.case(root, base)

    def name(self, path: Path | str, label: str | None = None) -> str:
        """A watched path as verdicts show it: relative to the root, or under a label."""
        spelled = os.fspath(path)
        if label is not None:
            return f"<{label}>/{os.path.relpath(spelled, self.extra[label])}"
        if spelled.startswith(self._root) and spelled[len(self._root) : len(self._root) + 1] == "/":
            return spelled[len(self._root) + 1 :]  # the common case, without relpath's work
        return os.path.relpath(spelled, self._root)

    def snapshot(self) -> Snapshot:
        """Everything under the watched directories, right now."""
        found: Snapshot = {}
        _walk(os.fspath(self.base), found, self.name)
        for label, directory in self.extra.items():
            _walk(os.fspath(directory), found, functools.partial(self.name, label=label))
        return found

    def inside(self, name: str) -> bool:
        """Whether a snapshot name lies inside the workspace root."""
        return not (name == ".." or name.startswith(("../", "<")))


def diff(before: Snapshot, after: Snapshot) -> list[Change]:
    """Every path whose entry differs, in the order their words sort.

    Not by path: two files a harness named at random read alike (``"….json" created``), and
    their random names would order them differently on every run.
    """
    changes = []
    for path in set(before) | set(after):
        old, new = before.get(path), after.get(path)
        if old is None or new is None or not old.same_content(new) or old.mode != new.mode:
            changes.append(Change(path, old, new))
    if len(changes) > 1:
        changes.sort(key=lambda change: (change.describe(), change.path))
    return changes


def _walk(directory: str, found: Snapshot, name_of: Callable[[str], str]) -> None:
    pending: list[str] = [directory]
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as listing:
                entries = list(listing)
        except OSError:
            continue
        for item in entries:
            try:
                entry = _entry(item.path)
            except OSError:
                continue
            found[name_of(item.path)] = entry
            if entry.kind == "dir":
                pending.append(item.path)


def _entry(path: str) -> Entry:
    st = os.lstat(path)
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return Entry("link", mode, target=os.readlink(path))
    if stat.S_ISDIR(st.st_mode):
        return Entry("dir", mode)
    if not stat.S_ISREG(st.st_mode):
        return Entry("other", mode)
    digest = hashlib.blake2b(digest_size=16)
    head = b""
    # O_NONBLOCK | O_NOFOLLOW: a FIFO or link swapped in meanwhile must not hang or mislead us.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        size = 0
        while chunk := os.read(fd, _CHUNK):
            if not head:
                head = chunk[:_HEAD_BYTES]
            digest.update(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return Entry("file", mode, size, digest.digest(), head)


def content_entry(content: bytes, mode: int | None = None) -> Entry:
    """The entry a file holding ``content`` would have (mode ``-1`` means "any")."""
    digest = hashlib.blake2b(content, digest_size=16).digest()
    return Entry("file", -1 if mode is None else mode, len(content), digest, content[:_HEAD_BYTES])


def describe_all(changes: Sequence[Change]) -> str:
    """Several changes in one phrase."""
    return " and ".join(change.describe() for change in changes)
