"""The hook an in-process harness implements to hand itself to the suite."""

from __future__ import annotations

import pytest


@pytest.hookspec(firstresult=True)
def pytest_conformance_harness(config: pytest.Config) -> object | None:
    """Return the harness to test (an object fulfilling the contract), or ``None`` to pass."""
