"""SPEC.md's exact wording, as one table of templates, and the rules built on it.

Every model-visible string a case expects is built here from ``TEMPLATES``. A harness that keeps
its own wording re-pins the texts by giving the suite a wording table (``--conformance-wording
FILE``, TOML): a file mapping template keys to the harness's own templates. The properties and
the state machine build their expectations from the same table, so they follow it too.

A key may be refined per operation: ``fs.changed.write`` is used for a write when present, and
``fs.changed`` otherwise. Placeholders: ``{p}`` the display path, ``{rel}`` the path relative to
the workspace root, ``{op}`` read/write/edit, and the key's own (``{n}``, ``{size}``…).
"""

from __future__ import annotations

import json
import os
import string
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Final

TEMPLATES: Final[dict[str, str]] = {
    # §2.1 the registry and argument validation
    "error": "Error: {message}",
    "tool.unknown": 'unknown tool "{name}"',
    "args.invalid": "invalid arguments: {violations}",
    "args.missing": 'missing required property "{path}"',
    "args.type": '"{path}" must be {type}',
    "args.enum": '"{path}" must be one of {values}',
    "args.undeclared": '"{path}" is not a declared property (additionalProperties: false)',
    "args.not_object": '"arguments" must be an object',
    "args.not_json": '"arguments" is not valid JSON',
    "probe.code_required": 'code is required for kind "{kind}"',
    # §3.4 provider messages
    "fs.parent_segment": 'cannot resolve "{p}": a parent path segment is not a directory',
    "fs.path_unicode": 'cannot resolve "{p}": path is not valid UTF-8',
    "fs.read_missing": 'cannot read "{p}": not found',
    "fs.not_regular": 'cannot {op} "{p}": not a regular file',
    "fs.binary": 'cannot {op} "{p}": binary file',
    "fs.invalid_utf8": 'cannot {op} "{p}": invalid UTF-8 text',
    "fs.too_large": 'cannot read "{p}": {size} bytes exceeds the {limit}-byte limit',
    "fs.permission": 'cannot {op} "{p}": permission denied',
    "fs.io": 'cannot {op} "{p}": {reason}',
    "fs.write_vanished": 'cannot write "{p}": file no longer exists',
    "fs.changed": 'cannot {op} "{p}": file changed since it was read',
    "fs.exists_unread": 'cannot overwrite existing "{p}" without reading it first',
    "fs.edit_not_found": 'old_string was not found in "{p}"',
    "fs.ambiguous": (
        'old_string matched {n} times in "{p}"; '
        "provide a more specific old_string or set replace_all to true"
    ),
    "fs.redirected": 'cannot {op} "{p}": the path changed while it was being written',
    "fs.sandbox": 'cannot {op} "{p}": file access denied under {mode} mode',
    # §3.4 the reason of each OS error a case triggers (the {reason} of fs.io)
    "reason.ENAMETOOLONG": "file name too long",
    "reason.ENOSPC": "no space left on device",
    "reason.EROFS": "read-only file system",
    "reason.EIO": "input/output error",
    # §4.1 the policy, §4.3 the remedy, §4.4 the marker
    "policy.edit_unobserved": 'edit requires reading "{p}" first',
    "remedy.reread": " — re-read the file, then retry",
    "remedy.read": " — read the file, then retry",
    "sandbox.marker": "[sandbox: file access denied under {mode} mode]",
    # §4.2 outputs
    "read.output": "<path>{p}</path>\n<type>file</type>\n<content>\n{body}\n</content>",
    "read.body": "{lines}\n\n{footer}",
    "read.body_empty": "{footer}",
    "read.line": "{n}: {text}",
    "read.truncated": "... (line truncated to 2000 chars)",
    "read.footer.capped": "(Output capped. Showing lines {a}-{b}. Use offset={next} to continue.)",
    "read.footer.more": "(Showing lines {a}-{b} of {total}. Use offset={next} to continue.)",
    "read.footer.end": "(End of file - total {total} lines)",
    "read.offset_range": 'offset {offset} is out of range for "{p}" ({total} lines)',
    "write.output": "<path>{p}</path>\n<type>file</type>\n<content>\n{outcome}\n</content>",
    "write.created": "Created file",
    "write.updated": "Updated file",
    "edit.output": "The file {p} has been updated successfully.",
    "edit.output_all": "The file {p} has been updated. All occurrences were successfully replaced.",
    "check.file_path": "file_path must be a non-empty string",
    "check.nul": "file_path must not contain NUL characters",
    "check.offset": "offset must be a positive integer",
    "check.limit": "limit must be a positive integer",
    "check.limit_max": "limit must be less than or equal to 2000",
    "check.old_string": "old_string must be a non-empty string",
    "check.differ": "old_string and new_string must differ",
    # §2.4 the scripted model
    "loop.out_of_steps": "scripted model has no more steps",
}
OPS: Final = ("read", "write", "edit")

REMEDIES: Final = {"FS_STALE_VERSION": "remedy.reread", "FS_NOT_OBSERVED": "remedy.read"}
"""The two guarded codes and the template of the one recovery each gets at the model boundary."""
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
PROBE_KINDS: Final = ("HarnessError", "FsError", "LlmError", "Exception")
TYPE_WORDS: Final = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
    "null": "null",
}
MAX_LINE: Final = 2000
MAX_BYTES: Final = 51200
MAX_LIMIT: Final = 2000


class WordingError(ValueError):
    """A wording table that cannot be used; the message names the file and the key."""


