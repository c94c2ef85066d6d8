"""The file tools of any MCP server, as a harness with the ``tools`` capability (SPEC §6).

``python -m conformance --harness-mcp 'CMD …' [--harness-mcp-map FILE]`` runs ``McpBridge`` in the
suite's harness child (``python -m conformance.serve --mcp CMD``), so the suite judges the
server's ``read_text_file``/``write_file``/``edit_file`` (or whatever the mapping names) exactly as
it judges any harness. Each workspace gets its own MCP server process over stdio: ``CMD`` is split
like a shell would split it, and in every word ``{root}`` becomes the workspace root and
``{sandbox}`` the session's sandbox mode; a word that is exactly ``{writableRoots}`` becomes the
session's extra writable roots, one word each (none without them). A result is ``{"callId",
"content": [one text block: the server's text blocks joined by newlines], "isError"}`` and
never carries a structured ``error``: MCP has no error taxonomy. A JSON-RPC error answer from
the server is a failed result too; a server that hangs (past ``call_timeout``) or whose
connection is gone fails the *call* instead, so a dead server can never pass a case that
expects a refusal. So does a server that writes a line to stdout that is not an MCP message (a
``console.log`` onto the channel): the first call that follows such a line fails and names it,
the server's defect, in a first line that is the same whatever the call (one root cause). That is
reported once per bridge process: a server that logs on every call has every later answer judged
as it is, the way an MCP client that skips lines it cannot parse would use it. (A new harness
child, after a call that blocked or in a case that starts a second one, reports it once again.)

What the command grants
-----------------------
Unless the mapping declares ``sandbox``, the bridge declares what the command gives the server:
a command that passes ``{root}`` confines the server to the workspace (``["workspace-write"]``:
the MCP reference filesystem server allows only the directories it is given); one that passes
neither ``{root}`` nor ``{sandbox}`` fences nothing the bridge knows of
(``["danger-full-access"]``); one that passes ``{sandbox}`` must declare the modes the server
honours. ``writableRoots`` is declared when the command has a ``{writableRoots}`` word.

The mapping file (TOML)
-----------------------
It translates the spec's tools (``read {file_path, offset?, limit?}``, ``write {file_path,
content}``, ``edit {file_path, old_string, new_string, replace_all?}``) to the server's. Every
table is optional; unknown keys are an error. A file that gives ``[tools]`` replaces the built-in
tools entirely (a spec tool it leaves out answers ``unknown tool``); ``[describe]``,
``[describe.options]`` and ``[server]`` override the built-in values key by key::

    [describe]                  # what the bridge tells the suite (SPEC §6.2)
    name = "my-server"          # default: the server's serverInfo name (from initialize)
    version = "1.2.3"           # default: its serverInfo version
    language = "typescript"     # default: "mcp"
    paths = "absolute"          # "absolute" (default), "relative" or "any"

    [describe.options]          # default: every flag false, sandbox what the command grants
    readWindow = true           # declare only what holds for every session of the server:
    replaceAll = true           # no option reaches the server except the sandbox mode
    sandbox = ["read-only"]     # ("{sandbox}") and the extra roots ("{writableRoots}")

    [server]
    startup_timeout = 20.0      # seconds to start and answer initialize
    call_timeout = 20.0         # seconds per tool call; keep it below --conformance-timeout
    env = { LOG_LEVEL = "error" }  # on top of the bridge's own environment

    [tools.read]                # one table per spec tool: read, write, edit
    tool = "read_text_file"     # the server's tool (required)
    rename = { file_path = "path", limit = "head" }  # spec argument -> server argument
    drop = ["offset"]           # spec arguments never sent
    const = { encoding = "utf-8" }  # sent with every call (mapped arguments win over them)
    unmapped = "pass"           # any other argument: "pass" (under its own name, default),
                                # "drop", or "error" (one the spec tool does not declare
                                # refuses the call, every violation listed in SPEC order)

    [tools.edit]
    tool = "edit_file"
    # Instead of rename, a JSON template (text, or a TOML table) of the server's arguments. A
    # string that is exactly "{name}" becomes that argument's JSON value (quotes, newlines and
    # non-strings survive untouched); "{name}" inside a longer string is replaced by the
    # argument's text (compact JSON for a non-string), "{{" and "}}" are literal braces. A
    # member whose argument is absent is left out. Placeholders must name the spec tool's
    # arguments; arguments the template does not use follow ``unmapped``.
    template = '''{"path": "{file_path}",
                   "edits": [{"oldText": "{old_string}", "newText": "{new_string}"}]}'''

``rename``/``drop``/placeholders may only name the spec tool's own arguments, so a typo is an
error when the file is read, not a silently unmapped argument. Argument text the model sent raw is
parsed first, with the spec's limits (SPEC §2.1b): invalid JSON, nesting past 100 levels, a
number literal over 100 characters or not finite, and arguments that are not an object are
refused by the bridge, and nothing is sent. Without ``--harness-mcp-map`` the built-in mapping
(``DEFAULT_MAPPING``) fits the MCP reference filesystem server
``@modelcontextprotocol/server-filesystem`` (``npx -y @modelcontextprotocol/server-filesystem
{root} {writableRoots}``: every directory it is given is one it allows).
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import concurrent.futures
import contextlib
import importlib.util
import itertools
import json
import math
import os
import re
import shlex
import sys
import tempfile
import threading
import tomllib
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TextIO, TypeVar

from conformance.harness.contract import (
    FLAG_OPTIONS,
    PATH_STYLES,
    SANDBOX_MODES,
    Json,
    JsonObject,
)
from conformance.spec import SPEC_WORDING, TEMPLATES, Wording

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import CallToolResult

_T = TypeVar("_T")

DEFAULT_MAPPING: Final = """\
[describe]
language = "mcp"
paths = "absolute"

