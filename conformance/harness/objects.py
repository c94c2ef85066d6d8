"""Python harness objects: finding one by ``module:attr`` or registered name, and making it.

Both sides of the process boundary need this — the suite, to test an object in process, and
``conformance.serve``, to serve one in a child — so it lives here, below both.
"""

from __future__ import annotations

import importlib
from typing import Final

ENTRY_POINT_GROUP: Final = "harness_conformance.harnesses"
DEFAULT_HARNESS: Final = "reference"
HOOK_LABEL: Final = "the harness from the pytest_conformance_harness hook"
"""How a run names the harness a plugin's hook handed over (a report records it)."""
# Where the default lives when the distribution's entry points are not installed (a checkout).
_BUILTIN: Final = {DEFAULT_HARNESS: "reference.adapter:ReferenceHarness"}


class HarnessLoadError(Exception):
    """The harness could not be loaded or started; one line says why."""


def registered_harnesses() -> dict[str, str]:
    """Registered harness names and the ``module:attr`` each points at."""
    from importlib.metadata import entry_points  # noqa: PLC0415 - slow: only when needed

    found = dict(_BUILTIN)
    found.update({ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)})
    return found


def load_python_harness(reference: str) -> object:
    """The object ``reference`` names (``module:attr`` or a registered name), instantiated."""
    # The built-in name needs no look-up (scanning the installed distributions takes longer
    # than starting the harness); the distribution registers it as the same target.
    target = reference if ":" in reference else _BUILTIN.get(reference)
    target = target or registered_harnesses().get(reference)
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
    return instantiate(found, f'harness "{reference}"')


def instantiate(candidate: object, label: str) -> object:
    """``candidate`` itself, or what it makes when it is a class or a zero-argument factory."""
    if isinstance(candidate, type) or (
        callable(candidate) and not callable(getattr(candidate, "describe", None))
    ):
        try:
            candidate = candidate()
        except Exception as exc:
            raise HarnessLoadError(f"{label} could not be created: {exc}") from exc
    if not callable(getattr(candidate, "describe", None)):
        raise HarnessLoadError(f"{label} has no describe() method")
    return candidate
