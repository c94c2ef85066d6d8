"""Shared fixtures and helpers for the project's own tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from reference import ToolExecutionResult, open_workspace
from reference.workspace import Workspace

# A fast default and a thorough ``ci`` profile (chosen by ``--hypothesis-profile ci`` or, as
# hypothesis does by itself, when CI=true). Neither keeps an example database on disk.
settings.register_profile("default", max_examples=50, deadline=None, database=None)
settings.register_profile(
    "ci", settings.get_profile("ci"), max_examples=500, deadline=None, database=None
)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    """A guarded session over an empty temporary workspace."""
    return open_workspace(tmp_path)


def text_of(result: ToolExecutionResult) -> str:
    """The single text block of a tool result."""
    assert len(result.content) == 1
    return result.content[0].text


def error_of(result: ToolExecutionResult) -> tuple[str, str] | None:
    """The structured error of a result as ``(name, code)``."""
    return None if result.error is None else (result.error.name, result.error.code)


def leftovers(directory: Path) -> list[str]:
    """Temp files the provider may have left behind (there must never be any)."""
    return sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))
