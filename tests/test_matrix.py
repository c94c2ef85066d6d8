"""The HTML matrix: several JSON reports side by side, every verdict escaped and one click away."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import struct
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from conformance.report import AREAS, load_report
from conformance.report.matrix import STYLE, render, source_names, summary, write

ALL_CAPABILITIES = ["tools", "taxonomy", "loop", "native", "toolErrors", "pause"]
# Everything a verdict can hold that HTML cares about: tags, both quotes, an ampersand, a newline.
VERDICT = (
    "write of \"a.txt\": the model saw '<path>/x</path>\\n<type>file</type>' where "
    "'Error: cannot overwrite \"a.txt\" — read it & retry' was expected\nsecond line <b>"
)
HOSTILE_ARGUMENT = '<script>alert("x")</script>'
BOTH = {"behaviour": "passed", "wording": "passed"}


def case(case_id: str, outcome: str, **extra: Any) -> dict[str, Any]:
    """One case entry as ``Report.to_json`` writes it."""
    levels = extra.pop("levels", BOTH if outcome == "passed" else {})
    prefix = case_id.split("-", maxsplit=1)[0]
    return {"id": case_id, "area": AREAS[prefix], "rules": extra.pop("rules", ["some.rule"]),
            "outcome": outcome, "levels": levels, **extra}  # fmt: skip


def report(
    name: str,
    version: str,
    cases: list[dict[str, Any]],
    *,
    capabilities: list[str] = ALL_CAPABILITIES,
    level: str = "all",
    reason: str | None = None,
) -> dict[str, Any]:
    """A whole JSON report around ``cases``."""
    data: dict[str, Any] = {
        "suite": {"name": "harness-conformance", "version": "0.1.0"},
        "spec": "2.0.0",
        "harness": {
            "name": name,
            "version": version,
            "language": "python",
            "capabilities": capabilities,
            "capabilitiesInferred": False,
            "options": {"sandbox": ["read-only"], "writableRoots": True},
            "optionsDeclared": True,
            "paths": "any",
        },
        "level": level,
        "complete": reason is None,
        "summary": {},
        "cases": cases,
        "duration_s": 1.5,
        "run": {"harness": f'harness "{name}"', "kind": "python", "args": []},
    }
    if reason is not None:
        data["reason"] = reason
    return data


FULL = report(
    "alpha",
    "1.0.0",
    [
        case("TAX-001", "passed", levels={"behaviour": "passed", "wording": "not-applicable"}),
        case("GRD-001", "passed", rules=["policy.write-intent", "policy.record"]),
        case("GRD-002", "passed"),
        case("GRD-003", "passed"),
        case(
            "PUB-001",
            "expected-fail",
            message="known: writes in place",
            levels={"behaviour": "failed", "wording": "not-applicable"},
        ),
        case("LOOP-001", "passed"),
    ],
)
TOOLS_ONLY = report(
    "toolsy",
    "2.3.4",
    [
        case("TAX-001", "not-applicable", message="not applicable: needs the taxonomy capability"),
        case("GRD-001", "passed", rules=["policy.write-intent", "policy.record"]),
        case(
            "GRD-002",
            "failed",
            levels={"behaviour": "passed", "wording": "failed"},
            message=VERDICT,
            verdicts=[{"level": "wording", "rule": "fs.msg.exists-unread", "verdict": VERDICT}],
            calls=[
                {
                    "tool": "write",
                    "arguments": {"file_path": "a.txt", "content": HOSTILE_ARGUMENT},
                    "result": {
                        "content": [{"type": "text", "text": "<path>/x</path> & done"}],
                        "isError": False,
                    },
                    "changes": ['"a.txt" overwritten (1 → 2 bytes)'],
                    "expected": "refused",
                    "rule": "fs.msg.exists-unread",
                }
            ],
        ),
        case("PUB-001", "passed"),
        case("LOOP-001", "not-applicable", message="not applicable: needs the loop capability"),
    ],
    capabilities=["tools"],
)
CUT_SHORT = report(
    "gamma",
    "0.9",
    [
        case("GRD-001", "passed", levels={"behaviour": "passed", "wording": "not-run"}),
        case("GRD-002", "not-run", message="not run: the run ended first"),
    ],
    level="behaviour",
    reason="the run was interrupted",
)
REPORTS = [FULL, TOOLS_ONLY, CUT_SHORT]

# ---- a small DOM from html.parser, strict about nesting so a stray tag fails the test ----

VOID = frozenset({"meta", "col", "input", "br", "img", "hr", "link"})


@dataclass
class Node:
    """One element: its tag, attributes and children (elements and decoded text)."""

    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        """All the text inside, decoded, as a browser would show it (before CSS)."""
        if self.tag == "br":
            return "\n"
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def walk(self) -> Iterator[Node]:
        """This element and every element inside it, in document order."""
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.walk()

    def all(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[Node]:
        """Elements inside (or this one) matching tag, one class and attribute values."""
        return [
            node
            for node in self.walk()
            if (tag is None or node.tag == tag)
            and (cls is None or cls in node.attrs.get("class", "").split())
            and all(node.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]

    def one(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> Node:
        """The single element matching."""
        found = self.all(tag, cls, **attrs)
        assert len(found) == 1, (tag, cls, attrs, len(found))
        return found[0]


class TreeBuilder(HTMLParser):
    """Builds ``Node``s; every non-void element must be closed, in order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(page: str) -> Node:
    """The page as a tree (asserting it is balanced)."""
    builder = TreeBuilder()
    builder.feed(page)
    builder.close()
    assert builder.stack == [builder.root], [n.tag for n in builder.stack]
    return builder.root


