"""The ``read``, ``write`` and ``edit`` tools (SPEC §4).

Each tool: schema (checked by the registry) → post-schema checks (plain ValueErrors, before the
filesystem is touched) → resolve → for mutations, inside one ``try``: sandbox fence, the
policy's intent, the provider call → on an ``FsError``, the sandbox marker, then the remedy.
The policy records an observation only after a call succeeds.
"""

from __future__ import annotations

from typing import Final

from reference.fs.types import EditRequest, FsError, FsErrorCode, FsProvider
from reference.policy import ObservationPolicy
from reference.tools import wording as w
from reference.tools.registry import Tool, define_tool
from reference.tools.remedy import mark_sandbox_denial, remediate_fs_error

_FILE_PATH: Final = {"type": "string", "description": "Path of the file, absolute or relative."}

READ_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "file_path": _FILE_PATH,
        "offset": {"type": "integer", "description": "First line to show, from 1 (default 1)."},
        "limit": {"type": "integer", "description": "Lines to show, 1-2000 (default 2000)."},
    },
    "required": ["file_path"],
    "additionalProperties": False,
}
WRITE_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "file_path": _FILE_PATH,
        "content": {"type": "string", "description": "The complete new content of the file."},
    },
    "required": ["file_path", "content"],
    "additionalProperties": False,
}
EDIT_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "file_path": _FILE_PATH,
        "old_string": {"type": "string", "description": "Exact text to replace."},
        "new_string": {"type": "string", "description": "Text to put in its place."},
        "replace_all": {
            "type": "boolean",
            "description": "Replace every occurrence instead of exactly one (default false).",
        },
    },
    "required": ["file_path", "old_string", "new_string"],
    "additionalProperties": False,
}


class LineWindow:
    """Collects the lines a read shows while counting all lines, holding only the window.

    Lines split on ``\\n`` only; a final ``\\n`` does not start another line; one trailing
    ``\\r`` is stripped before display; lines over 2000 characters are cut.
    """

    # A line never shows more than its first 2000 characters; a trailing "\r" that is
    # stripped lies beyond them.
    _HEAD_CHARS: Final = w.MAX_LINE_CHARS

    def __init__(self, offset: int, limit: int) -> None:
        self.offset = offset
        self.limit = limit
        self.total = 0
        self.shown: list[str] = []
        self.capped = False
        self._shown_bytes = 0
        self._head: list[str] = []
        self._head_chars = 0
        self._line_chars = 0
        self._last_char = ""

    @property
    def _collecting(self) -> bool:
        """Whether the line being read now is one the window shows."""
        return not self.capped and len(self.shown) < self.limit and self.total + 1 >= self.offset

    @property
    def _done(self) -> bool:
        return self.capped or len(self.shown) >= self.limit

    def feed(self, chunk: str) -> None:
        """Consume the next piece of the file's text."""
        pos, end = 0, len(chunk)
        while pos < end:
            if self._done:
                # Past the window only the count matters; count the rest of the chunk at once.
                newlines = chunk.count("\n", pos)
                self.total += newlines
                last = chunk.rfind("\n", pos)
                self._line_chars = end - last - 1 if newlines else self._line_chars + end - pos
                return
            newline = chunk.find("\n", pos)
            stop = end if newline == -1 else newline
            self._extend(chunk[pos:stop])
            if newline == -1:
                return
            self._complete()
            pos = newline + 1

    def finish(self) -> None:
        """Count the final line if the text did not end with a newline."""
        if self._line_chars:
            self._complete()

    def footer(self) -> str:
        """The one footer line the output ends with."""
        first, last = self.offset, self.offset + len(self.shown) - 1
        if self.capped:
            return w.FOOTER_CAPPED.format(a=first, b=last, next=last + 1)
        if self.shown and last < self.total:
            return w.FOOTER_MORE.format(a=first, b=last, total=self.total, next=last + 1)
        return w.FOOTER_END.format(total=self.total)

    def _extend(self, piece: str) -> None:
        if not piece:
            return
        if self._collecting and self._head_chars < self._HEAD_CHARS:
            kept = piece[: self._HEAD_CHARS - self._head_chars]
            self._head.append(kept)
            self._head_chars += len(kept)
        self._line_chars += len(piece)
        self._last_char = piece[-1]

    def _complete(self) -> None:
        collecting = self._collecting
        length = self._line_chars - (1 if self._last_char == "\r" else 0)
        head = "".join(self._head)[:length]
        self.total += 1
        self._head, self._head_chars, self._line_chars, self._last_char = [], 0, 0, ""
        if not collecting:
            return
        text = head[: w.MAX_LINE_CHARS] + w.LINE_TRUNCATED if length > w.MAX_LINE_CHARS else head
        cost = len(text.encode("utf-8")) + (1 if self.shown else 0)
        if self._shown_bytes + cost > w.MAX_OUTPUT_BYTES:
            self.capped = True
            return
        self._shown_bytes += cost
        self.shown.append(w.LINE.format(n=self.total, text=text))


