"""Hypothesis profiles and strategies for the property cases.

Profiles: ``default`` is fast; ``ci`` (``--hypothesis-profile ci``, or automatically when CI is
set) runs at least 500 examples of every property and of the state machine; ``triage`` is the
default without shrinking, for a quick first look at a harness that fails a lot. None keeps an
example database on disk.
"""

from __future__ import annotations

import contextlib
import re
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


_DERIVED: Final = re.compile(r"(default|ci)-with-(quiet|normal|verbose|debug)-verbosity")
"""The name hypothesis' plugin gives the profile ``--hypothesis-verbosity`` derives from ours."""


def active_profile() -> str | None:
    """The hypothesis profile in use, as ``--hypothesis-profile`` names it (None: not known).

    A profile ``--hypothesis-verbosity`` derived is named by the one it was derived from.
    """
    current = getattr(settings, "get_current_profile_name", None)  # older ones keep it private
    active = current() if current is not None else getattr(settings, "_current_profile", None)
    if not isinstance(active, str):
        return None
    derived = _DERIVED.fullmatch(active)
    return derived.group(1) if derived is not None else active


def _rederive_active_profile() -> None:
    """Give ``default-with-verbose-verbosity`` (and the like) our ``default`` as its base.

    ``--hypothesis-verbosity`` makes hypothesis derive a profile from the one active when its
    plugin starts, before ours are registered: without this, a run with it had hypothesis' own
    ``default`` (100 examples, a 200 ms deadline, and the health check that failed every property
    case for its function-scoped ``judge``). Only the names hypothesis makes are rebuilt: a
    profile of the user's own that happens to start with ``default-with-`` is theirs.
    """
    current = getattr(settings, "get_current_profile_name", None)  # older ones keep it private
    active = current() if current is not None else getattr(settings, "_current_profile", None)
    derived = _DERIVED.fullmatch(active) if isinstance(active, str) else None
    if derived is None:
        return
    name = derived.group(0)
    verbosity = settings.get_profile(name).verbosity
    settings.register_profile(name, settings.get_profile(derived.group(1)), verbosity=verbosity)
    settings.load_profile(name)


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
    (``conformance/cases/conftest.py``). Process-wide while it lasts: a hypothesis test running
    at the same time on another thread would draw without them too (cases run one at a time, on
    the main thread).
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


_CI_VARIABLES: Final = ("CI", "TF_BUILD", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "CIRCLECI")
"""What hypothesis looked for when it had no list of its own to read (its internals)."""


def hypothesis_ci_variables() -> frozenset[str]:
    """The environment variables by which hypothesis takes a run for CI, and loads its own
    ``ci`` profile (500 examples a property) unless told a profile: a benchmark or test that
    means the default profile without saying so runs without them."""
    from hypothesis import _settings  # noqa: PLC0415 - internals, read where they exist

    found = getattr(_settings, "_CI_VARS", None)
    return frozenset(found) if isinstance(found, dict) else frozenset(_CI_VARIABLES)


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