def cell(doc: Node, case_id: str, column: int) -> Node:
    """The cell of ``case_id`` in the harness column ``column`` (0-based)."""
    row = doc.one("tr", id=case_id)
    cells = row.all("td")
    assert len(cells) == len(REPORTS)
    return cells[column]


def area_row(doc: Node, area: str) -> Node:
    """The summary row of an area."""
    return doc.one("tbody", id="area-" + "-".join(area.split())).one("tr", cls="area-row")


@pytest.fixture(scope="module")
def doc() -> Node:
    return parse(render(REPORTS))


# ---- the header ----


def test_one_column_per_harness_with_name_and_version(doc: Node) -> None:
    heads = [" ".join(th.text().split()) for th in doc.all("th", cls="harness")]
    assert len(heads) == 3
    assert heads[0].startswith("alpha 1.0.0")
    assert heads[1].startswith("toolsy 2.3.4")
    assert heads[2].startswith("gamma 0.9")
    assert len(doc.one("colgroup").all("col")) == 4  # the case column, then one per harness
    for row in doc.all("tr", cls="case"):
        assert len(row.all("td")) == 3


def test_a_tools_only_harness_reads_as_tools_only_never_as_full_conformance(doc: Node) -> None:
    alpha, toolsy, _ = doc.all("th", cls="harness")
    assert "TOOLS ONLY" in toolsy.text()
    assert "TOOLS ONLY" not in alpha.text()
    assert "all capabilities" in alpha.text()
    about = doc.one("tr", cls="about").all("td")
    assert "capabilities: tools only" in about[1].text()
    assert "not full conformance" in about[1].text()
    # Even the totals row, whose counts are all passes, carries it.
    totals = doc.one("tbody", cls="total").all("td")
    assert "TOOLS ONLY" in totals[1].text()
    assert "TOOLS ONLY" not in totals[0].text()


def test_the_level_run_and_an_incomplete_run_with_its_reason(doc: Node) -> None:
    about = [" ".join(td.text().split()) for td in doc.one("tr", cls="about").all("td")]
    assert "level: behaviour + wording · run complete" in about[0]
    assert "level: behaviour only" in about[2]
    assert "INCOMPLETE: the run was interrupted" in about[2]
    assert "INCOMPLETE" not in about[0] + about[1]
    assert "INCOMPLETE" in doc.all("th", cls="harness")[2].text()
    assert "options: sandbox read-only, writableRoots; without maxReadBytes" in about[0]


def test_totals_count_every_outcome_and_link_the_failing_cases(doc: Node) -> None:
    totals = [" ".join(td.text().split()) for td in doc.one("tbody", cls="total").all("td")]
    assert totals[0].startswith("behaviour 5/6 wording 4/4 5 ✓ passed · 1 ⚑ expected-fail")
    assert totals[1].startswith(
        "behaviour 3/3 wording 2/3 2 ✓ passed · 1 ✗ failed · 2 ∅ not-applicable"
    )
    assert totals[2].startswith("behaviour 1/1 wording not-run 1 ✓ passed · 1 ? not-run")
    links = doc.one("tbody", cls="total").all("td")[1].all("a")
    assert [a.attrs["href"] for a in links] == ["#GRD-002"]


