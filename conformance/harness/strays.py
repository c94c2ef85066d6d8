"""What a harness child started outside its process group, found and killed before it (Linux).

The suite stops a child by killing its process group, which ends everything the child started
in that group. A process it started in a session of its own is not in the group: the MCP SDK
starts every server that way, and a server stuck in a tool call (a FIFO opened for reading)
outlived the run, blocked for good, after the bridge above it was killed. So before the group
is killed, the child's descendants are looked up by their parent links in ``/proc`` and killed,
looked up again (for what was started meanwhile) and killed, until a look finds none that is
new; then the group is killed.

Nothing is ever stopped (``SIGSTOP``) to hold the tree still: a suite killed between stopping
and killing left the harness stopped for good, where a harness left running sees its stdin end
and exits. What that gives up: a process started in a session of its own after the last look,
by a child that has not yet been killed, is not found and outlives the run (a window of the
few microseconds between that look and the group's kill).

Each is signalled through a pidfd opened while it was still the process that was found (same
start time), so a pid that was freed and given to another program meanwhile is never signalled.
Only descendants still linked to the child can be found: what a child started before it exited
on its own was handed to the system's reaper then, and only its group is still reached. Where
there is no ``/proc`` of this pid namespace or no working ``pidfd_open`` (macOS), killing the
group is all there is.
"""

from __future__ import annotations

import contextlib
import os
import signal
from typing import Final

_PROC: Final = "/proc"
ROUNDS: Final = 8
"""How many times the tree is looked up again for what was started while the last round's
were being killed (a tree that still grows after that is left to the group's kill)."""


def supported() -> bool:
    """Whether this system can find and safely signal a child's descendants.

    Its ``/proc`` must be this process's pid namespace's: one mounted for another (a pid
    namespace made without a ``/proc`` of its own, as ``unshare -pf`` does) names other
    processes by the same numbers, and the start time read there would vouch for whatever
    process holds that number here. And ``pidfd_open`` must work (a seccomp filter may refuse
    it, a kernel before 5.3 lacks it).
    """
    if not hasattr(os, "pidfd_open"):
        return False
    try:
        if os.readlink(f"{_PROC}/self") != str(os.getpid()):
            return False
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


def _stat(pid: str) -> tuple[int, int] | None:
    """The parent and start time of process ``pid``, or None if it is gone."""
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as source:
            text = source.read()
    except OSError:
        return None
    # The name in parentheses may hold spaces and parentheses: the fields follow the last ")".
    fields = text[text.rfind(b")") + 2 :].split()
    try:
        return int(fields[1]), int(fields[19])
    except (IndexError, ValueError):
        return None


def descendants(root: int) -> dict[int, int]:
    """Every living process below ``root`` by parent links: pid → start time."""
    children: dict[int, list[tuple[int, int]]] = {}
    try:
        names = os.listdir(_PROC)
    except OSError:
        return {}
    for name in names:
        if not name.isdigit():
            continue
        found = _stat(name)
        if found is not None:
            children.setdefault(found[0], []).append((int(name), found[1]))
    below: dict[int, int] = {}
    pending = [root]
    while pending:
        for pid, start in children.get(pending.pop(), ()):
            if pid not in below:
                below[pid] = start
                pending.append(pid)
    return below


def _handle(pid: int, start: int) -> int | None:
    """A pidfd for ``pid`` if it is still the process that started at ``start``."""
    try:
        handle = os.pidfd_open(pid)
    except OSError:
        return None
    found = _stat(str(pid))
    if found is None or found[1] != start:  # freed and reused before the pidfd was opened
        os.close(handle)
        return None
    return handle


def kill_descendants(root: int) -> None:
    """Kill every process below ``root`` by parent links, looked up again until none is new."""
    if not supported():
        return
    killed: set[tuple[int, int]] = set()  # (pid, start time): a zombie stays listed till reaped
    for _ in range(ROUNDS):
        new = [(p, s) for p, s in descendants(root).items() if (p, s) not in killed]
        if not new:
            return
        killed.update(new)
        handles: list[int] = []
        try:
            # Every pidfd is opened before any is killed, while each names what was found.
            for pid, start in new:
                handle = _handle(pid, start)
                if handle is not None:
                    handles.append(handle)
            for handle in handles:
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(handle, signal.SIGKILL)
        finally:
            for handle in handles:
                os.close(handle)
