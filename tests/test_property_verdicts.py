"""A property's verdict is the example hypothesis settled on, in the same words on every run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.suite import case_of, report, run_suite

pytestmark = pytest.mark.once


def test_a_failed_property_reports_its_one_example_not_every_example_it_tried(
    tmp_path: Path,
) -> None:
    """Hypothesis tries dozens of examples, then shrinks: each used to add its own verdict
    (PROP-003 on this mutant had over 300, and every call of every example)."""
    path = tmp_path / "r.json"
    run_suite("--harness", "tests.mutants.plain_errors_coded:harness", "--conformance-case",
              "PROP-003", "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    entry = case_of(report(path), "PROP-003")
    assert entry["outcome"] == "failed", entry
    verdicts, calls = entry["verdicts"], entry["calls"]
    assert isinstance(verdicts, list)
    assert isinstance(calls, list)
    assert len(verdicts) == 1, [v["verdict"] for v in verdicts]
    assert len(calls) == 1, calls  # the shrunk example's one probe_raise
    assert verdicts[0]["call"] == 0
