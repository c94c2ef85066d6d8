"""Deliberately broken harnesses: the reference with exactly one defect each.

Each module patches the reference when imported and exposes ``harness``; the suite is run on it
in a subprocess (``--harness tests.mutants.<name>:harness``), so no patch leaks anywhere else.
``test_mutants.py`` asserts the suite fails on every one and names the cases that caught it.
"""

from __future__ import annotations

import sys
from typing import Any


def rebind(original: Any, replacement: Any) -> None:
    """Replace ``original`` in every ``reference`` module that bound it by name."""
    found = False
    for name, module in list(sys.modules.items()):
        if name == "reference" or name.startswith("reference."):
            for attr, value in list(vars(module).items()):
                if value is original:
                    setattr(module, attr, replacement)
                    found = True
    if not found:
        raise RuntimeError(f"{original!r} is bound nowhere in reference")
