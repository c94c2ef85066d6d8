"""Benchmark the reference fs tools: read memory, and guarded write/edit time against a floor.

Run: ``python bench/bench_fs.py [--quick] [--runs N]``. Not a test: it prints tables and exits 1
only when a target is missed (so a regression is visible in a script's status).

* Peak memory of ``read`` with ``limit=10`` on a 200 MB file, measured in a fresh subprocess as
  the growth of the peak resident set (``ru_maxrss``) over a baseline taken just before the
  read, plus the peak of Python allocations (``tracemalloc``). Target: under 30 MB.
* Guarded ``write`` against the **floor**: the same text encoded and written durably — a temp
  file, ``fsync``, ``os.replace``, ``fsync`` of the directory. Target from 1 MB up: at most
  1.2x the floor.
* Guarded ``edit`` against a **fair floor**: read the file, decode it, replace the text in
  memory, encode it, then the same durable write. Target from 1 MB up: at most 1.2x. (The
  byte-level floor, which skips decoding, is shown too.)

Each ratio is **paired**: every run times the floor and the guarded call back to back (their
order alternating), and the table shows the median of the per-run ratios over ``--runs`` runs
(15 by default, at least 9), so disk and cache drift between runs cancels out of the ratio.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from reference import open_workspace

SIZES: Final = {"1 KB": 1024, "1 MB": 1024**2, "10 MB": 10 * 1024**2, "50 MB": 50 * 1024**2}
TARGET_FROM: Final = 1024**2
WRITE_TARGET: Final = 1.2
EDIT_TARGET: Final = 1.2
MEMORY_TARGET_MB: Final = 30
MARKS: Final = ("MARK-A", "MARK-B")


def _text(size: int, tag: str) -> str:
    line = f"{tag} the quick brown fox jumps over the lazy dog 0123456789\n"
    return (line * (size // len(line) + 1))[:size]


def _durable_write(root: Path, target: Path, data: bytes, n: int) -> None:
    """The floor's publication: temp file, fsync, rename onto the target, fsync the directory."""
    temp = root / f".floor.{n}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temp, target)
    dfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _timed(run: Callable[[], None]) -> float:
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) * 1000


@dataclass
class Pair:
    """Per-run milliseconds of a floor and of the guarded call measured back to back."""

    floor: list[float]
    guarded: list[float]

    @property
    def ratio(self) -> float:
        """The median of the per-run ratios."""
        return statistics.median(g / f for f, g in zip(self.floor, self.guarded, strict=True))


def _paired(floor: Callable[[int], None], guarded: Callable[[int], None], runs: int) -> Pair:
    floor(0)  # warm both paths (and the page cache) before anything is timed
    guarded(0)
    pair = Pair([], [])
    for i in range(1, runs + 1):
        # Alternate which goes first, so a drift within a run favours neither.
        order = (guarded, floor) if i % 2 else (floor, guarded)
        first, second = (_timed(functools.partial(call, i)) for call in order)
        f, g = (second, first) if i % 2 else (first, second)
        pair.floor.append(f)
        pair.guarded.append(g)
    return pair


def bench_write(root: Path, size: int, runs: int) -> Pair:
    """Guarded write of ``size`` bytes against the durable-write floor."""
    texts = [_text(size, "a"), _text(size, "b")]
    floor_target = root / "floor.txt"
    floor_target.write_text(texts[0])
    (root / "w.txt").write_text(texts[0])
    ws = open_workspace(root)
    assert not ws.call_tool("read", {"file_path": "w.txt", "limit": 1}).is_error

    def floor(i: int) -> None:
        _durable_write(root, floor_target, texts[i % 2].encode("utf-8"), i)

    def guarded(i: int) -> None:
        result = ws.call_tool("write", {"file_path": "w.txt", "content": texts[i % 2]})
        assert not result.is_error, result

    return _paired(floor, guarded, runs)


def bench_edit(root: Path, size: int, runs: int, *, decode: bool) -> Pair:
    """Guarded edit (one replacement at the end: matching scans it all) against a fair floor."""
    text = _text(size, "e") + MARKS[0] + "\n"
    floor_target = root / "floor-edit.txt"
    floor_target.write_text(text)
    (root / "e.txt").write_text(text)
    ws = open_workspace(root)
    assert not ws.call_tool("read", {"file_path": "e.txt", "limit": 1}).is_error

    def swap(i: int) -> tuple[str, str]:
        return MARKS[i % 2], MARKS[(i + 1) % 2]

    def floor(i: int) -> None:
        old, new = swap(i)
        with open(floor_target, "rb") as source:
            data = source.read()
        if decode:
            replaced = data.decode("utf-8").replace(old, new, 1).encode("utf-8")
        else:
            replaced = data.replace(old.encode(), new.encode(), 1)
        _durable_write(root, floor_target, replaced, i)

    def guarded(i: int) -> None:
        old, new = swap(i)
        result = ws.call_tool("edit", {"file_path": "e.txt", "old_string": old, "new_string": new})
        assert not result.is_error, result

    return _paired(floor, guarded, runs)