[describe.options]
readWindow = false
replaceAll = false
unguarded = false
maxReadBytes = false
probe = false
probeInterrupt = false
surrogates = false

[server]
startup_timeout = 20.0
call_timeout = 20.0

[tools.read]
tool = "read_text_file"
rename = { file_path = "path", limit = "head" }

[tools.write]
tool = "write_file"
rename = { file_path = "path" }

[tools.edit]
tool = "edit_file"
template = '''
{"path": "{file_path}", "edits": [{"oldText": "{old_string}", "newText": "{new_string}"}]}'''
"""
"""The built-in mapping (TOML): the MCP reference filesystem server's tools."""

SPEC_TOOLS: Final[dict[str, tuple[str, ...]]] = {
    "read": ("file_path", "offset", "limit"),
    "write": ("file_path", "content"),
    "edit": ("file_path", "old_string", "new_string", "replace_all"),
}
"""Each spec tool and its arguments, in schema order (SPEC §4.2)."""

UNMAPPED_POLICIES: Final = ("pass", "drop", "error")
UNREACHABLE: Final = {
    "probe": "the probe tools are the suite's own, and a mapping maps only read, write and edit",
    "probeInterrupt": "the probe tools are the suite's own, and a mapping maps only read, "
    "write and edit",
    "surrogates": "a lone surrogate cannot be sent over MCP (its JSON must be UTF-8)",
}
"""Options a mapping may not declare: the bridge itself cannot carry what they promise."""
ROOTS_WORD: Final = "{writableRoots}"
"""A command word that becomes the session's extra writable roots, one word each."""
_TOP_KEYS: Final = ("describe", "server", "tools")
_DESCRIBE_KEYS: Final = ("name", "version", "language", "paths", "options")
_SERVER_KEYS: Final = ("startup_timeout", "call_timeout", "env")
_TOOL_KEYS: Final = ("tool", "rename", "drop", "const", "template", "unmapped")
_MAX_DEPTH: Final = 100
_MAX_NUMBER: Final = 100
_STOP_GRACE_S: Final = 10.0
_WHOLE: Final = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_PART: Final = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
_JSON_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKET: Final = re.compile(r"[\[\]{}]")
_ABSENT: Final = object()
# Spec defaults of the open_workspace options: a session that asks for nothing else needs
# nothing declared.
_OPTION_DEFAULTS: Final[dict[str, Json]] = {
    "policy": True,
    "sandbox": None,
    "maxReadBytes": None,
    "probe": False,
    "writableRoots": None,
}


class MappingError(ValueError):
    """A mapping that cannot be used; one line names the file and what is wrong."""


class Refusal(Exception):
    """The bridge refuses a call itself (nothing is sent); the message is the model's text in
    the spec's words, ``words`` the same in a wording table's.

    The bridge speaks for the server's registry, so a table that describes the harness's words
    (its ``Error:`` prefix, its argument refusals) describes these texts too.
    """

    def __init__(self, render: Callable[[Wording], str]) -> None:
        super().__init__(render(SPEC_WORDING))
        self.render = render

    def words(self, wording: Wording) -> str:
        """The refusal (without the error prefix) in ``wording``."""
        return self.render(wording)


def _invalid(*violations: Callable[[Wording], str]) -> Refusal:
    return Refusal(lambda w: w("args.invalid", violations="; ".join(v(w) for v in violations)))


_VIOLATION_KEYS: Final = ("args.undeclared", "args.missing", "args.enum", "args.type")
"""The spec's violation texts the reference's validator writes, most specific first."""


def _shape(key: str) -> re.Pattern[str]:
    parts = re.split(r"\{(\w+)\}", TEMPLATES[key])
    pattern = "".join(
        re.escape(part) if i % 2 == 0 else f"(?P<{part}>.*)" for i, part in enumerate(parts)
    )
    return re.compile(pattern, re.S)


_VIOLATION_SHAPES: Final = [(key, _shape(key)) for key in _VIOLATION_KEYS]


def _reworded(violation: str) -> Callable[[Wording], str]:
    """One violation in the spec's words, to be said in a table's."""
    for key, shape in _VIOLATION_SHAPES:
        found = shape.fullmatch(violation)
        if found is not None:
            fields = found.groupdict()
            return lambda w: w(key, **fields)
    return lambda _: violation


# -- the mapping -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolMap:
    """How one spec tool reaches the server: its tool name and how its arguments translate."""

    spec: str
    tool: str
    rename: Mapping[str, str] = field(default_factory=dict)
    drop: frozenset[str] = frozenset()
    const: Mapping[str, Json] = field(default_factory=dict)
    template: JsonObject | None = None
    unmapped: str = "pass"

    def translate(self, arguments: Mapping[str, Json]) -> JsonObject:
        """The server's arguments for the spec's ``arguments``; raise ``Refusal`` if unsendable."""
        given = {k: v for k, v in arguments.items() if k not in self.drop}
        sent: JsonObject = dict(self.const)
        used: set[str] = set()
        if self.template is not None:
            filled = _fill(self.template, given, used)
            assert isinstance(filled, dict)  # a template is an object, never absent itself
            sent.update(filled)
        else:
            for name, value in given.items():
                if name in self.rename:
                    sent[self.rename[name]] = value
                    used.add(name)
        rest = [name for name in given if name not in used]
        if self.unmapped == "error" and any(name not in SPEC_TOOLS[self.spec] for name in rest):
            raise _invalid(*map(_reworded, _violations(self.spec, arguments)))
        if self.unmapped in ("pass", "error"):
            # "error" is about arguments the spec tool does not declare: its own pass as named.
            for name in rest:
                sent.setdefault(name, given[name])
        return sent


