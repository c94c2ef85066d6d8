"""examples/implementer/ is the README's "use it in your CI": its nox sessions run for real,
installing the suite from this checkout, and report what an implementer's CI would see."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conformance.rules import spec_version
from tests.suite import REPO

pytestmark = pytest.mark.once

EXAMPLE = REPO / "examples" / "implementer"


def nox(example: Path, envdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the example's noxfile as shipped: it installs the suite from the checkout around it.

    ``-R`` reuses a session's virtualenv without installing into it again, as a developer runs
    nox between edits: the suite's copy does not change here, and the harness is editable.
    """
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the sessions must find everything in their own virtualenvs
    env.pop("HARNESS_CONFORMANCE_SOURCE", None)
    return subprocess.run(
        [sys.executable, "-m", "nox", "-f", "noxfile.py", "--envdir", str(envdir),
         "-R", *args],
        cwd=example, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A copy of the example inside a copy of the checkout's sources (sessions write reports and
    re-pin snapshots), and its nox envdir."""
    base = tmp_path_factory.mktemp("implementer")
    checkout = base / "checkout"
    skip = shutil.ignore_patterns("__pycache__", ".hypothesis", "*.egg-info")
    for name in ("conformance", "reference", "snapshots"):
        shutil.copytree(REPO / name, checkout / name, ignore=skip)
    for name in ("pyproject.toml", "README.md", "SPEC.md", "LICENSE"):
        shutil.copy2(REPO / name, checkout / name)
    copy = checkout / "examples" / "implementer"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("reports", ".nox", "__pycache__"))
    return copy, base / ".nox"


def test_the_conformance_session_passes_with_its_baseline(example: tuple[Path, Path]) -> None:
    copy, envdir = example
    committed = (copy / "conformance-baseline.json").read_bytes()
    shutil.rmtree(copy / "reports", ignore_errors=True)  # a fresh checkout has none yet
    early = nox(copy, envdir, "-s", "baseline")
    assert early.returncode != 0
    assert "no reports/conformance.json yet: run `nox -s conformance` first" in early.stderr
    assert (copy / "conformance-baseline.json").read_bytes() == committed  # untouched
    done = nox(copy, envdir, "-s", "conformance")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    data = json.loads((copy / "reports" / "conformance.json").read_text())
    assert data["harness"]["name"] == "acme-harness"
    outcomes = {case["id"]: case["outcome"] for case in data["cases"]}
    # ACME-142, CRLF → LF: the provider cases and the state machine's CRLF write
    assert outcomes["PRV-019"] == outcomes["PRV-032"] == outcomes["STM-001"] == "expected-fail"
    assert data["baseline"]["listed"] == 4
    assert "failed" not in outcomes.values()
    assert (
        '<property name="case_id" value="PRV-019"' in (copy / "reports" / "junit.xml").read_text()
    )
    junit = (copy / "reports" / "junit.xml").read_text()
    assert 'failures="0"' in junit  # the known failures are expected in CI's test view too
    assert 'message="known failure: PRV-019 (in the baseline): ' in junit
    summary = (copy / "reports" / "summary.md").read_text()
    assert summary.startswith("## Harness conformance: acme-harness 0.3.0 — passed")
    assert "### Expected failures" in summary
    assert "- **PRV-019** (expected): " in summary
    again = nox(copy, envdir, "-s", "baseline")  # from that report: the same known failures
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    fresh = json.loads((copy / "conformance-baseline.json").read_bytes())
    assert set(fresh["failures"]) >= set(json.loads(committed)["failures"])
    with_it = nox(copy, envdir, "-s", "conformance")  # and CI stays green with it
    assert with_it.returncode == 0, with_it.stdout[-3000:] + with_it.stderr[-3000:]


def test_an_intentional_wording_change_is_repinned_with_its_diff(
    example: tuple[Path, Path],
) -> None:
    copy, envdir = example
    package = copy / "acme_harness" / "__init__.py"
    package.write_text(package.read_text().replace('"File saved"', '"Changes saved"'))
    table = copy / "conformance-wording.toml"
    table.write_text(table.read_text().replace('"File saved"', '"Changes saved"'))
    before = nox(copy, envdir, "-s", "conformance")
    assert before.returncode == 1, "the old pins must no longer match"
    repinned = nox(copy, envdir, "-s", "repin")
    assert repinned.returncode == 0, repinned.stdout[-3000:] + repinned.stderr[-3000:]
    output = repinned.stdout + repinned.stderr
    assert (
        "test_scenarios.ambr::test_scenario_transcript[fs-stale-write] call_4 result[0]" in output
    )
    assert (
        "  - '<path>{{cwd}}/todo.txt</path>\\n<type>file</type>\\n<content>\\nFile saved\\n</content>'"
        in output
    )
    assert (
        "  + '<path>{{cwd}}/todo.txt</path>\\n<type>file</type>\\n<content>\\nChanges saved\\n</content>'"
        in output
    )
    pinned = (copy / "conformance-snapshots" / "test_scenarios.ambr").read_text()
    assert "Changes saved" in pinned
    assert "File saved" not in pinned
    after = nox(copy, envdir, "-s", "conformance")
    assert after.returncode == 0, after.stdout[-3000:]


def test_the_committed_baseline_was_made_against_the_current_spec() -> None:
    # Made against an older spec, it would pass the failures of the newer cases unlisted (as
    # new) and `nox -s baseline` would rewrite it on a newcomer's first run.
    committed = json.loads((EXAMPLE / "conformance-baseline.json").read_text(encoding="utf-8"))
    assert committed["spec"] == spec_version(), "run `nox -s conformance` then `nox -s baseline`"


def test_a_copy_outside_the_checkout_lists_its_sessions_and_asks_for_the_suites_source(
    tmp_path: Path,
) -> None:
    copy = tmp_path / "acme"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("reports", ".nox", "__pycache__"))
    assert not any((parent / "pyproject.toml").exists() for parent in copy.parents)  # outside
    listed = nox(copy, tmp_path / ".nox", "-l")
    assert listed.returncode == 0, listed.stdout[-3000:] + listed.stderr[-3000:]
    assert "* conformance -> The conformance suite against ACME's harness" in listed.stdout
    run = nox(copy, tmp_path / ".nox", "-s", "conformance")
    assert run.returncode != 0
    assert "set HARNESS_CONFORMANCE_SOURCE to a checkout of it, a wheel, or git+https://" in (
        run.stderr
    )
    readme = " ".join((EXAMPLE / "README.md").read_text(encoding="utf-8").split())
    assert "A copy outside this repository needs `HARNESS_CONFORMANCE_SOURCE`" in readme


def test_the_ci_workflow_calls_nox_with_the_suite_from_its_repository() -> None:
    workflow = (EXAMPLE / ".github" / "workflows" / "conformance.yml").read_text()
    assert "run: nox -s conformance" in workflow
    assert "  HARNESS_CONFORMANCE_SOURCE: git+https://" in workflow
    assert 'python: ["3.11", "3.12", "3.13"]' in workflow
    # The tag a release makes (docs/development.md): bumping the version moves the pin with it.
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert f"harness-conformance@v{version}\n" in workflow
