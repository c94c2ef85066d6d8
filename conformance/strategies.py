"""Hypothesis profiles and strategies for the property cases.

Profiles: ``default`` is fast; ``ci`` (``--hypothesis-profile ci``, or automatically when CI is
set) runs at least 500 examples of every property and of the state machine; ``triage`` is the
default without shrinking, for a quick first look at a harness that fails a lot. None keeps an
example database on disk.
"""

from __future__ import annotations

import contextlib
import string
from collections.abc import Iterator
from typing import Any, Final

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

try:  # internals: a hypothesis without them has no local constants to leave out
    from hypothesis.internal.conjecture import providers as _providers
except ImportError:  # pragma: no cover
    _providers = None  # type: ignore[assignment]

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
    _rederive_active_profile()


def _rederive_active_profile() -> None:
    """Give ``default-with-verbose-verbosity`` (and the like) our ``default`` as its base.

    ``--hypothesis-verbosity`` and ``--hypothesis-explain`` make hypothesis derive a profile from
    the one active when its plugin starts, before these are registered: without this, a run with
    them had hypothesis' own defaults (100 examples, a 200 ms deadline, the health check that
    fails every property case for its function-scoped ``judge``).
    """
    active = settings.get_current_profile_name()
    base = active.split("-with-", 1)[0]
    if base == active or base not in ("default", "ci"):
        return
    derived = settings.get_profile(active)
    settings.register_profile(
        active, settings.get_profile(base), verbosity=derived.verbosity, phases=derived.phases
    )
    settings.load_profile(active)


@contextlib.contextmanager
def own_draws() -> Iterator[None]:
    """Hypothesis draws, inside it, the same examples wherever the suite and harness are installed.

    Hypothesis mixes into its draws constants it finds in the source of modules it takes for
    local (outside site-packages and test folders), read from whatever the process has imported
    by then. So one seed drew other examples with the suite run from a checkout than from a
    wheel, and in process than over stdio, and found other divergences in the same harness.
    Inside this, those constants are left out (the spec's edge values come from the strategies;
    hypothesis' own list of tricky values stays); outside it nothing changes, so hypothesis tests
    of the implementer's own keep them. Each conformance case runs inside it
    (``conformance/cases/conftest.py``).
    """
    get = getattr(_providers, "_get_local_constants", None)
    cache: Any = getattr(getattr(_providers, "CONSTANTS_CACHE", None), "cache", None)
    constants = getattr(_providers, "Constants", None)
    if get is None or constants is None or not hasattr(cache, "clear"):
        yield
        return
    none = constants()
    cache.clear()  # what it holds may carry local constants drawn outside
    _providers._get_local_constants = lambda: none
    try:
        yield
    finally:
        _providers._get_local_constants = get
        cache.clear()  # and what it holds now carries none, which is only right in here


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
