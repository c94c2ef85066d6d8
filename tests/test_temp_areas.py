"""Temp areas and the sandbox (SPEC {sandbox.temp-writable}): the same verdicts under any TMPDIR.

A harness whose ``workspace-write`` grants the system temp directory passes when it declares
``tempWritable`` and fails SBX-014 — and nothing else — when it does not, whichever TMPDIR the
suite is started with; the run's workspaces live in a base of their own, made and removed.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from conformance.basetemp import (
    BaseTempError,
    RunBase,
    default_base,
    temp_area_of,
    under_temp_note,
)
from conformance.harness.contract import parse_profile
from tests.suite import case_of, cli, error_lines, fixture, outcomes, report, run_suite


def _sandbox_run(tmp_path: Path, name: str, temp: Path) -> tuple[int, dict[str, object]]:
    temp.mkdir(exist_ok=True)
    path = tmp_path / f"{name}-{temp.name}.json"
    done = run_suite("--harness", fixture(f"temp_grant:{name}"), "-k", "SBX",
                     "--conformance-report", str(path), cwd=tmp_path,
                     env={"TMPDIR": str(temp)})  # fmt: skip
    return done.returncode, report(path)


@pytest.fixture
def two_tmpdirs(tmp_path: Path) -> list[Path]:
    """One TMPDIR beside the run's base, and one that contains it (as /tmp would)."""
    return [tmp_path / "elsewhere", tmp_path]


def test_a_declared_temp_grant_passes_under_any_tmpdir(
    tmp_path: Path, two_tmpdirs: list[Path]
) -> None:
    runs = [_sandbox_run(tmp_path, "declared", temp) for temp in two_tmpdirs]
    for status, data in runs:
        assert status == 0, data
        found = outcomes(data)
        assert found["SBX-014"] == "passed"
        assert set(found.values()) == {"passed"}
    assert outcomes(runs[0][1]) == outcomes(runs[1][1])


def test_an_undeclared_temp_grant_fails_only_the_temp_case_under_any_tmpdir(
    tmp_path: Path, two_tmpdirs: list[Path]
) -> None:
    runs = [_sandbox_run(tmp_path, "undeclared", temp) for temp in two_tmpdirs]
    verdicts = []
    for status, data in runs:
        assert status == 1
        found = outcomes(data)
        assert [case for case, outcome in found.items() if outcome != "passed"] == ["SBX-014"]
        verdicts.append(case_of(data, "SBX-014")["verdicts"][0]["verdict"])  # type: ignore[index]
    # Word for word the same verdict, wherever TMPDIR pointed.
    assert verdicts[0] == verdicts[1]
    assert verdicts[0].startswith(
        'write of "../../../harness/tmp/sbx-014.txt" accepted and "<harness tmp>/sbx-014.txt" created'
    )
    assert "SPEC §3.5 {sandbox.temp-writable}" in verdicts[0]


