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

# The known defect (ACME-142, in conformance-baseline.json): writes turn CRLF into LF.
_publish = local.LocalFs._publish


def _publish_lf(self, place, name, target, parts, *, mode, exclusive):  # type: ignore[no-untyped-def]
    data = b"".join(bytes(part) for part in parts).replace(b"\r\n", b"\n")
    return _publish(self, place, name, target, (data,), mode=mode, exclusive=exclusive)


local.LocalFs._publish = _publish_lf  # type: ignore[method-assign]
