"""The observation policy: guarded mutations need a fresh look at the file (SPEC §4.1).

It remembers, per session and per target key, the version the session's last successful
``read``, ``write`` or ``edit`` produced, and turns that into the intent of the next mutation.
A failed read records nothing, so a file that was read and then deleted stays a dead end until
it exists again and is freshly read: every guarded write and edit fails closed meanwhile.
"""

from __future__ import annotations

import threading
from typing import Final

from reference.fs.types import (
    CreateIfAbsent,
    ExpectVersion,
    FsError,
    FsErrorCode,
    ReplaceIfVersion,
    Target,
    Version,
)

EDIT_UNOBSERVED: Final = 'edit requires reading "{p}" first'


class ObservationPolicy:
    """One session's observations and the intents they imply."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[str, Version] = {}

    def write_intent(self, target: Target) -> CreateIfAbsent | ReplaceIfVersion:
        """Never seen: create only if absent. Seen at ``v``: replace only if still ``v``."""
        seen = self.observed(target)
        return CreateIfAbsent() if seen is None else ReplaceIfVersion(seen)

    def edit_intent(self, target: Target) -> ExpectVersion:
        """Seen at ``v``: expect ``v``. Never seen: refuse with ``FS_NOT_OBSERVED``."""
        seen = self.observed(target)
        if seen is None:
            raise FsError(
                EDIT_UNOBSERVED.format(p=target.display_path), FsErrorCode.FS_NOT_OBSERVED
            )
        return ExpectVersion(seen)

    def observed(self, target: Target) -> Version | None:
        """The version this session last saw of ``target``, if any."""
        with self._lock:
            return self._seen.get(target.key)

    def record(self, target: Target, version: Version) -> None:
        """Remember the version a successful read, write or edit produced."""
        with self._lock:
            self._seen[target.key] = version
