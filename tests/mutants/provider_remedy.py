"""The provider appends the recovery instruction to its own stale / unobserved messages."""

from reference.adapter import ReferenceHarness
from reference.fs import types

for key, remedy in [
    ("changed", "re-read"),
    ("write_vanished", "re-read"),
    ("exists_unread", "read"),
]:
    code, template = types.MESSAGES[key]
    types.MESSAGES[key] = (code, f"{template} — {remedy} the file, then retry")

harness = ReferenceHarness
