"""Where a run keeps its files: a base outside the system temp directory, made and removed.

Real harnesses' ``workspace-write`` modes grant the system temp directory (SPEC
{sandbox.temp-writable}). If the suite's workspaces, the "outside" areas beside them, or the
harness child's own directories lay under it, a sandbox verdict would depend on where TMPDIR
points. So one run lives in a directory of its own under a *base*::

    <base>/conformance-<random>/
        harness/cwd/        the harness child's working directory (watched in every case)
        harness/tmp/        the child's TMPDIR (watched; the directory tempWritable grants)
        cases/<CASE>-<random>/ws, outside, …   one directory per case, the workspace inside

The base is ``--conformance-basetemp DIR`` if given, else ``$XDG_CACHE_HOME/harness-conformance``
(``~/.cache/harness-conformance`` without it): a directory every user can write and that no
harness grants as a temp area. A case's directory is removed once the case is over (by a helper
process, while the run goes on), the run's directory when the run ends, and so is the base
itself if the suite created it and it is empty then. A base you choose should lie outside
the system temp directory too (``/tmp``, TMPDIR): a harness in process sees the suite's TMPDIR,
and some harnesses grant ``/tmp`` by name. A default base that lies there all the same (the
user's cache under ``/tmp``) gets one NOTE in the run's summary (``under_temp_note``).

Not a RAM filesystem by default, although a run is a tenth faster there: ``/dev/shm`` is hidden
by bubblewrap sandboxes' ``--dev /dev``, and a runtime directory outside the home directory
changed a real harness's verdict (one that allows the home directory by name); the reasons and
numbers are in docs/child-process.md.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
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


class BaseTempError(ValueError):
    """The base cannot be used; one line names it and why."""


def default_base() -> Path:
    """``$XDG_CACHE_HOME/harness-conformance``, or ``~/.cache/harness-conformance``."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "harness-conformance"


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

    def __init__(self, base: Path) -> None:
        self.base = base
        self._made_base = False
        self.run: Path | None = None
        self._remover: subprocess.Popen[bytes] | None = None
        self._no_remover = False

    def create(self) -> None:
        """Make the base (if missing) and the run's own directory; ``BaseTempError`` if not.

        Other runs share the base (xdist's workers, two CI jobs of one user): one may make it
        between this run's look and its ``mkdir``, or remove it, empty, just before this run's
        directory is made in it. Neither is an error; only what stays wrong is, and what a
        failed attempt made (the base, the run's directory) is removed again.
        """
        where = f"{OPTION} {self.base}"
        try:
            for attempt in range(_TRIES):
                try:
                    self.base.mkdir(parents=True)
                    self._made_base = True
                except FileExistsError:  # another run's, even if this run made it before
                    self._made_base = False
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
            self.remove()  # the run's directory, and the base if this run made it
            raise BaseTempError(
                f"{where}: cannot be created: {exc.strerror or exc}; choose another with {OPTION}"
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
            self._made_base = False  # tried once: after that it may be another run's
            with contextlib.suppress(OSError):  # another run is using it meanwhile
                self.base.rmdir()