class FsTools:
    """The three fs tools of one session, over one provider."""

    def __init__(
        self,
        fs: FsProvider,
        *,
        cwd: str,
        policy: ObservationPolicy | None,
        sandbox_mode: str,
    ) -> None:
        self._fs = fs
        self._cwd = cwd
        self._policy = policy
        self._sandbox_mode = sandbox_mode

    def tools(self) -> tuple[Tool, Tool, Tool]:
        """The ``read``, ``write`` and ``edit`` tool definitions."""
        return (
            define_tool(
                name="read",
                description="Read a text file, with line numbers, a window of lines at a time.",
                parameters=READ_SCHEMA,
                execute=self.read,
            ),
            define_tool(
                name="write",
                description="Create a file, or replace one you have read, with new content.",
                parameters=WRITE_SCHEMA,
                execute=self.write,
            ),
            define_tool(
                name="edit",
                description="Replace exact text in a file you have read.",
                parameters=EDIT_SCHEMA,
                execute=self.edit,
            ),
        )

    def read(self, args: dict[str, object]) -> str:
        """Show a window of the file; a successful read records an observation."""
        file_path = _file_path(args)
        offset = _positive(args.get("offset", 1), w.OFFSET_NOT_POSITIVE)
        limit = _positive(args.get("limit", w.DEFAULT_LIMIT), w.LIMIT_NOT_POSITIVE)
        if limit > w.MAX_LIMIT:
            raise ValueError(w.LIMIT_TOO_LARGE)
        target = self._fs.resolve(file_path, self._cwd)
        window = LineWindow(offset, limit)
        version = self._fs.read_text(target, window.feed)
        window.finish()
        if offset > max(window.total, 1):
            message = w.OFFSET_OUT_OF_RANGE.format(
                offset=offset, p=target.display_path, total=window.total
            )
            raise FsError(message, FsErrorCode.FS_NOT_FOUND)
        if self._policy is not None:
            self._policy.record(target, version)
        lines = "\n".join(window.shown)
        body = f"{lines}\n\n{window.footer()}" if window.shown else window.footer()
        return w.READ_OUTPUT.format(p=target.display_path, body=body)

    def write(self, args: dict[str, object]) -> str:
        """Create or replace a file; guarded by the policy when there is one."""
        file_path = _file_path(args)
        content = args["content"]
        assert isinstance(content, str)
        target = self._fs.resolve(file_path, self._cwd)
        try:
            self._fs.authorize(target, "write")
            intent = None if self._policy is None else self._policy.write_intent(target)
            outcome = self._fs.write(target, content, intent)
        except FsError as err:
            mapped = self._for_model(err)
            if mapped is err:
                raise
            raise mapped from err
        if self._policy is not None:
            self._policy.record(target, outcome.version)
        result = w.WRITE_CREATED if outcome.created else w.WRITE_UPDATED
        return w.WRITE_OUTPUT.format(p=target.display_path, outcome=result)

    def edit(self, args: dict[str, object]) -> str:
        """Replace exact text; the policy's intent is decided inside the same ``try``."""
        file_path = _file_path(args)
        old, new = args["old_string"], args["new_string"]
        replace_all = args.get("replace_all", False)
        assert isinstance(old, str)
        assert isinstance(new, str)
        assert isinstance(replace_all, bool)
        if not old:
            raise ValueError(w.OLD_STRING_EMPTY)
        if old == new:
            raise ValueError(w.STRINGS_IDENTICAL)
        target = self._fs.resolve(file_path, self._cwd)
        try:
            self._fs.authorize(target, "edit")
            intent = None if self._policy is None else self._policy.edit_intent(target)
            outcome = self._fs.edit(target, EditRequest(old, new, replace_all), intent)
        except FsError as err:
            mapped = self._for_model(err)
            if mapped is err:
                raise
            raise mapped from err
        if self._policy is not None:
            self._policy.record(target, outcome.version)
        template = w.EDIT_OUTPUT_ALL if replace_all else w.EDIT_OUTPUT
        return template.format(p=target.display_path)

    def _for_model(self, err: FsError) -> FsError:
        return remediate_fs_error(mark_sandbox_denial(err, self._sandbox_mode))


def _file_path(args: dict[str, object]) -> str:
    file_path = args["file_path"]
    if not isinstance(file_path, str) or not file_path:
        raise ValueError(w.FILE_PATH_EMPTY)
    # Checked on the path as given: ".." must not cancel a NUL away (SPEC §4.2).
    if "\0" in file_path:
        raise ValueError(w.FILE_PATH_NUL)
    return file_path


def _positive(value: object, message: str) -> int:
    # The schema lets through only integers (never a bool), normalized: 2.0 arrives as 2.
    if not isinstance(value, int) or value < 1:
        raise ValueError(message)
    return value
