"""What keeps a run quick without changing what it does.

Once the cases are collected, almost everything alive (modules, cases, hypothesis' tables, the
harness's profile) lives until the run ends; the garbage collector would walk it again on every
full collection, hypothesis' examples making many. ``freeze_collected`` moves it out of the
collector's way (``gc.freeze``); ``thaw`` gives it back when the run is over, after pytest's own
last collections.
"""

from __future__ import annotations

import gc

_frozen = False


def freeze_collected() -> None:
    """Keep what exists now out of every later garbage collection of this run."""
    global _frozen  # noqa: PLW0603 - one process, one run at a time
    gc.freeze()
    _frozen = True


def thaw() -> None:
    """Undo ``freeze_collected`` (a process that runs pytest again collects it as before)."""
    global _frozen  # noqa: PLW0603
    if _frozen:
        gc.unfreeze()
        _frozen = False
