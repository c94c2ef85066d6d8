"""Where a run keeps its files: a base outside the system temp directory, made and removed.

Real harnesses' ``workspace-write`` modes grant the system temp directory (SPEC
{sandbox.temp-writable}). If the suite's workspaces, the "outside" areas beside them, or the
harness child's own directories lay under it, a sandbox verdict would depend on where TMPDIR
points. So one run lives in a directory of its own under a *base*::

    <base>/conformance-<random>/
        harness/cwd/        the harness child's working directory (watched in every case)
        harness/tmp/        the child's TMPDIR (watched; the directory tempWritable grants)
        cases/<CASE>-<random>/ws, outside, …   one directory per case, the workspace inside

The base is ``--conformance-basetemp DIR`` if given. Else it is
``$XDG_RUNTIME_DIR/harness-conformance`` when the user's runtime directory is fit for it
(``runtime_base``): the per-user directory a login session has (``/run/user/<uid>``, a RAM
filesystem, also on GitHub's Ubuntu runners), where the run's few thousand file operations cost
a tenth less of its time than on a disk. Otherwise it is ``$XDG_CACHE_HOME/harness-conformance``
(``~/.cache/harness-conformance`` without it): a directory every user can write. Neither is a
directory a harness grants as a temp area, and both stay in view in the sandboxes real
harnesses build from ``--ro-bind / /`` (gemini-cli's, Claude Code's sandbox-runtime), whose
``--dev /dev`` gives the sandbox a ``/dev/shm`` of its own: that is why ``/dev/shm`` is never
the default. A case's directory is removed once the case is over
(by a helper process, while the run goes on), the run's directory when the run ends, and so is
the base itself if the suite created it and it is empty then. A base you choose should lie
outside the system temp directory too (``/tmp``, TMPDIR): a harness in process sees the suite's
TMPDIR, and some harnesses grant ``/tmp`` by name. A default base that lies there all the same
(the user's cache under ``/tmp``) gets one NOTE in the run's summary (``under_temp_note``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Final

OPTION: Final = "--conformance-basetemp"
HARNESS_CWD: Final = "harness cwd"
HARNESS_TMP: Final = "harness tmp"
"""How verdicts name the harness child's directories: ``<harness tmp>/file``."""
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_.-]+")
_TRIES: Final = 3
"""How often a base another run removed meanwhile is made again before it is an error."""
RUNTIME_ROOM: Final = 256 * 2**20
"""Bytes the runtime directory must have free to hold a run, else the cache is the base.

A run of the reference peaks under 1 MiB there; the rest is room for a harness child's own
temp files (its TMPDIR is under the base) and for the user's other runtime files.
"""


class BaseTempError(ValueError):
    """The base cannot be used; one line names it and why (``reason``: the why alone)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def cache_base() -> Path:
    """``$XDG_CACHE_HOME/harness-conformance``, or ``~/.cache/harness-conformance``."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "harness-conformance"


def runtime_base() -> Path | None:
    """``$XDG_RUNTIME_DIR/harness-conformance`` if that directory is fit for a run, else ``None``.

    Fit: an absolute path to a directory of this user's that no one else may enter (what the
    XDG spec promises of it; CI images have been seen to set another user's, or one that does
    not exist), with ``RUNTIME_ROOM`` free, and outside every temp directory (some images set
    it to ``/tmp/runtime-<user>``). Anything else is not an error: the cache is the base then.
    """
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if not os.path.isabs(runtime) or not hasattr(os, "geteuid"):
        return None
    try:
        info = os.stat(runtime)
        room = os.statvfs(runtime)
    except OSError:
        return None
    private = info.st_uid == os.geteuid() and not info.st_mode & 0o077
    effective = os.access in os.supports_effective_ids
    usable = os.access(runtime, os.W_OK | os.X_OK, effective_ids=effective)
    if not stat.S_ISDIR(info.st_mode) or not private or not usable:
        return None
    if room.f_bavail * room.f_frsize < RUNTIME_ROOM or temp_area_of(Path(runtime)) is not None:
        return None
    return Path(runtime) / "harness-conformance"


def create_default() -> tuple[RunBase, list[str]]:
    """The run's directory made under the default base, and the NOTEs it needs (none, mostly).

    The runtime directory is a preference: a base that cannot be made there (full, or made
    read-only meanwhile) falls back to the cache's, with a NOTE that says why, since the run is
    then slower than the user's runs usually are. A base in a temp directory gets its NOTE
    (``under_temp_note``). ``BaseTempError`` only when the cache fails too.
    """
    runtime = runtime_base()
    notes = []
    if runtime is not None:
        run = RunBase(runtime, parents=False)
        try:
            run.create()
            return run, []
        except BaseTempError as exc:
            notes.append(
                f"the runtime directory cannot hold the run's directories ({runtime}: "
                f"{exc.reason}); they are under the cache instead"
            )
    run = RunBase(cache_base())
    run.create()
    under_temp = under_temp_note(run.base)
    return run, notes + ([under_temp] if under_temp else [])