# ---- areas and cases ----


def test_areas_come_in_the_suites_order_with_counts_per_level(doc: Node) -> None:
    areas = [row.one("summary").text().split(" ")[0] for row in doc.all("tr", cls="area-row")]
    assert areas == ["taxonomy", "guards", "publication", "loop"]
    guards = [" ".join(td.text().split()) for td in area_row(doc, "guards").all("td")]
    assert guards == [
        "behaviour 3/3 wording 3/3 3 ✓ passed",
        "behaviour 2/2 wording 1/2 1 ✓ passed · 1 ✗ failed failing: GRD-002",
        "behaviour 1/1 wording not-run 1 ✓ passed · 1 ? not-run failing: GRD-002",
    ]
    taxonomy = [" ".join(td.text().split()) for td in area_row(doc, "taxonomy").all("td")]
    assert taxonomy[1] == "behaviour 0/0 wording 0/0 1 ∅ not-applicable"
    assert taxonomy[2] == "— no case of this area"


def test_an_area_with_a_failure_opens_by_itself(doc: Node) -> None:
    assert "open" in area_row(doc, "guards").one("details").attrs
    assert "open" not in area_row(doc, "taxonomy").one("details").attrs


def test_each_case_row_is_the_union_of_the_reports_with_its_rules(doc: Node) -> None:
    ids = [row.attrs["id"] for row in doc.all("tr", cls="case")]
    assert ids == ["TAX-001", "GRD-001", "GRD-002", "GRD-003", "PUB-001", "LOOP-001"]
    head = doc.one("tr", id="GRD-001").one("th")
    assert head.one("a").text() == "GRD-001"
    assert head.one("span", cls="rules").text() == "policy.write-intent policy.record"


@pytest.mark.parametrize(
    ("case_id", "column", "outcome", "label"),
    [
        ("GRD-001", 0, "passed", "✓ passed"),
        ("GRD-002", 1, "failed", "✗ failed"),
        ("PUB-001", 0, "expected-fail", "⚑ expected-fail"),
        ("TAX-001", 1, "not-applicable", "∅ not-applicable"),
        ("GRD-002", 2, "not-run", "? not-run"),
        ("GRD-003", 1, "missing", "—"),
        ("GRD-003", 2, "missing", "—"),
    ],
)
def test_each_cell_names_its_outcome_in_words_not_only_colour(
    doc: Node, case_id: str, column: int, outcome: str, label: str
) -> None:
    target = cell(doc, case_id, column)
    assert target.attrs["data-outcome"] == outcome
    assert f"o-{outcome}" in target.attrs["class"].split()
    shown = target.one("span", cls="label").text() if target.all(cls="label") else target.text()
    assert shown == label


def test_a_failed_cell_opens_onto_its_verdict_exactly_as_recorded(doc: Node) -> None:
    failed = cell(doc, "GRD-002", 1)
    details = failed.one("details")
    assert details.one("summary").text() == "✗ failed"
    item = details.one("ol", cls="verdicts").one("li")
    assert item.one("span", cls="tag").text() == "wording"
    assert item.one("code", cls="rule").text() == "fs.msg.exists-unread"
    assert item.one("div", cls="verdict").text() == VERDICT
    assert "behaviour: passed · wording: failed" in details.one("p", cls="levels").text()


def test_the_calls_made_are_in_the_cell_and_escaped(doc: Node) -> None:
    call = cell(doc, "GRD-002", 1).one("li", cls="call")
    text = call.text()
    assert json.dumps(HOSTILE_ARGUMENT)[1:-1] in text  # the arguments, as JSON
    assert "expected: refused (fs.msg.exists-unread)" in text
    assert call.one("div", cls="block").text() == "<path>/x</path> & done"
    assert 'changed: "a.txt" overwritten (1 → 2 bytes)' in text
    # The tags inside the recorded texts stayed text: no such element exists in the page.
    for tag in ("script", "path", "type"):
        assert not doc.all(tag)


