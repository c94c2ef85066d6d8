"""What a round trip over two pipes costs when the reader sleeps, and when it waits awake.

Run: ``python bench/bench_pipes.py [--trips N]``. Not a test: it prints a table and never
asserts. A parent and a forked child pass one protocol-sized line back and forth ``N`` times:

* **asleep** — each side blocks in ``poll`` until the other writes (the kernel wakes it);
* **awake** — each side looks with ``conformance.speed.poll_awake`` first (polling without
  sleeping for at most ``AWAKE_S``, yielding the CPU between looks), as the stdio transport
  and ``conformance.serve`` do.

On the 2-core virtual machines this project runs on, waking a sleeping process is what a round
trip costs (85–240 µs asleep against 5–15 µs awake, 2026-12-02), more than most calls of the
reference take.
"""

from __future__ import annotations

import argparse
import os
import select
import statistics
import time
from collections.abc import Callable

from conformance.speed import poll_awake

LINE = b'{"id": 1, "method": "call_tool", "params": {"session": "ws_1", "name": "read"}}\n'


def _reader(fd: int, awake: bool) -> Callable[[], bytes]:
    poller = select.poll()
    poller.register(fd, select.POLLIN)

    def read() -> bytes:
        if not (awake and poll_awake(poller)):
            poller.poll()
        return os.read(fd, 65536)

    return read


def round_trip_us(trips: int, awake: bool) -> float:
    """Microseconds per round trip between this process and a forked echo child."""
    to_child, from_parent = os.pipe()
    from_child, to_parent = os.pipe()
    pid = os.fork()
    if pid == 0:  # the echo child
        read = _reader(to_child, awake)
        for _ in range(trips):
            os.write(to_parent, read())
        os._exit(0)
    read = _reader(from_child, awake)
    start = time.perf_counter()
    for _ in range(trips):
        os.write(from_parent, LINE)
        read()
    elapsed = time.perf_counter() - start
    os.waitpid(pid, 0)
    for fd in (to_child, from_parent, from_child, to_parent):
        os.close(fd)
    return elapsed / trips * 1e6


def main() -> None:
    """Print the median of five rounds of each way of waiting."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trips", type=int, default=3000)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cpu, {args.trips} round trips per round, median of 5 rounds")
    print("| waiting | µs per round trip |")
    print("|---|---|")
    for label, awake in (("asleep (poll blocks)", False), ("awake (poll_awake first)", True)):
        rounds = [round_trip_us(args.trips, awake) for _ in range(5)]
        print(f"| {label} | {statistics.median(rounds):.1f} |")


if __name__ == "__main__":
    main()