def _violations(spec: str, arguments: Mapping[str, Json]) -> tuple[str, ...]:
    """The violations of a call with undeclared arguments: every one, in SPEC §2.1b's order.

    Listing only the undeclared ones would drop a missing or mistyped argument the server
    would have named, and put them in another order than {args.order} asks.
    """
    from reference.errors import ToolArgsError  # noqa: PLC0415 - only for such a refusal
    from reference.tools.fs_tools import EDIT_SCHEMA, READ_SCHEMA, WRITE_SCHEMA  # noqa: PLC0415
    from reference.tools.schema import validate_arguments  # noqa: PLC0415

    schema = {"read": READ_SCHEMA, "write": WRITE_SCHEMA, "edit": EDIT_SCHEMA}[spec]
    try:
        validate_arguments(schema, dict(arguments))
    except ToolArgsError as exc:
        return exc.violations
    raise AssertionError("an undeclared argument is a violation")  # pragma: no cover


@dataclass(frozen=True)
class McpMapping:
    """A whole mapping: the tools, the describe answer's overrides, the server settings."""

    tools: Mapping[str, ToolMap]
    declared: frozenset[str] = frozenset()
    """The ``[describe.options]`` the mapping names (the rest follow the command's grant)."""
    name: str | None = None
    version: str | None = None
    language: str = "mcp"
    paths: str = "absolute"
    options: Mapping[str, Json] = field(default_factory=dict)
    startup_timeout: float = 20.0
    call_timeout: float = 20.0
    env: Mapping[str, str] = field(default_factory=dict)


