"""Stress the reference's reliability guarantees at counts too slow for the test session.

Run: ``python bench/stress_reliability.py [--tries N] [--rounds M] [--kills K] [--only PART]``
(or ``nox -s stress``). Not a test: it prints numbers and exits 1 if an invariant broke.

* **sandbox race** — a racer (a thread, then a process) keeps exchanging ``real/`` with a
  symlink to a directory outside the workspace (``renameat2(RENAME_EXCHANGE)``, so ``real``
  always exists) while the main loop writes, creates and edits ``real/f<i>.txt`` under
  ``workspace-write``. An *escape* is anything created or changed outside: there must be none.
  A *hit* is a try that met the window: ``real`` was a symlink at the ``checked`` pause point,
  or the call was refused as "the path changed". Without hits, 0 escapes would prove nothing,
  so a racer without hits fails the run. Swapping flat out (``--dwell-us 0,0``, the default)
  hits about half the tries on a 2-core machine; every outcome must also be one the spec
  names (published, fenced, "path changed"): a raw ``OSError`` or a wrong code is a violation.
* **multi-process CAS** — N processes x M rounds read one file, meet at a barrier and write:
  exactly one winner per round, and the file holds the winner's bytes whole.
* **SIGKILL** — children writing 16 MiB are killed at random moments: every target holds the
  old or the new bytes, and after one more mutation of each directory no temp file is left.
* **faults** — the fault sweep of ``tests/test_reliability.py`` (every syscall of a mutation
  fails in turn) at several sizes: no failure after the commit point reaches the caller, and a
  refused call changes no byte.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import multiprocessing
import os
import random
import re
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Final

# The helpers that drive each race live with the tests that prove them deterministically.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reference import FsError, open_workspace
from reference.fs import local as local_module
from reference.workspace import Workspace
from tests.test_reliability import (
    FAULT_MUTATIONS,
    STAGED_BYTES,
    run_cas_rounds,
    start_stager,
    sweep_faults,
    temps,
)

Dwell = tuple[float, float]  # seconds ``real`` stays the symlink, then the directory
AT_FDCWD: Final = -100
RENAME_EXCHANGE: Final = 2
FILES: Final = 10
SEED: Final = b"MARK\n"
REDIRECTED: Final = "the path changed while it was being written"
FENCED: Final = "file access denied under workspace-write mode"

_libc = ctypes.CDLL(None, use_errno=True)
_renameat2 = _libc.renameat2
_renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
_renameat2.restype = ctypes.c_int


def exchange(a: bytes, b: bytes) -> None:
    """Atomically swap two names (both always exist: no moment without ``real``)."""
    if _renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def _race(real: bytes, partner: bytes, stopped: Callable[[], bool], dwell: Dwell) -> None:
    # With no dwell, ``real`` flips as fast as the kernel allows, so every step of a mutation
    # (resolution, fence, walk, checks, staging) meets either state about equally often.
    clock = time.perf_counter
    while not stopped():
        for seconds in dwell:
            exchange(real, partner)
            until = clock() + seconds
            while clock() < until:
                pass


def _process_racer(real: bytes, partner: bytes, stop: Event, dwell: Dwell) -> None:
    _race(real, partner, stop.is_set, dwell)


@dataclass
class RaceReport:
    """Outcomes of one racer's tries."""

    racer: str
    tries: int = 0
    escapes: int = 0
    symlink_at_checked: int = 0
    refused_as_redirect: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)

    @property
    def hits(self) -> int:
        """Tries that met the window."""
        return self.symlink_at_checked + self.refused_as_redirect

    def line(self) -> str:
        """One summary line."""
        return (
            f"sandbox race ({self.racer} racer): {self.tries} tries, {self.escapes} escapes, "
            f"{self.hits} hits ({100 * self.hits / max(self.tries, 1):.1f}%: "
            f"{self.symlink_at_checked} symlink at the checked point, "
            f"{self.refused_as_redirect} refused as 'path changed'); outcomes "
            f"{dict(sorted(self.outcomes.items()))}"
        )


def _look(real: Path, seen: list[bool]) -> None:
    seen.append(real.is_symlink())


def _outcome(ws: Workspace, call_id: str, text: str, root: Path) -> str:
    if not text.startswith("Error: "):
        return "published"
    err = ws.failure(call_id)
    if isinstance(err, FsError) and isinstance(err.cause, FsError):
        err = err.cause  # the provider's own words behind the model-facing sandbox marker
    # One key per kind of outcome, whatever file the try wrote.
    message = re.sub(r"(?<=/real/)[fn]\d+\.txt", "<file>", str(err).replace(str(root), "<root>"))
    if message.endswith(REDIRECTED):
        return "refused: path changed"
    if message.endswith(FENCED):
        return "refused: fenced (resolved outside)"
    if (
        isinstance(err, FsError)
        and err.code == "FS_IO_ERROR"
        and message.startswith('cannot resolve "')
    ):
        # realpath met a symlink that was gone by the time it read it, time after time:
        # refused before the fence, nothing written (SPEC leaves this race's wording open).
        return "refused: unresolvable while it changed"
    # Anything else is wrong here: no parent is ever a file, no error may lack its code.
    return f"other: {message} ({getattr(err, 'code', 'no code')})"


