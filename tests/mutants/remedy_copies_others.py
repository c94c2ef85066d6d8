"""The remedy returns a copy, not the same object, for errors it does not remedy."""

import copy

from reference.adapter import ReferenceHarness
from reference.tools import remedy
from tests.mutants import rebind

original = remedy.remediate_fs_error


def remediate_fs_error(error: object) -> object:
    result = original(error)
    return copy.copy(result) if result is error else result


rebind(original, remediate_fs_error)
harness = ReferenceHarness
