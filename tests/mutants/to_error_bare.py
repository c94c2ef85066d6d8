"""to_error wraps a failure value in a bare Exception, losing the UNKNOWN code."""

from reference import errors
from reference.adapter import ReferenceHarness
from tests.mutants import rebind

original = errors.to_error


def to_error(value: object) -> BaseException:
    return value if isinstance(value, BaseException) else Exception(errors.render_value(value))


rebind(original, to_error)
harness = ReferenceHarness