def sandbox_race(base: Path, racer: str, tries: int, dwell: Dwell) -> RaceReport:
    """``tries`` mutations of ``real/`` while ``racer`` keeps swapping it for a symlink."""
    root, outside = base / "ws", base / "outside"
    real, partner = root / "real", root / "real.swap"
    real.mkdir(parents=True)
    outside.mkdir()
    for i in range(FILES):
        (real / f"f{i}.txt").write_bytes(SEED)
        (outside / f"f{i}.txt").write_bytes(SEED)
    partner.symlink_to(outside)
    decoys = {f"f{i}.txt": SEED for i in range(FILES)}
    guarded = open_workspace(root, sandbox="workspace-write")
    unguarded = open_workspace(root, sandbox="workspace-write", policy=False)
    report = RaceReport(racer)
    created: set[str] = set()
    names = (os.fsencode(real), os.fsencode(partner))
    stop_thread = threading.Event()
    stop_process = multiprocessing.get_context("fork").Event()
    if racer == "thread":
        runner: threading.Thread | multiprocessing.process.BaseProcess = threading.Thread(
            target=_race, args=(*names, stop_thread.is_set, dwell), daemon=True
        )
    else:
        runner = multiprocessing.get_context("fork").Process(
            target=_process_racer, args=(*names, stop_process, dwell)
        )
    runner.start()
    try:
        for i in range(tries):
            seen: list[bool] = []
            look = functools.partial(_look, real, seen)
            kind = i % 3
            ws = guarded if kind == 1 else unguarded
            # What ``real`` is once every check has passed, just before staging.
            ws.arm_pause("checked", look)
            if kind == 0:
                name = f"f{i % FILES}.txt"
                args: dict[str, object] = {"file_path": f"real/{name}", "content": f"{i}\n"}
                result = ws.call_tool("write", args)
            elif kind == 1:
                name = f"n{i}.txt"
                result = ws.call_tool("write", {"file_path": f"real/{name}", "content": "n\n"})
            else:
                name = f"f{i % FILES}.txt"
                args = {"file_path": f"real/{name}", "old_string": "\n", "new_string": ".\n"}
                result = ws.call_tool("edit", args)
            outcome = _outcome(ws, result.call_id, result.content[0].text, root)
            report.tries += 1
            report.outcomes[outcome] += 1
            report.symlink_at_checked += seen == [True]
            report.refused_as_redirect += outcome == "refused: path changed"
            if kind == 1 and outcome == "published":
                created.add(name)
            if _snapshot(outside) != decoys:
                report.escapes += 1
                report.violations.append(f"try {i}: outside is now {sorted(os.listdir(outside))}")
                _restore(outside, decoys)
    finally:
        stop_thread.set()
        stop_process.set()
        runner.join()
    if real.is_symlink():
        exchange(*names)
    landed = {n for n in os.listdir(real) if n.startswith("n")}
    if landed != created:
        report.violations.append(f"creates: {len(created)} published, {len(landed)} in real/")
    if temps(real):
        report.violations.append(f"temp files left in real/: {temps(real)}")
    report.violations += [f"{o}: {n}" for o, n in report.outcomes.items() if o.startswith("other")]
    return report


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {name: (directory / name).read_bytes() for name in os.listdir(directory)}


def _restore(directory: Path, files: dict[str, bytes]) -> None:
    # Put the decoys back so one escape is counted once, not on every later try.
    for name in os.listdir(directory):
        (directory / name).unlink()
    for name, data in files.items():
        (directory / name).write_bytes(data)


@dataclass
class KillReport:
    """What 50 (or N) SIGKILLs at random moments left behind."""

    kills: int = 0
    while_staged: int = 0
    before_staging: int = 0
    after_publishing: int = 0
    corrupted: int = 0
    leftovers: int = 0

    def line(self) -> str:
        """One summary line."""
        return (
            f"SIGKILL: {self.kills} kills during {STAGED_BYTES // 2**20} MiB writes "
            f"({self.while_staged} left a temp file, {self.before_staging} before staging, "
            f"{self.after_publishing} after publishing): {self.corrupted} corrupted targets, "
            f"{self.leftovers} temp files left after one more mutation"
        )


