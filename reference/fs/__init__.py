"""The filesystem seam: the only way the tools reach files (SPEC §3)."""

from reference.fs.local import LocalFs
from reference.fs.sandbox import SANDBOX_MODES, SandboxFs, check_sandbox_mode
from reference.fs.types import (
    MESSAGES,
    CreateIfAbsent,
    EditIntent,
    EditOutcome,
    EditRequest,
    ExpectVersion,
    FsError,
    FsErrorCode,
    FsProvider,
    ReplaceIfVersion,
    Target,
    TextSink,
    Version,
    WriteIntent,
    WriteOutcome,
    fs_error,
)

__all__ = [
    "MESSAGES",
    "SANDBOX_MODES",
    "CreateIfAbsent",
    "EditIntent",
    "EditOutcome",
    "EditRequest",
    "ExpectVersion",
    "FsError",
    "FsErrorCode",
    "FsProvider",
    "LocalFs",
    "ReplaceIfVersion",
    "SandboxFs",
    "Target",
    "TextSink",
    "Version",
    "WriteIntent",
    "WriteOutcome",
    "check_sandbox_mode",
    "fs_error",
]
