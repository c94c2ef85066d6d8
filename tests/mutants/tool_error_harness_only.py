"""``tool_error`` answers only for harness errors: behind a plain exception's result it says null.

The failed result's text is right; what is lost is the error itself, so an author (or a
retry policy) cannot see why a tool that raised a ``ValueError`` failed.
"""

from typing import Any

from reference.adapter import ReferenceHarness
from reference.errors import is_harness_error


class Harness(ReferenceHarness):
    def tool_error(self, session: str, call_id: str) -> Any:
        with self._lock:
            workspace = self._sessions[session]
        error = workspace.failure(call_id)
        if error is None or not is_harness_error(error):
            return None
        return {"handle": self.adopt_error(error)}


harness = Harness
