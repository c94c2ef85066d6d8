"""Before each mutation the harness sweeps every temp-looking file beside the target.

A realistic cleanup of "stale temp files" that matches on shape (``.<name>*.tmp``, ``~``,
``.swp``) instead of on names and locks of its own, so it deletes another program's files.
"""

import os
from typing import Any

from reference.adapter import ReferenceHarness
from reference.fs import local

_write, _edit = local.LocalFs.write, local.LocalFs.edit
SHAPES = (".tmp", "~", ".swp")


def _sweep(key: str) -> None:
    directory, name = os.path.split(key)
    if not os.path.isdir(directory):
        return
    for entry in os.listdir(directory):
        if entry != name and name in entry and entry.endswith(SHAPES):
            os.remove(os.path.join(directory, entry))


def write(self: local.LocalFs, target: Any, *args: Any, **kwargs: Any) -> Any:
    _sweep(target.key)
    return _write(self, target, *args, **kwargs)


def edit(self: local.LocalFs, target: Any, *args: Any, **kwargs: Any) -> Any:
    _sweep(target.key)
    return _edit(self, target, *args, **kwargs)


local.LocalFs.write = write  # type: ignore[method-assign]
local.LocalFs.edit = edit  # type: ignore[method-assign]
harness = ReferenceHarness
