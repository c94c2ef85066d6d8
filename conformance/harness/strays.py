"""What a harness child started outside its process group, found and stopped with it (Linux).

The suite stops a child by killing its process group, which ends everything the child started
in that group. A process it started in a session of its own is not in the group: the MCP SDK
starts every server that way, and a server stuck in a tool call (a FIFO opened for reading)
outlived the run, blocked for good, after the bridge above it was killed. So before the group
is killed, the child's descendants are looked up by their parent links in ``/proc`` and stopped
(``SIGSTOP``: a stopped process starts nothing more), looked up again until no new one appears,
and killed with the group.

Each is signalled through a pidfd opened while it was still the process that was found (same
start time), so a pid that was freed and given to another program meanwhile is never signalled.
Only descendants still linked to the child can be found: what a child started before it exited
on its own was handed to the system's reaper then, and only its group is still reached. Where
there is no ``/proc`` of this pid namespace or no working ``pidfd_open`` (macOS), stopping the
group is all there is.
"""

from __future__ import annotations

import contextlib
import os
import signal
from typing import Final

_PROC: Final = "/proc"
ROUNDS: Final = 8
"""How many times the tree is looked up again for processes started before their parent was
stopped (each round stops what the last one found; a tree that still grows is killed as is)."""


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


class Strays:
    """The descendants of one child, held still until they are killed with its group."""

    def __init__(self, root: int) -> None:
        self._handles: dict[int, int] = {}
        if not supported():
            return
        try:
            self._hold(root)
        except BaseException:  # (Ctrl-C) none is left stopped, nor its pidfd open
            self.kill()
            raise

    def _hold(self, root: int) -> None:
        for _ in range(ROUNDS):
            new = {p: s for p, s in descendants(root).items() if p not in self._handles}
            if not new:
                break
            for pid, start in new.items():
                handle = _handle(pid, start)
                if handle is None:
                    continue
                self._handles[pid] = handle
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(handle, signal.SIGSTOP)

    def kill(self) -> None:
        """Kill every process held (those already gone are skipped), and let go of them."""
        handles, self._handles = self._handles, {}
        for handle in handles.values():
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(handle, signal.SIGKILL)
            os.close(handle)
