"""The wording table: every table that cannot be used is refused before a case runs, in one
line; every table that describes a consistent harness's words exactly makes it pass."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformance.spec import PATH_OPS, TEMPLATES, Wording, WordingError, _fields
from tests.suite import REPO, case_of, error_lines, fixture, report, run_suite

RELATIVE_WORDS = fixture("relative_words:harness")
RELATIVE_TABLE = str(REPO / "tests" / "fixtures" / "relative_words.toml")


def _refusal(tmp_path: Path, body: str) -> str:
    table = tmp_path / "w.toml"
    table.write_text("[wording]\n" + body + "\n", encoding="utf-8")
    with pytest.raises(WordingError) as raised:
        Wording.load(table)
    message = str(raised.value)
    prefix = f"wording table {table}: "
    assert message.startswith(prefix)
    assert "\n" not in message
    return message.removeprefix(prefix)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        # a lone brace: was a traceback (INTERNALERROR) from string.Formatter
        ('"fs.read_missing" = "File not found: {p"',
         "'fs.read_missing' is not a template: expected '}' before end of string "
         "(a literal brace is written {{ or }})"),
        ('"fs.read_missing" = "File {p} }"',
         "'fs.read_missing' is not a template: Single '}' encountered in format string "
         "(a literal brace is written {{ or }})"),
        # loaded, then every case using it failed with a KeyError/ValueError at the behaviour level
        ('"remedy.reread" = " (read {p} again)"',
         "'remedy.reread' uses unknown placeholder(s) {p}; allowed: none"),
        ('"remedy.read" = " (then {op})"',
         "'remedy.read' uses unknown placeholder(s) {op}; allowed: none"),
        ('"write.created" = "Created {rel}"',
         "'write.created' uses unknown placeholder(s) {rel}; allowed: none"),
        ('"fs.read_missing" = "File not found: {}"',
         "'fs.read_missing' uses unknown placeholder(s) {}; allowed: {op}, {p}, {rel}"),
        ('"read.line" = "{n:>{width}}\\t{text}"',
         "'read.line' uses unknown placeholder(s) {width}; allowed: {n}, {text}"),
        ('"read.line" = "{n:>q}\\t{text}"',
         "'read.line' cannot be filled: Unknown format code 'q' for object of type 'int'"),
        ('"fs.read_missing" = "File not found: {p!x}"',
         "'fs.read_missing' cannot be filled: Unknown conversion specifier x"),
        ('"fs.read_missing" = "File not found: {p.name}"',
         "'fs.read_missing' uses {p.name}: a placeholder is a bare name (no attribute or index)"),
        # refinements that would never be used: were accepted and silently ignored
        ('"remedy.reread.write" = " (read it again)"',
         "'remedy.reread.write' would never be used: 'remedy.reread' is not about one "
         "operation, so it cannot be refined for one"),
        ('"fs.read_missing.write" = "x {p}"',
         "'fs.read_missing.write' would never be used: 'fs.read_missing' is shown only for read"),
        # the recovery re-pinned away: a harness that drops it would pass
        ('"remedy.reread" = ""',
         "'remedy.reread' is empty: every guarded refusal ends with its one recovery "
         "(SPEC §4.3); the words may change, the recovery may not go"),
        # a dotted key without quotes is a TOML sub-table
        ('fs.read_missing = "File not found: {p}"',
         "'fs' is a table, not a template: a dotted key must be quoted, "
         'as in "fs.read_missing" = "…"'),
    ],
)  # fmt: skip
def test_a_table_that_cannot_be_used_is_refused_in_one_line(
    tmp_path: Path, body: str, said: str
) -> None:
    assert _refusal(tmp_path, body) == said


def test_a_lone_brace_is_one_line_and_exit_4_not_a_traceback(tmp_path: Path) -> None:
    table = tmp_path / "w.toml"
    table.write_text('[wording]\n"fs.read_missing" = "File not found: {p"\n')
    done = run_suite("--conformance-wording", str(table), cwd=tmp_path)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert "INTERNALERROR" not in done.stdout + done.stderr
    assert error_lines(done) == [
        f"ERROR: wording table {table}: 'fs.read_missing' is not a template: expected '}}' "
        "before end of string (a literal brace is written {{ or }})"
    ]


def test_the_path_keys_are_the_templates_with_a_path() -> None:
    assert set(PATH_OPS) == {key for key, text in TEMPLATES.items() if "p" in _fields(text)}


def test_every_documented_placeholder_of_a_path_key_can_be_filled() -> None:
    """``{op}`` and ``{rel}`` wherever ``{p}`` is: the cases fill them for every path key."""
    w = Wording({"fs.read_missing": "cannot {op} {rel}", "fs.ambiguous": "{op}: {n} in {rel}"})
    w.root = "/ws"
    assert w("fs.read_missing", p="/ws/a.txt") == "cannot read a.txt"
    assert w("fs.ambiguous", p="/ws/d/b.txt", n=2) == "edit: 2 in d/b.txt"
    with pytest.raises(TypeError, match="say which"):
        w("fs.parent_segment", p="/ws/a.txt/b")  # shown for every operation: the case says which


def test_rel_is_relative_to_the_workspace_a_session_was_opened_on(tmp_path: Path) -> None:
    w = Wording({"write.output": "{rel}: {outcome}"})
    w.root = str(tmp_path / "ws")
    alias = str(tmp_path / "alias")
    w.opened(w.root)
    w.opened(alias)
    assert w.write_output(os.path.join(alias, "new.txt"), created=True) == "new.txt: Created file"
    assert w.rel(str(tmp_path / "ws" / "a.txt")) == "a.txt"
    assert w.rel(str(tmp_path / "outside" / "t.txt")) == "../outside/t.txt"
    w.root = str(tmp_path / "ws")  # a new case: the other roots are forgotten
    assert w.rel(os.path.join(alias, "new.txt")) == "../alias/new.txt"


def test_a_harness_with_relative_paths_and_per_tool_words_passes_with_its_table(
    tmp_path: Path,
) -> None:
    """Every path relative to the workspace it was opened on (also one opened through a
    symlink), every refusal naming its tool (also the spec's "cannot resolve" ones)."""
    path = tmp_path / "r.json"
    done = run_suite("--harness", RELATIVE_WORDS, "--conformance-wording", RELATIVE_TABLE,
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:]
    data = report(path)
    for case in ("PRV-001", "PRV-002", "PRV-011", "PRV-029", "PRV-030", "GRD-016", "REM-010",
                 "SBX-007", "SBX-012", "DEL-001", "STM-001"):  # fmt: skip
        assert case_of(data, case)["levels"] == {"behaviour": "passed", "wording": "passed"}, case
