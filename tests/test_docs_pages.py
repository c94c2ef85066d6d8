"""The docs pages authors read (docs/wording-table.md, docs/mcp-mapping.md) say what the code
does: every wording key is listed, and each page's example is read by the suite's own parser."""

from __future__ import annotations

import re
from pathlib import Path

from conformance.harness.mcp import load_mapping
from conformance.spec import TEMPLATES, Wording
from tests.suite import REPO

DOCS = REPO / "docs"


def _example(page: str, tmp_path: Path) -> Path:
    text = (DOCS / page).read_text(encoding="utf-8")
    block = re.search(r"```toml\n(.*?)```", text, re.S)
    assert block is not None, f"{page} has no TOML example"
    path = tmp_path / "example.toml"
    path.write_text(block.group(1), encoding="utf-8")
    return path


def test_the_wording_page_lists_every_key() -> None:
    text = (DOCS / "wording-table.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `([A-Za-z0-9_.]+)` \|", text, re.M)
    assert listed == list(TEMPLATES)


def test_the_wording_example_loads_and_composes_as_the_page_says(tmp_path: Path) -> None:
    wording = Wording.load(_example("wording-table.md", tmp_path))
    wording.root = "/ws"
    assert wording.remedied("fs.changed", "FS_STALE_VERSION", op="write", p="/ws/notes.txt") == (
        "Error: notes.txt was modified since you last read it (read it again)"
    )
    assert wording("read.line", n=3, text="x") == "     3\tx"
    assert wording("reason.ENAMETOOLONG") == "name too long"


def test_the_mcp_example_is_a_valid_mapping(tmp_path: Path) -> None:

    mapping = load_mapping(str(_example("mcp-mapping.md", tmp_path)))
    assert (mapping.name, mapping.language, mapping.paths) == ("my-server", "go", "relative")
    assert mapping.call_timeout == 10.0
    assert mapping.tools["read"].translate({"file_path": "a.txt", "offset": 2, "limit": 5}) == {
        "path": "a.txt", "start": 2, "count": 5,
    }  # fmt: skip
    assert mapping.tools["edit"].translate(
        {"file_path": "a.txt", "old_string": "x\n", "new_string": "y", "replace_all": True}
    ) == {"path": "a.txt", "find": "x\n", "replace": "y", "all": True}
