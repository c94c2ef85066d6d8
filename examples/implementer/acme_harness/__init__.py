"""ACME's agent harness: the reference harness, forked, with ACME's own wording — and one known
defect that the team has listed in its conformance baseline until it is fixed.

What a fork changes lives in one place: the reference's tables of model-visible wording.
"""

from __future__ import annotations

from reference.fs import FsErrorCode, local
from reference.tools import remedy, wording

__version__ = "0.3.0"

# ACME's own wording: what the model is told after a successful write.
wording.WRITE_CREATED = "File created"  # type: ignore[misc]
wording.WRITE_UPDATED = "File saved"  # type: ignore[misc]
# ACME's remedy for a file never read is a little more explicit.
remedy.REMEDIES[FsErrorCode.FS_NOT_OBSERVED] = "read the whole file first, then retry"

# The known defect (ACME-142, in conformance-baseline.json): a write turns CRLF into LF. It
# happens before the content reaches the filesystem, so the harness stays consistent with
# itself: what it wrote is what it remembers having written.
_write = local.LocalFs.write


def _write_lf(self, target, content, intent):  # type: ignore[no-untyped-def]
    return _write(self, target, content.replace("\r\n", "\n"), intent)


local.LocalFs.write = _write_lf  # type: ignore[method-assign]
