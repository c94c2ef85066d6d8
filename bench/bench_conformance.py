"""Benchmark a full conformance run against the reference: wall time and time per case.

Run: ``python bench/bench_conformance.py [--runs N] [--profile default|ci]``. Not a test: it
prints numbers and never asserts. Each run is a fresh ``python -m conformance`` process (so the
wall time includes interpreter and pytest start-up); per-case times come from ``--junitxml``.
Target: a full default run under 15 s wall on a 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path


def one_run(profile: str) -> tuple[float, dict[str, float]]:
    """Wall seconds of one full run, and seconds per case (by case ID)."""
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "junit.xml"
        command = [sys.executable, "-m", "conformance", "-q", "-p", "no:cacheprovider"]
        command += ["--hypothesis-profile", profile, f"--junitxml={xml}"]
        start = time.perf_counter()
        done = subprocess.run(command, cwd=tmp, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"the suite failed against the reference:\n{done.stdout[-2000:]}")
        per_case: dict[str, float] = {}
        for case in ET.parse(xml).getroot().iter("testcase"):
            props = {p.get("name"): p.get("value") for p in case.iter("property")}
            per_case[str(props.get("case_id"))] = float(case.get("time", "0"))
    return wall, per_case


def main() -> None:
    """Print the wall time of full runs and the slowest cases."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", default="default", choices=["default", "ci"])
    args = parser.parse_args()
    walls, cases = [], []
    for _ in range(args.runs):
        wall, per_case = one_run(args.profile)
        walls.append(wall)
        cases.append(per_case)
    median_case = {
        case: statistics.median(run.get(case, 0.0) for run in cases) for case in cases[0]
    }
    times = sorted(median_case.values())
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpu, profile={args.profile}")
    print(
        f"full run, {len(median_case)} cases, {args.runs} runs: "
        f"wall median {statistics.median(walls):.2f} s (min {min(walls):.2f}, max {max(walls):.2f})"
    )
    print(
        f"per case: median {statistics.median(times) * 1000:.1f} ms, "
        f"sum {sum(times):.2f} s, max {max(times) * 1000:.0f} ms"
    )
    print("slowest cases:")
    for case, seconds in sorted(median_case.items(), key=lambda kv: -kv[1])[:6]:
        print(f"  {case:<9} {seconds * 1000:7.0f} ms")


if __name__ == "__main__":
    main()
