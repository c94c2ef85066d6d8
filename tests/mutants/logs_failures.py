"""The registry logs every tool failure, as raised, before the result is redacted.

A ``logging.warning`` for operators that nobody thought of as failure text: the results stay
redacted, the harness's stderr carries the secret.
"""

import logging
from typing import Any

from reference.adapter import ReferenceHarness
from reference.tools import registry

log = logging.getLogger("reference.tools")
_failure_result = registry.failure_result


def failure_result(call_id: str, exc: Exception, *args: Any, **kwargs: Any) -> Any:
    log.warning("tool call %s failed: %s", call_id, exc)
    return _failure_result(call_id, exc, *args, **kwargs)


registry.failure_result = failure_result
harness = ReferenceHarness
