"""Under xdist, bad input is still one line and exit 4 (``conformance/workers.py``).

A worker starts the harness and makes the run's directory; what goes wrong there used to be an
internal error with a traceback, or, before the worker had reported its collection, a run that
never ended.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from tests.suite import error_lines, run_suite

pytest.importorskip("xdist")

HANDSHAKE = "did not complete the handshake: describe failed: the harness exited with status 3"


def test_a_harness_that_will_not_start_in_one_worker_is_one_line(tmp_path: Path) -> None:
    serve = f"exec {shlex.quote(sys.executable)} -m conformance.serve"
    refuses = f'if [ "$PYTEST_XDIST_WORKER" = gw0 ]; then exit 3; fi; {serve}'
    done = run_suite(
        "--harness-cmd", f"sh -c {shlex.quote(refuses)}", "-k", "GRD", "-n", "2", cwd=tmp_path
    )
    assert done.returncode == 4, done.stdout[-3000:]
    [line] = error_lines(done)
    assert HANDSHAKE in line
    assert "INTERNALERROR" not in done.stdout + done.stderr


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
