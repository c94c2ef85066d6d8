"""SPEC.md's exact wording and rules, restated for the suite (independently of any harness).

Every model-visible string a case expects is built here, so the expectations read like the
spec's tables and a wording change in the spec is a change in one place.
"""

from __future__ import annotations

import json
from typing import Final

REREAD: Final = " — re-read the file, then retry"
READ_FIRST: Final = " — read the file, then retry"
FS_CODES: Final = (
    "FS_NOT_FOUND",
    "FS_NOT_TEXT",
    "FS_NOT_REGULAR_FILE",
    "FS_TOO_LARGE",
    "FS_PERMISSION_DENIED",
    "FS_SANDBOX_DENIED",
    "FS_IO_ERROR",
    "FS_STALE_VERSION",
    "FS_NOT_OBSERVED",
    "FS_AMBIGUOUS_EDIT",
    "FS_EDIT_NOT_FOUND",
)
REMEDIES: Final = {"FS_STALE_VERSION": REREAD, "FS_NOT_OBSERVED": READ_FIRST}
"""The two guarded codes and the one recovery each gets at the model boundary."""
PROBE_KINDS: Final = ("HarnessError", "FsError", "LlmError", "Exception")


def fs(code: str) -> tuple[str, str]:
    """The structured error ``{name: FsError, code}``."""
    return ("FsError", code)


# -- §3.4 provider messages -----------------------------------------------------------------


def parent_not_dir(p: str) -> str:
    return f'cannot resolve "{p}": a parent path segment is not a directory'


def read_missing(p: str) -> str:
    return f'cannot read "{p}": not found'


def not_regular(op: str, p: str) -> str:
    return f'cannot {op} "{p}": not a regular file'


def binary(op: str, p: str) -> str:
    return f'cannot {op} "{p}": binary file'


def invalid_utf8(op: str, p: str) -> str:
    return f'cannot {op} "{p}": invalid UTF-8 text'


def too_large(p: str, size: int, limit: int) -> str:
    return f'cannot read "{p}": {size} bytes exceeds the {limit}-byte limit'


def permission(op: str, p: str) -> str:
    return f'cannot {op} "{p}": permission denied'


def io_error(op: str, p: str, reason: str) -> str:
    return f'cannot {op} "{p}": {reason}'


def write_vanished(p: str) -> str:
    return f'cannot write "{p}": file no longer exists'


def changed(op: str, p: str) -> str:
    return f'cannot {op} "{p}": file changed since it was read'


def exists_unread(p: str) -> str:
    return f'cannot overwrite existing "{p}" without reading it first'


def edit_not_found(p: str) -> str:
    return f'old_string was not found in "{p}"'


def edit_ambiguous(p: str, n: int) -> str:
    return (
        f'old_string matched {n} times in "{p}"; '
        "provide a more specific old_string or set replace_all to true"
    )


# -- §4 policy, tool outputs, the remedy and the marker -------------------------------------


def edit_unobserved(p: str) -> str:
    return f'edit requires reading "{p}" first'


def sandbox_marker(mode: str) -> str:
    return f"[sandbox: file access denied under {mode} mode]"


def error_text(message: str) -> str:
    """What the model sees for a failed call."""
    return f"Error: {message}"


def write_output(p: str, *, created: bool) -> str:
    outcome = "Created file" if created else "Updated file"
    return f"<path>{p}</path>\n<type>file</type>\n<content>\n{outcome}\n</content>"


def edit_output(p: str, *, replace_all: bool = False) -> str:
    if replace_all:
        return f"The file {p} has been updated. All occurrences were successfully replaced."
    return f"The file {p} has been updated successfully."


def offset_out_of_range(offset: int, p: str, total: int) -> str:
    return f'offset {offset} is out of range for "{p}" ({total} lines)'


POST_SCHEMA: Final = {
    "file_path": "file_path must be a non-empty string",
    "offset": "offset must be a positive integer",
    "limit": "limit must be a positive integer",
    "limit_max": "limit must be less than or equal to 2000",
    "old_string": "old_string must be a non-empty string",
    "differ": "old_string and new_string must differ",
}

MAX_LINE: Final = 2000
MAX_BYTES: Final = 51200
TRUNCATED: Final = "... (line truncated to 2000 chars)"


def read_output(p: str, content: str, offset: int = 1, limit: int = 2000) -> str:
    """The exact ``read`` output for ``content`` (SPEC §4.2), computed the simple way."""
    lines = content.split("\n")
    if content.endswith("\n"):
        lines.pop()
    if content == "":
        lines = []
    total = len(lines)
    shown: list[str] = []
    used = 0
    capped = False
    for number in range(offset, min(total, offset + limit - 1) + 1):
        text = lines[number - 1]
        if text.endswith("\r"):
            text = text[:-1]
        if len(text) > MAX_LINE:
            text = text[:MAX_LINE] + TRUNCATED
        cost = len(text.encode("utf-8")) + (1 if shown else 0)
        if used + cost > MAX_BYTES:
            capped = True
            break
        used += cost
        shown.append(f"{number}: {text}")
    last = offset + len(shown) - 1
    if capped:
        footer = (
            f"(Output capped. Showing lines {offset}-{last}. Use offset={last + 1} to continue.)"
        )
    elif shown and last < total:
        footer = f"(Showing lines {offset}-{last} of {total}. Use offset={last + 1} to continue.)"
    else:
        footer = f"(End of file - total {total} lines)"
    body = "\n".join(shown) + "\n\n" + footer if shown else footer
    return f"<path>{p}</path>\n<type>file</type>\n<content>\n{body}\n</content>"


# -- §1.2 rendering -------------------------------------------------------------------------


def render_value(value: object) -> str:
    """A failure value as text: str as itself, other JSON compactly (``{"code":500}``)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def chain_of(messages: list[str], tail: str | None = None) -> str:
    """``error_chain`` of a linear chain whose messages are ``messages`` (outermost first).

    ``tail`` is the rendering of a final non-exception cause, if any. A cause whose rendered
    chain equals the message it would follow is omitted.
    """
    rendered = tail
    for message in reversed(messages):
        rendered = message if rendered is None or rendered == message else f"{message}: {rendered}"
    return rendered or ""
