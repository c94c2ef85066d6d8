"""What keeps a run quick changes nothing it answers: ``speed.realpath`` is ``os.path.realpath``."""

from __future__ import annotations

import os
import posixpath
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import speed

NAMES = ("a", "b", "c")
ON_LINUX = pytest.mark.skipif(
    not speed._PROC_FD, reason="the kernel's lookup needs Linux's O_PATH and /proc/thread-self/fd"
)


@st.composite
def trees(draw: st.DrawFn) -> list[tuple[str, str, str]]:
    """Up to six things at paths of two levels: (path, kind, link target)."""
    made: list[tuple[str, str, str]] = []
    for _ in range(draw(st.integers(0, 6))):
        path = "/".join(draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=2)))
        kind = draw(st.sampled_from(["dir", "file", "link"]))
        parts = draw(st.lists(st.sampled_from([*NAMES, "..", ".", "x"]), min_size=1, max_size=3))
        target = ("/ROOT/" if draw(st.booleans()) else "") + "/".join(parts)
        made.append((path, kind, target))
    return made


def _build(root: str, tree: list[tuple[str, str, str]]) -> None:
    for path, kind, target in tree:
        full = os.path.join(root, path)
        try:
            if kind == "dir":
                os.mkdir(full)
            elif kind == "file":
                Path(full).write_bytes(b"x")
            else:
                os.symlink(target.replace("/ROOT", root), full)
        except OSError:
            pass  # its parent is missing, a file or a link to nowhere: the tree is what it is


spellings = st.lists(st.sampled_from([*NAMES, "..", ".", "", "x"]), min_size=0, max_size=5).map(
    "/".join
)


@given(tree=trees(), spelled=spellings, absolute=st.booleans())
@settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
def test_the_same_string_as_os_path_realpath(
    tmp_path: Path, tree: list[tuple[str, str, str]], spelled: str, absolute: bool
) -> None:
    """Links (loops, dangling, absolute, through ``..``), missing names, ``//``, ``.``, ``..``,
    trailing slashes, relative paths: whatever the tree and spelling, the same answer."""
    root = tempfile.mkdtemp(dir=tmp_path)
    _build(root, tree)
    path = (root + "/" + spelled) if absolute else spelled
    if absolute and spelled.startswith("/"):
        path = "/" + root + spelled  # a leading "//"
    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert speed.realpath(path) == os.path.realpath(path)
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize(
    "spelled",
    ["d/f", "d/f/", "d/./f", "d//f", "d/", "d/.", "new", "d/new", "d/./new", "d//new",
     "d/new/", "missing/new", "f/new", "loop", "loop/new", "dangling", "dangling/new", "link/f",
     "link/new", "d/../f"],
)  # fmt: skip
def test_the_cases_a_call_meets(tmp_path: Path, spelled: str) -> None:
    """Each way a tool call's target may be spelled or may lie, the same answer."""
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_bytes(b"x")
    (tmp_path / "f").write_bytes(b"x")
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "dangling").symlink_to("nowhere")
    (tmp_path / "link").symlink_to("d")
    path = f"{tmp_path}/{spelled}"
    assert speed.realpath(path) == os.path.realpath(path)


@ON_LINUX
def test_a_path_without_links_is_one_lookup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The point of it: a plain path, or a new file in a plain directory, walks nothing."""
    (tmp_path / "f").write_bytes(b"x")
    if os.path.realpath(tmp_path) != str(tmp_path):
        pytest.skip("pytest's base temp lies under a link here")

    def walk(path: str) -> str:
        raise AssertionError(f"walked {path}")

    monkeypatch.setattr(posixpath, "realpath", walk)

    def resolve() -> list[str]:
        return [speed.realpath(f"{tmp_path}/{name}") for name in ("f", "new", "")]

    expected = [f"{tmp_path}/f", f"{tmp_path}/new", str(tmp_path)]
    assert resolve() == expected
    # another thread asks about its own descriptors (the test's, the suite's reader threads)
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(resolve).result() == expected


_COMPARE = """
import os, sys
from conformance import speed
same = [speed.realpath(p) == os.path.realpath(p) for p in sys.argv[1:]]
print(same, speed._reached(sys.argv[1]) is None)
"""


def test_a_directory_that_may_not_be_searched(tmp_path: Path) -> None:
    """Where the kernel may not look, the walk decides, as it did (as root, in a user
    namespace, where permissions bind root too)."""
    (tmp_path / "closed").mkdir()
    (tmp_path / "closed" / "f").write_bytes(b"x")
    (tmp_path / "closed").chmod(0o600)
    paths = [f"{tmp_path}/closed/f", f"{tmp_path}/closed/new", f"{tmp_path}/closed"]
    command = [sys.executable, "-c", _COMPARE, *paths]
    if os.geteuid() == 0:
        unshare = shutil.which("unshare")
        if unshare is None or subprocess.run([unshare, "-U", "true"], check=False).returncode:
            pytest.skip("unshare -U is not available: permissions cannot bind root here")
        command = [unshare, "-U", *command]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        # the kernel was refused the closed directory, and the answers are the walk's
        assert done.stdout.strip() == "[True, True, True] True", done.stderr
    finally:
        (tmp_path / "closed").chmod(0o700)