def load_mapping(path: str | None) -> McpMapping:
    """The built-in mapping, overridden by the TOML file at ``path`` if given."""
    base = tomllib.loads(DEFAULT_MAPPING)
    if path is None:
        return parse_mapping(base, "the built-in MCP mapping")
    where = f"MCP mapping {path}"
    try:
        with open(path, "rb") as source:
            data = tomllib.load(source)
    except OSError as exc:
        raise MappingError(f"{where}: cannot be read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise MappingError(f"{where}: not TOML: {_one_line(str(exc))}") from None
    return parse_mapping(_overlay(base, data), where)


def _overlay(base: JsonObject, data: JsonObject) -> JsonObject:
    """``data`` over ``base``: ``tools`` replaces wholesale, the other tables key by key."""
    merged = dict(base)
    for key, value in data.items():
        if key in ("describe", "server") and isinstance(value, dict):
            table = dict(base.get(key, {})) | value
            if key == "describe" and isinstance(value.get("options"), dict):
                table["options"] = dict(base["describe"].get("options", {})) | value["options"]
            merged[key] = table
        else:
            merged[key] = value
    return merged


def parse_mapping(data: Mapping[str, Json], where: str) -> McpMapping:
    """Check a parsed mapping; raise ``MappingError`` with one line naming what is wrong."""
    _only(data, _TOP_KEYS, where, "")
    describe = _table(data.get("describe", {}), where, "describe")
    _only(describe, _DESCRIBE_KEYS, where, "describe.")
    for key in ("name", "version", "language"):
        if key in describe and not isinstance(describe[key], str):
            raise MappingError(f"{where}: describe.{key} must be a string")
    paths = describe.get("paths", "absolute")
    if paths not in PATH_STYLES:
        raise MappingError(
            f"{where}: describe.paths must be one of {', '.join(PATH_STYLES)}, got {paths!r}"
        )
    given = _table(describe.get("options", {}), where, "describe.options")
    options = _parse_options(given, where)
    server = _table(data.get("server", {}), where, "server")
    _only(server, _SERVER_KEYS, where, "server.")
    timeouts = {
        key: _positive(server.get(key, 20.0), where, f"server.{key}")
        for key in ("startup_timeout", "call_timeout")
    }
    env = _table(server.get("env", {}), where, "server.env")
    if not all(isinstance(value, str) for value in env.values()):
        raise MappingError(f"{where}: server.env values must be strings")
    tools = _table(data.get("tools", {}), where, "tools")
    unknown = [name for name in tools if name not in SPEC_TOOLS]
    if unknown:
        raise MappingError(
            f"{where}: unknown spec tool {unknown[0]!r} in [tools]; known: {', '.join(SPEC_TOOLS)}"
        )
    return McpMapping(
        tools={name: _parse_tool(name, tools[name], where) for name in tools},
        declared=frozenset(given),
        name=describe.get("name"),
        version=describe.get("version"),
        language=describe.get("language", "mcp"),
        paths=paths,
        options=options,
        startup_timeout=timeouts["startup_timeout"],
        call_timeout=timeouts["call_timeout"],
        env=dict(env),
    )


def granted_options(mapping: McpMapping, argv: list[str]) -> dict[str, Json]:
    """The options the bridge declares: the mapping's, and what the command grants otherwise."""
    options = dict(mapping.options)
    if "sandbox" not in mapping.declared:
        if any("{sandbox}" in word for word in argv):
            raise MappingError(
                "the MCP server command passes {sandbox}: declare the modes the server honours "
                "in the mapping ([describe.options] sandbox = [...])"
            )
        fenced = any("{root}" in word for word in argv)
        options["sandbox"] = ["workspace-write"] if fenced else ["danger-full-access"]
    if "writableRoots" not in mapping.declared:
        options["writableRoots"] = ROOTS_WORD in argv
    return options


def _parse_options(options: Mapping[str, Json], where: str) -> dict[str, Json]:
    # The tool options only: an MCP server has no pause points and no error kinds.
    _only(options, ("sandbox", *FLAG_OPTIONS), where, "describe.options.")
    checked: dict[str, Json] = {"sandbox": []} | dict.fromkeys(FLAG_OPTIONS, False)
    for name, value in options.items():
        if name == "sandbox":
            if not isinstance(value, list) or not all(mode in SANDBOX_MODES for mode in value):
                raise MappingError(
                    f"{where}: describe.options.sandbox must list modes among "
                    f"{', '.join(SANDBOX_MODES)}, got {value!r}"
                )
        elif not isinstance(value, bool):
            raise MappingError(f"{where}: describe.options.{name} must be true or false")
        elif value and name in UNREACHABLE:
            raise MappingError(f"{where}: describe.options.{name} cannot hold through the "
                               f"bridge: {UNREACHABLE[name]}")  # fmt: skip
        checked[name] = value
    return checked


def _parse_tool(spec: str, raw: Json, where: str) -> ToolMap:
    at = f"tools.{spec}"
    table = _table(raw, where, at)
    _only(table, _TOOL_KEYS, where, f"{at}.")
    known = SPEC_TOOLS[spec]
    tool = table.get("tool")
    if not isinstance(tool, str) or not tool:
        raise MappingError(f"{where}: {at}.tool must name the server's tool")
    rename = _table(table.get("rename", {}), where, f"{at}.rename")
    for source, target in rename.items():
        _argument(source, known, where, f"{at}.rename", spec)
        if not isinstance(target, str) or not target:
            raise MappingError(f"{where}: {at}.rename.{source} must be a non-empty string")
    drop = table.get("drop", [])
    if not isinstance(drop, list) or not all(isinstance(name, str) for name in drop):
        raise MappingError(f"{where}: {at}.drop must be a list of argument names")
    for name in drop:
        _argument(name, known, where, f"{at}.drop", spec)
    const = _table(table.get("const", {}), where, f"{at}.const")
    if not _is_json(const):
        raise MappingError(f"{where}: {at}.const must hold JSON values (no dates or times)")
    template = table.get("template")
    if template is not None:
        if rename:
            raise MappingError(f"{where}: {at} gives both rename and template; choose one")
        template = _parse_template(template, known, where, f"{at}.template", spec)
    unmapped = table.get("unmapped", "pass")
    if unmapped not in UNMAPPED_POLICIES:
        raise MappingError(
            f"{where}: {at}.unmapped must be one of {', '.join(UNMAPPED_POLICIES)}, "
            f"got {unmapped!r}"
        )
    return ToolMap(
        spec=spec,
        tool=tool,
        rename=dict(rename),
        drop=frozenset(drop),
        const=dict(const),
        template=template,
        unmapped=unmapped,
    )


def _parse_template(
    raw: Json, known: tuple[str, ...], where: str, at: str, spec: str
) -> JsonObject:
    if isinstance(raw, str):
        try:
            template = json.loads(raw)
        except ValueError as exc:
            raise MappingError(f"{where}: {at} is not JSON: {exc}") from None
    else:
        template = raw
    if not isinstance(template, dict):
        raise MappingError(f"{where}: {at} must be a JSON object (the server's arguments)")
    if not _is_json(template):
        raise MappingError(f"{where}: {at} must hold JSON values (no dates or times)")
    for name in _placeholders(template):
        _argument(name, known, where, at, spec, what="placeholder")
    return template


def _placeholders(node: Json) -> list[str]:
    if isinstance(node, str):
        return [m[1] for m in _PART.finditer(node) if m[1] is not None]
    if isinstance(node, dict):
        return [name for value in node.values() for name in _placeholders(value)]
    if isinstance(node, list):
        return [name for value in node for name in _placeholders(value)]
    return []


def _argument(
    name: str, known: tuple[str, ...], where: str, at: str, spec: str, *, what: str = "argument"
) -> None:
    if name not in known:
        raise MappingError(
            f"{where}: {at}: {what} {name!r} is not an argument of the spec's {spec} "
            f"({', '.join(known)})"
        )


def _only(table: Mapping[str, Json], keys: tuple[str, ...], where: str, prefix: str) -> None:
    unknown = [key for key in table if key not in keys]
    if unknown:
        raise MappingError(
            f"{where}: unknown key {prefix}{unknown[0]}; known here: {', '.join(keys)}"
        )


def _table(value: Json, where: str, at: str) -> dict[str, Json]:
    if not isinstance(value, dict):
        raise MappingError(f"{where}: {at} must be a table")
    return value


def _positive(value: Json, where: str, at: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise MappingError(f"{where}: {at} must be a positive number of seconds, got {value!r}")
    return float(value)


def _is_json(value: Json) -> bool:
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_json(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


def _fill(node: Json, arguments: Mapping[str, Json], used: set[str]) -> Json:
    """The template ``node`` with the arguments in place; ``_ABSENT`` where one is missing."""
    if isinstance(node, str):
        whole = _WHOLE.fullmatch(node)
        if whole:
            used.add(whole[1])
            return arguments.get(whole[1], _ABSENT)
        missing = False

        def part(match: re.Match[str]) -> str:
            nonlocal missing
            name = match[1]
            if name is None:
                return match[0][0]
            used.add(name)
            if name not in arguments:
                missing = True
                return ""
            value = arguments[name]
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

        text = _PART.sub(part, node)
        return _ABSENT if missing else text
    if isinstance(node, dict):
        filled = {key: _fill(value, arguments, used) for key, value in node.items()}
        return {key: value for key, value in filled.items() if value is not _ABSENT}
    if isinstance(node, list):
        items = [_fill(value, arguments, used) for value in node]
        return [value for value in items if value is not _ABSENT]
    return node


# -- raw argument text -------------------------------------------------------------------------


class _NotJson(ValueError):
    pass


def _number(literal: str) -> int | float:
    if len(literal) > _MAX_NUMBER:
        raise _NotJson(literal)
    if any(c in literal for c in ".eE"):
        value = float(literal)
        if not math.isfinite(value):
            raise _NotJson(literal)
        return value
    return int(literal)


def _constant(literal: str) -> Json:
    raise _NotJson(literal)


def parse_arguments(arguments: Json) -> JsonObject:
    """The arguments as an object; raw text is parsed with the spec's limits (SPEC §2.1b)."""
    if isinstance(arguments, str):
        depth = deepest = 0
        # Brackets inside strings do not nest; deep text is refused before the parser recurses.
        for bracket in _BRACKET.finditer(_JSON_STRING.sub("", arguments)):
            depth += 1 if bracket[0] in "[{" else -1
            deepest = max(deepest, depth)
            if deepest > _MAX_DEPTH:
                raise _invalid(lambda w: w("args.not_json"))
        try:
            arguments = json.loads(
                arguments, parse_int=_number, parse_float=_number, parse_constant=_constant
            )
        except (ValueError, RecursionError):
            raise _invalid(lambda w: w("args.not_json")) from None
    if not isinstance(arguments, dict):
        raise _invalid(lambda w: w("args.not_object"))
    return arguments


# -- the bridge --------------------------------------------------------------------------------


class _Strays:
    """The bridge's record of lines servers wrote to stdout that are not MCP messages.

    The first call that sees such a line fails and names it, the server's defect, once for the
    whole bridge (one harness process); later lines are only counted (and the count logged when
    the bridge closes), so a server that logs on every call still has each later answer judged
    as it is. Which call reports it is the first tool call that sees one: the same for the same
    cases.
    """

    def __init__(self) -> None:
        self.reported = False
        self.later = 0
        self.lock = threading.Lock()

    def report(self, found: list[str], what: str) -> None:
        """Fail this call if it is the first to see stray lines; count them otherwise."""
        with self.lock:
            first, self.reported = not self.reported, True
            if not first:
                self.later += len(found)
                return
        # The first line is the same whatever the call (the root cause's words); what this call
        # saw follows on the next.
        lines = f"{len(found)} line{'s' if len(found) > 1 else ''}"
        raise RuntimeError(
            "the MCP server wrote lines to stdout that are not MCP messages; MCP's stdio "
            "transport carries only JSON-RPC messages there (a server logs to stderr)\n"
            f"{lines} by the time {what} answered, the first: {found[0]!r}"
        )


@dataclass
class _Session:
    """One workspace: its own server process, connection and call counter."""

    client: ClientSession
    stop: concurrent.futures.Future[None]
    runner: concurrent.futures.Future[None]
    log: _Strays
    strays: list[str] = field(default_factory=list)
    """Lines the server wrote to stdout that are not MCP messages, not yet looked at."""
    err: _ServerStderr | None = None
    """Its stderr, whose last lines say why it ended when it does."""
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_id(self) -> str:
        with self.lock:
            return f"call_{next(self.ids)}"

    def check_stdout(self, what: str) -> None:
        """Fail the bridge's first call that follows lines on stdout that are not MCP messages."""
        with self.lock:
            found, self.strays[:] = list(self.strays), []
        if found:
            self.log.report(found, what)


class McpBridge:
    """A harness with only the ``tools`` capability whose tools are an MCP server's; thread-safe."""

    def __init__(
        self, command: str, argv: list[str], mapping: McpMapping, wording: Wording = SPEC_WORDING
    ) -> None:
        self.command = command
        self.argv = argv
        self.mapping = mapping
        self.wording = wording
        """The words of the bridge's own refusals: the run's wording table, if it has one."""
        self.options = granted_options(mapping, argv)
        """What ``describe`` declares (the mapping's options, else the command's grant)."""
        self.server_info: tuple[str, str] | None = None
        self._sessions: dict[str, _Session] = {}
        self._handles = itertools.count(1)
        self._lock = threading.Lock()
        self._strays = _Strays()
        self._loop = asyncio.new_event_loop()
        # One loop for every connection: the SDK is async, the contract's callers are threads.
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="mcp-bridge", daemon=True
        )
        self._thread.start()

    @classmethod
    def from_command(
        cls, command: str, mapping_path: str | None = None, wording_path: str | None = None
    ) -> McpBridge:
        """The bridge for ``command``, tried once; ``ValueError`` (one line) if it cannot start."""
        mapping = load_mapping(mapping_path)
        wording = Wording.load(wording_path) if wording_path else SPEC_WORDING
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ValueError(f"MCP server command {command!r} cannot be parsed: {exc}") from None
        if not argv:
            raise ValueError("the MCP server command is empty")
        if importlib.util.find_spec("mcp") is None:
            raise ValueError(
                "--harness-mcp needs the MCP SDK: pip install 'mcp>=2.3' (the suite's [mcp] extra)"
            )
        bridge = cls(command, argv, mapping, wording)
        try:
            bridge.probe()
        except BaseException:
            bridge.close()
            raise
        atexit.register(bridge.close)
        return bridge

    def probe(self) -> None:
        """Start the server once over a scratch root, so a bad command fails the handshake."""
        with tempfile.TemporaryDirectory(prefix="mcp-probe-") as root:
            session = self._start(root, _mode_of(self.options), [])
            try:
                self._check_tools(session)
            finally:
                self._stop(session)

    def _check_tools(self, session: _Session) -> None:
        """Every tool the mapping names is one the server lists: a misspelt ``tool`` fails
        here, in one line, instead of every call being refused ("Unknown tool") and read as
        the server's guard at work. A server that cannot list its tools is not checked."""
        try:
            have = sorted(
                self._await(_tool_names(session.client), self.mapping.startup_timeout, "tools/list")
            )
        except Exception:  # listing is the server's to offer; its calls still tell
            return
        missing = [
            f"{tool.tool!r} (for {spec})"
            for spec, tool in self.mapping.tools.items()
            if tool.tool not in have
        ]
        if missing:
            raise ValueError(
                f"MCP server command {self.command!r} has no tool {', '.join(missing)}; "
                f"it lists: {', '.join(have) or 'none'} (fix the tool names in the mapping)"
            )

    # -- the contract -------------------------------------------------------------------------

    def describe(self) -> JsonObject:
        """The server's name and version, the ``tools`` capability, the mapping's options."""
        # MCP requires serverInfo's name and version but lets them be empty (the SDK's own
        # server sends version "" unless told one); the contract needs words in both.
        name, version = self.server_info or ("", "")
        return {
            "name": self.mapping.name or name or os.path.basename(self.argv[0]),
            "version": self.mapping.version or version or "unknown",
            "language": self.mapping.language,
            "capabilities": ["tools"],
            "options": dict(self.options),
            "paths": self.mapping.paths,
        }

    def open_workspace(self, root: str, options: Mapping[str, Json]) -> str:
        """Start one server process for ``root``; its session handle."""
        declared = self.options
        for name, value in options.items():
            if name not in _OPTION_DEFAULTS:
                raise ValueError(f"unknown workspace option {name!r}")
            if value == _OPTION_DEFAULTS[name] or (name == "writableRoots" and value == []):
                continue
            flag = "unguarded" if name == "policy" else name
            supported = (
                value in declared.get("sandbox", []) if name == "sandbox" else declared.get(flag)
            )
            if not supported:
                raise ValueError(
                    f"the MCP bridge cannot open a workspace with {name}={json.dumps(value)}: "
                    "the mapping does not declare it ([describe.options])"
                )
        roots = options.get("writableRoots") or []
        if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
            raise ValueError(f"writableRoots must be a list of paths, got {json.dumps(roots)}")
        session = self._start(root, options.get("sandbox") or "danger-full-access", roots)
        with self._lock:
            handle = f"mcp_{next(self._handles)}"
            self._sessions[handle] = session
        return handle

    def call_tool(self, session: str, name: str, arguments: Json) -> JsonObject:
        """Translate one spec tool call, send it, and answer the wire result (SPEC §2.1)."""
        state = self._session(session)
        call_id = state.next_id()
        tool = self.mapping.tools.get(name)
        try:
            if tool is None:
                raise Refusal(lambda w: w("tool.unknown", name=name))
            sent = tool.translate(parse_arguments(arguments))
        except Refusal as refusal:
            return _wire(call_id, self.wording.error(refusal.words(self.wording)), True)
        try:
            json.dumps(sent, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            # The SDK's writer would die on it and take the whole connection down.
            raise ValueError(f"{tool.tool}: a lone surrogate cannot be sent over MCP") from None
        from mcp import MCPError  # noqa: PLC0415 - the SDK is an optional extra
        from mcp.types import CONNECTION_CLOSED  # noqa: PLC0415
        from pydantic import ValidationError  # noqa: PLC0415 - the SDK's own dependency

        try:
            result = self._await(
                state.client.call_tool(tool.tool, sent), self.mapping.call_timeout, tool.tool
            )
        except ValidationError as exc:
            # The SDK's words name its model and a documentation link; the server's defect is
            # which field of the answer is wrong.
            raise RuntimeError(
                f"the MCP server's answer to {tool.tool} is not a tools/call result: "
                f"{_fields_wrong(exc)}"
            ) from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                said = state.err.tail() if state.err is not None else ""
                raise RuntimeError(
                    f"the MCP server closed the connection during {tool.tool}: {exc.message}{said}"
                ) from None
            state.check_stdout(tool.tool)
            return _wire(call_id, self.wording.error(f"MCP error {exc.code}: {exc.message}"), True)
        state.check_stdout(tool.tool)
        return _wire(call_id, _text_of(result), bool(result.is_error))

    def close_workspace(self, session: str) -> None:
        """Stop that session's server process."""
        with self._lock:
            state = self._sessions.pop(session, None)
        if state is None:
            raise KeyError(f"no open session {session!r}")
        self._stop(state)

    def close(self) -> None:
        """Stop every server and the bridge's event loop (idempotent)."""
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for state in sessions:
            self._stop(state)
        with self._strays.lock:
            later, self._strays.later = self._strays.later, 0
        if later:
            lines = f"{later} more line{'s' if later > 1 else ''}"
            print(f"MCP bridge: the servers wrote {lines} to stdout that are not MCP messages "
                  "(only the first is reported)", file=sys.stderr)  # fmt: skip
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=_STOP_GRACE_S)

    # -- connections --------------------------------------------------------------------------

    def _session(self, handle: str) -> _Session:
        with self._lock:
            state = self._sessions.get(handle)
        if state is None:
            raise KeyError(f"no open session {handle!r}")
        return state

    def _start(self, root: str, sandbox: str, roots: list[str]) -> _Session:
        argv: list[str] = []
        for word in self.argv:
            if word == ROOTS_WORD:
                argv += roots
            else:
                argv.append(word.replace("{root}", root).replace("{sandbox}", sandbox))
        ready: concurrent.futures.Future[ClientSession] = concurrent.futures.Future()
        stop: concurrent.futures.Future[None] = concurrent.futures.Future()
        strays: list[str] = []
        err = _ServerStderr()
        runner = asyncio.run_coroutine_threadsafe(
            self._connect(argv, ready, stop, strays, err), self._loop
        )
        timeout = self.mapping.startup_timeout
        try:
            client = ready.result(timeout=timeout)
        except TimeoutError:
            # Told to stop, the connection leaves its context managers, and the SDK stops the
            # server (stdin closed, then its process group killed); cancelling the task instead
            # would leave a server that never answers running after the suite has ended.
            _wind_down(stop, runner)
            raise ValueError(
                f"MCP server command {self.command!r} did not answer initialize "
                f"within {timeout:g} s ([server] startup_timeout in the mapping)"
            ) from None
        except Exception as exc:
            raise ValueError(
                f"MCP server command {self.command!r} could not start: {_reason(exc)}{err.tail()}"
            ) from None
        return _Session(client, stop, runner, self._strays, strays, err=err)

    async def _connect(
        self,
        argv: list[str],
        ready: concurrent.futures.Future[ClientSession],
        stop: concurrent.futures.Future[None],
        strays: list[str],
        err: _ServerStderr,
    ) -> None:
        """Hold one connection open, in one task as the SDK's context managers need, until stop.

        A line on the server's stdout that is not an MCP message reaches the SDK's message
        handler as an exception; it is kept in ``strays`` for the session's next call to look at.
        """
        from mcp import ClientSession, StdioServerParameters  # noqa: PLC0415
        from mcp.client.stdio import stdio_client  # noqa: PLC0415
        from mcp.types import Implementation  # noqa: PLC0415

        from conformance import __version__  # noqa: PLC0415

        # The SDK passes on only a few variables by default; a harness inherits the whole
        # environment (the suite's secret canaries included, SPEC §1.4).
        parameters = StdioServerParameters(
            command=argv[0], args=argv[1:], env={**os.environ, **self.mapping.env}
        )

        async def on_message(message: object) -> None:
            if isinstance(message, Exception):
                strays.append(_stray_line(message))

        try:
            async with (
                stdio_client(parameters, errlog=err.writer) as (read, write),
                ClientSession(
                    read,
                    write,
                    client_info=Implementation(name="harness-conformance", version=__version__),
                    message_handler=on_message,
                ) as client,
            ):
                err.started()
                initializing = asyncio.ensure_future(client.initialize())
                stopping = asyncio.wrap_future(stop)
                await asyncio.wait((initializing, stopping), return_when=asyncio.FIRST_COMPLETED)
                if not initializing.done():  # given up on (startup_timeout): stop the server
                    initializing.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await initializing
                    return
                initialized = initializing.result()
                info = initialized.server_info
                self.server_info = (info.name, info.version)
                _settle(ready, client)
                await asyncio.wrap_future(stop)
        except Exception as exc:
            if not ready.done():
                _fail(ready, exc)
            else:
                print(f"MCP bridge: the server {argv[0]!r} ended: {_reason(exc)}", file=sys.stderr)
        finally:
            if not ready.done():
                _fail(ready, RuntimeError("the connection ended before initialize"))

    def _stop(self, state: _Session) -> None:
        _wind_down(state.stop, state.runner)

    def _await(self, coroutine: Coroutine[Any, Any, _T], timeout: float, what: str) -> _T:
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result(timeout=timeout)
        except TimeoutError:
            future.cancel()
            raise TimeoutError(
                f"the MCP server did not answer {what} within {timeout:g} s "
                "(raise [server] call_timeout in the mapping)"
            ) from None


async def _tool_names(client: ClientSession) -> list[str]:
    """Every tool the server lists, page after page (MCP lets it page with ``nextCursor``)."""
    from mcp.types import PaginatedRequestParams  # noqa: PLC0415

    names: list[str] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        params = None if cursor is None else PaginatedRequestParams(cursor=cursor)
        page = await client.list_tools(params=params)
        names += [tool.name for tool in page.tools]
        cursor = page.next_cursor
        if not cursor:
            break
    return names


_MAX_PAGES: Final = 100
"""How many pages of tools the bridge reads at most (a server that never stops paging)."""


def _fields_wrong(error: Any) -> str:
    """What a validation error found, field by field, in one line: ``content: Field required``."""
    found = []
    for problem in error.errors()[:3]:
        where = ".".join(str(part) for part in problem.get("loc", ())) or "the answer"
        found.append(f"{where}: {problem.get('msg', 'invalid')}")
    return "; ".join(found) or _reason(error)


def _mode_of(options: Mapping[str, Json]) -> str:
    """A sandbox mode the options declare (the probe's), danger-full-access by preference."""
    modes = options.get("sandbox") or []
    return "danger-full-access" if "danger-full-access" in modes or not modes else str(modes[0])


def _stray_line(error: Exception) -> str:
    """The stdout line behind the SDK's parse error, as far as it says."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            found = errors()
            if found:
                line = found[0].get("input")
                text = line if isinstance(line, str) else json.dumps(line, default=str)
                return text[:200]
    return _one_line(str(error))[:200]


def _wire(call_id: str, text: str, is_error: bool) -> JsonObject:
    return {"callId": call_id, "content": [{"type": "text", "text": text}], "isError": is_error}


def _text_of(result: CallToolResult) -> str:
    parts = []
    for block in result.content:
        text = getattr(block, "text", None)
        parts.append(text if isinstance(text, str) else f"[{block.type} content]")
    return "\n".join(parts)


def _wind_down(
    stop: concurrent.futures.Future[None], runner: concurrent.futures.Future[None]
) -> None:
    """Tell one connection to stop and wait for it: the SDK stops its server as it leaves."""
    _settle(stop, None)
    try:
        runner.result(timeout=_STOP_GRACE_S)
    except (TimeoutError, concurrent.futures.CancelledError):
        runner.cancel()
    except Exception as exc:
        print(f"MCP bridge: stopping a server failed: {_reason(exc)}", file=sys.stderr)


def _settle(future: concurrent.futures.Future[_T], value: _T) -> None:
    # Already settled or given up on (a timed-out start): nobody is waiting for this answer.
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        future.set_result(value)


def _fail(future: concurrent.futures.Future[Any], error: BaseException) -> None:
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        future.set_exception(error)


def _reason(error: BaseException) -> str:
    """One line for an error, looking inside the exception groups the SDK's task groups raise."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return _one_line(str(error)) or type(error).__name__


def _one_line(text: str) -> str:
    return " ".join(text.split())


class _ServerStderr:
    """One server's stderr: passed on to the bridge's own as it comes, its last lines kept.

    When the server ends (at start-up, or during a call) they are the one clue to why, as
    they are for a ``--harness-cmd`` child: the error that says so ends with them.
    """

    def __init__(self) -> None:
        read, write = os.pipe()
        self.writer = os.fdopen(write, "w")
        """Handed to the server as its stderr."""
        self._read = read
        self.spawned = False
        self._lines: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        self._done = threading.Event()
        threading.Thread(target=self._drain, name="mcp-server-stderr", daemon=True).start()

    def started(self) -> None:
        """The server holds its copy now: the bridge lets go of its own, so the server's end
        ends the pipe."""
        self.spawned = True
        self._let_go()

    def tail(self) -> str:
        """``; the last lines of its stderr: …`` (one line), once the server has ended; nothing
        for a command that never became a process."""
        self._let_go()
        if not self.spawned:
            return ""
        # Bounded: a process the server started may hold its stderr open after it ended.
        self._done.wait(_STDERR_GRACE_S)
        lines = [line.strip() for line in list(self._lines) if line.strip()]
        if not lines:
            return "; it wrote nothing to stderr"
        return "; the last lines of its stderr: " + " | ".join(lines)

    def _let_go(self) -> None:
        with contextlib.suppress(OSError):
            self.writer.close()

    def _drain(self) -> None:
        out = _errlog()
        raw = getattr(out, "buffer", None)
        pending = b""
        try:
            while chunk := os.read(self._read, 65536):
                with contextlib.suppress(OSError, ValueError):
                    if raw is not None:
                        raw.write(chunk)
                        raw.flush()
                    else:
                        out.write(chunk.decode("utf-8", "replace"))
                        out.flush()
                *whole, pending = (pending + chunk).split(b"\n")
                self._lines.extend(line.decode("utf-8", "replace") for line in whole)
        except OSError:
            pass
        finally:
            if pending:
                self._lines.append(pending.decode("utf-8", "replace"))
            with contextlib.suppress(OSError):
                os.close(self._read)
            self._done.set()


_STDERR_GRACE_S: Final = 1.0
"""How long the error that says a server ended waits for the rest of its stderr."""
STDERR_TAIL: Final = 3
"""How many of a server's last stderr lines an error that says it ended quotes."""


def _errlog() -> TextIO:
    """Where the servers' stderr goes: the bridge's own stderr (never stdout, the protocol)."""
    for stream in (sys.stderr, sys.__stderr__):
        if stream is None:
            continue
        try:
            stream.fileno()
        except (AttributeError, OSError, ValueError):
            continue
        return stream
    return open(os.devnull, "w")  # lives as long as the process
