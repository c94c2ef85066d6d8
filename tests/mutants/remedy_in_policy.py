"""The policy words its refusal of an unread edit with the recovery already in it, and the model
boundary leaves a text that has it alone.

The model sees exactly the spec's words; the error behind the result is the policy's own, and
chains nothing: the original the remedy belongs after is gone.
"""

from reference import policy
from reference.adapter import ReferenceHarness
from reference.fs.types import FsError, FsErrorCode
from reference.tools import remedy
from tests.mutants import rebind

RECOVERY = f" — {remedy.REMEDIES[FsErrorCode.FS_NOT_OBSERVED]}"
policy.EDIT_UNOBSERVED = policy.EDIT_UNOBSERVED + RECOVERY  # type: ignore[misc]
original = remedy.remediate_fs_error


def remediate_fs_error(error: object) -> object:
    if isinstance(error, FsError) and error.message.endswith(RECOVERY):
        return error
    return original(error)


rebind(original, remediate_fs_error)
harness = ReferenceHarness
