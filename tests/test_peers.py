"""The peers: manifests, adapters replayed on what the real harnesses answered, triage, the page.

Nothing here installs a harness. ``nox -s peers`` recorded each harness's real answers (the
trace in ``peers/<name>/trace.jsonl.gz``); these tests replay them through each adapter's
translation code, with the filesystem forbidden, and check the committed reports' triage.
"""

from __future__ import annotations

import contextvars
import html
import importlib
import json
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from conformance.__main__ import USAGE_ERROR, main
from conformance.harness.contract import GRANTS
from conformance.harness.mcp import SPEC_TOOLS, load_mapping
from conformance.report.matrix import summary
from peers import triage
from peers.manifest import PEERS_DIR, ManifestError, find_python, folders, load
from peers.page import CONTROLS, columns, report_path
from peers.replay import Exchange, exchanges

DOCS = PEERS_DIR.parent / "docs" / "peers"
PYTHON_PEERS = ("deepagents", "openhands")
MCP_PEERS = ("mcp_filesystem", "agent_infra", "fast_fs")
# The argument names of each server's tools, from its tools/list input schemas.
SERVER_ARGUMENTS = {
    "mcp_filesystem": {"read": {"path"}, "write": {"path", "content"}, "edit": {"path", "edits"}},
    "agent_infra": {"read": {"path"}, "write": {"path", "content"}, "edit": {"path", "edits"}},
    "fast_fs": {"read": {"path"}, "write": {"path", "content"},
                "edit": {"path", "old_text", "new_text"}},
}  # fmt: skip
NODE_PEERS = ("gemini_cli",)
LANGUAGES = {"python", "typescript", "javascript"}
SUITE_DEFAULTS = {"pausePoints", "tempWritable", "valueCauses"}

# -- the filesystem forbidden -----------------------------------------------------------------

_FORBIDDEN = contextvars.ContextVar("forbidden", default=False)
_DISK_EVENTS = frozenset({
    "open", "os.remove", "os.rename", "os.mkdir", "os.rmdir", "os.listdir", "os.scandir",
    "os.chmod", "os.chown", "os.symlink", "os.link", "os.truncate", "os.utime", "shutil.copyfile",
    "shutil.rmtree", "shutil.move", "os.walk", "glob.glob", "tempfile.mkstemp", "tempfile.mkdtemp",
})  # fmt: skip


class DiskTouched(AssertionError):
    """Code that was to translate values touched the disk."""


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _FORBIDDEN.get() and event in _DISK_EVENTS:
        raise DiskTouched(f"{event}{args!r}")


sys.addaudithook(_audit)  # inert unless a test forbids the disk (audit hooks cannot be removed)


@contextmanager
def disk_forbidden() -> Iterator[None]:
    """Within the block, opening, listing or changing any file raises ``DiskTouched``."""
    token = _FORBIDDEN.set(True)
    try:
        yield
    finally:
        _FORBIDDEN.reset(token)


