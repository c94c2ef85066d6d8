"""The model boundary: the only place recovery wording is added to a filesystem failure.

Provider messages stay machine-facing; ``write`` and ``edit`` pass their ``FsError`` through
``mark_sandbox_denial`` and then ``remediate_fs_error`` just before it becomes model-visible
text. Both mappings build a new error with the same code and chain the original as its cause.
"""

from __future__ import annotations

from typing import Final, TypeVar, overload

from reference.fs.types import FsError, FsErrorCode

REMEDIES: Final = {
    FsErrorCode.FS_STALE_VERSION: "re-read the file, then retry",
    FsErrorCode.FS_NOT_OBSERVED: "read the file, then retry",
}
SANDBOX_MARKER: Final = "[sandbox: file access denied under {mode} mode]"

_T = TypeVar("_T")


@overload
def remediate_fs_error(error: FsError) -> FsError: ...
@overload
def remediate_fs_error(error: _T) -> _T | FsError: ...
def remediate_fs_error(error: object) -> object:
    """Append the one correct recovery to a stale or unobserved ``FsError``; pass the rest through.

    Every other value, ``FsError`` or not, is returned unchanged: the same object.
    """
    if not isinstance(error, FsError):
        return error
    remedy = REMEDIES.get(error.code)
    if remedy is None:
        return error
    return FsError(f"{error.message} — {remedy}", error.code, cause=error)


def mark_sandbox_denial(error: FsError, mode: str) -> FsError:
    """Replace a sandbox denial's wording with the model-facing marker; pass the rest through."""
    if error.code != FsErrorCode.FS_SANDBOX_DENIED:
        return error
    return FsError(SANDBOX_MARKER.format(mode=mode), error.code, cause=error)