def fs(code: str) -> tuple[str, str]:
    """The structured error ``{name: FsError, code}``."""
    return ("FsError", code)


class Wording:
    """The templates in force: the spec's, with a harness's own re-pinned over them."""

    def __init__(self, overrides: Mapping[str, str] | None = None, *, source: str = "") -> None:
        self.overrides = dict(overrides or {})
        self.source = source
        self.root: str | None = None
        """The current workspace root, for ``{rel}``."""

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Wording:
        """Read a TOML wording table: ``[wording]`` mapping template keys to templates."""
        where = os.fspath(path)
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise WordingError(f"wording table {where}: cannot be read: {exc}") from None
        table = data.get("wording")
        if not isinstance(table, dict) or set(data) - {"wording"}:
            raise WordingError(f"wording table {where}: expected one [wording] table of templates")
        for key, template in table.items():
            base = key
            if key not in TEMPLATES and key.rsplit(".", 1)[-1] in OPS:
                base = key.rsplit(".", 1)[0]  # a refinement for one operation: fs.changed.write
            if base not in TEMPLATES:
                raise WordingError(f"wording table {where}: unknown template key {key!r}")
            if not isinstance(template, str):
                raise WordingError(f"wording table {where}: {key!r} must be a string")
            allowed = _fields(TEMPLATES[base]) | {"p", "rel", "op"}
            unknown = _fields(template) - allowed
            if unknown:
                raise WordingError(
                    f"wording table {where}: {key!r} uses unknown placeholder(s) "
                    f"{', '.join('{' + u + '}' for u in sorted(unknown))}; "
                    f"allowed: {', '.join('{' + a + '}' for a in sorted(allowed))}"
                )
        return cls(table, source=where)

    def template(self, key: str, op: str | None = None) -> str:
        """The template for ``key`` (refined by ``op`` where the table has one)."""
        if op is not None and f"{key}.{op}" in self.overrides:
            return self.overrides[f"{key}.{op}"]
        return self.overrides.get(key, TEMPLATES[key])

    def __call__(self, key: str, **fields: object) -> str:
        """Fill in one template."""
        op = fields.get("op")
        template = self.template(key, op if isinstance(op, str) else None)
        if "p" in fields and "rel" not in fields:
            fields["rel"] = (
                os.path.relpath(str(fields["p"]), self.root) if self.root else str(fields["p"])
            )
        return template.format(**fields)

    # -- composed texts ---------------------------------------------------------------------

    def error(self, message: str) -> str:
        """What the model sees for a failed call."""
        return self("error", message=message)

    def fs_error(self, key: str, **fields: object) -> str:
        """The model-visible text of a provider message (``Error: …``), without a remedy."""
        return self.error(self(key, **fields))

    def remedied(self, key: str, code: str, **fields: object) -> str:
        """The model-visible text of a guarded refusal: message, then its one remedy."""
        return self.error(self(key, **fields) + self(REMEDIES[code]))

    def remedies(self) -> dict[str, str]:
        """Code → the recovery instruction a guarded refusal with it ends with, in this wording."""
        return {code: self(key) for code, key in REMEDIES.items()}

    def marker(self, mode: str) -> str:
        """What the model sees for a fenced mutation."""
        return self.error(self("sandbox.marker", mode=mode))

    def write_output(self, p: str, *, created: bool) -> str:
        """The output of a successful write."""
        outcome = self("write.created" if created else "write.updated")
        return self("write.output", p=p, outcome=outcome)

    def edit_output(self, p: str, *, replace_all: bool = False) -> str:
        """The output of a successful edit."""
        return self("edit.output_all" if replace_all else "edit.output", p=p)

    def violations(self, *violations: str) -> str:
        """The text of a ``ToolArgsError`` result."""
        return self.error(self("args.invalid", violations="; ".join(violations)))

    def read_output(self, p: str, content: str, offset: int = 1, limit: int = MAX_LIMIT) -> str:
        """The exact ``read`` output for ``content`` (SPEC §4.2), computed the simple way."""
        lines = content.split("\n")
        if content.endswith("\n"):
            lines.pop()
        if content == "":
            lines = []
        total = len(lines)
        truncated = self("read.truncated")
        shown: list[str] = []
        used = 0
        capped = False
        for number in range(offset, min(total, offset + limit - 1) + 1):
            text = lines[number - 1]
            if text.endswith("\r"):
                text = text[:-1]
            if len(text) > MAX_LINE:
                text = text[:MAX_LINE] + truncated
            cost = len(text.encode("utf-8")) + (1 if shown else 0)
            if used + cost > MAX_BYTES:
                capped = True
                break
            used += cost
            shown.append(self("read.line", n=number, text=text))
        last = offset + len(shown) - 1
        if capped:
            footer = self("read.footer.capped", a=offset, b=last, next=last + 1)
        elif shown and last < total:
            footer = self("read.footer.more", a=offset, b=last, total=total, next=last + 1)
        else:
            footer = self("read.footer.end", total=total)
        if shown:
            body = self("read.body", lines="\n".join(shown), footer=footer)
        else:
            body = self("read.body_empty", footer=footer)
        return self("read.output", p=p, body=body)


SPEC_WORDING: Final = Wording()
"""The spec's own wording, for code that judges the spec itself (the reference's tests)."""


def _fields(template: str) -> set[str]:
    return {
        name.split(".")[0].split("[")[0]
        for _, name, _, _ in string.Formatter().parse(template)
        if name
    }


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