def test_the_reference_keeps_the_temp_directory_fenced(tmp_path: Path) -> None:
    path = tmp_path / "R.json"
    done = run_suite("--conformance-case", "SBX-014", "--conformance-report", str(path),
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    assert outcomes(report(path)) == {"SBX-014": "passed"}


def test_the_temp_case_does_not_apply_in_process(tmp_path: Path) -> None:
    path = tmp_path / "R.json"
    done = run_suite("--conformance-in-process", "--conformance-case", "SBX-014",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    message = str(case_of(report(path), "SBX-014")["message"])
    assert message == (
        "not applicable: the suite sets the temp directory (TMPDIR) only of a harness in a "
        "child process"
    )


def test_the_base_is_made_and_removed(tmp_path: Path) -> None:
    base = tmp_path / "deep" / "base"
    done = run_suite("-k", "SBX-01", "--conformance-basetemp", str(base), cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:]
    assert not base.exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    done = run_suite("-k", "SBX-01", "--conformance-basetemp", str(kept), cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:]
    assert os.listdir(kept) == []  # the run's own directory is gone; the chosen one stays


def test_a_base_that_cannot_be_made_is_one_error_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    done = run_suite("--conformance-basetemp", str(blocker / "base"), cwd=tmp_path)
    assert done.returncode == 4
    assert error_lines(done) == [
        f"ERROR: --conformance-basetemp {blocker / 'base'}: cannot be created: Not a directory; "
        "choose another with --conformance-basetemp"
    ]


def test_a_base_another_run_makes_meanwhile_is_used_not_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """xdist's workers share one base: the one that loses the race to make it still runs.

    Refused, the losing worker ended before it collected, and xdist waited for its collection
    for ever (seen in CI: ``-n 2`` with a base not yet made).
    """
    base = tmp_path / "shared"
    made = Path.mkdir

    def the_other_run_first(self: Path, *args: Any, **kwargs: Any) -> None:
        if self == base and not base.exists():
            os.mkdir(base)  # the other worker, between this run's look and its mkdir
        made(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", the_other_run_first)
    run = RunBase(base)
    run.create()
    assert run.harness_tmp.is_dir()
    run.remove()
    assert base.is_dir()  # the other run made it: it is the other run's to remove


def test_a_base_another_run_removes_meanwhile_is_made_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    base = tmp_path / "shared"
    base.mkdir()
    real = tempfile.mkdtemp
    removed: list[str] = []

    def after_the_other_run_ended(*args: Any, **kwargs: Any) -> str:
        if not removed:
            base.rmdir()  # the other run ended, found the base empty and removed it
            removed.append(str(base))
        return str(real(*args, **kwargs))

    monkeypatch.setattr(tempfile, "mkdtemp", after_the_other_run_ended)
    run = RunBase(base)
    run.create()
    assert removed
    assert run.harness_cwd.is_dir()
    run.remove()
    assert not base.exists()  # made again by this run, removed by it


def test_the_default_base_is_the_users_cache_not_the_temp_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert default_base() == tmp_path / "cache" / "harness-conformance"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_base() == tmp_path / "home" / ".cache" / "harness-conformance"
    run = RunBase(tmp_path / "home" / ".cache" / "harness-conformance")
    run.create()
    assert run.harness_tmp.is_dir()
    assert run.harness_cwd.is_dir()
    assert run.case_dir("SBX-014").name.startswith("SBX-014-")
    run.remove()
    assert not (tmp_path / "home" / ".cache" / "harness-conformance").exists()


def test_temp_writable_is_never_assumed() -> None:
    undeclared = parse_profile(
        {"name": "n", "version": "1", "language": "x", "capabilities": ["tools"]}, "h"
    )
    assert undeclared.supports("writableRoots")  # options not declared: features assumed…
    assert not undeclared.supports("tempWritable")  # …but never a wider fence
    declared = parse_profile(
        {"name": "n", "version": "1", "language": "x", "capabilities": ["tools"],
         "options": {"tempWritable": True}}, "h",
    )  # fmt: skip
    assert declared.supports("tempWritable")


def test_a_temp_area_is_found_through_links_and_tmpdir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path / "t"))
    (tmp_path / "t").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "t")
    assert temp_area_of(tmp_path / "link" / "base") is not None
    assert temp_area_of(Path("/var/tmp/base")) == os.path.realpath("/var/tmp")
    assert temp_area_of(Path("/nonexistent-area/.cache/harness-conformance")) is None
    assert under_temp_note(Path("/nonexistent-area/.cache/harness-conformance")) is None


def test_a_default_base_in_a_temp_directory_gets_one_note_and_a_chosen_one_none(
    tmp_path: Path,
) -> None:
    """With XDG_CACHE_HOME under /tmp (some containers) the SPEC's promise needs the user's help.

    A harness that grants ``/tmp`` by name would then fail sandbox cases it passes with the base
    elsewhere: the run says so in one line, naming the option that fixes it.
    """
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg"), "TMPDIR": str(tmp_path)}
    common = ["-p", "no:cacheprovider", "--harness", fixture("temp_grant:Declared")]
    default = cli(*common, "--conformance-case", "SBX-014", cwd=tmp_path, env=env)
    assert default.returncode == 0, default.stdout[-2000:]
    notes = [line for line in default.stdout.splitlines() if line.startswith("NOTE")]
    area = temp_area_of(tmp_path / "xdg" / "harness-conformance")
    assert area is not None
    assert notes == [
        f"NOTE: the run's directories are under {area}, a temp directory (the default base "
        f"follows XDG_CACHE_HOME, or HOME): a harness that grants {area} can fail sandbox cases "
        "it passes elsewhere; choose a base outside it with --conformance-basetemp DIR"
    ]
    chosen = cli(*common, "--conformance-case", "SBX-014", "--conformance-basetemp",
                 str(tmp_path / "base"), cwd=tmp_path, env=env)  # fmt: skip
    assert chosen.returncode == 0, chosen.stdout[-2000:]
    assert "NOTE" not in chosen.stdout


def test_a_base_that_fails_half_made_leaves_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The base and the run's directory made, then the filesystem is full: both go again."""
    base = tmp_path / "made-here" / "base"
    mkdir = Path.mkdir

    def full_at_the_harness_directory(self: Path, *args: Any, **kwargs: Any) -> None:
        if self.name == "cwd" and base in self.parents:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", full_at_the_harness_directory)
    run = RunBase(base)
    with pytest.raises(BaseTempError) as caught:
        run.create()
    assert str(caught.value) == (
        f"--conformance-basetemp {base}: cannot be created: No space left on device; "
        "choose another with --conformance-basetemp"
    )
    assert os.listdir(tmp_path / "made-here") == []  # the base this run made, removed again
    # a base that was there, with another run's directory in it: only this run's goes
    (base / "conformance-other").mkdir(parents=True)
    with pytest.raises(BaseTempError):
        RunBase(base).create()
    assert os.listdir(base) == ["conformance-other"]
