"""Provider errors reach the log unredacted."""

from reference.adapter import ReferenceHarness
from reference.errors import LlmError

LlmError.redacted = lambda self, secrets: self  # type: ignore[method-assign]
harness = ReferenceHarness