def test_the_disk_guard_catches_a_read_and_a_write(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("x", encoding="utf-8")
    with disk_forbidden():
        with pytest.raises(DiskTouched):
            target.read_text(encoding="utf-8")
        with pytest.raises(DiskTouched):
            target.write_text("y", encoding="utf-8")
    assert target.read_text(encoding="utf-8") == "x"


# -- manifests --------------------------------------------------------------------------------


def test_at_least_five_peers_in_two_languages_two_of_them_typescript() -> None:
    manifests = [load(folder) for folder in folders()]
    assert len(manifests) >= 5
    languages = {m.language for m in manifests}
    assert len(languages & LANGUAGES) >= 2
    assert sum(m.language in ("typescript", "javascript") for m in manifests) >= 2


@pytest.mark.parametrize("folder", folders())
def test_each_manifest_pins_its_package_and_gives_every_option_a_reason(folder: str) -> None:
    manifest = load(folder)
    assert any(p.endswith(manifest.version) for p in manifest.packages)
    names = {option.name for option in manifest.options}
    assert names == {"sandbox", "writableRoots", "maxReadBytes", "probe", "probeInterrupt",
                     "replaceAll", "readWindow", "unguarded", "surrogates"}  # fmt: skip
    assert all(len(option.reason) > 20 for option in manifest.options)
    assert (manifest.directory / "README.md").is_file()


@pytest.mark.parametrize("folder", MCP_PEERS)
def test_an_mcp_mapping_declares_what_the_manifest_does(folder: str) -> None:
    manifest = load(folder)
    assert manifest.mapping is not None
    mapping = load_mapping(str(manifest.directory / manifest.mapping))
    described = manifest.describe()
    # A grant the bridge declares false by default (tempWritable) needs no manifest entry.
    declared = {k: v for k, v in mapping.options.items() if not (k in GRANTS and v is False)}
    assert declared == described["options"]
    assert (mapping.name, mapping.version, mapping.paths) == (
        manifest.name, manifest.version, manifest.paths
    )  # fmt: skip
    # The command line grants the workspace root, once, and nothing else.
    assert manifest.command.count("{root}") == 1


def test_the_node_adapter_describes_itself_as_its_manifest_does() -> None:
    described = json.loads((PEERS_DIR / "gemini_cli" / "describe.json").read_text("utf-8"))
    assert described == load("gemini_cli").describe()


@pytest.mark.parametrize("folder", folders())
def test_the_committed_reports_describe_the_peer_as_its_manifest_does(folder: str) -> None:
    manifest = load(folder)
    for level in ("behaviour", "all"):
        report = json.loads(report_path(DOCS, folder, level).read_text(encoding="utf-8"))
        harness = report["harness"]
        assert report["complete"], report.get("reason")
        assert (harness["name"], harness["version"]) == (manifest.name, manifest.version)
        declared = manifest.describe()["options"]
        assert {k: v for k, v in harness["options"].items() if k in declared} == declared
        # What the manifest leaves out, the report records at the suite's defaults.
        assert set(harness["options"]) - set(declared) <= SUITE_DEFAULTS


# -- replaying the recorded answers -----------------------------------------------------------


def _recorded(folder: str) -> list[Exchange]:
    trace = PEERS_DIR / folder / "trace.jsonl.gz"
    found = exchanges(trace)
    assert len(found) > 100, f"{trace}: too few recorded tool calls"
    return found


def _python_replay(folder: str) -> Callable[[Exchange], list[str]]:
    translate = importlib.import_module(f"peers.{folder}.translate")

    def check(exchange: Exchange) -> list[str]:
        wrong = []
        sent = exchange.sent
        if not isinstance(exchange.arguments, str) and not {"raw", "unrecorded"} & set(sent):
            if folder == "deepagents":
                again = translate.tool_call(exchange.name, exchange.arguments, exchange.call_id)
            else:
                tool, arguments = translate.tool_call(exchange.name, exchange.arguments)
                again = {"tool": tool, "arguments": arguments}
            if again != sent:
                wrong.append(f"{exchange.case} {exchange.call_id}: sent {again!r}, not {sent!r}")
        if "parseError" in exchange.answer:
            return wrong  # the framework's own parser refused the raw text: nothing translated
        if translate.result(exchange.call_id, exchange.answer) != exchange.result:
            wrong.append(f"{exchange.case} {exchange.call_id}: the result differs")
        return wrong

    return check


@pytest.mark.parametrize("folder", PYTHON_PEERS)
def test_a_python_adapter_translates_what_its_harness_really_answered(folder: str) -> None:
    recorded = [e for e in _recorded(folder) if e.sent is not None]
    assert len(recorded) > 100
    check = _python_replay(folder)
    with disk_forbidden():  # the translation reads and writes no file at all
        wrong = [line for exchange in recorded for line in check(exchange)]
    assert wrong == []


@pytest.mark.parametrize("folder", PYTHON_PEERS)
def test_a_python_adapter_has_no_file_access_of_its_own(folder: str) -> None:
    for module in ("adapter.py", "translate.py"):
        source = (PEERS_DIR / folder / module).read_text(encoding="utf-8")
        for word in ("import os", "pathlib", "shutil", "open(", "tempfile", "Lock()"):
            if word == "Lock()" and module == "adapter.py":
                continue  # the session table's lock guards the adapter's own dict, not a file
            assert word not in source, f"peers/{folder}/{module} uses {word}"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH (install Node ≥ 20)")
def test_the_node_adapter_translates_what_gemini_cli_really_answered(tmp_path: Path) -> None:
    recorded = [e for e in _recorded("gemini_cli") if e.sent is not None]
    lines = "".join(
        json.dumps({"name": e.name, "arguments": e.arguments, "callId": e.call_id,
                    "sent": e.sent, "answer": e.answer, "result": e.result}) + "\n"
        for e in recorded
    )  # fmt: skip
    script = PEERS_DIR.parent / "tests" / "fixtures" / "peers_replay.mjs"
    # Node's permission model: no writes anywhere, reads of the two modules only.
    readable = [script, PEERS_DIR / "gemini_cli" / "translate.mjs"]
    done = subprocess.run(
        ["node", "--experimental-permission", *(f"--allow-fs-read={p}" for p in readable),
         str(script)],
        input=lines, capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome == {"checked": len(recorded), "mismatches": []}
    assert len(recorded) > 100


@pytest.mark.parametrize("folder", MCP_PEERS)
def test_an_mcp_mapping_translates_every_recorded_call_to_the_servers_arguments(
    folder: str,
) -> None:
    manifest = load(folder)
    assert manifest.mapping is not None
    mapping = load_mapping(str(manifest.directory / manifest.mapping))
    server_arguments = SERVER_ARGUMENTS[folder]
    checked = 0
    recorded = _recorded(folder)
    with disk_forbidden():
        for exchange in recorded:
            assert set(exchange.result) <= {"callId", "content", "isError"}  # MCP has no codes
            tool = mapping.tools.get(exchange.name)
            if tool is None or not isinstance(exchange.arguments, dict):
                continue
            if set(exchange.arguments) - set(SPEC_TOOLS[exchange.name]):
                continue  # an argument the spec's schema refuses: the server's schema judges it
            sent = tool.translate(exchange.arguments)
            # Every spec argument is sent under the server's name; others pass for it to judge.
            assert server_arguments[exchange.name] >= set(sent) - set(exchange.arguments), sent
            assert not {"file_path", "old_string", "new_string"} & set(sent), sent
            checked += 1
    assert checked > 50


# -- triage -----------------------------------------------------------------------------------


def _causes(folder: str) -> dict[str, triage.Cause]:
    found: dict[str, triage.Cause] = {}
    for level in ("behaviour", "all"):
        report = json.loads(report_path(DOCS, folder, level).read_text(encoding="utf-8"))
        found.update(triage.causes(report))
    return found


@pytest.mark.parametrize("folder", folders())
def test_every_behaviour_root_cause_of_a_peer_is_triaged_and_no_entry_is_orphaned(
    folder: str,
) -> None:
    entries = triage.index(triage.load(PEERS_DIR / folder / "triage.toml"))
    causes = _causes(folder)
    untriaged = sorted(set(causes) - set(entries))
    orphaned = sorted(set(entries) - set(causes))
    assert untriaged == [], f"peers/{folder}/triage.toml has no entry for {untriaged}"
    assert orphaned == [], f"peers/{folder}/triage.toml has entries for no root cause: {orphaned}"


@pytest.mark.parametrize("folder", folders())
def test_the_behaviour_causes_of_a_behaviour_report_are_the_root_causes_it_lists(
    folder: str,
) -> None:
    report = json.loads(report_path(DOCS, folder, "behaviour").read_text(encoding="utf-8"))
    listed = [cause["signature"] for cause in report["rootCauses"]]
    assert list(triage.causes(report)) == listed
    assert listed, f"{folder}: a behaviour report with no root cause has nothing to triage"


@pytest.mark.parametrize("folder", folders())
def test_every_triage_entry_quotes_its_evidence_with_file_version_and_line(folder: str) -> None:
    for entry in triage.load(PEERS_DIR / folder / "triage.toml"):
        # file@version:line of an installed package (the peer or one it depends on).
        assert re.search(r"\S+@\d[\w.]*:\d+", entry.evidence), entry
        for signature in entry.causes:
            parts = signature.split(" · ")
            assert parts[0] == "unexplained" or len(parts) == 3, signature


def test_a_triage_file_with_an_unknown_verdict_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "triage.toml"
    path.write_text(
        '[[entry]]\ncauses = ["a · b · c"]\nverdict = "maybe"\nsummary = "s"\nevidence = "e"\n',
        encoding="utf-8",
    )
    with pytest.raises(triage.TriageError, match="verdict 'maybe' is not one of"):
        triage.load(path)


def test_a_root_cause_triaged_twice_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "triage.toml"
    entry = '[[entry]]\ncauses = ["a · b · c"]\nverdict = "defect"\nsummary = "s"\nevidence = "e"\n'
    path.write_text(entry + entry, encoding="utf-8")
    with pytest.raises(triage.TriageError, match="'a · b · c' is triaged twice"):
        triage.index(triage.load(path))


# -- the page and the summary, on the committed reports ---------------------------------------


def test_the_committed_matrix_has_every_peer_and_both_controls() -> None:
    page = (DOCS / "matrix.html").read_text(encoding="utf-8")
    for key in columns(DOCS):
        assert f"{key}.behaviour.json" in page
    assert set(CONTROLS) <= set(columns(DOCS))
    assert "untriaged" not in page


def test_every_failed_peer_cell_carries_its_triage_beside_the_verdict() -> None:
    pages = {
        level: html.unescape((DOCS / name).read_text(encoding="utf-8"))
        for level, name in (("behaviour", "matrix.html"), ("all", "matrix-all.html"))
    }
    for folder in folders():
        entries = triage.index(triage.load(PEERS_DIR / folder / "triage.toml"))
        for level, page in pages.items():
            report = json.loads(report_path(DOCS, folder, level).read_text(encoding="utf-8"))
            for signature, cause in triage.causes(report).items():
                entry = entries[signature]
                shown = f"{cause.words} ({signature}). {entry.summary} — evidence: {entry.evidence}"
                assert shown in page, (folder, level, signature)


def test_the_text_summary_of_the_committed_reports_has_a_column_per_harness() -> None:
    reports = [
        json.loads(report_path(DOCS, key, "behaviour").read_text(encoding="utf-8"))
        for key in columns(DOCS)
    ]
    text = summary(reports, "text")
    header = text.splitlines()[0]
    for report in reports:
        assert f"{report['harness']['name']} {report['harness']['version']}" in header
    assert "TOOLS ONLY" in text.splitlines()[2]
    md = summary(reports, "md")
    assert md.splitlines()[1] == "|" + "---|" * (len(reports) + 1)


def test_the_markdown_page_gives_each_peer_its_version_options_and_counts() -> None:
    page = (DOCS / "README.md").read_text(encoding="utf-8")
    for folder in folders():
        manifest = load(folder)
        assert f"## {manifest.name} {manifest.version}" in page
        for option in manifest.options:
            assert option.reason in page
    assert "**untriaged**" not in page


def test_the_page_records_the_pinned_versions_it_ran() -> None:
    for folder in folders():
        manifest = load(folder)
        data = tomllib.loads((manifest.directory / "manifest.toml").read_text(encoding="utf-8"))
        assert data["version"] in (DOCS / "README.md").read_text(encoding="utf-8")


def test_matrix_prints_the_comparison_in_the_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    reports = [str(report_path(DOCS, key, "behaviour")) for key in ("reference", "deepagents")]
    assert main(["matrix", *reports, "--format", "text"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["area", "reference", "0.1.0", "deepagents", "0.7.32"]
    assert any(line.startswith("guards (") for line in lines)
    assert main(["matrix", *reports, "--format", "csv"]) == USAGE_ERROR
    assert "--format 'csv' does not exist" in capsys.readouterr().err
    assert main(["matrix", *reports]) == USAGE_ERROR  # HTML needs -o
    assert "give -o OUT" in capsys.readouterr().err


def test_a_peer_finds_its_python_under_pyenv_or_says_in_one_line_it_is_missing(
    tmp_path: Path,
) -> None:
    with pytest.raises(ManifestError) as missing:
        find_python("python3.99", "openhands", pyenv_root=tmp_path)
    assert str(missing.value) == (
        f"peers/openhands: needs python3.99, which is neither on PATH nor under {tmp_path}/versions "
        "(install Python 3.99, or put its bin/ on PATH)"
    )
    # pyenv keeps every version under versions/, outside PATH until it is activated.
    binary = tmp_path / "versions" / "3.99.1" / "bin" / "python3.99"
    binary.parent.mkdir(parents=True)
    binary.symlink_to(sys.executable)
    assert find_python("python3.99", "openhands", pyenv_root=tmp_path) == str(binary)
