"""The Node adapter kit (adapters/node/): its example harness passes the suite's behaviour level
over the stdio protocol, and the kit's own tests pass."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.suite import REPO, by_area, outcomes, report, run_suite

NODE_KIT = REPO / "adapters" / "node"


@pytest.fixture(scope="module")
def node() -> str:
    """The node executable; CI installs it, so there a missing node is a failure."""
    found = shutil.which("node")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed, but CI must run the Node kit (.ci/run installs it)")
        pytest.skip("node is not installed (apt-get install nodejs)")
    return found


def test_the_example_passes_the_behaviour_level(node: str, tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    done = run_suite("--harness-cmd", f"{node} {NODE_KIT / 'example' / 'harness.mjs'}",
                     "--conformance-level", "behaviour", "--conformance-report", str(path),
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:]
    data = report(path)
    harness = data["harness"]
    assert isinstance(harness, dict)
    assert (harness["name"], harness["language"], harness["capabilities"]) == (
        "example-node-harness",
        "javascript",
        ["tools"],
    )
    assert by_area(data, "failed") == {}
    found = outcomes(data)
    assert all(
        found[case] == "passed"
        for case in found
        if case.startswith(("GRD-", "DEL-")) and found[case] != "not-applicable"
    )
    assert sum(outcome == "passed" for outcome in found.values()) >= 90
    # Node has no flock: the recommended cross-process case shows, and never fails the run.
    assert found["PUB-010"] in ("recommended-fail", "passed")


def test_the_kits_own_tests_pass(node: str) -> None:
    done = subprocess.run(
        [node, "--test"], cwd=NODE_KIT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout


NATURAL = REPO / "tests" / "fixtures" / "node_natural" / "harness.mjs"


def test_a_harness_written_the_way_javascript_authors_write_passes(
    node: str, tmp_path: Path
) -> None:
    # Error subclasses, String(err) as "Name: message", causes of any value, one pause point,
    # the taxonomy without to_error: every case that applies passes, and the ones that assumed
    # Python (TAX-001, TAX-028) or a pair of pause points apply to it.
    path = tmp_path / "report.json"
    done = run_suite("--harness-cmd", f"{node} {NATURAL}", "--conformance-level", "behaviour",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:]
    data = report(path)
    found = outcomes(data)
    assert by_area(data, "failed") == {}
    for case in ("TAX-001", "TAX-028", "TAX-025", "TAX-027", "PUB-002", "PUB-003", "PROP-005"):
        assert found[case] == "passed", case
    assert (found["TAX-007"], found["TAX-008"], found["PUB-004"]) == ("not-applicable",) * 3
    taxonomy = tmp_path / "taxonomy.json"
    # The error methods at every level too: their wording is the spec's, in any language.
    methods = [c for c, o in found.items() if c.startswith(("TAX-", "PROP-")) and o == "passed"]
    methods += [f"REM-00{n}" for n in range(1, 9)]
    selection = [arg for case in methods for arg in ("--conformance-case", case)]
    done = run_suite("--harness-cmd", f"{node} {NATURAL}", *selection,
                     "--conformance-report", str(taxonomy), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:]
    assert by_area(report(taxonomy), "failed") == {}