def test_a_run_that_failed_only_on_stale_entries_says_so() -> None:
    """Every outcome a pass, yet the run failed on its stale baseline entries: the page read
    "✓ none" and "known failures" with the areas closed, and the advice appeared nowhere."""
    advice = "GRD-002 now passes: remove its entry from the baseline"
    stale = report("delta", "1.0", [
        case("GRD-001", "passed"),
        case("GRD-002", "passed", baseline="stale", baselineAdvice=advice),
    ])  # fmt: skip
    stale["baseline"] = {"path": "base.json", "listed": 1}
    page = parse(render([stale]))
    about = " ".join(page.one("td", cls="about").text().split())
    assert "1 stale baseline entry: the run fails until it is removed" in about
    total = " ".join(page.all("td", cls="sum")[0].text().split())
    assert "1 stale baseline entry: the run fails until it is removed" in total
    area = page.one("tbody", id="area-" + "-".join(AREAS["GRD"].split()))
    assert "open" in area.one("tr", cls="area-row").one("details").attrs
    row = page.one("tr", id="GRD-002")
    assert advice in " ".join(row.one("td").text().split())
    text = summary([stale], "text")
    assert "baseline" in text
    assert "1 stale baseline entry: the run fails until it is removed" in text
    assert "stale" not in summary([FULL], "text")


def test_nothing_from_a_report_reaches_the_page_unescaped() -> None:
    hostile = report(
        '<img src=x onerror="alert(1)">',
        "1</th>",
        [case("GRD-001", "failed", message='<script>"', rules=["<rule>"])],
        reason="<i>cut</i>",
    )
    page = render([hostile])
    assert "<img" not in page
    assert "<script>" not in page
    assert "<i>" not in page
    assert "<rule>" not in page
    tree = parse(page)
    assert " ".join(tree.one("th", cls="harness").text().split()).startswith(
        '<img src=x onerror="alert(1)"> 1</th>'
    )
    assert tree.one("div", cls="message").text() == '<script>"'


def test_the_same_reports_give_the_same_page() -> None:
    assert render(REPORTS) == render([json.loads(json.dumps(r)) for r in REPORTS])


def test_the_page_is_self_contained() -> None:
    page = render(REPORTS)
    for needle in ("http://", "https://", "<link", "<script", "@import", "url("):
        assert needle not in page


def test_two_columns_of_one_harness_say_which_report_each_is() -> None:
    tree = parse(render([FULL, FULL], ["before.json", "after.json"]))
    heads = [th.one("span", cls="src").text() for th in tree.all("th", cls="harness")]
    assert heads == ["before.json", "after.json"]
    assert not parse(render([FULL, TOOLS_ONLY])).all("span", cls="src")


# ---- files ----


def test_write_renders_the_report_files(tmp_path: Path) -> None:
    paths = []
    for n, data in enumerate(REPORTS):
        path = tmp_path / f"r{n}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        paths.append(str(path))
    output = tmp_path / "out" / "matrix.html"
    write(paths, str(output))
    page = output.read_text(encoding="utf-8")
    assert page == render(REPORTS, ["r0.json", "r1.json", "r2.json"])
    assert "from r1.json" in page


@pytest.mark.parametrize(
    ("content", "problem"),
    [("{not json", "not JSON"), ('{"cases": 3}', "no cases list"), (None, "cannot be read")],
)
def test_a_bad_report_file_is_named(tmp_path: Path, content: str | None, problem: str) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(FULL), encoding="utf-8")
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=problem) as caught:
        write([str(good), str(bad)], str(tmp_path / "m.html"))
    assert str(bad) in str(caught.value)
    assert not (tmp_path / "m.html").exists()


def test_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.__main__ import main

    source = tmp_path / "a.json"
    source.write_text(json.dumps(FULL), encoding="utf-8")
    output = tmp_path / "m.html"
    assert main(["matrix", str(source), "-o", str(output)]) == 0
    assert output.read_text(encoding="utf-8") == render([FULL], ["a.json"])
    assert main(["matrix", str(tmp_path / "missing.json"), "-o", str(tmp_path / "n.html")]) != 0
    assert "missing.json" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["html", "text", "md"])
