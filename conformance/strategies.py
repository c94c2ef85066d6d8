"""Hypothesis profiles and strategies for the property cases.

Profiles: ``default`` is fast; ``ci`` (``--hypothesis-profile ci``, or automatically when CI is
set) runs at least 500 examples of every property and of the state machine; ``triage`` is the
default without shrinking, for a quick first look at a harness that fails a lot. None keeps an
example database on disk.
"""

from __future__ import annotations

import string
from typing import Final

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from conformance.harness.contract import Json
from conformance.spec import FS_CODES

DEFAULT_EXAMPLES: Final = 30
CI_EXAMPLES: Final = 500


def register_profiles() -> None:
    """(Re)register ``default`` and ``ci``; re-registering the active profile applies it."""
    common = {
        "deadline": None,
        "database": None,
        # The judge is per case on purpose: a property stops at its first violation.
        "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    }
    settings.register_profile("default", max_examples=DEFAULT_EXAMPLES, **common)  # type: ignore[arg-type]
    settings.register_profile(
        "ci",
        settings.get_profile("ci"),
        max_examples=CI_EXAMPLES,
        **common,
    )
    register_triage_profile()


def register_triage_profile() -> None:
    """``triage``: the default's examples without shrinking (a failing harness fails fast)."""
    settings.register_profile(
        "triage",
        max_examples=DEFAULT_EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
    )


TEXT: Final = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
"""Any text a JSON transport can carry (no lone surrogates)."""

NON_EMPTY_TEXT: Final = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40)
CODES: Final = st.text(string.ascii_uppercase + string.digits + "_", min_size=1, max_size=20)
FS_CODE: Final = st.sampled_from(FS_CODES)

JSON_VALUES: Final[st.SearchStrategy[Json]] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=10,
)
"""Any JSON value."""
