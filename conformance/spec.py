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
import re
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
PATH_OPS: Final[dict[str, tuple[str, ...]]] = {
    "fs.parent_segment": OPS,
    "fs.path_unicode": OPS,
    "fs.read_missing": ("read",),
    "fs.not_regular": OPS,
    "fs.binary": ("read", "edit"),
    "fs.invalid_utf8": ("read", "edit"),
    "fs.too_large": ("read",),
    "fs.permission": OPS,
    "fs.io": OPS,
    "fs.write_vanished": ("write",),
    "fs.changed": ("write", "edit"),
    "fs.exists_unread": ("write",),
    "fs.edit_not_found": ("edit",),
    "fs.ambiguous": ("edit",),
    "fs.redirected": ("write", "edit"),
    "fs.sandbox": ("write", "edit"),
    "policy.edit_unobserved": ("edit",),
    "read.offset_range": ("read",),
    "read.output": ("read",),
    "write.output": ("write",),
    "edit.output": ("edit",),
    "edit.output_all": ("edit",),
}
"""The templates about one path (those with ``{p}``), and the operations each is shown for
(SPEC §3.4's table). Only these get ``{p}``, ``{rel}`` and ``{op}``, and only these ops refine
them: a key shown for one operation always gets that one as ``{op}``."""
PATH_FIELDS: Final = frozenset({"p", "rel", "op"})
_NUMBERS: Final = frozenset({"n", "a", "b", "next", "total", "offset", "size", "limit"})
"""The placeholders filled with integers (a format spec such as ``{n:>6}`` must suit one)."""

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


NOT_TEXT_WORDS: Final = {"fs.binary": "fs.msg.binary", "fs.invalid_utf8": "fs.msg.invalid-utf8"}
"""The templates that say a file is not text, each with the rule whose words it is."""
READ_REFUSALS: Final = tuple(
    key for key, ops in PATH_OPS.items() if "read" in ops and key != "read.output"
)
"""The templates a refused ``read`` can say: words that fit one of them fit no other, or name
no rule."""
_ANY_PATH: Final = "\x00path\x00"
_ANY_NUMBER: Final = 7_070_707_070


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
        self._root: str | None = None
        self.roots: list[str] = []
        """The other roots sessions were opened on (a workspace opened through a symlink)."""
        self._not_text_made: dict[str, list[tuple[str, str, list[str]]]] = {}

    @property
    def root(self) -> str | None:
        """The current workspace root, for ``{rel}``; setting it forgets the other roots."""
        return self._root

    @root.setter
    def root(self, root: str | None) -> None:
        self._root = root
        self.roots = []

    def opened(self, root: str) -> None:
        """A session was opened on ``root``: its paths are relative to it in ``{rel}``."""
        if root not in self.roots:
            self.roots.append(root)

    def rel(self, p: str) -> str:
        """``p`` relative to the root of the workspace it is in (else the current root)."""
        roots = [os.path.normpath(r) for r in (self._root, *self.roots) if r]
        if not roots:
            return p
        inside = [r for r in roots if os.path.normpath(p) == r or _under(p, r)]
        return os.path.relpath(p, max(inside, key=len) if inside else roots[0])

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
            if isinstance(template, dict):
                raise WordingError(f"wording table {where}: {_nested_hint(key, template)}")
            base = key
            if key not in TEMPLATES and key.rsplit(".", 1)[-1] in OPS:
                base = key.rsplit(".", 1)[0]  # a refinement for one operation: fs.changed.write
            if base not in TEMPLATES:
                raise WordingError(f"wording table {where}: unknown template key {key!r}")
            if base != key and key.rsplit(".", 1)[-1] not in PATH_OPS.get(base, ()):
                shown = PATH_OPS.get(base)
                raise WordingError(
                    f"wording table {where}: {key!r} would never be used: {base!r} is "
                    + (f"shown only for {' and '.join(shown)}" if shown else
                       "not about one operation, so it cannot be refined for one")
                )  # fmt: skip
            if not isinstance(template, str):
                raise WordingError(f"wording table {where}: {key!r} must be a string")
            problem = _template_problem(base, template)
            if problem:
                raise WordingError(f"wording table {where}: {key!r} {problem}")
        return cls(table, source=where)

    def template(self, key: str, op: str | None = None) -> str:
        """The template for ``key`` (refined by ``op`` where the table has one)."""
        if op is not None and f"{key}.{op}" in self.overrides:
            return self.overrides[f"{key}.{op}"]
        return self.overrides.get(key, TEMPLATES[key])

    def __call__(self, key: str, **fields: object) -> str:
        """Fill in one template."""
        ops = PATH_OPS.get(key, ())
        if len(ops) == 1:
            fields.setdefault("op", ops[0])  # the one operation this text is shown for
        elif ops and "op" not in fields:
            raise TypeError(f"{key} is shown for {', '.join(ops)}: say which (op=)")
        op = fields.get("op")
        template = self.template(key, op if isinstance(op, str) else None)
        if "p" in fields and "rel" not in fields:
            fields["rel"] = self.rel(str(fields["p"]))
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

    def not_text_rule(self, text: str, op: str) -> str | None:
        """The rule whose words, in this wording, ``text`` is: a refusal of ``op`` saying its
        file is binary or not UTF-8, for any path (``fs.msg.binary``, ``fs.msg.invalid-utf8``)."""
        for rule, pattern, shared in self._not_text(op):
            if re.fullmatch(pattern, text, re.S) is not None:
                # Words another refusal can say as well ("cannot read {p}" for a binary file, and
                # "cannot read {p}: permission denied"): the text fitting both, they name neither.
                return None if any(re.fullmatch(o, text, re.S) for o in shared) else rule
        return None

    def _not_text(self, op: str) -> list[tuple[str, str, list[str]]]:
        """For each not-text template: its rule, its pattern, and the patterns of the other read
        refusals whose words it can say too; made once per operation (every refused read asks)."""
        made = self._not_text_made.get(op)
        if made is None:
            said = {key: self._any(key, op) for key in READ_REFUSALS}
            made = [
                (rule, said[key], [
                    pattern for other, pattern in said.items()
                    if other != key
                    and re.fullmatch(said[key], self._any(other, op, pattern=False), re.S)
                ])
                for key, rule in NOT_TEXT_WORDS.items()
            ]  # fmt: skip
            self._not_text_made[op] = made
        return made

    def _any(self, key: str, op: str, *, pattern: bool = True) -> str:
        """The refusal ``key`` says for ``op``, any path and any field: a pattern, or the text."""
        number = _ANY_NUMBER
        said = self.fs_error(key, op=op, p=_ANY_PATH, rel=_ANY_PATH, reason=_ANY_PATH,
                             size=number, limit=number, offset=number, total=number)  # fmt: skip
        if not pattern:
            return said
        return re.escape(said).replace(re.escape(_ANY_PATH), ".+").replace(str(number), ".+")

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
    """The placeholders of ``template``, also those nested in a format spec (``{n:>{w}}``);
    ``""`` for a positional ``{}``. Raises ValueError for a malformed one (a lone brace)."""
    found: set[str] = set()
    for _, name, spec, _ in string.Formatter().parse(template):
        if name is not None:
            found.add(name)
        if spec:
            found |= _fields(spec)
    return found