def test_an_output_that_cannot_be_written_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    from conformance.__main__ import main

    source = tmp_path / "a.json"
    source.write_text(json.dumps(FULL), encoding="utf-8")
    (tmp_path / "taken").mkdir()
    (tmp_path / "file").write_text("x", encoding="utf-8")
    for output, problem in ((tmp_path / "taken", "is a directory, not a file"),
                            (tmp_path / "file" / "m", f"{tmp_path / 'file'} is not a directory")):  # fmt: skip
        capsys.readouterr()
        assert main(["matrix", str(source), "--format", fmt, "-o", str(output)]) == 4
        assert capsys.readouterr().err == f"ERROR: -o {output}: {problem}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "file", "taken"]
    assert not any((tmp_path / "taken").iterdir())
    nested = tmp_path / "new" / "m.out"  # missing directories are made, for every format
    assert main(["matrix", str(source), "--format", fmt, "-o", str(nested)]) == 0
    assert nested.read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", ["html", "text"])
def test_an_output_naming_a_report_read_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """``-o`` over one of the inputs replaced that JSON report with the page."""
    from conformance.__main__ import main

    source, other = tmp_path / "a.json", tmp_path / "b.json"
    for path in (source, other):
        path.write_text(json.dumps(FULL), encoding="utf-8")
    (tmp_path / "link.json").symlink_to(other)
    before = other.read_bytes()
    for output in (other, tmp_path / "link.json", tmp_path / "." / "b.json"):
        capsys.readouterr()
        assert main(["matrix", str(source), str(other), "--format", fmt, "-o", str(output)]) == 4
        assert capsys.readouterr().err == (
            f"ERROR: -o {output}: is the report {other}, which the matrix reads\n"
        )
    assert other.read_bytes() == before


def test_a_write_that_fails_leaves_the_page_that_was_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page was written in place: a full disk left half a page where the whole one was."""
    from conformance.__main__ import main

    source = tmp_path / "a.json"
    source.write_text(json.dumps(FULL), encoding="utf-8")
    output = tmp_path / "m.html"
    output.write_text("the page of yesterday", encoding="utf-8")
    real_replace = os.replace

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    assert main(["matrix", str(source), "-o", str(output)]) == 4
    assert (
        capsys.readouterr().err
        == f"ERROR: -o {output}: cannot be written: No space left on device\n"
    )
    monkeypatch.setattr(os, "replace", real_replace)
    assert output.read_text(encoding="utf-8") == "the page of yesterday"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "m.html"]


def test_an_option_given_twice_and_the_equals_spelling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second ``-o`` silently won; ``-o=FILE`` was taken for a report."""
    from conformance.__main__ import main

    source = tmp_path / "a.json"
    source.write_text(json.dumps(FULL), encoding="utf-8")
    first, second = tmp_path / "one.html", tmp_path / "two.html"
    assert main(["matrix", str(source), "-o", str(first), "-o", str(second)]) == 4
    assert capsys.readouterr().err.startswith("ERROR: -o is given twice; usage: ")
    assert main(["matrix", str(source), f"-o={first}"]) == 0
    assert capsys.readouterr().out == f"wrote {first} (1 report)\n"
    assert first.read_text(encoding="utf-8") == render([FULL], ["a.json"])


