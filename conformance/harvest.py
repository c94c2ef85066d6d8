"""Hypothesis' harvest of local constants, left out of a run whose properties are all cases.

Hypothesis' pytest plugin harvests, as collection ends, the constants in the source of every
module it takes for local, so that the time is not charged to the first property. Every
conformance case draws without them (``conformance.strategies.own_draws``), so in a run whose
only hypothesis tests are cases the harvest is thrown away: 40–80 ms of each process's
collection with hypothesis' cache warm, and 0.3 s without it (a checkout's modules are local).
``NoHarvest`` runs hypothesis' hook inside ``own_draws``, where the harvest finds nothing; a run
with hypothesis tests of its own harvests as before. Nothing drawn changes: the cases never
saw those constants.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Generator

import pytest


class NoHarvest:
    """The plugin object: hypothesis' ``pytest_collection_modifyitems`` without the harvest."""

    def __init__(self, is_case: Callable[[pytest.Item], bool]) -> None:
        self._is_case = is_case

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> Generator[None]:
        """Run the other plugins' hooks inside ``own_draws`` when only cases use hypothesis."""
        if "hypothesis" not in sys.modules or not self.only_cases_draw(items):
            return (yield)
        from conformance.strategies import own_draws  # noqa: PLC0415 - imports hypothesis

        with own_draws():
            return (yield)

    def only_cases_draw(self, items: list[pytest.Item]) -> bool:
        """Whether some item is a case and every hypothesis test among them is one."""
        from hypothesis import is_hypothesis_test  # noqa: PLC0415 - imported already

        cases = [self._is_case(item) for item in items]
        drawing = (
            case
            for item, case in zip(items, cases, strict=True)
            if is_hypothesis_test(getattr(item, "obj", None))
        )
        return any(cases) and all(drawing)
