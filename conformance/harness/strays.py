"""What a harness child started outside its process group, found and killed with it (Linux).

The suite stops a child by killing its process group, which ends everything the child started
in that group. A process it started in a session of its own is not in the group: the MCP SDK
starts every server that way, and a server stuck in a tool call (a FIFO opened for reading)
outlived the run, blocked for good, after the bridge above it was killed. So before the group
is killed, the child's descendants are looked up by their parent links in ``/proc`` (which the
child's death would cut) and each is held by a pidfd; then the group is killed, first, so the
child starts nothing more and restarts no server it sees die; then each held process is killed,
parents before children, with the process group it leads, so what it forked meanwhile into its
group dies too (while it is there to hold the group's number).

Nothing is ever stopped (``SIGSTOP``) to hold the tree still: a process stopped in a session of
its own stays stopped for good if the suite dies before the kill that was to follow, and even a
group in the suite's session, which the kernel continues when the suite's death orphans it, is
not continued if it stopped only after that death. What that gives up: a process started in a
session of its own in the moment between the look and its starter's kill is not found, and
outlives the run; so does one forked into the group of a process found that exits before its
kill (a group is killed only while its leader holds its number). The child's death is that
moment's cue: each server found sees its stdin end just before its own kill.

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
from collections.abc import Callable
from typing import Final

_PROC: Final = "/proc"


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


def _stat(pid: str) -> tuple[int, int, int] | None:
    """The parent, process group and start time of process ``pid``, or None if it is gone."""
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as source:
            text = source.read()
    except OSError:
        return None
    # The name in parentheses may hold spaces and parentheses: the fields follow the last ")".
    fields = text[text.rfind(b")") + 2 :].split()
    try:
        return int(fields[1]), int(fields[2]), int(fields[19])
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
            children.setdefault(found[0], []).append((int(name), found[2]))
    below: dict[int, int] = {}
    pending = [root]
    while pending:
        for pid, start in children.get(pending.pop(), ()):
            if pid not in below:
                below[pid] = start
                pending.append(pid)
    return below


def _handle(pid: int, start: int) -> tuple[int, int] | None:
    """A pidfd for ``pid`` and its process group, if it is still the process started at
    ``start``."""
    try:
        handle = os.pidfd_open(pid)
    except OSError:
        return None
    try:
        found = _stat(str(pid))
    except BaseException:  # cut short (Ctrl-C) before the caller holds it: nobody would close it
        # (One landing as pidfd_open returns still loses it; the run is ending, and its exit
        # closes it. Blocking the signal here would not help: another thread can take it.)
        os.close(handle)
        raise
    if found is None or found[2] != start:  # freed and reused before the pidfd was opened
        os.close(handle)
        return None
    return handle, found[1]


def kill_tree(root: int, kill_group: Callable[[], None]) -> None:
    """Kill ``root``'s process group (``kill_group``), and every process below ``root`` by
    parent links, looked up before (each with the process group it leads)."""
    held: list[tuple[int, int, int]] = []
    try:
        if supported():
            # Parents come before their children, and are killed first.
            for pid, start in descendants(root).items():
                found = _handle(pid, start)
                if found is not None:
                    held.append((pid, *found))
    finally:  # also when cut short (Ctrl-C): the group is killed, and what was held
        try:
            kill_group()
        finally:
            for pid, handle, group in held:
                if group == pid != root:
                    _kill_group_led_by(handle, group)
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(handle, signal.SIGKILL)
                os.close(handle)


def _kill_group_led_by(handle: int, group: int) -> None:
    """Kill process group ``group`` while its leader (``handle``) is still there to hold its
    number (a zombie not yet reaped holds it too): a freed number may name another's group."""
    with contextlib.suppress(OSError):
        signal.pidfd_send_signal(handle, 0)
        os.killpg(group, signal.SIGKILL)
