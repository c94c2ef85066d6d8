"""Finding the harness under test: by ``module:attr``, by registered name, or the default.

A reference names an object that fulfils the contract, or a class or zero-argument factory that
returns one. Names are looked up in the entry-point group ``harness_conformance.harnesses``;
the reference harness is registered there as ``reference`` and is the default.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Final, cast

from conformance.contract import Harness, missing_methods

ENTRY_POINT_GROUP: Final = "harness_conformance.harnesses"
DEFAULT_HARNESS: Final = "reference"
# Where the default lives when the distribution's entry points are not installed (a checkout).
_BUILTIN: Final = {DEFAULT_HARNESS: "reference.adapter:ReferenceHarness"}


class HarnessLoadError(Exception):
    """The harness could not be loaded or does not fulfil the contract; one line says why."""


def registered_harnesses() -> dict[str, str]:
    """Registered harness names and the ``module:attr`` each points at."""
    found = dict(_BUILTIN)
    found.update({ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)})
    return found


def load_harness(reference: str) -> Harness:
    """Load the harness ``reference`` names (``module:attr`` or a registered name)."""
    target = reference if ":" in reference else registered_harnesses().get(reference)
    if target is None:
        known = ", ".join(sorted(registered_harnesses()))
        raise HarnessLoadError(
            f'harness "{reference}" is neither module:attr nor a registered name '
            f"(registered under {ENTRY_POINT_GROUP}: {known})"
        )
    module_name, _, attr = target.partition(":")
    try:
        found: object = importlib.import_module(module_name)
        for part in attr.split("."):
            found = getattr(found, part)
    except Exception as exc:
        raise HarnessLoadError(f'harness "{reference}" cannot be loaded: {exc}') from exc
    return accept_harness(found, f'harness "{reference}"')


def accept_harness(candidate: object, label: str) -> Harness:
    """Return ``candidate`` (or what its class or factory makes) if it fulfils the contract."""
    if isinstance(candidate, type) or (missing_methods(candidate) and callable(candidate)):
        try:
            candidate = candidate()
        except Exception as exc:
            raise HarnessLoadError(f"{label} could not be created: {exc}") from exc
    missing = missing_methods(candidate)
    if missing:
        raise HarnessLoadError(f"{label} lacks contract method(s): {', '.join(missing)}")
    return cast(Harness, candidate)
