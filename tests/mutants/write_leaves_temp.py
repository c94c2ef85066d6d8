"""``write`` stages its content in a temporary file of its own beside the target, named at
random (``.a.txt.<12 hex digits>.tmp``), and never removes it, refused or not.

Every write the guard refused and every write it published leaves one stray file: one defect,
in words that are the same on every run (the random part shown as ``…``).
"""

from __future__ import annotations

import os
import secrets
from contextlib import suppress

from reference.adapter import ReferenceHarness
from reference.fs import local
from reference.fs.types import Target, WriteIntent, WriteOutcome

original = local.LocalFs.write


def write(self: local.LocalFs, target: Target, content: str, intent: WriteIntent) -> WriteOutcome:
    directory, name = os.path.split(target.key)
    staged = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")
    # where it can: text that is no UTF-8, or a full disk, is no part of this defect
    with suppress(OSError, UnicodeEncodeError):
        data = content.encode("utf-8")
        with open(staged, "wb") as out:
            out.write(data)
    return original(self, target, content, intent)


local.LocalFs.write = write  # type: ignore[method-assign]
harness = ReferenceHarness