_MEMORY_PROBE = """
import json, resource, sys, tracemalloc
from reference import open_workspace
root, name = sys.argv[1], sys.argv[2]
ws = open_workspace(root)
ws.call_tool("read", {"file_path": "tiny.txt"})  # warm every code path first
base_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
result = ws.call_tool("read", {"file_path": name, "limit": 10})
py_peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
assert not result.is_error, result
print(json.dumps({"rss_growth_mb": (peak_kb - base_kb) / 1024, "py_peak_mb": py_peak / 2**20,
                  "rss_base_mb": base_kb / 1024, "rss_peak_mb": peak_kb / 1024,
                  "footer": result.content[0].text.splitlines()[-2]}))
"""


def bench_read_memory(size: int) -> dict[str, object]:
    """Peak memory growth of one windowed read of a ``size``-byte file, in a fresh process."""
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        (Path(tmp) / "tiny.txt").write_text("x\n")
        big = Path(tmp) / "big.txt"
        chunk = _text(1024**2, "r")
        with open(big, "w") as out:
            for _ in range(size // len(chunk)):
                out.write(chunk)
        done = subprocess.run(
            [sys.executable, "-c", _MEMORY_PROBE, tmp, "big.txt"],
            capture_output=True,
            text=True,
            check=True,
        )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _row(label: str, pair: Pair, target: float | None) -> tuple[str, bool]:
    verdict, ok = "", True
    if target is not None:
        ok = pair.ratio <= target
        verdict = f"{'ok' if ok else 'MISSED'} (≤ {target})"
    floor, guarded = statistics.median(pair.floor), statistics.median(pair.guarded)
    return f"| {label} | {floor:.2f} | {guarded:.2f} | {pair.ratio:.2f} | {verdict} |", ok


def main() -> int:
    """Print the benchmark tables; 1 if a target was missed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 KB and 1 MB only, smaller read")
    parser.add_argument("--runs", type=int, default=15, help="paired runs per size (at least 9)")
    args = parser.parse_args()
    runs = max(args.runs, 9)
    sizes = {k: v for k, v in SIZES.items() if v <= 1024**2} if args.quick else SIZES
    read_size = 20 * 1024**2 if args.quick else 200 * 1024**2
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpu, {runs} paired runs per size")
    memory = bench_read_memory(read_size)
    growth = memory["rss_growth_mb"]
    assert isinstance(growth, float)
    print(
        f"\nread limit=10 of a {read_size // 1024**2} MB file: peak RSS growth "
        f"{growth:.1f} MB (peak {memory['rss_peak_mb']:.1f} MB, before the read "
        f"{memory['rss_base_mb']:.1f} MB), peak Python allocations {memory['py_peak_mb']:.1f} MB"
        f" (target < {MEMORY_TARGET_MB} MB)\n  footer: {memory['footer']}"
    )
    missed = [] if growth < MEMORY_TARGET_MB else ["read memory"]
    tables: dict[str, list[str]] = {"write": [], "edit": [], "edit (byte floor)": []}
    for label, size in sizes.items():
        targeted = size >= TARGET_FROM
        with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
            root = Path(tmp)
            pairs = {
                "write": (bench_write(root, size, runs), WRITE_TARGET),
                "edit": (bench_edit(root, size, runs, decode=True), EDIT_TARGET),
                "edit (byte floor)": (bench_edit(root, size, runs, decode=False), None),
            }
        for kind, (pair, target) in pairs.items():
            line, ok = _row(label, pair, target if targeted else None)
            tables[kind].append(line)
            if not ok:
                missed.append(f"{kind} {label}")
    titles = {
        "write": "guarded write vs floor (temp + fsync + rename + fsync dir)",
        "edit": "guarded edit vs fair floor (read, decode, replace, encode, durable write)",
        "edit (byte floor)": "guarded edit vs byte floor (read, bytes.replace, durable write)",
    }
    for kind, lines in tables.items():
        print(f"\n{titles[kind]}; median ms, median of paired ratios")
        print("| size | floor (ms) | guarded (ms) | paired ratio | target |")
        print("|---|---|---|---|---|")
        print("\n".join(lines))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"\nmax RSS of this process: {peak_mb} MB")
    print("all targets met" if not missed else f"MISSED: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
