"""What keeps a run quick without changing what it does.

Once the cases are collected, almost everything alive (modules, cases, hypothesis' tables, the
harness's profile) lives until the run ends; the garbage collector would walk it again on every
full collection, hypothesis' examples making many. ``freeze_collected`` moves it out of the
collector's way (``gc.freeze``); ``thaw`` gives it back when the run is over, after pytest's own
last collections.

A round trip over pipes costs little while the reader is awake and much when it sleeps: waking
a sleeping process takes 85–240 µs a round trip on virtual machines such as these, against
5–15 µs awake (``bench/bench_pipes.py`` measures it). ``poll_awake`` looks for what it waits
for, awake, for at most ``AWAKE_S`` before it sleeps: the stdio transport while a lone call
waits for its answer, ``conformance.serve`` while it waits for the next request with nothing
running; not in a run split over two processes (``wait_asleep``).

``realpath`` is ``os.path.realpath``'s answer from one lookup by the kernel where Linux can give
it (an ``O_PATH`` descriptor and its ``/proc/thread-self/fd`` link), instead of one ``lstat`` a
component: the suite resolves each tool call's target and roots before and after the call.
"""

from __future__ import annotations

import gc
import os
import posixpath
import select
import time
from typing import Final

_frozen = False


def freeze_collected() -> None:
    """Keep what exists now out of every later garbage collection of this run."""
    global _frozen  # noqa: PLW0603 - one process, one run at a time
    gc.freeze()
    _frozen = True


def thaw() -> None:
    """Undo ``freeze_collected`` (a process that runs pytest again collects it as before)."""
    global _frozen  # noqa: PLW0603
    if _frozen:
        gc.unfreeze()
        _frozen = False


AWAKE_S: Final = 0.002
"""How long a reader that would sleep stays awake for what it waits for."""
ASLEEP_VARIABLE: Final = "HARNESS_CONFORMANCE_ASLEEP"
"""Set (to 1) in the environment of a process that must not wait awake, and of its children."""


def usable_cpus() -> int:
    """The CPUs this process may use, where the system says (Linux), else the machine's."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


_awake = usable_cpus() > 1 and not os.environ.get(ASLEEP_VARIABLE)


def wait_asleep() -> None:
    """From now on this process, and every child it starts, waits asleep.

    For a run split over two processes (``conformance.parallel``): each half is a pair of the
    suite and its harness child taking turns, so two pairs keep two CPUs busy, and a waiter
    that looked awake would only take a CPU from the other pair (measured: the split run took
    no less time than one process until both stopped looking).
    """
    global _awake  # noqa: PLW0603 - one process, one run at a time
    _awake = False
    os.environ[ASLEEP_VARIABLE] = "1"


def wait_as_before() -> None:
    """Undo ``wait_asleep`` when the run is over (a process may run pytest again)."""
    global _awake  # noqa: PLW0603
    os.environ.pop(ASLEEP_VARIABLE, None)
    _awake = usable_cpus() > 1


def poll_awake(poller: select.poll) -> list[tuple[int, int]]:
    """What ``poller`` finds ready within ``AWAKE_S``, looked for without sleeping; ``[]`` if
    nothing came (the caller then sleeps in its own poll).

    The CPU is yielded between looks, so a busy machine loses little; with one CPU nobody can
    answer while we look, so nothing is looked for beyond the first time.
    """
    ready = poller.poll(0)
    if ready or not _awake:
        return ready
    end = time.perf_counter() + AWAKE_S
    while not ready and time.perf_counter() < end:
        os.sched_yield()
        ready = poller.poll(0)
    return ready


_FDS: Final = "/proc/thread-self/fd"
"""The calling thread's descriptors (``/proc/self`` is the main thread's, which may differ)."""


def _reached(path: str) -> str | None:
    """Where the kernel's lookup of ``path`` ends (every link followed), or None if nowhere."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        return os.readlink(f"{_FDS}/{fd}")
    except OSError:
        return None
    finally:
        os.close(fd)


_PROC_FD: Final = hasattr(os, "O_PATH") and _reached("/") == "/"
"""Whether this system names a descriptor's path (Linux with ``/proc``)."""


def realpath(path: str) -> str:
    """``os.path.realpath(path)`` for a ``str``, the same string, asking the kernel where it can.

    The kernel's answer (one lookup; two more lookups for a missing last name) is taken only
    when it is ``path`` as spelled, normalized: then no name on the way was a link, and
    ``posixpath.realpath``, finding none either, answers the spelling too. A missing last
    name (a file about to be made) in such a directory is the directory and the name, as
    ``posixpath.realpath`` makes it. Everything else — a link anywhere, a relative path, one
    starting with exactly ``//``, a system without ``/proc`` — is ``posixpath.realpath``'s own
    walk, and so is a spelling with ``..`` (a precaution: no difference was found with it).

    One exception, outside anything a case sets up: a link through ``/proc/<pid>/cwd`` (or
    ``root``, ``fd/N``) into a mount hidden at that path. The kernel follows it to where the
    file is, which can be the spelling, while ``posixpath.realpath`` reads the link's text and
    looks it up again where the hidden mount is not.
    """
    if not _PROC_FD or not path.startswith("/") or ".." in path.split("/"):
        return posixpath.realpath(path)
    lexical = posixpath.normpath(path)
    reached = _reached(path)
    if reached == lexical:
        return lexical
    if reached is None:
        head, name = posixpath.split(path)
        if name and name != "." and _missing(path):
            parent = posixpath.normpath(head)
            if _reached(head) == parent:
                return posixpath.join(parent, name)
    return posixpath.realpath(path)


def _missing(path: str) -> bool:
    try:
        os.lstat(path)
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False
    return False
