"""Secrets reach the log and the results unredacted: nothing is ever scrubbed."""

from collections.abc import Callable, Iterable

from reference import errors
from reference.adapter import ReferenceHarness
from tests.mutants import rebind


def redactor(secrets: Iterable[str]) -> Callable[[str], str]:
    return lambda text: text


errors.LlmError.redacted = lambda self, secrets: self  # type: ignore[method-assign]
rebind(errors.redactor, redactor)
harness = ReferenceHarness