def _under(path: str, root: str) -> bool:
    return os.path.normpath(path).startswith(root.rstrip(os.sep) + os.sep)


def _nested_hint(key: str, table: Mapping[str, object]) -> str:
    """The words for a sub-table: most often a dotted key written without its quotes."""
    inner, value = next(iter(table.items()), ("…", ""))
    while isinstance(value, dict) and value:
        more, value = next(iter(value.items()))
        inner = f"{inner}.{more}"
    return (f"{key!r} is a table, not a template: a dotted key must be quoted, "
            f'as in "{key}.{inner}" = "…"')  # fmt: skip


def _template_problem(key: str, template: str) -> str | None:
    """What makes ``template`` unusable for ``key``, in words; None if it can be filled."""
    try:
        names = _fields(template)
    except ValueError as exc:
        return f"is not a template: {exc} (a literal brace is written {{{{ or }}}})"
    allowed = _fields(TEMPLATES[key]) | (PATH_FIELDS if key in PATH_OPS else set())
    bare = {n for n in names if n and n.split(".")[0].split("[")[0] in allowed}
    unknown = {n.split(".")[0].split("[")[0] for n in names} - allowed
    if unknown:
        listed = ", ".join("{" + a + "}" for a in sorted(allowed)) or "none"
        return (
            f"uses unknown placeholder(s) {', '.join('{' + u + '}' for u in sorted(unknown))}; "
            f"allowed: {listed}"
        )
    indexed = sorted(n for n in bare if n not in allowed)
    if indexed:
        return f"uses {{{indexed[0]}}}: a placeholder is a bare name (no attribute or index)"
    if key in REMEDIES.values() and not template.strip():
        return (
            "is empty: every guarded refusal ends with its one recovery (SPEC §4.3); "
            "the words may change, the recovery may not go"
        )
    sample = {name: 7 if name in _NUMBERS else "x" for name in allowed}
    try:
        template.format(**sample)
    except (ValueError, TypeError) as exc:
        return f"cannot be filled: {exc}"
    return None


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