def test_two_reports_of_one_harness_are_told_apart_in_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``v1/report.json`` and ``v2/report.json`` of one harness had identical headings (the
    text table never told columns apart), and the text lost the warning about versions."""
    from conformance.__main__ import main

    older = {**FULL, "spec": "1.9.0"}
    for version, data in (("v1", older), ("v2", FULL)):
        (tmp_path / version).mkdir()
        (tmp_path / version / "report.json").write_text(json.dumps(data), encoding="utf-8")
    paths = [str(tmp_path / "v1" / "report.json"), str(tmp_path / "v2" / "report.json")]
    assert source_names(paths) == ["v1/report.json", "v2/report.json"]
    assert main(["matrix", *paths, "--format", "text"]) == 0
    text = capsys.readouterr().out
    assert "alpha 1.0.0 (v1/report.json)" in text
    assert "alpha 1.0.0 (v2/report.json)" in text
    assert "These reports come from different suite or spec versions" in text
    page = parse(render([older, FULL], source_names(paths)))
    heads = [" ".join(th.text().split()) for th in page.all("th", cls="harness")]
    assert heads[0].endswith("v1/report.json"), heads
    assert heads[1].endswith("v2/report.json"), heads
    assert main(["matrix", paths[0], str(tmp_path / "v1" / "." / "report.json"), "--format",
                 "text"]) == 4  # fmt: skip
    assert capsys.readouterr().err.startswith(
        f"ERROR: matrix: {tmp_path / 'v1' / '.' / 'report.json'} is the report {paths[0]} again"
    )


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"kind": "event", "line": "started"}\n{"kind": "send", "line": "{}"}\n',
         "is a trace (--conformance-trace), not the JSON report of a run"),
        ('{"kind": "event", "line": "started"}\n',
         "is a trace (--conformance-trace), not the JSON report of a run"),
        (b"\xff\xfe{}", "not UTF-8 text"),
    ],
    ids=["trace", "one-record-trace", "not-utf-8"],
)  # fmt: skip
def test_a_trace_or_binary_file_is_named_for_what_it_is(
    tmp_path: Path, content: str | bytes, problem: str
) -> None:
    bad = tmp_path / "bad.json"
    if isinstance(content, bytes):
        bad.write_bytes(content)
    else:
        bad.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"report {bad}: {problem}")):
        load_report(str(bad))


def test_an_incomplete_run_of_part_of_the_suite_says_both_in_every_format() -> None:
    part = {**CUT_SHORT, "selected": {"cases": 2, "of": 250}}
    about = parse(render([part])).one("td", cls="about").text()
    assert "level: behaviour only, 2 of 250 cases selectedINCOMPLETE: the run was interrupted" in (
        about  # two paragraphs
    )
    assert "behaviour only, 2 of 250 cases selected, INCOMPLETE" in summary([part], "text")


def test_a_markdown_heading_escapes_a_bar_in_a_report_name() -> None:
    table = summary([FULL, FULL], "md", ["x|y/r.json", "z/r.json"])
    head = table.splitlines()[0]
    assert head == "| area | alpha 1.0.0 (x\\|y/r.json) | alpha 1.0.0 (z/r.json) |"


def test_a_report_saved_with_a_bom_is_read(tmp_path: Path) -> None:
    """replay took it; the matrix said "Unexpected UTF-8 BOM"."""
    saved = tmp_path / "bom.json"
    saved.write_bytes(b"\xef\xbb\xbf" + json.dumps(FULL).encode())
    assert load_report(str(saved)) == FULL


# ---- a real browser ----


def chromium() -> str:
    """The headless browser, or skip."""
    found = shutil.which("chromium") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
    )
    if found is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


def screenshot(browser: str, page: Path, png: Path, profile: Path) -> None:
    """Render ``page`` to ``png`` at 1280×900 (the flags keep it off the network and the GPU)."""
    subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={profile}", f"--screenshot={png}",
         "--window-size=1280,900", page.as_uri()],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from the IHDR chunk, checking the signature first."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert (length, kind) == (13, b"IHDR")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_a_browser_renders_the_page(tmp_path: Path) -> None:
    browser = chromium()
    all_passed = report("alpha", "1.0.0", [case("GRD-001", "passed"), case("GRD-002", "passed")])
    shots = []
    for name, reports in (("passed", [all_passed, all_passed]), ("failures", REPORTS)):
        page = tmp_path / f"{name}.html"
        page.write_text(render(reports), encoding="utf-8")
        png = tmp_path / f"{name}.png"
        screenshot(browser, page, png, tmp_path / "profile")
        data = png.read_bytes()
        assert png_size(data) == (1280, 900)
        # A blank page compresses to a few hundred bytes; text and coloured cells do not.
        assert len(data) > 8_000, len(data)
        shots.append(data)
    assert shots[0] != shots[1]


def test_the_text_summary_legend_spells_every_symbol_its_cells_use() -> None:
    reports = [json.loads(path.read_text(encoding="utf-8"))
               for path in sorted((Path(__file__).parent.parent / "docs" / "peers").glob("*.json"))
               if path.name != "timings.json"]  # fmt: skip
    text = summary(reports, "text")
    body, legend = text.rstrip("\n").rsplit("\n", 1)
    used = {symbol for symbol, _ in STYLE.values() if symbol in body}
    assert {"✓", "✗", "△", "↷"} <= used
    for symbol in used:
        assert f"{symbol} {dict(STYLE.values())[symbol]}" in legend
