"""The remedy turns FS_NOT_OBSERVED into FS_STALE_VERSION."""

from reference.adapter import ReferenceHarness
from reference.fs.types import FsError
from reference.tools import remedy
from tests.mutants import rebind

original = remedy.remediate_fs_error


def remediate_fs_error(error: object) -> object:
    result = original(error)
    if result is not error and isinstance(result, FsError) and result.code == "FS_NOT_OBSERVED":
        return FsError(result.message, "FS_STALE_VERSION", cause=error)
    return result


rebind(original, remediate_fs_error)
harness = ReferenceHarness
