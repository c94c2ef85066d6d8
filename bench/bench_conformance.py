"""Benchmark a default conformance run against an empty pytest run with the same plugins.

Run: ``python bench/bench_conformance.py [--runs N (9)] [--profile default|ci] [--basetemp
DIR|tmpfs] [--pause S]``. Not a test: it prints a table and never asserts. Every round runs,
back to back and in a rotating order (with ``--pause``, the first two alone; see below):

* **empty** — ``EMPTY_COMMAND`` below: pytest with the same configuration and every plugin the
  suite loads (the conformance plugin by its entry point, syrupy, hypothesis, xdist, …) over a
  module with no tests — what any pytest run pays before the first test;
* **stdio** — ``python -m conformance -q``: the default run, the reference in its own process
  (on Linux with two CPUs split over two processes of the suite, ``conformance.parallel``);
* **one-process** — the same with ``--conformance-jobs 1``: what the split saves;
* **in-process** — the default run with ``--conformance-in-process`` (never split).

The ratios are medians of per-round ratios (paired), so the machine's drift between rounds
cancels out; their range is printed too, and a distribution-free 95% interval of each median
(``median_interval``). A target is called *met* only when the whole interval lies within it,
*missed* when the whole interval lies beyond it, and *undecided* otherwise, or with fewer than
six rounds (too few for 95%): more rounds narrow the interval (41 rounds bound the median
between the 14th and the 28th smallest ratio). The timed commands are exactly those above (the
``ci`` profile adds ``--hypothesis-profile ci``, ``--basetemp`` below adds
``--conformance-basetemp`` to the suite's runs): no report is written while they are timed.
The per-case table comes from one more stdio run afterwards, with ``--junitxml``. Children run
with bytecode caching on, as an installed package has it (this machine's environment sets
``PYTHONDONTWRITEBYTECODE``), after one warm-up round. Targets on a 2-core machine: default
run ≤ 4× the empty run, stdio ≤ 1.3× in process. Run it under ``flock /tmp/heavy.lock`` when
others share the machine.

Where the runs keep their directories moves the ratio by a tenth (a RAM filesystem against a
disk; docs/child-process.md says why the default stays on the cache). ``--basetemp DIR`` adds
``--conformance-basetemp DIR`` to every suite run (``tmpfs``: a private directory made on
``/dev/shm`` and removed again); the first line names the base the runs used.

``--pause S`` waits S seconds before each round (not timed, and the hypervisor's share is
counted without it), and a round is then the empty run and the default run alone, so only the
≤ 4× target is measured: each default run meets a disk that no suite run has touched for S
seconds. Back to back, every suite run deletes about 700 files and directories, and on this
project's machines (an ext4 without a journal) deletions slow the next run: 2,000 of them
just before it made it 18% slower (docs/numbers.md, the forty-first session). The empty
run creates almost nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import conformance
from conformance.basetemp import default_base
from conformance.strategies import hypothesis_ci_variables

RUN_INI: Final = Path(conformance.__file__).parent / "run.ini"
EMPTY_COMMAND: Final = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c",
                        str(RUN_INI), "--rootdir", "{tmp}", "{tmp}/test_empty.py")  # fmt: skip
SUITE_COMMAND: Final = (sys.executable, "-m", "conformance", "-q", "-p", "no:cacheprovider")
KINDS: Final = ("empty", "stdio", "one-process", "in-process")
EXTRA: Final = {
    "one-process": ["--conformance-jobs", "1"],
    "in-process": ["--conformance-in-process"],
}


def _env() -> dict[str, str]:
    # Without hypothesis' CI variables: the default run means the default profile.
    ci = hypothesis_ci_variables()
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CI")) and k not in ci
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def stolen() -> float:
    """CPU seconds the hypervisor has taken from this machine since boot (Linux ``steal``), or 0.

    A virtual machine whose host is busy loses time that no process here can see; the table
    prints how much went while it was measured, so a disturbed benchmark says so.
    """
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = stat.readline().split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def median_interval(
    values: Sequence[float], confidence: float = 0.95
) -> tuple[float, float, float]:
    """An interval holding the median of what ``values`` sample, with the coverage it has.

    Distribution-free: the median lies below the k-th smallest of n values with the probability
    that a fair coin falls heads fewer than k times in n tosses, so the k-th smallest and the
    k-th largest bound it with coverage 1 - 2·P(Binomial(n, ½) < k), for the largest k whose
    coverage still reaches ``confidence``. Too few values for that give their minimum and
    maximum, with the lower coverage those have.
    """
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        raise ValueError("no values")

    def coverage(k: int) -> float:
        return 1 - 2 * sum(math.comb(n, j) for j in range(k)) / (1 << n)

    k = 1
    while k + 1 <= (n + 1) // 2 and coverage(k + 1) >= confidence:
        k += 1
    return ordered[k - 1], ordered[n - k], coverage(k)


def verdict(interval: tuple[float, float, float], limit: float, confidence: float = 0.95) -> str:
    """Whether a target of at most ``limit`` is met: the whole interval within it, or beyond it.

    An interval covering less than ``confidence`` (too few rounds) decides nothing.
    """
    low, high, covered = interval
    if covered < confidence:
        return "undecided (too few rounds)"
    return "met" if high <= limit else "missed" if low > limit else "undecided"


def _interval(interval: tuple[float, float, float] | None) -> str:
    if interval is None:
        return ""
    low, high, covered = interval
    return f"{low:.2f}–{high:.2f}× ({covered:.0%})"


def _target(interval: tuple[float, float, float] | None, limit: float | None) -> str:
    if interval is None or limit is None:
        return ""
    return f"≤ {limit:g}×: {verdict(interval, limit)}"


def one_run(
    kind: str, profile: str, base: str | None, *, per_case: bool = False
) -> tuple[float, dict[str, float]]:
    """Wall seconds of one run of ``kind`` (its directories under ``base``, if chosen); with
    ``per_case``, seconds per case (by case ID)."""
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "junit.xml"
        if kind == "empty":
            Path(tmp, "test_empty.py").write_text('"""No tests: pytest\'s fixed cost."""\n')
            command = [part.format(tmp=tmp) for part in EMPTY_COMMAND]
            expected = {5}  # no tests collected
        else:
            command = [*SUITE_COMMAND, *(["--hypothesis-profile", "ci"] if profile == "ci" else [])]
            command += [*EXTRA.get(kind, []), *(["--conformance-basetemp", base] if base else [])]
            command += [f"--junitxml={xml}"] if per_case else []
            expected = {0}
        start = time.perf_counter()
        done = subprocess.run(command, cwd=tmp, env=_env(), capture_output=True, text=True,
                              check=False)  # fmt: skip
        wall = time.perf_counter() - start
        if done.returncode not in expected:
            raise SystemExit(f"{kind}: exit {done.returncode}:\n{done.stdout[-2000:]}")
        times: dict[str, float] = {}
        if per_case:
            for case in ET.parse(xml).getroot().iter("testcase"):
                props = {p.get("name"): p.get("value") for p in case.iter("property")}
                times[str(props.get("case_id"))] = float(case.get("time", "0"))
    return wall, times


