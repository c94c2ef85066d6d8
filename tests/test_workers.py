"""Under xdist, bad input is still one line and exit 4 (``conformance/workers.py``).

A worker starts the harness and makes the run's directory; what goes wrong there used to be an
internal error with a traceback, or, before the worker had reported its collection, a run that
never ended.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from tests.suite import cli, error_lines, run_suite

pytest.importorskip("xdist")

HANDSHAKE = "did not complete the handshake: describe failed: the harness exited with status 3"


def test_a_harness_that_will_not_start_in_one_worker_is_one_line(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """gw1 starts its harness and reports its collection; only then does gw0's harness end.

    gw0 fails as it chooses its cases, before ``-k`` has: its collection, had xdist heard of it,
    would differ from gw1's, which the controller already has (a FIFO orders the two).
    """
    go = tmp_path / "gw1-collected"
    os.mkfifo(go)
    # Held open here, the FIFO never blocks its writer and keeps what it wrote for gw0's reads.
    held = os.open(go, os.O_RDWR)
    request.addfinalizer(lambda: os.close(held))
    serve = f"{shlex.quote(sys.executable)} -m conformance.serve --harness reference"
    harness = f'if [ "$PYTEST_XDIST_WORKER" = gw0 ]; then read go < "$HARNESS_GO"; exit 3; fi; exec {serve}'
    done = run_suite("--harness-cmd", f"sh -c {shlex.quote(harness)}", "-k", "GRD", "-n", "2",
                     "-p", "tests.fixtures.gw1_collected", cwd=tmp_path,
                     env={"HARNESS_GO": str(go)})  # fmt: skip
    assert done.returncode == 4, done.stdout[-3000:]
    [line] = error_lines(done)
    assert HANDSHAKE in line
    assert "Traceback" not in done.stdout + done.stderr
    assert "Different tests were collected" not in done.stdout


def test_a_harness_no_worker_can_load_is_one_line(tmp_path: Path) -> None:
    done = run_suite("--harness", "no_such_module:harness", "-k", "GRD", "-n", "2", cwd=tmp_path)
    assert done.returncode == 4, done.stdout[-3000:]
    assert error_lines(done) == [
        "ERROR: harness \"no_such_module:harness\" cannot be loaded: No module named 'no_such_module'"
    ]


def test_a_worker_stopped_before_it_reports_its_collection_ends_the_run(tmp_path: Path) -> None:
    done = run_suite("-p", "tests.fixtures.refuses_in_gw0", "-k", "GRD", "-n", "2", cwd=tmp_path)
    assert done.returncode == 4, done.stdout[-3000:]
    assert error_lines(done) == ["ERROR: gw0 refuses to collect"]


def test_a_selection_under_xdist_is_recorded_and_refused_as_a_baseline(tmp_path: Path) -> None:
    # The controller collects nothing: without the workers' word the report said "complete"
    # for 9 of the suite's cases, and a baseline made from it passed every other failure.
    path = tmp_path / "some.json"
    done = run_suite("-k", "DEL", "-n", "2", "-q", "--conformance-report", str(path), cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    written = json.loads(path.read_text(encoding="utf-8"))
    ran, every = len(written["cases"]), len(_every_case(tmp_path))
    assert written["selected"] == {"cases": ran, "of": every}
    assert 0 < ran < every
    made = cli("baseline", str(path), cwd=tmp_path)
    assert (made.returncode, made.stdout) == (4, "")
    assert made.stderr.splitlines() == [
        f"ERROR: {path}: the run chose {ran} of {every} cases (-k, -m, --conformance-case or "
        "--lf): make the baseline from a run of the whole suite"
    ]


def test_cases_no_worker_ran_are_not_run_under_xdist(tmp_path: Path) -> None:
    # -x ends the run after a failure: the cases chosen and never run are in the report, each
    # with its rules, as without xdist, not missing from it.
    path = tmp_path / "cut.json"
    done = run_suite("--harness", "tests.mutants.remedy_twice:harness", "-n", "2", "-x", "-q",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode != 0, done.stdout[-3000:]
    written = json.loads(path.read_text(encoding="utf-8"))
    cases = {case["id"]: case for case in written["cases"]}
    assert set(cases) == _every_case(tmp_path)
    not_run = [case for case in cases.values() if case["outcome"] == "not-run"]
    assert not_run
    assert all(case["rules"] for case in not_run)
    assert written["complete"] is False


def _every_case(where: Path) -> set[str]:
    listed = cli("--conformance-list-cases", "--format", "json", cwd=where)
    assert listed.returncode == 0, listed.stderr
    return {case["id"] for case in json.loads(listed.stdout)["cases"]}
