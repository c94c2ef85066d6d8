"""The remedied error does not chain the original as its cause."""

from reference.adapter import ReferenceHarness
from reference.fs.types import FsError
from reference.tools import remedy
from tests.mutants import rebind

original = remedy.remediate_fs_error


def remediate_fs_error(error: object) -> object:
    result = original(error)
    if result is not error and isinstance(result, FsError):
        return FsError(result.message, result.code)
    return result


rebind(original, remediate_fs_error)
harness = ReferenceHarness