def temp_area_of(path: Path) -> str | None:
    """The system temp directory ``path`` lies in (``/tmp``, ``/var/tmp``, TMPDIR), or ``None``.

    Both sides resolved, so a link to ``/tmp`` or a TMPDIR spelled through one is found too.
    """
    here = os.path.realpath(path)
    areas = ("/tmp", "/var/tmp", tempfile.gettempdir(), os.environ.get("TMPDIR") or "/tmp")
    for area in areas:
        real = os.path.realpath(area)
        if real != "/" and os.path.commonpath([here, real]) == real:
            return real
    return None


def under_temp_note(base: Path) -> str | None:
    """The run's NOTE when the default base lies in a temp directory (``None`` when it does not).

    Only the default gets it: tests and users who choose a base chose it. The default cannot
    simply move elsewhere, since ``XDG_CACHE_HOME`` (or ``HOME``) is where the user keeps caches.
    The runtime directory's base never gets it: one in a temp directory is not used.
    """
    area = temp_area_of(base)
    if area is None:
        return None
    return (
        f"the run's directories are under {area}, a temp directory (the default base follows "
        f"XDG_CACHE_HOME, or HOME): a harness that grants {area} can fail sandbox cases it "
        f"passes elsewhere; choose a base outside it with {OPTION} DIR"
    )


_REMOVER: Final = """
import os, shutil, sys
for line in sys.stdin:
    shutil.rmtree(os.fsdecode(bytes.fromhex(line.strip())), ignore_errors=True)
"""
"""The remover of finished cases' directories: one hex-encoded path a line, until stdin ends."""


class RunBase:
    """One run's directory under the base: the harness's directories and one per case."""

    def __init__(self, base: Path, *, parents: bool = True) -> None:
        self.base = base
        self._parents = parents
        self._made_base = False
        self.run: Path | None = None
        self._remover: subprocess.Popen[bytes] | None = None
        self._no_remover = False

    def create(self) -> None:
        """Make the base (if missing) and the run's own directory; ``BaseTempError`` if not.

        Other runs share the base (xdist's workers, two CI jobs of one user): one may make it
        between this run's look and its ``mkdir``, or remove it, empty, just before this run's
        directory is made in it. Neither is an error; only what stays wrong is. Without
        ``parents`` the base's parent is never made (a runtime directory removed at logout is
        not this run's to make again). What a failed attempt made is removed again.
        """
        where = f"{OPTION} {self.base}"
        try:
            for attempt in range(_TRIES):
                try:
                    self.base.mkdir(parents=self._parents)
                    self._made_base = True
                except FileExistsError:
                    pass
                try:
                    self.run = Path(tempfile.mkdtemp(prefix="conformance-", dir=self.base))
                    break
                except FileNotFoundError:
                    if attempt == _TRIES - 1:
                        raise
            assert self.run is not None
            for part in ("harness/cwd", "harness/tmp", "cases"):
                (self.run / part).mkdir(parents=True)
        except OSError as exc:
            self.remove()
            reason = str(exc.strerror or exc)
            raise BaseTempError(
                f"{where}: cannot be created: {reason}; choose another with {OPTION}", reason
            ) from None

    @property
    def harness_cwd(self) -> Path:
        """The harness child's working directory."""
        assert self.run is not None
        return self.run / "harness" / "cwd"

    @property
    def harness_tmp(self) -> Path:
        """The harness child's TMPDIR."""
        assert self.run is not None
        return self.run / "harness" / "tmp"

    def case_dir(self, name: str) -> Path:
        """A fresh directory for one case (``name`` is its case ID or test name)."""
        assert self.run is not None
        prefix = _UNSAFE.sub("-", name)[:40] + "-"
        return Path(tempfile.mkdtemp(prefix=prefix, dir=self.run / "cases"))

    def discard(self, directory: Path) -> None:
        """Remove a finished case's directory in another process while the run goes on.

        Nothing reads it after its case (verdicts name its paths as text). A process, not a
        thread: removing is work for the other core, not for this interpreter's lock, which the
        thread waiting on a harness's answer needs the moment it comes. ``remove`` waits for it;
        where it cannot start, ``remove`` removes everything as before.
        """
        if self._remover is None and not self._no_remover:
            try:
                self._remover = subprocess.Popen(
                    [sys.executable, "-I", "-S", "-c", _REMOVER], stdin=subprocess.PIPE
                )
            except OSError:
                self._no_remover = True
        remover = self._remover
        if remover is None or remover.stdin is None:
            return
        try:
            remover.stdin.write(os.fsencode(directory).hex().encode("ascii") + b"\n")
            remover.stdin.flush()
        except OSError:  # it died: what it has not removed, remove() does
            self._no_remover = True

    def remove(self) -> None:
        """Remove the run's directory, and the base if this run made it and it is empty now."""
        remover, self._remover = self._remover, None
        if remover is not None:
            with contextlib.suppress(OSError):
                if remover.stdin is not None:
                    remover.stdin.close()
            remover.wait()
        if self.run is not None:
            shutil.rmtree(self.run, ignore_errors=True)
            self.run = None
        if self._made_base:
            with contextlib.suppress(OSError):  # another run is using it meanwhile
                self.base.rmdir()
