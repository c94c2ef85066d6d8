"""How long the suite takes to end a run against a hostile harness: the budgets that used to be
wall-clock assertions in ``tests/test_isolation.py``.

Run from the checkout: ``python bench/bench_isolation.py``. Not a test: it prints a table and
never asserts (the tests check *what* such a run reports; this measures *how soon*). Each run is
a fresh ``python -m conformance`` against a fixture of ``tests/fixtures/hostile.py``; the budget
column is what a 2-core machine should meet when it is not shared.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

REPO: Final = Path(__file__).resolve().parent.parent
RUNS: Final = (
    ("hangs: every tool call hangs, --conformance-timeout 1", 60.0,
     ["--harness", "tests.fixtures.hostile:hangs", "--conformance-timeout", "1"]),
    ("exits_three: the 50th call exits with status 3", 120.0,
     ["--harness", "tests.fixtures.hostile:exits_three"]),
    ("slow: every call takes 1 s, --conformance-deadline 4", 30.0,
     ["--harness", "tests.fixtures.hostile:slow", "--conformance-deadline", "4"]),
)  # fmt: skip


def main() -> None:
    """Print the wall time of each hostile run beside its budget."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpu")
    print("| run | exit | wall (s) | budget (s) |")
    print("|---|---|---|---|")
    for title, budget, args in RUNS:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "conformance", "-q", "-p", "no:cacheprovider",
                 "--hypothesis-profile", "default", *args],
                cwd=tmp, env=env, capture_output=True, text=True, check=False,
            )  # fmt: skip
            wall = time.perf_counter() - start
        print(f"| {title} | {done.returncode} | {wall:.1f} | {budget:g} |")


if __name__ == "__main__":
    main()
