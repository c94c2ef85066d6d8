"""A path with a trailing slash is opened as spelled: ``a.txt/`` fails as "not a directory".

The spec's resolution drops a trailing slash; this harness hands the path to the OS unchanged.
"""

import errno
import os

from reference.adapter import ReferenceHarness
from reference.fs import local
from reference.fs.types import Target, fs_error

_resolve = local.LocalFs.resolve


def resolve(self: local.LocalFs, path: str, cwd: str) -> Target:
    target = _resolve(self, path, cwd)
    if path.endswith("/") and not os.path.isdir(target.key):
        reason = os.strerror(errno.ENOTDIR).lower()
        raise fs_error("io", op="resolve", p=target.display_path, reason=reason)
    return target


local.LocalFs.resolve = resolve  # type: ignore[method-assign]
harness = ReferenceHarness
