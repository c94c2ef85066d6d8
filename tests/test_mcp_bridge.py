"""The MCP bridge: the mapping, raw argument text, and the suite judging an MCP server over stdio.

The server in these tests is ``tests/fixtures/mcp_server.py``: the reference harness's tools
behind the argument shapes of the MCP reference filesystem server, so no npm is needed and the
behaviour the suite sees through the bridge is the reference's.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.harness import mcp as mcp_module
from conformance.harness import strays
from conformance.harness.mcp import (
    MappingError,
    McpBridge,
    Refusal,
    ToolMap,
    granted_options,
    load_mapping,
    parse_arguments,
)
from conformance.spec import Wording
from tests.suite import REPO, cases, process_ends, report, run_suite

SERVER = REPO / "tests" / "fixtures" / "mcp_server.py"
COMMAND = f"{shlex.quote(sys.executable)} {shlex.quote(str(SERVER))} {{root}}"
PLAIN = REPO / "tests" / "fixtures" / "mcp_plain_files.py"
PLAIN_COMMAND = f"{shlex.quote(sys.executable)} {shlex.quote(str(PLAIN))} {{root}}"
"""An ordinary server written with the SDK's ``MCPServer`` (slow to start: the SDK's import)."""
TRICKY = 'say "hi"\n\tback\\slash {file_path} {{x}} ü\r\n </content>'
"""A value a string-formatting template would mangle: quotes, escapes, braces, non-ASCII."""


def mapping_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "map.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def tool_of(tmp_path: Path, text: str, spec: str) -> ToolMap:
    return load_mapping(mapping_file(tmp_path, text)).tools[spec]


def error_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("ERROR")]


# -- the mapping --------------------------------------------------------------------------------


def test_the_default_mapping_speaks_the_reference_filesystem_server() -> None:
    tools = load_mapping(None).tools
    assert tools["read"].translate({"file_path": "/w/a.txt"}) == {"path": "/w/a.txt"}
    assert tools["read"].translate({"file_path": "/w/a.txt", "limit": 5}) == {
        "path": "/w/a.txt",
        "head": 5,
    }
    assert tools["write"].translate({"file_path": "/w/a.txt", "content": TRICKY}) == {
        "path": "/w/a.txt",
        "content": TRICKY,
    }
    edit = {"file_path": "/w/a.txt", "old_string": TRICKY, "new_string": "b\n"}
    assert tools["edit"].translate(edit) == {
        "path": "/w/a.txt",
        "edits": [{"oldText": TRICKY, "newText": "b\n"}],
    }
    assert [tools[t].tool for t in ("read", "write", "edit")] == [
        "read_text_file",
        "write_file",
        "edit_file",
    ]


def test_the_default_describe_answer() -> None:
    mapping = load_mapping(None)
    assert (mapping.language, mapping.paths) == ("mcp", "absolute")
    assert "sandbox" not in mapping.declared  # what the command grants decides it
    assert not any(value for name, value in mapping.options.items() if name != "sandbox")
    assert (mapping.startup_timeout, mapping.call_timeout) == (20.0, 20.0)


def test_rename_const_and_drop(tmp_path: Path) -> None:
    tool = tool_of(
        tmp_path,
        '[tools.read]\ntool = "cat"\nrename = { file_path = "filename" }\n'
        'drop = ["offset"]\nconst = { encoding = "utf-8", filename = "never", n = [1, true] }\n',
        "read",
    )
    assert tool.tool == "cat"
    # A mapped argument wins over a constant of the same name; dropped ones are never sent.
    assert tool.translate({"file_path": "a", "offset": 3}) == {
        "encoding": "utf-8",
        "filename": "a",
        "n": [1, True],
    }


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("pass", {"path": "a", "limit": 2, "mode": "fast"}),
        ("drop", {"path": "a"}),
    ],
)
def test_unmapped_arguments_pass_or_drop(
    tmp_path: Path, policy: str, expected: dict[str, Any]
) -> None:
    text = f'[tools.read]\ntool = "r"\nrename = {{ file_path = "path" }}\nunmapped = "{policy}"\n'
    assert (
        tool_of(tmp_path, text, "read").translate({"file_path": "a", "limit": 2, "mode": "fast"})
        == expected
    )


def test_unmapped_arguments_can_be_refused_as_undeclared(tmp_path: Path) -> None:
    text = '[tools.read]\ntool = "r"\nrename = { file_path = "path" }\nunmapped = "error"\n'
    tool = tool_of(tmp_path, text, "read")
    assert tool.translate({"file_path": "a"}) == {"path": "a"}
    # The spec tool's own arguments are declared: left unrenamed, they go under their names.
    assert tool.translate({"file_path": "a", "limit": 2}) == {"path": "a", "limit": 2}
    with pytest.raises(Refusal) as refused:
        tool.translate({"zeta": 1, "file_path": "a", "limit": 2})
    assert str(refused.value) == (
        'invalid arguments: "zeta" is not a declared property (additionalProperties: false)'
    )


def test_a_server_that_shares_the_spec_names_is_not_refused_its_arguments(tmp_path: Path) -> None:
    # No rename at all: "error" must not count file_path itself as unmapped.
    text = '[tools.edit]\ntool = "e"\nunmapped = "error"\n'
    tool = tool_of(tmp_path, text, "edit")
    arguments: dict[str, Any] = {"file_path": "a", "old_string": "x", "new_string": "y"}
    assert tool.translate(arguments) == arguments


def test_a_refusal_for_undeclared_arguments_lists_every_violation_in_spec_order(
    tmp_path: Path,
) -> None:
    # REG-010's call: naming only the undeclared ones would blame a server that is exact.
    text = '[tools.edit]\ntool = "e"\nunmapped = "error"\n'
    with pytest.raises(Refusal) as refused:
        tool_of(tmp_path, text, "edit").translate(
            {"zeta": 1, "replace_all": "no", "old_string": 2, "alpha": 3}
        )
    assert str(refused.value) == (
        'invalid arguments: missing required property "file_path"; missing required property '
        '"new_string"; "old_string" must be a string; "replace_all" must be a boolean; "zeta" is '
        'not a declared property (additionalProperties: false); "alpha" is not a declared '
        "property (additionalProperties: false)"
    )


def test_a_template_carries_values_whole(tmp_path: Path) -> None:
    template = (
        '{"target": {"path": "{file_path}", "uri": "file://{file_path}"}, '
        '"edits": [{"old": "{old_string}", "new": "{new_string}"}, "{replace_all}"], '
        '"all": "{replace_all}", "note": "{{file_path}} is {old_string}!", "n": 1}'
    )
    text = f"[tools.edit]\ntool = \"e\"\ntemplate = '''{template}'''\n"
    tool = tool_of(tmp_path, text, "edit")
    sent = tool.translate(
        {"file_path": "/w/a b", "old_string": TRICKY, "new_string": "", "replace_all": True}
    )
    assert sent == {
        "target": {"path": "/w/a b", "uri": "file:///w/a b"},
        "edits": [{"old": TRICKY, "new": ""}, True],
        "all": True,
        "note": "{file_path} is " + TRICKY + "!",
        "n": 1,
    }
    # What goes over the wire parses back to the very same values.
    assert json.loads(json.dumps(sent))["edits"][0]["old"] == TRICKY


def test_a_template_leaves_out_what_was_not_given(tmp_path: Path) -> None:
    text = (
        '[tools.edit]\ntool = "e"\n'
        'template = { path = "{file_path}", all = "{replace_all}", '
        'edits = [{ oldText = "{old_string}" }, "{replace_all}"], note = "x {replace_all}" }\n'
    )
    tool = tool_of(tmp_path, text, "edit")
    assert tool.translate({"old_string": "a", "mode": 1}) == {
        "edits": [{"oldText": "a"}],
        "mode": 1,  # not in the template: unmapped, passed under its own name
    }


def test_the_documented_example_is_a_valid_mapping(tmp_path: Path) -> None:
    doc = mcp_module.__doc__
    assert doc is not None
    block = doc.split("key by key::\n", 1)[1].split("\n\n``rename``", 1)[0]
    mapping = load_mapping(mapping_file(tmp_path, textwrap.dedent(block)))
    assert mapping.options["sandbox"] == ["read-only"]
    assert mapping.tools["read"].translate({"file_path": "/a", "offset": 2, "limit": 3}) == {
        "encoding": "utf-8",
        "path": "/a",
        "head": 3,
    }
    assert mapping.tools["edit"].translate({"file_path": "/a", "old_string": "x"}) == {
        "path": "/a",
        "edits": [{"oldText": "x"}],
    }


def test_a_mapping_file_overrides_the_built_in_one_table_by_table(tmp_path: Path) -> None:
    path = mapping_file(
        tmp_path,
        '[describe]\nname = "fs"\n[describe.options]\nreadWindow = true\n'
        '[server]\ncall_timeout = 5\nenv = { A = "b" }\n',
    )
    mapping = load_mapping(path)
    assert mapping.name == "fs"
    assert mapping.options["readWindow"] is True
    assert "sandbox" not in mapping.declared  # neither file names it: the command's grant
    assert (mapping.call_timeout, mapping.startup_timeout, dict(mapping.env)) == (5, 20, {"A": "b"})
    assert set(mapping.tools) == {"read", "write", "edit"}  # no [tools]: the built-in ones
    only_read = load_mapping(mapping_file(tmp_path, '[tools.read]\ntool = "r"\n'))
    assert set(only_read.tools) == {"read"}  # a [tools] table replaces them all


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[tools.read\ntool = 1\n",
         "not TOML: Expected ']' at the end of a table declaration (at line 1, column 12)"),
        ('[describe]\nname = "x"\nname = "y"\n',
         "not TOML: Cannot overwrite a value (at line 3, column 11)"),
        ('[tools.read]\ntool = "r"\nrenames = {}\n',
         "unknown key tools.read.renames; known here: "
         "tool, rename, drop, const, template, unmapped"),
        ("[tool.read]\n", "unknown key tool; known here: describe, server, tools"),
        ('[tools.delete]\ntool = "rm"\n',
         "unknown spec tool 'delete' in [tools]; known: read, write, edit"),
        ("[tools.read]\n", "tools.read.tool must name the server's tool"),
        ('[tools.read]\ntool = "r"\nrename = { path = "file" }\n',
         "tools.read.rename: argument 'path' is not an argument of the spec's read "
         "(file_path, offset, limit)"),
        ('[tools.edit]\ntool = "e"\ntemplate = \'{"path": "{file}"}\'\n',
         "tools.edit.template: placeholder 'file' is not an argument of the spec's edit "
         "(file_path, old_string, new_string, replace_all)"),
        ('[tools.edit]\ntool = "e"\ntemplate = \'{"path": }\'\n',
         "tools.edit.template is not JSON: Expecting value: line 1 column 10 (char 9)"),
        ('[tools.edit]\ntool = "e"\ntemplate = \'["{file_path}"]\'\n',
         "tools.edit.template must be a JSON object (the server's arguments)"),
        ('[tools.read]\ntool = "r"\nunmapped = "ignore"\n',
         "tools.read.unmapped must be one of pass, drop, error, got 'ignore'"),
        ("[describe.options]\nguard = false\n",
         "unknown key describe.options.guard; known here: sandbox, writableRoots, maxReadBytes, "
         "probe, probeInterrupt, replaceAll, readWindow, unguarded, surrogates, tempWritable"),
        ("[server]\ncall_timeout = 0\n",
         "server.call_timeout must be a positive number of seconds, got 0"),
        ("[describe.options]\nsurrogates = true\n",
         "describe.options.surrogates cannot hold through the bridge: a lone surrogate cannot be "
         "sent over MCP (its JSON must be UTF-8)"),
        ("[describe.options]\nprobe = true\n",
         "describe.options.probe cannot hold through the bridge: the probe tools are the suite's "
         "own, and a mapping maps only read, write and edit"),
    ],
)  # fmt: skip
def test_a_bad_mapping_file_is_one_line_naming_it(tmp_path: Path, text: str, problem: str) -> None:
    path = mapping_file(tmp_path, text)
    with pytest.raises(ValueError, match=r"^MCP mapping ") as raised:
        McpBridge.from_command(COMMAND, path)
    assert raised.type is MappingError
    assert str(raised.value) == f"MCP mapping {path}: {problem}"


def test_a_missing_mapping_file(tmp_path: Path) -> None:
    path = str(tmp_path / "nope.toml")
    with pytest.raises(MappingError) as raised:
        load_mapping(path)
    assert str(raised.value) == f"MCP mapping {path}: cannot be read: No such file or directory"


# -- raw argument text --------------------------------------------------------------------------


NOT_JSON = 'invalid arguments: "arguments" is not valid JSON'


@pytest.mark.parametrize(
    "raw",
    [
        '{"file_path": "a"',
        "",
        '{"file_path": NaN}',
        '{"offset": Infinity}',
        '{"offset": 1e999}',
        '{"offset": 1' + "0" * 100 + "}",
        '{"file_path": ' + "[" * 100 + "]" * 100 + "}",
        '{"file_path": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ],
)
def test_raw_text_past_the_spec_limits_is_not_json(raw: str) -> None:
    with pytest.raises(Refusal) as refused:
        parse_arguments(raw)
    assert str(refused.value) == NOT_JSON


def test_raw_text_within_the_limits_parses() -> None:
    at_the_limit = '{"file_path": ' + "[" * 99 + "]" * 99 + ', "s": "[[[[{{{{"}'
    assert parse_arguments(at_the_limit)["s"] == "[[[[{{{{"
    assert parse_arguments('{"offset": 1.5' + "0" * 90 + "}") == {"offset": 1.5}
    assert parse_arguments('{"q": "\\"}\\n"}') == {"q": '"}\n'}
    for raw in ['["a"]', '"a"', "null", "3"]:
        with pytest.raises(Refusal, match='"arguments" must be an object'):
            parse_arguments(raw)
    with pytest.raises(Refusal, match='"arguments" must be an object'):
        parse_arguments(["a"])


# -- the bridge over the fixture server ----------------------------------------------------------


@pytest.fixture(scope="module")
def bridge() -> Iterator[McpBridge]:
    made = McpBridge.from_command(COMMAND, None)
    yield made
    made.close()


def text(result: dict[str, Any]) -> str:
    assert set(result) == {"callId", "content", "isError"}  # no taxonomy: never an error key
    [block] = result["content"]
    assert block["type"] == "text"
    return str(block["text"])


def test_a_server_with_an_empty_version_is_described_with_one() -> None:
    # The SDK's own server sends serverInfo.version "" unless told one: legal MCP, which the
    # describe answer must not turn into an empty version (a CON-001 failure).
    made = McpBridge.from_command(PLAIN_COMMAND, str(PLAIN.with_suffix(".toml")))
    try:
        described = made.describe()
    finally:
        made.close()
    assert (described["name"], described["version"]) == ("plain-files", "unknown")


def test_describe_names_the_server(bridge: McpBridge) -> None:
    described = bridge.describe()
    assert described["name"] == "reference-over-mcp"
    assert described["version"] == "0.1.0"
    assert described["capabilities"] == ["tools"]
    assert described["paths"] == "absolute"
    # The command passes {root}: the server is fenced to the workspace, and says so.
    assert described["options"] == {**load_mapping(None).options, "sandbox": ["workspace-write"]}


def test_the_guard_holds_through_the_bridge(bridge: McpBridge, tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old\n", encoding="utf-8")
    session = bridge.open_workspace(str(tmp_path), {})
    try:
        refused = bridge.call_tool(session, "write", {"file_path": str(target), "content": "x"})
        assert (refused["callId"], refused["isError"]) == ("call_1", True)
        assert "without reading it first" in text(refused)
        assert target.read_text(encoding="utf-8") == "old\n"
        read = bridge.call_tool(session, "read", {"file_path": str(target)})
        assert (read["callId"], read["isError"]) == ("call_2", False)
        assert "1: old" in text(read)
        raw = json.dumps({"file_path": str(target), "old_string": "old\n", "new_string": TRICKY})
        edited = bridge.call_tool(session, "edit", raw)
        assert edited["isError"] is False, text(edited)
        assert target.read_bytes() == TRICKY.encode("utf-8")
    finally:
        bridge.close_workspace(session)


def test_sessions_are_separate_servers(bridge: McpBridge, tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("a\n", encoding="utf-8")
    first = bridge.open_workspace(str(tmp_path), {})
    second = bridge.open_workspace(str(tmp_path), {"policy": True, "sandbox": None})
    try:
        assert bridge.call_tool(first, "read", {"file_path": str(target)})["isError"] is False
        # The other session never read it: its own server refuses the overwrite.
        other = bridge.call_tool(second, "write", {"file_path": str(target), "content": "b"})
        assert (other["callId"], other["isError"]) == ("call_1", True)
        mine = bridge.call_tool(first, "write", {"file_path": str(target), "content": "b"})
        assert (mine["callId"], mine["isError"]) == ("call_2", False)
    finally:
        bridge.close_workspace(first)
        bridge.close_workspace(second)
    with pytest.raises(KeyError):
        bridge.call_tool(first, "read", {"file_path": str(target)})


def test_refusals_of_the_bridge_itself(bridge: McpBridge, tmp_path: Path) -> None:
    session = bridge.open_workspace(str(tmp_path), {})
    try:
        unknown = bridge.call_tool(session, "delete_file", {"file_path": "a"})
        assert (unknown["isError"], text(unknown)) == (True, 'Error: unknown tool "delete_file"')
        broken = bridge.call_tool(session, "read", '{"file_path": ')
        assert (broken["isError"], text(broken)) == (True, f"Error: {NOT_JSON}")
        listed = bridge.call_tool(session, "write", [])
        assert text(listed) == 'Error: invalid arguments: "arguments" must be an object'
        # The server's own argument validation answers a wrong type: refused, nothing written.
        typed = bridge.call_tool(session, "write", {"file_path": 7, "content": "x"})
        assert typed["isError"] is True
        assert [c["callId"] for c in (unknown, broken, listed, typed)] == [
            "call_1",
            "call_2",
            "call_3",
            "call_4",
        ]
        assert list(tmp_path.iterdir()) == []
    finally:
        bridge.close_workspace(session)


def test_the_bridges_own_refusals_are_said_in_the_runs_wording_table(tmp_path: Path) -> None:
    # The bridge speaks for the server's registry: under a table that rewords the error prefix
    # or a refusal, its spec words failed REG-004 and REG-009 for every server, which could
    # not have said otherwise (it never sees those calls).
    table = tmp_path / "words.toml"
    table.write_text(
        '[wording]\nerror = "ERROR({message})"\n"tool.unknown" = "no tool {name}"\n'
        '"args.not_json" = "arguments are not JSON"\n'
        '"args.undeclared" = "{path} is not an argument"\n',
        encoding="utf-8",
    )
    bridge = McpBridge.from_command(COMMAND, None, str(table))
    session = bridge.open_workspace(str(tmp_path), {})
    try:
        unknown = bridge.call_tool(session, "delete_file", {"file_path": "a"})
        assert text(unknown) == "ERROR(no tool delete_file)"
        broken = bridge.call_tool(session, "read", '{"file_path": ')
        assert text(broken) == "ERROR(invalid arguments: arguments are not JSON)"
        listed = bridge.call_tool(session, "write", [])
        assert text(listed) == 'ERROR(invalid arguments: "arguments" must be an object)'
    finally:
        bridge.close_workspace(session)
        bridge.close()
    # every violation of an undeclared-argument refusal, each in the table's words if it has them
    refusal = mcp_module._invalid(*map(mcp_module._reworded, [
        '"zeta" is not a declared property (additionalProperties: false)',
        'missing required property "file_path"', '"x" must be one of [1,2]', "something else"]))  # fmt: skip
    assert refusal.words(Wording.load(table)) == (
        'invalid arguments: zeta is not an argument; missing required property "file_path"; '
        '"x" must be one of [1,2]; something else'
    )
    assert str(refusal) == (
        'invalid arguments: "zeta" is not a declared property (additionalProperties: false); '
        'missing required property "file_path"; "x" must be one of [1,2]; something else'
    )


def test_a_run_over_mcp_with_a_wording_table_judges_the_bridges_words_by_it(
    tmp_path: Path,
) -> None:
    table = tmp_path / "words.toml"
    table.write_text('[wording]\n"tool.unknown" = "no tool named \\"{name}\\""\n'
                     '"args.not_json" = "arguments are not JSON"\n', encoding="utf-8")  # fmt: skip
    path = tmp_path / "r.json"
    done = run_suite("--harness-mcp", COMMAND, "--conformance-wording", str(table),
                     "--conformance-case", "REG-004", "--conformance-case", "REG-009",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    assert {c["id"]: c["levels"] for c in cases(report(path))} == {
        "REG-004": {"behaviour": "passed", "wording": "passed"},
        "REG-009": {"behaviour": "passed", "wording": "passed"},
    }


def test_options_the_server_cannot_honour_are_refused(bridge: McpBridge, tmp_path: Path) -> None:
    refused: list[tuple[dict[str, Any], str]] = [
        ({"policy": False}, "policy=false"),
        ({"sandbox": "read-only"}, 'sandbox="read-only"'),
        ({"probe": True}, "probe=true"),
        ({"maxReadBytes": 10}, "maxReadBytes=10"),
    ]
    for options, shown in refused:
        with pytest.raises(ValueError, match="cannot open a workspace") as raised:
            bridge.open_workspace(str(tmp_path), options)
        assert shown in str(raised.value)


def test_a_command_that_cannot_start_is_one_line(tmp_path: Path) -> None:
    command = "no-such-mcp-server --root {root}"
    with pytest.raises(ValueError, match="could not start") as raised:
        McpBridge.from_command(command, None)
    assert str(raised.value) == (
        "MCP server command 'no-such-mcp-server --root {root}' could not start: "
        "[Errno 2] No such file or directory: 'no-such-mcp-server'"
    )
    quiet = f"{shlex.quote(sys.executable)} -c pass"
    with pytest.raises(ValueError, match="could not start") as ended:
        McpBridge.from_command(quiet, None)
    assert "\n" not in str(ended.value)


def test_a_server_slow_to_start_names_the_setting_to_raise(tmp_path: Path) -> None:
    path = mapping_file(tmp_path, "[server]\nstartup_timeout = 0.5\n")
    pid_file = tmp_path / "pid"
    script = (
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    )
    silent = f"{shlex.quote(sys.executable)} -c {shlex.quote(script)}"
    with pytest.raises(ValueError, match="did not answer initialize") as raised:
        McpBridge.from_command(silent, path)
    assert str(raised.value).endswith("within 0.5 s ([server] startup_timeout in the mapping)")
    # Given up on, it is stopped (and reaped) before the error is raised, not left running.
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_a_server_that_ends_is_named_by_its_last_stderr_lines(tmp_path: Path) -> None:
    # As a --harness-cmd child's end is: "Connection closed" alone says nothing of why.
    failing = f"{shlex.quote(sys.executable)} -c " + shlex.quote(
        "import sys; print('cannot open database', file=sys.stderr); sys.exit(3)"
    )
    with pytest.raises(ValueError, match="could not start") as raised:
        McpBridge.from_command(failing, None)
    assert str(raised.value).endswith("; the last lines of its stderr: cannot open database")
    assert _first_read_fails(tmp_path, "--dies") == (
        "the MCP server closed the connection during read_text_file: Connection closed; "
        "the last lines of its stderr: mcp_server: lost its database"
    )


def test_an_answer_of_the_wrong_shape_names_the_field(tmp_path: Path) -> None:
    assert _first_read_fails(tmp_path, "--bad-shape") == (
        "the MCP server's answer to read_text_file is not a tools/call result: "
        "content: Field required"
    )


def _first_read_fails(tmp_path: Path, flag: str) -> str:
    """The error of the first read through the fixture server started with ``flag``."""
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(SERVER))} {flag} {{root}}"
    bridge = McpBridge.from_command(command, None)
    try:
        session = bridge.open_workspace(str(tmp_path), {})
        with pytest.raises(RuntimeError) as raised:
            bridge.call_tool(session, "read", {"file_path": str(tmp_path / "a.txt")})
    finally:
        bridge.close()
    return str(raised.value)


# -- the suite, through --harness-mcp -----------------------------------------------------------


# Each workspace is a server process, so the suite is run on the areas a file-tools server is
# about: the guard, the dead end, and read output.
SELECTION = "GRD or DEL or RD- or TAX-001"


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    work = tmp_path_factory.mktemp("mcp-suite")
    path = work / "R.json"
    done = run_suite("--harness-mcp", COMMAND, "--conformance-level", "behaviour", "-k", SELECTION,
                     "--conformance-report", str(path), cwd=work)  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    return report(path)


def test_the_suite_judges_an_mcp_server(judged: dict[str, object]) -> None:
    harness = judged["harness"]
    assert isinstance(harness, dict)
    assert harness["name"] == "reference-over-mcp"
    assert harness["capabilities"] == ["tools"]
    assert harness["paths"] == "absolute"
    assert judged["run"]["kind"] == "mcp"  # type: ignore[index]
    assert judged["complete"] is True
    cases = judged["cases"]
    assert isinstance(cases, list)
    found = {c["id"]: c["outcome"] for c in cases}
    assert found["TAX-001"] == "not-applicable"
    guards = [c for c in cases if c["id"].startswith(("GRD-", "DEL-"))]
    judged_guards = [c for c in guards if c["outcome"] != "not-applicable"]
    assert len(judged_guards) >= 20
    assert all(c["levels"]["behaviour"] == "passed" for c in judged_guards), judged_guards
    assert set(found.values()) <= {"passed", "not-applicable"}, found
    assert sum(outcome == "passed" for outcome in found.values()) >= 30


@pytest.mark.skipif(not strays.supported(), reason="finds what a child started via /proc (Linux)")
def test_a_server_stuck_in_a_call_does_not_outlive_the_run(tmp_path: Path) -> None:
    # The SDK starts a server in a session of its own: killing the bridge's process group
    # missed it, and a server blocked in a tool call stayed blocked after the run, for good.
    pid_file = tmp_path / "server.pid"
    command = (
        f"{shlex.quote(sys.executable)} {shlex.quote(str(SERVER))} --stuck={pid_file} {{root}}"
    )
    # The suite gives up first, and stops the bridge with the call still waiting.
    path = mapping_file(tmp_path, "[server]\ncall_timeout = 600\n")
    done = run_suite("--harness-mcp", command, "--harness-mcp-map", path, "--conformance-timeout",
                     "2", "--conformance-level", "behaviour", "--conformance-case", "RD-001",
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    assert "did not answer within 2.0 s (--conformance-timeout)" in done.stdout
    assert process_ends(int(pid_file.read_text()))


def test_a_bad_mcp_command_is_one_error_line(tmp_path: Path) -> None:
    done = run_suite("--harness-mcp", "no-such-mcp-server {root}", cwd=tmp_path)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert error_lines(done) == [
        "ERROR: MCP server command 'no-such-mcp-server {root}' could not start: "
        "[Errno 2] No such file or directory: 'no-such-mcp-server'"
    ]


def test_a_tool_the_server_does_not_have_is_one_error_line(tmp_path: Path) -> None:
    # An older server's name for read: every read would be refused as "Unknown tool" and read
    # as the guard at work, passing the cases that expect a refusal without a read ever made.
    path = mapping_file(tmp_path, '[tools.read]\ntool = "read_file"\n')
    done = run_suite("--harness-mcp", COMMAND, "--harness-mcp-map", path, cwd=tmp_path)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert error_lines(done) == [
        f"ERROR: MCP server command {COMMAND!r} has no tool 'read_file' (for read); it lists: "
        "edit_file, read_text_file, write_file (fix the tool names in the mapping)"
    ]


def test_the_tools_of_a_server_that_pages_them_are_all_found(tmp_path: Path) -> None:
    paged = f"{shlex.quote(sys.executable)} {shlex.quote(str(SERVER))} --paged {{root}}"
    McpBridge.from_command(paged, None).close()  # the built-in mapping's three, on three pages
    path = mapping_file(tmp_path, '[tools.read]\ntool = "read_file"\n')
    with pytest.raises(ValueError, match="has no tool") as raised:
        McpBridge.from_command(paged, path)
    assert str(raised.value).endswith(
        "it lists: edit_file, read_text_file, write_file (fix the tool names in the mapping)"
    )


def test_a_mapping_that_does_not_parse_is_one_error_line(tmp_path: Path) -> None:
    path = mapping_file(tmp_path, "[tools.read\n")
    done = run_suite("--harness-mcp", COMMAND, "--harness-mcp-map", path, cwd=tmp_path)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert error_lines(done) == [
        f"ERROR: MCP mapping {path}: not TOML: "
        "Expected ']' at the end of a table declaration (at line 1, column 12)"
    ]


# -- what the command grants, and what reaches the server ---------------------------------------

ROOTS_COMMAND = f"{COMMAND} {{writableRoots}}"
NOISY_COMMAND = f"{shlex.quote(sys.executable)} {shlex.quote(str(SERVER))} --noisy {{root}}"


@pytest.mark.parametrize(
    ("command", "sandbox", "roots"),
    [
        ("npx -y @modelcontextprotocol/server-filesystem {root}", ["workspace-write"], False),
        ("npx -y @modelcontextprotocol/server-filesystem {root} {writableRoots}",
         ["workspace-write"], True),
        ("my-server --stdio", ["danger-full-access"], False),
        ("my-server --allow={root}", ["workspace-write"], False),
    ],
)  # fmt: skip
def test_the_built_in_mapping_declares_what_the_command_grants(
    command: str, sandbox: list[str], roots: bool
) -> None:
    options = granted_options(load_mapping(None), shlex.split(command))
    assert (options["sandbox"], options["writableRoots"]) == (sandbox, roots)


def test_a_mapping_that_declares_the_sandbox_wins_over_the_command(tmp_path: Path) -> None:
    path = mapping_file(tmp_path, '[describe.options]\nsandbox = ["danger-full-access"]\n')
    options = granted_options(load_mapping(path), ["server", "{root}"])
    assert (options["sandbox"], options["writableRoots"]) == (["danger-full-access"], False)


def test_a_command_passing_the_mode_must_declare_the_modes() -> None:
    with pytest.raises(MappingError) as raised:
        granted_options(load_mapping(None), ["server", "--mode={sandbox}", "{root}"])
    assert str(raised.value) == (
        "the MCP server command passes {sandbox}: declare the modes the server honours in the "
        "mapping ([describe.options] sandbox = [...])"
    )


def test_writable_roots_reach_the_server(tmp_path: Path) -> None:
    root, extra = tmp_path / "ws", tmp_path / "extra"
    root.mkdir()
    extra.mkdir()
    bridge = McpBridge.from_command(ROOTS_COMMAND, None)
    try:
        assert bridge.describe()["options"]["writableRoots"] is True
        session = bridge.open_workspace(
            str(root), {"sandbox": "workspace-write", "writableRoots": [str(extra)]}
        )
        inside = bridge.call_tool(session, "write", {"file_path": str(extra / "n.txt"),
                                                     "content": "ok\n"})  # fmt: skip
        assert inside["isError"] is False, text(inside)
        outside = bridge.call_tool(session, "write", {"file_path": str(tmp_path / "no.txt"),
                                                      "content": "no\n"})  # fmt: skip
        assert outside["isError"] is True
        assert "[sandbox: file access denied under workspace-write mode]" in text(outside)
        bridge.close_workspace(session)
    finally:
        bridge.close()
    assert (extra / "n.txt").read_text() == "ok\n"
    assert not (tmp_path / "no.txt").exists()


def test_lines_a_server_logs_onto_stdout_are_its_defect_reported_once(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    bridge = McpBridge.from_command(NOISY_COMMAND, None)
    try:
        session = bridge.open_workspace(str(tmp_path), {})
        with pytest.raises(RuntimeError) as startup:
            bridge.call_tool(session, "read", {"file_path": str(tmp_path / "a.txt")})
        first, seen = str(startup.value).split("\n")
        assert first == (
            "the MCP server wrote lines to stdout that are not MCP messages; MCP's stdio "
            "transport carries only JSON-RPC messages there (a server logs to stderr)"
        )
        assert seen.endswith(
            "2 lines by the time read_text_file answered, the first: "
            "'Secure MCP Filesystem Server running on stdio'"
        )
        # Reported once for the whole bridge: a server that logs on every call, in this
        # session or another, has each later answer judged as it is.
        again = bridge.call_tool(session, "read", {"file_path": str(tmp_path / "a.txt")})
        assert again["isError"] is False
        assert "1: a" in text(again)
        other = bridge.open_workspace(str(tmp_path), {})
        observed = bridge.call_tool(other, "read", {"file_path": str(tmp_path / "a.txt")})
        assert observed["isError"] is False
        written = bridge.call_tool(other, "write", {"file_path": str(tmp_path / "a.txt"),
                                                    "content": "b\n"})  # fmt: skip
        assert written["isError"] is False, text(written)
        bridge.close_workspace(session)
        bridge.close_workspace(other)
    finally:
        bridge.close()
    assert (tmp_path / "a.txt").read_text() == "b\n"
    # The later lines (a banner per server, a line per call) are counted in the bridge's log.
    assert (
        "the servers wrote 4 more lines to stdout that are not MCP messages (only the "
        "first is reported)" in capfd.readouterr().err
    )


def test_a_server_that_logs_on_stdout_fails_the_same_call_of_a_racing_case_every_time(
    tmp_path: Path,
) -> None:
    # CON-002's first calls used to be its eight racers: whichever came first reported the
    # server's stray line, so the verdict named another file on each run (baseline churn).
    messages = []
    for run in range(2):
        path = tmp_path / f"r{run}.json"
        run_suite("--harness-mcp", NOISY_COMMAND, "--conformance-case", "CON-002",
                  "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
        entry = next(c for c in cases(report(path)) if c["id"] == "CON-002")
        assert entry["outcome"] == "failed", entry
        messages.append(str(entry["message"]))
    assert messages[0] == messages[1]
    assert messages[0].startswith(
        'HarnessCallError: call_tool("read", {"file_path": "<root>/first.txt"})'
    ), messages[0]


def test_the_suite_judges_the_fence_of_an_mcp_server(tmp_path: Path) -> None:
    path = tmp_path / "R.json"
    done = run_suite("--harness-mcp", ROOTS_COMMAND, "--conformance-level", "behaviour", "-k",
                     "SBX", "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    found = {c["id"]: c["outcome"] for c in cases(report(path))}
    # Fenced to the workspace and its extra roots, as the command says: no false alarm on
    # danger-full-access (SBX-008 does not apply), and the extra roots are judged.
    assert (found["SBX-008"], found["SBX-009"], found["SBX-001"]) == (
        "not-applicable", "passed", "passed",
    )  # fmt: skip


def test_a_noisy_server_fails_one_case_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "R.json"
    done = run_suite("--harness-mcp", NOISY_COMMAND, "--conformance-level", "behaviour",
                     "-k", "RD-001 or RD-002 or GRD-001", "--conformance-report", str(path),
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stdout[-4000:] + done.stderr[-2000:]
    found = report(path)
    ran = cases(found)
    # The first case to call a tool reports the line; every later case is judged as it is.
    assert sorted(c["outcome"] for c in ran) == ["failed"] + ["passed"] * (len(ran) - 1), ran
    assert {"RD-001", "RD-002", "GRD-001"} <= {c["id"] for c in ran}
    [failed] = [c for c in ran if c["outcome"] == "failed"]
    assert "not MCP messages" in failed["message"]
    assert "'Secure MCP Filesystem Server running on stdio'" in failed["message"]
    causes = found["rootCauses"]
    assert isinstance(causes, list), causes
    assert len(causes) == 1, causes
    assert causes[0]["cases"] == [failed["id"]], causes