def kill_writers(base: Path, kills: int, seed: int) -> KillReport:
    """Kill ``kills`` children at random moments of a 16 MiB write, then sweep each directory."""
    rng = random.Random(seed)
    old, new = b"original\n", b"k" * STAGED_BYTES
    probe = base / "probe"
    probe.mkdir()
    start = time.perf_counter()
    child = start_stager(probe, "a.txt", pause=False)
    child.communicate(timeout=120)
    whole = time.perf_counter() - start  # start-up and the whole write, unkilled
    report = KillReport()
    directories = []
    for i in range(kills):
        directory = base / f"kill{i}"
        directory.mkdir()
        (directory / "a.txt").write_bytes(old)
        directories.append(directory)
        child = start_stager(directory, "a.txt", pause=False)
        time.sleep(rng.uniform(0.5, 1.2) * whole)  # a random moment, by design of this stress
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=120)
        report.kills += 1
        data = (directory / "a.txt").read_bytes()
        left = temps(directory)
        report.while_staged += bool(left)
        report.after_publishing += data == new
        report.before_staging += data == old and not left
        report.corrupted += data not in (old, new)
    for directory in directories:
        # One more mutation of the directory, as another process would make it.
        ws = open_workspace(directory)
        ws.call_tool("write", {"file_path": "next.txt", "content": "next\n"})
        report.leftovers += len(temps(directory))
    return report


def main() -> int:
    """Run the parts asked for; 1 if any invariant broke."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tries", type=int, default=10_000, help="sandbox tries per racer")
    parser.add_argument(
        "--dwell-us",
        default="0,0",
        help="microseconds the racer holds the symlink, then the directory (tuning)",
    )
    parser.add_argument("--processes", type=int, default=4, help="CAS processes")
    parser.add_argument("--rounds", type=int, default=200, help="CAS rounds")
    parser.add_argument("--kills", type=int, default=50, help="SIGKILLs during 16 MiB writes")
    parser.add_argument(
        "--fault-sizes",
        default="0,1024,1048576,16777216",
        help="comma-separated content sizes in bytes for the fault sweep",
    )
    parser.add_argument("--seed", type=int, default=20240601, help="seed of the kill times")
    parser.add_argument(
        "--only", choices=["sandbox", "cas", "kill", "faults"], action="append", help="run a part"
    )
    args = parser.parse_args()
    parts = args.only or ["sandbox", "cas", "kill", "faults"]
    link_us, dir_us = (float(us) for us in args.dwell_us.split(","))
    dwell = (link_us / 1e6, dir_us / 1e6)
    broken: list[str] = []
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpu, pid {os.getpid()}")
    with tempfile.TemporaryDirectory(prefix="stress-", dir=os.environ.get("BENCH_DIR")) as tmp:
        base = Path(tmp)
        if "sandbox" in parts:
            for racer in ("thread", "process"):
                started = time.perf_counter()
                race = sandbox_race(base / f"race-{racer}", racer, args.tries, dwell)
                print(f"{race.line()} [{time.perf_counter() - started:.1f} s]", flush=True)
                broken += [f"{racer} racer: {v}" for v in race.violations]
                if race.hits == 0:
                    broken.append(f"{racer} racer: no try hit the window; 0 escapes proves nothing")
        if "cas" in parts:
            started = time.perf_counter()
            (base / "cas").mkdir()
            cas = run_cas_rounds(base / "cas", args.processes, args.rounds)
            print(f"{cas.line()} [{time.perf_counter() - started:.1f} s]", flush=True)
            broken += [f"cas: {v}" for v in cas.violations]
        if "kill" in parts:
            started = time.perf_counter()
            (base / "kill").mkdir()
            kills = kill_writers(base / "kill", args.kills, args.seed)
            print(f"{kills.line()} [{time.perf_counter() - started:.1f} s]", flush=True)
            if kills.corrupted or kills.leftovers:
                broken.append(f"kill: {kills.corrupted} corrupted, {kills.leftovers} leftovers")
        if "faults" in parts:
            for size in (int(s) for s in args.fault_sizes.split(",")):
                for mutation in FAULT_MUTATIONS:
                    started = time.perf_counter()
                    local_module._SWEPT.clear()
                    where = base / f"faults-{size}-{mutation.name}"
                    where.mkdir()
                    report = sweep_faults(where, mutation, size)
                    print(f"{report.line()} [{time.perf_counter() - started:.1f} s]", flush=True)
                    broken += [f"faults {mutation.name} {size}: {v}" for v in report.violations]
    for problem in broken:
        print(f"BROKEN: {problem}")
    print("all invariants held" if not broken else f"{len(broken)} invariant(s) broke")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
