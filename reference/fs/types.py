"""Values that cross the filesystem seam: errors, targets, versions, intents, the provider protocol.

Provider messages (``MESSAGES``) are machine-facing vocabulary shared by every consumer of an
``FsError`` (retry, permission, UI, model). They state the condition and never tell anyone what
to do about it: recovery wording belongs to the model boundary (``reference.tools.remedy``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final, Protocol

from reference.errors import UNSET, HarnessError


class FsErrorCode(StrEnum):
    """Every code an ``FsError`` may carry (SPEC §3.1)."""

    FS_NOT_FOUND = "FS_NOT_FOUND"
    FS_NOT_TEXT = "FS_NOT_TEXT"
    FS_NOT_REGULAR_FILE = "FS_NOT_REGULAR_FILE"
    FS_TOO_LARGE = "FS_TOO_LARGE"
    FS_PERMISSION_DENIED = "FS_PERMISSION_DENIED"
    FS_SANDBOX_DENIED = "FS_SANDBOX_DENIED"
    FS_IO_ERROR = "FS_IO_ERROR"
    FS_STALE_VERSION = "FS_STALE_VERSION"
    FS_NOT_OBSERVED = "FS_NOT_OBSERVED"
    FS_AMBIGUOUS_EDIT = "FS_AMBIGUOUS_EDIT"
    FS_EDIT_NOT_FOUND = "FS_EDIT_NOT_FOUND"


class FsError(HarnessError):
    """A filesystem seam failure; its code is always one of ``FsErrorCode``."""

    code: FsErrorCode

    def __init__(self, message: str, code: str, *, cause: object = UNSET) -> None:
        try:
            checked = FsErrorCode(code)
        except ValueError:
            allowed = ", ".join(FsErrorCode)
            raise ValueError(f'invalid FsErrorCode "{code}"; expected one of {allowed}') from None
        super().__init__(message, checked, cause=cause)


MESSAGES: Final[dict[str, tuple[FsErrorCode, str]]] = {
    # key: (code, template). ``{op}`` is read/write/edit, ``{p}`` the display path.
    "parent_not_dir": (
        FsErrorCode.FS_NOT_FOUND,
        'cannot resolve "{p}": a parent path segment is not a directory',
    ),
    "path_unicode": (FsErrorCode.FS_NOT_FOUND, 'cannot resolve "{p}": path is not valid UTF-8'),
    "read_missing": (FsErrorCode.FS_NOT_FOUND, 'cannot read "{p}": not found'),
    "not_regular": (FsErrorCode.FS_NOT_REGULAR_FILE, 'cannot {op} "{p}": not a regular file'),
    "binary": (FsErrorCode.FS_NOT_TEXT, 'cannot {op} "{p}": binary file'),
    "invalid_utf8": (FsErrorCode.FS_NOT_TEXT, 'cannot {op} "{p}": invalid UTF-8 text'),
    "too_large": (
        FsErrorCode.FS_TOO_LARGE,
        'cannot read "{p}": {size} bytes exceeds the {limit}-byte limit',
    ),
    "permission": (FsErrorCode.FS_PERMISSION_DENIED, 'cannot {op} "{p}": permission denied'),
    "io": (FsErrorCode.FS_IO_ERROR, 'cannot {op} "{p}": {reason}'),
    "write_vanished": (FsErrorCode.FS_STALE_VERSION, 'cannot write "{p}": file no longer exists'),
    "changed": (FsErrorCode.FS_STALE_VERSION, 'cannot {op} "{p}": file changed since it was read'),
    "exists_unread": (
        FsErrorCode.FS_NOT_OBSERVED,
        'cannot overwrite existing "{p}" without reading it first',
    ),
    "edit_not_found": (FsErrorCode.FS_EDIT_NOT_FOUND, 'old_string was not found in "{p}"'),
    "edit_ambiguous": (
        FsErrorCode.FS_AMBIGUOUS_EDIT,
        'old_string matched {n} times in "{p}"; '
        "provide a more specific old_string or set replace_all to true",
    ),
    "sandbox": (
        FsErrorCode.FS_SANDBOX_DENIED,
        'cannot {op} "{p}": file access denied under {mode} mode',
    ),
    "redirected": (
        FsErrorCode.FS_SANDBOX_DENIED,
        'cannot {op} "{p}": the path changed while it was being written',
    ),
}


def fs_error(kind: str, *, cause: object = UNSET, **fields: object) -> FsError:
    """Build the ``FsError`` for one row of ``MESSAGES``."""
    code, template = MESSAGES[kind]
    return FsError(template.format(**fields), code, cause=cause)


@dataclass(frozen=True)
class Target:
    """A resolved path: what the model is shown, and the real file it guards and mutates.

    ``parent`` identifies the key's directory as it was when the path was resolved (device and
    inode), so publication can tell that the directory it reached is the one that was checked.
    """

    display_path: str
    key: str
    parent: tuple[int, int] | None = None


@dataclass(frozen=True)
class Version:
    """What one stat saw of a file, and how to recognise its content when the stat cannot.

    A racy observation (SPEC §3.2) keeps ``content`` — the very bytes a write or edit just
    published, compared directly later — or, when those are not at hand or too large, their
    SHA-256 ``digest``. A ``stamp`` of ``None`` means the stat itself was lost after a commit:
    the content alone then decides.
    """

    stamp: str | None
    digest: str | None = None
    content: tuple[bytes | memoryview, ...] | None = field(default=None, compare=False, repr=False)

    @property
    def racy(self) -> bool:
        """Whether the stamp alone cannot prove the file unchanged."""
        return self.digest is not None or self.content is not None


@dataclass(frozen=True)
class CreateIfAbsent:
    """Write only if nothing exists at the target (the writer never saw it)."""


@dataclass(frozen=True)
class ReplaceIfVersion:
    """Write only if the target is still at ``version``."""

    version: Version


@dataclass(frozen=True)
class ExpectVersion:
    """Edit only if the target is still at ``version``."""

    version: Version


WriteIntent = CreateIfAbsent | ReplaceIfVersion | None
EditIntent = ExpectVersion | None


@dataclass(frozen=True)
class EditRequest:
    """Replace ``old`` with ``new`` once (or every time, with ``replace_all``)."""

    old: str
    new: str
    replace_all: bool = False


@dataclass(frozen=True)
class WriteOutcome:
    """A published write: the version it produced and whether it created the file."""

    version: Version
    created: bool


@dataclass(frozen=True)
class EditOutcome:
    """A published edit: the version it produced and how many occurrences it replaced."""

    version: Version
    replacements: int


class TextSink(Protocol):
    """Receives a file's decoded text piece by piece, so readers never hold the whole file."""

    def __call__(self, chunk: str, /) -> None: ...


class FsProvider(Protocol):
    """The seam the tools talk through; a local, sandboxed, remote or in-memory store."""

    def resolve(self, path: str, cwd: str) -> Target:
        """Resolve ``path`` against ``cwd``."""
        ...

    def authorize(self, target: Target, op: str) -> None:
        """Raise ``FS_SANDBOX_DENIED`` if ``op`` may not mutate ``target``."""
        ...

    def read_text(self, target: Target, sink: TextSink) -> Version:
        """Stream the file's text to ``sink``; return the version that was read."""
        ...

    def write(self, target: Target, content: str, intent: WriteIntent) -> WriteOutcome:
        """Publish ``content`` atomically if ``intent`` still holds."""
        ...

    def edit(self, target: Target, request: EditRequest, intent: EditIntent) -> EditOutcome:
        """Apply ``request`` atomically if ``intent`` still holds."""
        ...
