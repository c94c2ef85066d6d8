"""Shared fixtures and helpers for the project's own tests."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import settings

# A fast default and a thorough ``ci`` profile (chosen by ``--hypothesis-profile ci`` or, as
# hypothesis does by itself, when CI=true). Neither keeps an example database on disk.
settings.register_profile("default", max_examples=50, deadline=None, database=None)
settings.register_profile(
    "ci", settings.get_profile("ci"), max_examples=500, deadline=None, database=None
)


def leftovers(directory: Path) -> list[str]:
    """Temp files the provider may have left behind (there must never be any)."""
    return sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))
