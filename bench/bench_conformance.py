"""Benchmark a full conformance run against the reference: wall time and time per case.

Run: ``python bench/bench_conformance.py [--runs N] [--profile default|ci]
[--transport stdio|in-process|both]``. Not a test: it prints numbers and never asserts. Each run
is a fresh ``python -m conformance`` process (so the wall time includes interpreter and pytest
start-up); per-case times come from ``--junitxml``. With ``both`` (the default) it alternates
the two transports run by run and prints the ratio of their medians.
Targets on a 2-core machine: a default run ≤ 5 s, a ``ci`` run ≤ 60 s, and the harness in its
own process (stdio, the default) ≤ 1.5× the in-process run.
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


def one_run(profile: str, transport: str) -> tuple[float, dict[str, float]]:
    """Wall seconds of one full run, and seconds per case (by case ID)."""
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "junit.xml"
        command = [sys.executable, "-m", "conformance", "-q", "-p", "no:cacheprovider"]
        command += ["--hypothesis-profile", profile, f"--junitxml={xml}"]
        if transport == "in-process":
            command.append("--conformance-in-process")
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
    """Print the wall time of full runs per transport and the slowest cases."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", default="default", choices=["default", "ci"])
    parser.add_argument("--transport", default="both", choices=["stdio", "in-process", "both"])
    args = parser.parse_args()
    transports = ["stdio", "in-process"] if args.transport == "both" else [args.transport]
    walls: dict[str, list[float]] = {t: [] for t in transports}
    cases: list[dict[str, float]] = []
    for _ in range(args.runs):
        for transport in transports:  # alternated, so drift in the machine hits both alike
            wall, per_case = one_run(args.profile, transport)
            walls[transport].append(wall)
            if transport == transports[0]:
                cases.append(per_case)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpu, profile={args.profile}")
    for transport, runs in walls.items():
        print(
            f"{transport:<10} full run, {len(cases[0])} cases, {args.runs} runs: wall median "
            f"{statistics.median(runs):.2f} s (min {min(runs):.2f}, max {max(runs):.2f})"
        )
    if len(walls) == 2:
        ratio = statistics.median(walls["stdio"]) / statistics.median(walls["in-process"])
        print(f"stdio / in-process: {ratio:.2f}x")
    median_case = {
        case: statistics.median(run.get(case, 0.0) for run in cases) for case in cases[0]
    }
    times = sorted(median_case.values())
    print(
        f"per case ({transports[0]}): median {statistics.median(times) * 1000:.1f} ms, "
        f"sum {sum(times):.2f} s, max {max(times) * 1000:.0f} ms"
    )
    print("slowest cases:")
    for case, seconds in sorted(median_case.items(), key=lambda kv: -kv[1])[:6]:
        print(f"  {case:<9} {seconds * 1000:7.0f} ms")


if __name__ == "__main__":
    main()
