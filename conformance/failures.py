"""A case's failure that the suite puts in its own words is reported in them at once.

pytest formats every failure's traceback when it makes the phase's report, parsing the source
of each file on the stack (a fifth of a second a failure), and the suite then replaces that
text with its verdict. A harness that fails 30 cases paid six seconds for text nobody saw; one
that is dead, a minute. Here the report of such a phase is made directly, with the same words.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

Words = Callable[[pytest.Item, pytest.CallInfo[None]], str | None]


class OwnWords:
    """The plugin object that makes those reports (``words`` says when, and what they say)."""

    def __init__(self, words: Words) -> None:
        self._words = words

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> pytest.TestReport | None:
        """The failed phase's report with the suite's words, or ``None`` for pytest's own."""
        text = self._words(item, call)
        if text is None:
            return None
        # What TestReport.from_item_and_call puts in a report, but the traceback.
        captured = [
            (f"Captured {key} {when}", content)
            for when, key, content in getattr(item, "_report_sections", [])
        ]
        return pytest.TestReport(
            item.nodeid,
            item.location,
            dict.fromkeys(item.keywords, 1),
            "failed",
            text,
            call.when,  # type: ignore[arg-type]  # never "collect" for an item
            captured,
            call.duration,
            call.start,
            call.stop,
            user_properties=item.user_properties,
        )
