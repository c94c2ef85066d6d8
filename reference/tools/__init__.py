"""Tools: the registry and argument schemas, the fs tools, and the model-boundary mappings."""

from reference.tools.fs_tools import FsTools, LineWindow
from reference.tools.probe import probe_tools
from reference.tools.registry import (
    TextBlock,
    Tool,
    ToolErrorInfo,
    ToolExecutionResult,
    ToolRegistry,
    define_tool,
    failure_result,
)
from reference.tools.remedy import mark_sandbox_denial, remediate_fs_error

__all__ = [
    "FsTools",
    "LineWindow",
    "TextBlock",
    "Tool",
    "ToolErrorInfo",
    "ToolExecutionResult",
    "ToolRegistry",
    "define_tool",
    "failure_result",
    "mark_sandbox_denial",
    "probe_tools",
    "remediate_fs_error",
]
