"""Same input, same verdict: the suite run ten times against each harness must agree with itself.

Run: ``python bench/determinism.py [--runs N] [--harness SPEC …]`` (``nox -s determinism``).
By default it runs the reference and every deliberately broken harness in ``tests/mutants/``,
each ``--runs`` times (default 10) with the default hypothesis profile, two runs at a time, and
compares per case the outcome, the outcome of each level and the rules each violation cites
(paths and durations differ between runs and are not compared). Prints one line per harness and
exits 1 when any harness got two different verdicts, naming the cases that moved.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Final

REPO: Final = Path(__file__).resolve().parent.parent
Verdict = dict[str, tuple[object, ...]]


def harnesses() -> list[str]:
    """The reference and every mutant harness."""
    found = (REPO / "tests" / "mutants").glob("*.py")
    mutants = sorted(p.stem for p in found if p.stem != "__init__")
    return ["reference", *(f"tests.mutants.{name}:harness" for name in mutants)]


def verdict(harness: str, workdir: Path) -> Verdict:
    """One run's verdict: case ID → (outcome, per-level outcomes, cited rules of its violations)."""
    path = workdir / "report.json"
    command = [sys.executable, "-m", "conformance", "-q", "-p", "no:cacheprovider"]
    command += ["--hypothesis-profile", "default", "--harness", harness]
    command += ["--conformance-report", str(path)]
    env = {**os.environ, "PYTHONPATH": str(REPO), "CI": ""}
    subprocess.run(command, cwd=workdir, env=env, capture_output=True, check=False)
    if not path.exists():
        return {"<run>": ("no report",)}
    data = json.loads(path.read_text(encoding="utf-8"))
    found: Verdict = {"<run>": (data.get("complete"),)}
    for case in data["cases"]:
        rules = tuple((v.get("level"), v.get("rule")) for v in case.get("verdicts", []))
        found[case["id"]] = (case["outcome"], tuple(sorted(case["levels"].items())), rules)
    return found


def main() -> int:
    """Run every harness ``--runs`` times and compare."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--harness", action="append", default=[], metavar="SPEC")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    chosen = args.harness or harnesses()
    moved_any = False
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.jobs) as pool:
        for harness in chosen:
            dirs = [Path(tmp) / f"{harness.replace(':', '_')}-{i}" for i in range(args.runs)]
            for directory in dirs:
                directory.mkdir()
            runs = list(pool.map(lambda d, h=harness: verdict(h, d), dirs))
            first = runs[0]
            cases = set().union(*runs)
            moved = sorted(c for c in cases if any(run.get(c) != first.get(c) for run in runs))
            failed = sum(1 for v in first.values() if v[0] == "failed")
            state = "identical" if not moved else f"DIFFERENT in {', '.join(moved)}"
            print(f"{harness:<48} {args.runs} runs, {failed:>3} failed cases: {state}", flush=True)
            moved_any = moved_any or bool(moved)
    return 1 if moved_any else 0


if __name__ == "__main__":
    sys.exit(main())
