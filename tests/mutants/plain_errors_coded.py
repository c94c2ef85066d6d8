"""The registry gives plain exceptions a structured error too."""

from collections.abc import Callable

from reference.adapter import ReferenceHarness
from reference.tools import registry
from tests.mutants import rebind

original = registry.failure_result


def failure_result(
    call_id: str, exc: Exception, redact: Callable[[str], str] = str
) -> registry.ToolExecutionResult:
    result = original(call_id, exc, redact)
    if result.error is None:
        info = registry.ToolErrorInfo(type(exc).__name__, "UNKNOWN")
        return registry.ToolExecutionResult(result.call_id, result.content, True, info)
    return result


rebind(original, failure_result)
harness = ReferenceHarness
