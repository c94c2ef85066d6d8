"""Benchmark the reference fs tools: read memory, and guarded write/edit time against the floor.

Run: ``python bench/bench_fs.py [--quick]``. Not a test: it prints a table and never asserts.

* Peak memory of ``read`` with ``limit=10`` on a 200 MB file, measured in a fresh subprocess as
  the growth of the peak resident set (``ru_maxrss``) over a baseline taken just before the
  read, plus the peak of Python allocations (``tracemalloc``). Target: under 30 MB.
* Median time of a guarded ``write`` and ``edit`` of 1 KB, 1 MB and 50 MB files, against the
  floor: the same text written to a temp file with the same durability (``fsync`` of the file
  and of the directory) and ``os.replace``. Targets at 1 MB and above: write within 1.3×, edit
  within 3× the floor.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from reference import open_workspace

SIZES = {"1 KB": 1024, "1 MB": 1024**2, "50 MB": 50 * 1024**2}


def _text(size: int, tag: str) -> str:
    line = f"{tag} the quick brown fox jumps over the lazy dog 0123456789\n"
    return (line * (size // len(line) + 1))[:size]


def _median_ms(run: Callable[[int], None], repeats: int) -> float:
    samples = []
    for i in range(repeats):
        start = time.perf_counter()
        run(i)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def _floor(root: Path, texts: list[str]) -> Callable[[int], None]:
    target = root / "floor.txt"
    target.write_text(texts[0])

    def run(i: int) -> None:
        temp = root / f".floor.{i}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            os.write(fd, texts[i % 2].encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, target)
        dfd = os.open(root, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)

    return run


def _guarded_write(root: Path, texts: list[str]) -> Callable[[int], None]:
    (root / "w.txt").write_text(texts[0])
    ws = open_workspace(root)
    assert not ws.call_tool("read", {"file_path": "w.txt", "limit": 1}).is_error

    def run(i: int) -> None:
        result = ws.call_tool("write", {"file_path": "w.txt", "content": texts[i % 2]})
        assert not result.is_error, result

    return run


def _guarded_edit(root: Path, texts: list[str]) -> Callable[[int], None]:
    # Alternate one replacement at the end of the file, so matching scans all of it.
    marks = ["MARK-A", "MARK-B"]
    (root / "e.txt").write_text(texts[0] + marks[0] + "\n")
    ws = open_workspace(root)
    assert not ws.call_tool("read", {"file_path": "e.txt", "limit": 1}).is_error

    def run(i: int) -> None:
        old, new = marks[i % 2], marks[(i + 1) % 2]
        result = ws.call_tool("edit", {"file_path": "e.txt", "old_string": old, "new_string": new})
        assert not result.is_error, result

    return run


def bench_mutations(repeats: int, sizes: dict[str, int]) -> list[tuple[str, float, float, float]]:
    """Rows of (size, floor ms, write ms, edit ms); small sizes get more repeats (noisier)."""
    rows = []
    for label, size in sizes.items():
        texts = [_text(size, "a"), _text(size, "b")]
        n = repeats * 8 if size <= 1024**2 else repeats
        with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
            root = Path(tmp)
            floor = _median_ms(_floor(root, texts), n)
            write = _median_ms(_guarded_write(root, texts), n)
            edit = _median_ms(_guarded_edit(root, texts), n)
        rows.append((label, floor, write, edit))
    return rows


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


def main() -> None:
    """Print the benchmark tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, smaller files")
    args = parser.parse_args()
    repeats = 3 if args.quick else 9
    sizes = {"1 KB": 1024, "1 MB": 1024**2} if args.quick else SIZES
    read_size = 20 * 1024**2 if args.quick else 200 * 1024**2
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpu, repeats={repeats}")
    memory = bench_read_memory(read_size)
    print(
        f"\nread limit=10 of a {read_size // 1024**2} MB file: peak RSS growth "
        f"{memory['rss_growth_mb']:.1f} MB (peak {memory['rss_peak_mb']:.1f} MB, before the read "
        f"{memory['rss_base_mb']:.1f} MB), peak Python allocations {memory['py_peak_mb']:.1f} MB"
        f" (target < 30 MB)\n  footer: {memory['footer']}"
    )
    print("\n| size | floor (ms) | guarded write (ms) | × floor | guarded edit (ms) | × floor |")
    print("|---|---|---|---|---|---|")
    for label, floor, write, edit in bench_mutations(repeats, sizes):
        print(
            f"| {label} | {floor:.2f} | {write:.2f} | {write / floor:.2f} | {edit:.2f} | "
            f"{edit / floor:.2f} |"
        )
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"\nmax RSS of this process: {peak_mb} MB")


if __name__ == "__main__":
    main()