def main() -> None:
    """Print the paired table and the slowest cases."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--profile", default="default", choices=["default", "ci"])
    parser.add_argument("--basetemp", metavar="DIR|tmpfs")
    parser.add_argument("--pause", type=float, default=0.0, metavar="S")
    args = parser.parse_args()
    if not math.isfinite(args.pause) or args.pause < 0:
        parser.error(f"--pause {args.pause:g}: a number of seconds, 0 or more")
    with contextlib.ExitStack() as stack:
        base = None
        if args.basetemp == "tmpfs":
            base = stack.enter_context(tempfile.TemporaryDirectory(dir="/dev/shm"))
        elif args.basetemp:
            base = os.path.abspath(args.basetemp)  # each run starts in a directory of its own
        measure(args.runs, args.profile, base, args.pause)


def round_kinds(pause: float) -> tuple[str, ...]:
    """The runs of one round: every kind, or after a pause the empty and the default run."""
    return KINDS[:2] if pause else KINDS


def measure(runs: int, profile: str, base: str | None, pause: float = 0.0) -> None:
    """``runs`` paired rounds under ``profile`` (``base``: as ``one_run``; ``pause``: seconds
    before each round, not timed), and their table."""
    kinds = round_kinds(pause)
    for kind in kinds:  # warm-up: bytecode caches written, files in the page cache
        one_run(kind, profile, base)
    walls: dict[str, list[float]] = {kind: [] for kind in kinds}
    start, steal_before, paused, steal_paused = time.perf_counter(), stolen(), 0.0, 0.0
    for round_ in range(runs):
        if pause:
            asleep, steal_asleep = time.perf_counter(), stolen()
            time.sleep(pause)  # no synchronization: the disk's memory of deletions runs out
            paused += time.perf_counter() - asleep
            steal_paused += stolen() - steal_asleep
        order = kinds[round_ % len(kinds) :] + kinds[: round_ % len(kinds)]
        for kind in order:
            walls[kind].append(one_run(kind, profile, base)[0])
    measured = time.perf_counter() - start - paused
    steal = stolen() - steal_before - steal_paused
    per_case = one_run("stdio", profile, base, per_case=True)[1]
    ratio = {
        kind: [k / e for k, e in zip(walls[kind], walls["empty"], strict=True)]
        for kind in kinds[1:]
    }
    spacing = f"; {pause:g} s of pause before each round (not timed)" if pause else ""
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpu, profile={profile}, "
          f"{runs} paired rounds, {len(per_case)} cases; the hypervisor took {steal:.1f} "
          f"CPU s of {measured:.0f} s ({steal / measured / (os.cpu_count() or 1):.0%} of the "
          f"machine); the runs' base: {base or f'{default_base()} (the default)'}"
          f"{spacing}")  # fmt: skip
    print("| run | wall median (s) | min | max | ÷ empty (paired median) | range | "
          "95% interval of the median | target |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    targets = {"stdio": 4.0}
    for kind in kinds:
        timed, paired = walls[kind], ratio.get(kind, [1.0])
        interval = median_interval(paired) if kind in ratio else None
        print(f"| {kind} | {statistics.median(timed):.2f} | {min(timed):.2f} | {max(timed):.2f} | "
              f"{statistics.median(paired):.2f}× | {min(paired):.2f}–{max(paired):.2f}× | "
              f"{_interval(interval)} | {_target(interval, targets.get(kind))} |")  # fmt: skip
    if "in-process" in walls:
        transport = [s / i for s, i in zip(walls["stdio"], walls["in-process"], strict=True)]
        interval = median_interval(transport)
        print(f"| stdio ÷ in-process | | | | {statistics.median(transport):.2f}× | "
              f"{min(transport):.2f}–{max(transport):.2f}× | {_interval(interval)} | "
              f"{_target(interval, 1.3)} |")  # fmt: skip
        alone = [o / i for o, i in zip(walls["one-process"], walls["in-process"], strict=True)]
        print(f"| one-process ÷ in-process (the transport alone) | | | | "
              f"{statistics.median(alone):.2f}× | | | |")  # fmt: skip
    times = sorted(per_case.values())
    print(f"\nper case (one more stdio run, with --junitxml): median "
          f"{statistics.median(times) * 1000:.1f} ms, sum {sum(times):.2f} s, max "
          f"{max(times) * 1000:.0f} ms; slowest:")  # fmt: skip
    for case, seconds in sorted(per_case.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {case:<9} {seconds * 1000:7.0f} ms")


if __name__ == "__main__":
    main()
