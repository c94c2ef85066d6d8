"""Shared fixtures and helpers for the project's own tests."""

from __future__ import annotations

import locale
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.strategies import register_profiles
from reference import ToolExecutionResult, open_workspace
from reference.fs.local import TEMP_NAME
from reference.workspace import Workspace

# The suite's profiles: a fast default, and ``ci`` (``--hypothesis-profile ci``, or automatically
# when CI is set) with 500 examples. Neither keeps an example database on disk.
register_profiles()


@pytest.fixture(scope="session", autouse=True)
def compiled_once(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Child runs reuse one bytecode cache under this run's temp directory.

    Hundreds of tests start ``python -m conformance`` and harness children. Where the machine
    sets ``PYTHONDONTWRITEBYTECODE`` (these do), each of them compiled pytest, hypothesis, the
    suite and the reference from source again, several seconds a run; the cache lives beside
    pytest's own temp directories, never in the checkout, and changes no verdict.
    """
    saved = {k: os.environ.get(k) for k in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    base = tmp_path_factory.getbasetemp()
    # Under xdist every worker has its own base inside the run's directory: share the parent.
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(shared / "bytecode")
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture
def ascii_locale() -> Iterator[None]:
    """The C locale, whose default text encoding is ASCII (UTF-8 must be asked for by name)."""
    saved = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)


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
    return sorted(name for name in os.listdir(directory) if TEMP_NAME.fullmatch(name))
