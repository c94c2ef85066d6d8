"""Every model-visible template of the fs tools (SPEC §4.2), in one place.

Changing a string here changes what models read: regenerate the snapshots and review the diff.
"""

from __future__ import annotations

from typing import Final

MAX_LINE_CHARS: Final = 2000
MAX_OUTPUT_BYTES: Final = 51200
DEFAULT_LIMIT: Final = 2000
MAX_LIMIT: Final = 2000

READ_OUTPUT: Final = "<path>{p}</path>\n<type>file</type>\n<content>\n{body}\n</content>"
LINE: Final = "{n}: {text}"
LINE_TRUNCATED: Final = "... (line truncated to 2000 chars)"
FOOTER_CAPPED: Final = "(Output capped. Showing lines {a}-{b}. Use offset={next} to continue.)"
FOOTER_MORE: Final = "(Showing lines {a}-{b} of {total}. Use offset={next} to continue.)"
FOOTER_END: Final = "(End of file - total {total} lines)"
OFFSET_OUT_OF_RANGE: Final = 'offset {offset} is out of range for "{p}" ({total} lines)'

WRITE_OUTPUT: Final = "<path>{p}</path>\n<type>file</type>\n<content>\n{outcome}\n</content>"
WRITE_CREATED: Final = "Created file"
WRITE_UPDATED: Final = "Updated file"

EDIT_OUTPUT: Final = "The file {p} has been updated successfully."
EDIT_OUTPUT_ALL: Final = (
    "The file {p} has been updated. All occurrences were successfully replaced."
)

# Post-schema checks, raised as plain ValueErrors (the result carries no structured error).
FILE_PATH_EMPTY: Final = "file_path must be a non-empty string"
FILE_PATH_NUL: Final = "file_path must not contain NUL characters"
OFFSET_NOT_POSITIVE: Final = "offset must be a positive integer"
LIMIT_NOT_POSITIVE: Final = "limit must be a positive integer"
LIMIT_TOO_LARGE: Final = "limit must be less than or equal to 2000"
OLD_STRING_EMPTY: Final = "old_string must be a non-empty string"
STRINGS_IDENTICAL: Final = "old_string and new_string must differ"
