"""harness-conformance's reference harness: what correct file-tool failure looks like.

Standard library only. Layers, imported one way: ``errors`` ← ``fs`` ← ``policy``, ``tools``
← ``workspace`` ← ``loop``/``scenarios``. See ``../shared/SPEC.md`` §1–§5.
"""

from reference.errors import (
    HarnessError,
    LlmError,
    ToolArgsError,
    ToolNotFoundError,
    error_chain,
    is_harness_error,
    to_error,
)
from reference.fs import FsError, FsErrorCode
from reference.scenarios import run_scenario
from reference.session import derive_messages
from reference.tools import (
    ToolErrorInfo,
    ToolExecutionResult,
    define_tool,
    remediate_fs_error,
)
from reference.workspace import open_workspace

__version__ = "0.1.0"

__all__ = [
    "FsError",
    "FsErrorCode",
    "HarnessError",
    "LlmError",
    "ToolArgsError",
    "ToolErrorInfo",
    "ToolExecutionResult",
    "ToolNotFoundError",
    "__version__",
    "define_tool",
    "derive_messages",
    "error_chain",
    "is_harness_error",
    "open_workspace",
    "remediate_fs_error",
    "run_scenario",
    "to_error",
]
