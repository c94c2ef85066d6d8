"""``python -m conformance`` keeps pytest's conventions and its own: help, versions, listing,
collect-only, -x, --lf, settings from [tool.harness-conformance], and runs that travel."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import settings
from conformance.settings import SettingsError
from conformance.strategies import hypothesis_ci_variables
from tests.suite import (
    REPO,
    case_of,
    child_env,
    cli,
    fixture,
    outcomes,
    report,
    run_pytest,
    run_suite,
)

TOOLS_ONLY = fixture("tools_only:harness")


def test_help_starts_with_the_suites_usage_and_names_every_command(tmp_path: Path) -> None:
    done = cli("--help", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout.startswith("usage: python -m conformance [options]")
    for command in ("baseline REPORT.json", "matrix A.json", "replay REPORT|TRACE CASE_ID"):
        assert command in done.stdout.split("\n\n", 2)[1]
    # A replay writes no trace (it said "traced"): it runs verbose, with the recorded options.
    assert "run one case again with the recorded options, verbose" in done.stdout
    assert "--conformance-baseline-strict" in done.stdout  # pytest's own help follows
    assert "usage: python -m conformance [options] [file_or_dir]" in done.stdout
    assert "pytest.main()" not in done.stdout  # what pytest calls a run it did not start
    for command in ("baseline", "matrix", "replay"):
        own = cli(command, "--help", cwd=tmp_path)
        assert own.returncode == 0, own.stderr
        assert own.stdout.startswith(f"usage: python -m conformance {command} ")
        assert not own.stderr
    assert "--format text|md" in cli("matrix", "--help", cwd=tmp_path).stdout
    # A settings mistake is what a user opens the help to fix: the help stays whole.
    (tmp_path / "pyproject.toml").write_text('[tool.harness-conformance]\nharness_cmd = "x"\n')
    with_mistake = cli("--help", cwd=tmp_path)
    assert (with_mistake.returncode, with_mistake.stdout) == (0, done.stdout)
    assert with_mistake.stderr.startswith("NOTE: ")
    assert "unknown key 'harness_cmd'" in with_mistake.stderr
    # A setting found wrong only when the run reads it (a baseline that is not there) too.
    (tmp_path / "pyproject.toml").write_text('[tool.harness-conformance]\nbaseline = "no.json"\n')
    missing = cli("--help", cwd=tmp_path)
    assert (missing.returncode, missing.stdout) == (0, done.stdout), missing.stderr


def test_version_names_the_suite_the_spec_and_the_protocol(tmp_path: Path) -> None:
    for option in ("--version", "-V"):
        done = cli(option, cwd=tmp_path)
        assert done.returncode == 0
        assert done.stdout == "harness-conformance 0.1.0 (SPEC.md 2.14.0, protocol 1)\n"


def test_collect_only_lists_and_exits_zero(tmp_path: Path) -> None:
    done = run_suite("--collect-only", "-q", "-k", "TAX", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "conformance/cases/test_taxonomy.py::" in done.stdout
    assert "harness conformance" not in done.stdout
    assert "not run" not in done.stdout


def test_with_x_cases_not_reached_are_not_run_not_failed(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    done = run_suite("-x", "--harness", TOOLS_ONLY, "--conformance-report", str(path), cwd=tmp_path)
    assert done.returncode == 1
    found = outcomes(report(path))
    failed = sum(o == "failed" for o in found.values())
    assert f"{failed} failed" in done.stdout.splitlines()[-1]
    total = next(line for line in done.stdout.splitlines() if line.startswith("total "))
    cells = total.split()
    assert cells[2] == str(failed)
    assert cells[6] == str(sum(o == "not-run" for o in found.values()))
    assert int(cells[6]) > 200


def test_last_failed_works_with_the_cache_outside_the_working_directory(tmp_path: Path) -> None:
    cache, work = tmp_path / "cache", tmp_path / "work"
    work.mkdir()
    env = {"XDG_CACHE_HOME": str(cache)}
    args = ("--harness", TOOLS_ONLY, "--hypothesis-profile", "default", "-k", "GRD-00 or RD-00")
    first = cli(*args, cwd=work, env=env)
    assert first.returncode == 1
    failed = first.stdout.count("FAILED [")
    assert failed > 0
    again = cli(*args, "--lf", "-q", cwd=work, env=env)
    assert again.returncode == 1
    assert f"{failed} failed" in again.stdout.splitlines()[-1]
    assert " passed" not in again.stdout.splitlines()[-1]
    assert os.listdir(work) == []
    assert list((cache / "harness-conformance" / "pytest").iterdir())


def test_last_failed_is_a_selection_from_the_whole_suite(tmp_path: Path) -> None:
    """With --lf the suite still knows every case: a baseline's other entries are not unknown
    cases, the report says part of the suite ran, and no other pinned transcript is deleted."""
    from conformance.baseline import make_baseline

    cache, work = tmp_path / "cache", tmp_path / "work"
    work.mkdir()
    snaps = tmp_path / "snaps"
    shutil.copytree(REPO / "snapshots", snaps)
    pinned = (snaps / "test_scenarios.ambr").read_text(encoding="utf-8").count("# name:")
    env = {"XDG_CACHE_HOME": str(cache)}
    made, last = tmp_path / "made.json", tmp_path / "last.json"
    args: tuple[str, ...] = (
        "--harness", "tests.mutants.recreates_deleted:harness", "--conformance-in-process",
        "--hypothesis-profile", "default", "--conformance-snapshots", str(snaps), "-q",
        "-k", "DEL or SCN-006 or SCN-007",
    )  # fmt: skip
    assert cli(*args, "--conformance-report", str(made), cwd=work, env=env).returncode == 1
    # Known: every failure but DEL-001 and SCN-006, the new ones --lf then runs again.
    known = make_baseline(report(made))
    failures = known["failures"]
    assert isinstance(failures, dict)
    assert {"DEL-001", "DEL-004", "SCN-006"} <= set(failures)
    del failures["DEL-001"], failures["SCN-006"]
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(known), encoding="utf-8")
    args += ("--conformance-baseline", str(baseline))
    assert cli(*args, cwd=work, env=env).returncode == 1
    again = cli(*args, "--lf", "--snapshot-update", "--conformance-report", str(last),
                cwd=work, env=env)  # fmt: skip
    assert again.returncode == 1, again.stdout[-2000:] + again.stderr
    assert outcomes(report(last)) == {"DEL-001": "failed", "SCN-006": "failed"}
    selected = report(last)["selected"]
    assert isinstance(selected, dict)
    assert selected["cases"] == 2
    assert selected["of"] > 200  # of the whole suite
    assert (snaps / "test_scenarios.ambr").read_text(encoding="utf-8").count("# name:") == pinned
    assert os.listdir(work) == []


def test_a_harness_named_in_the_settings_has_a_cache_of_its_own(tmp_path: Path) -> None:
    from conformance.__main__ import cache_dir

    named = cache_dir([], {"conformance_harness": TOOLS_ONLY})
    assert named == cache_dir(["--harness", TOOLS_ONLY])  # however the harness was named
    assert named != cache_dir([]) == cache_dir([], {"conformance_level": "behaviour"})
    assert cache_dir(["--harness-cmd", "x"], {"conformance_harness": TOOLS_ONLY}) != named
    assert cache_dir([], {"conformance_harness_cmd": "x"}) == cache_dir(["--harness-cmd", "x"])
    # Spelled with "=", and followed by any other option: still that harness's cache.
    for spelled in ([f"--harness={TOOLS_ONLY}", "-v"], [f"--harness={TOOLS_ONLY}", "--lf"]):
        assert cache_dir(spelled) == named
    assert cache_dir(["--harness-cmd=x", "--ff"]) == cache_dir(["--harness-cmd", "x"])
    assert cache_dir(["--harness-mcp=x"]) != cache_dir(["--harness-mcp=y"])
    typed = cache_dir(["-o", f"conformance_harness={TOOLS_ONLY}"], {"conformance_harness": "y:h"})
    assert typed != cache_dir([], {"conformance_harness": "y:h"})  # the command line wins
    # The user's story: a failing harness chosen in a settings file, then the reference with
    # --lf, must not rerun the other harness's failures (nor the other way round).
    cache, work = tmp_path / "cache", tmp_path / "work"
    work.mkdir()
    config = tmp_path / "conf.toml"
    config.write_text(f'harness = "{TOOLS_ONLY}"\n', encoding="utf-8")
    env = {"XDG_CACHE_HOME": str(cache)}
    selection = ("--hypothesis-profile", "default", "-k", "GRD-001 or GRD-002 or RD-001", "-q")
    first = cli("--conformance-config", str(config), *selection, cwd=work, env=env)
    assert first.returncode == 1, first.stdout[-2000:]
    reference = cli(*selection, "--lf", cwd=work, env=env)
    assert reference.returncode == 0, reference.stdout[-2000:]
    assert "3 passed" in reference.stdout.splitlines()[-1]
    again = cli("--conformance-config", str(config), *selection, "--lf", cwd=work, env=env)
    assert " passed" not in again.stdout.splitlines()[-1], again.stdout[-2000:]
    assert os.listdir(work) == []


def test_the_case_list_goes_to_stdout_alone_and_honours_the_selection(tmp_path: Path) -> None:
    done = cli("--conformance-list-cases", "-k", "DEL-00", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["| ID | area | rules | the harness must… |", "|---|---|---|---|"]
    assert {line.split(" | ")[0] for line in lines[2:]} == {f"| DEL-00{n}" for n in range(1, 8)}
    assert "listed 7 cases; none was run\n" in done.stderr  # beside pytest's "251 deselected"
    as_json = cli("--conformance-list-cases", "--format", "json", "--conformance-case", "RD-001",
                  cwd=tmp_path)  # fmt: skip
    assert as_json.returncode == 0, as_json.stderr
    listed = json.loads(as_json.stdout)["cases"]
    assert [(c["id"], c["area"]) for c in listed] == [("RD-001", "read output")]
    unknown = cli("--conformance-list-cases", "--format", "xml", cwd=tmp_path)
    assert (unknown.returncode, unknown.stdout) == (4, "")
    assert unknown.stderr == "ERROR: --format 'xml' does not exist; choose one of markdown, json\n"
    alone = cli("--format", "json", cwd=tmp_path)  # pytest called it unrecognized
    assert (alone.returncode, alone.stdout) == (4, "")
    said = "ERROR: --format (--conformance-list-format) goes with --conformance-list-cases"
    assert alone.stderr.strip() == said
    none = cli("--conformance-list-cases", "-k", "NO-SUCH-CASE", cwd=tmp_path)
    assert (none.returncode, none.stdout.splitlines()) == (5, lines[:2])  # as a run of it: 5
    assert listed[0]["rules"][0] == "read.output"
    for refused in (["--conformance-case", "NOPE-1"], ["--conformance-expect-fail", "NOPE-1"]):
        wrong = cli("--conformance-list-cases", *refused, cwd=tmp_path)  # not the whole table
        assert (wrong.returncode, wrong.stdout) == (4, ""), wrong.stdout[-500:]
        assert "NOPE-1" in wrong.stderr
    if importlib.util.find_spec("xdist") is not None:  # a listing is one process's, as pytest's
        with_workers = cli("--conformance-list-cases", "-k", "DEL-00", "-n", "2", cwd=tmp_path)
        assert (with_workers.returncode, with_workers.stdout) == (0, done.stdout)


def test_another_projects_tests_keep_their_signal_handlers(tmp_path: Path) -> None:
    """The plugin is in every pytest run of its environment: one without cases is left alone."""
    (tmp_path / "test_own.py").write_text(
        "import signal\n"
        "def test_handlers():\n"
        "    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL\n"
        "    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler\n",
        encoding="utf-8",
    )
    done = run_pytest("test_own.py", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]


def test_a_collection_error_in_any_pytest_run_is_reported_not_crashed(tmp_path: Path) -> None:
    """The plugin is loaded in every pytest run of its environment, not only the suite's."""
    (tmp_path / "test_broken.py").write_text("def test_x(:\n", encoding="utf-8")
    done = run_pytest("test_broken.py", cwd=tmp_path)
    assert done.returncode == pytest.ExitCode.INTERRUPTED, done.stdout[-3000:]
    assert "ERROR test_broken.py" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_the_callers_pytest_configuration_never_applies(tmp_path: Path) -> None:
    from conformance.baseline import make_baseline
    from conformance.encoding import json_text

    # Two hostile starting directories (a pytest.ini, a pyproject.toml with pytest's table, each
    # with addopts = -x) and a neutral one: the same failing harness gets the same verdicts.
    project, other = tmp_path / "project", tmp_path / "other"
    (project / "tests").mkdir(parents=True)
    other.mkdir()
    (project / "pytest.ini").write_text("[pytest]\naddopts = -x --strict-markers -p no:nothing\n")
    (other / "pyproject.toml").write_text(
        '[project]\nname = "someone-elses"\n\n[tool.pytest.ini_options]\naddopts = "-x"\n'
        'testpaths = ["nowhere"]\n'
    )
    runs: dict[str, tuple[str, dict[str, str], bytes]] = {}
    for name, cwd in (("ini", project / "tests"), ("pyproject", other), ("neutral", tmp_path)):
        path = tmp_path / f"{name}.json"
        done = run_suite("--harness", TOOLS_ONLY, "-k", "GRD-00", "-q",
                         "--conformance-report", str(path), cwd=cwd)  # fmt: skip
        assert done.returncode == 1, done.stdout[-2000:]
        assert "stopping after 1 failures" not in done.stdout
        assert done.stdout.count("FAILED [") > 1
        # What ``baseline`` would print, had the run been of the whole suite (it refuses -k).
        listed = json_text(make_baseline(report(path)), indent=2)
        runs[name] = (done.stdout, outcomes(report(path)), listed.encode())

    def ids(output: str) -> list[str]:
        return sorted(line.split("/conformance/cases/")[1] for line in output.splitlines()
                      if line.startswith("FAILED"))  # fmt: skip

    (stdout, found, baseline) = runs["neutral"]
    assert "failed" in found.values()
    assert b"GRD-00" in baseline
    for name in ("ini", "pyproject"):
        assert ids(runs[name][0]) == ids(stdout), name
        assert runs[name][1] == found, name
        assert runs[name][2] == baseline, name  # byte for byte


def test_settings_come_from_the_tool_table_of_pyproject(tmp_path: Path) -> None:
    table = '[tool.harness-conformance]\nharness = "tests.fixtures.tools_only:harness"\n'
    (tmp_path / "pyproject.toml").write_text(table + 'expect-fail = ["GRD-001"]\n')
    path = tmp_path / "r.json"
    args = ("--conformance-case", "GRD-001", "--conformance-report", str(path))
    done = run_suite(*args, cwd=tmp_path)
    data = report(path)
    assert data["harness"]["name"] != "reference", done.stdout[-2000:]  # type: ignore[index]
    assert outcomes(data) == {"GRD-001": "expected-fail"}
    # Its own texts make the case pass: the wording file is found beside pyproject.toml.
    (tmp_path / "pyproject.toml").write_text(table + 'wording = "wording.toml"\n')
    (tmp_path / "wording.toml").write_text((REPO / "tests/fixtures/tools_only.toml").read_text())
    run_suite(*args, cwd=tmp_path)
    assert outcomes(report(path)) == {"GRD-001": "passed"}


def test_a_harness_in_the_settings_is_found_beside_them_from_a_subdirectory(
    tmp_path: Path,
) -> None:
    (tmp_path / "myharness.py").write_text("from tests.fixtures.tools_only import harness\n")
    (tmp_path / "serve_it.py").write_text(
        "import runpy, sys\n"
        "sys.argv = ['serve', '--harness', 'tests.fixtures.tools_only:harness']\n"
        "runpy.run_module('conformance.serve', run_name='__main__')\n"
    )
    sub = tmp_path / "src"
    sub.mkdir()
    path = tmp_path / "r.json"
    args = ("--conformance-case", "RD-001", "--conformance-report", str(path))
    command = f"{sys.executable} ./serve_it.py"
    for setting in ('harness = "myharness:harness"', f"harness-cmd = {json.dumps(command)}"):
        (tmp_path / "pyproject.toml").write_text(f"[tool.harness-conformance]\n{setting}\n")
        done = run_suite(*args, cwd=sub)
        assert done.returncode == 0, setting + done.stdout[-2000:] + done.stderr[-2000:]
        assert report(path)["harness"]["name"] == "tools-only"  # type: ignore[index]


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        (
            'harness = "m:h"\nharness-cmd = "x"\n',
            "choose one of harness and harness-cmd in [tool.harness-conformance]",
        ),
        ('level = "bogus"\n', "level 'bogus' does not exist; choose one of all, behaviour"),
        (
            'harness-cmd = ""\n',
            "harness-cmd is empty in [tool.harness-conformance]: name the harness",
        ),
        ('harness = " "\n', "harness is empty in [tool.harness-conformance]: name the harness"),
        ('wording = ""\n', "wording is empty in [tool.harness-conformance]: name the file"),
        ('baseline = ""\n', "baseline is empty in [tool.harness-conformance]: name the file"),
    ],
)
def test_a_settings_mistake_names_the_file_and_the_key(
    tmp_path: Path, table: str, problem: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.harness-conformance]\n{table}")
    done = run_suite("-q", cwd=tmp_path)
    assert done.returncode == 4
    assert done.stderr.strip().splitlines() == [f"ERROR: {tmp_path / 'pyproject.toml'}: {problem}"]


def test_the_old_ini_keys_are_read_with_a_note_to_move_them(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nconformance_harness = tests.fixtures.tools_only:harness\n"
    )
    path = tmp_path / "r.json"
    done = run_suite(
        "--conformance-case", "RD-001", "--conformance-report", str(path), cwd=tmp_path
    )
    assert report(path)["harness"]["name"] != "reference"  # type: ignore[index]
    assert (
        "the conformance_* keys (conformance_harness) are read for this release only" in done.stderr
    )
    assert "move them to [tool.harness-conformance] in pyproject.toml (harness)" in done.stderr
    (tmp_path / "pytest.ini").write_text("[pytest]\nconformance_jobs = bogus\n")
    done = run_suite("--conformance-case", "RD-001", cwd=tmp_path)  # not silently ignored
    assert done.returncode == 4
    assert "conformance_jobs" in done.stderr + done.stdout, done.stdout[-1000:]


@pytest.mark.once
def test_the_readmes_command_runs_as_typed_with_no_arguments(tmp_path: Path) -> None:
    # `python -m conformance` alone, the README's first command: no option of any kind
    env = child_env(XDG_CACHE_HOME=str(tmp_path / "xdg-cache"))
    for ci in [k for k in env if k in hypothesis_ci_variables()]:
        env.pop(ci)  # hypothesis' own "ci" profile: 500 examples a property
    done = subprocess.run(
        [sys.executable, "-m", "conformance"], cwd=tmp_path, env=env, capture_output=True,
        text=True, check=False, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary), summary
    assert "failed" not in summary, summary
    assert sorted(p.name for p in tmp_path.iterdir()) == ["xdg-cache"]  # nothing left here


@pytest.mark.parametrize("unbuffered", ["", "1"], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize(
    ("args", "until"), [(["--help"], "usage:"), (["-v", "-k", "TAX"], "PASSED")],
    ids=["help", "mid-run"],
)  # fmt: skip
def test_a_reader_that_stops_reading_ends_the_run_quietly(
    tmp_path: Path, args: list[str], until: str, unbuffered: str
) -> None:
    # `python -m conformance … | head`: no traceback, the status a shell gives SIGPIPE, nothing
    # left behind; buffered, pytest first calls the broken pipe an internal error
    env = child_env(XDG_CACHE_HOME=str(tmp_path / "xdg-cache"), TMPDIR=str(tmp_path / "tmp"))
    env.pop("PYTHONUNBUFFERED", None)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered
    (tmp_path / "tmp").mkdir()
    command = [sys.executable, "-m", "conformance", "-p", "no:cacheprovider",
               "--hypothesis-profile", "default", *args]  # fmt: skip
    with subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as child:
        assert child.stdout is not None
        assert child.stderr is not None
        for line in child.stdout:  # up to that line (with -v, a case's verdict: mid-run)
            if until in line.decode():
                break
        child.stdout.close()  # and then no further
        errors = child.stderr.read().decode(errors="replace")
        status = child.wait(timeout=900)
    assert "Traceback" not in errors, errors[-3000:]
    assert status == 141, errors[-3000:]
    base = tmp_path / "xdg-cache" / "harness-conformance"
    left = sorted(p.name for p in base.iterdir()) if base.exists() else []
    assert set(left) <= {"hypothesis"}, left  # no run directory left behind
    assert list((tmp_path / "tmp").iterdir()) == []  # nor pytest's temporary one


@pytest.mark.parametrize("case_id", ["CON-002", "GRD-013", "PUB-010"])
def test_a_run_interrupted_mid_race_ends(tmp_path: Path, case_id: str) -> None:
    # a racer waiting at its barrier for a competitor that never started must not keep the
    # process alive: it is the case's, and the case is over
    env = child_env(XDG_CACHE_HOME=str(tmp_path / "xdg-cache"), INTERRUPTED_RACE=case_id)
    command = [sys.executable, "-m", "conformance", "-p", "no:cacheprovider", "--hypothesis-profile",
               "default", "-p", "tests.fixtures.interrupted_race", "--conformance-case", case_id]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                          check=False, timeout=600)  # fmt: skip
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]  # interrupted
    assert "Interrupted" in done.stdout or "KeyboardInterrupt" in done.stdout, done.stdout[-2000:]


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGINT"])
def test_a_racer_left_by_an_interrupted_case_starts_no_harness_process(
    tmp_path: Path, signal_name: str
) -> None:
    """Seen in CI: a racer of PUB-010 made its call after the interruption had stopped its
    instance, which started a fresh harness process the run never stopped."""
    pids, said = tmp_path / "pids", tmp_path / "said"
    env = child_env(XDG_CACHE_HOME=str(tmp_path / "xdg-cache"), LATE_RACER=signal_name,
                    LATE_RACER_SAID=str(said), COUNTED_PIDS=str(pids))  # fmt: skip
    command = [sys.executable, "-m", "conformance", "-p", "no:cacheprovider", "-p",
               "tests.fixtures.late_racer", "--harness", "tests.fixtures.counted:harness",
               "--conformance-case", "PUB-010"]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                          check=False, timeout=600)  # fmt: skip
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]  # interrupted
    assert len(pids.read_text().split()) == 2  # the harness and its second instance, no more
    assert said.read_text() == "HarnessDead: open_workspace not made: the run was interrupted\n"


def test_a_bad_settings_table_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.harness-conformance]\nharnes = "x"\n')
    done = run_suite("-q", cwd=tmp_path)
    assert done.returncode == 4
    assert done.stderr.strip().splitlines() == [
        f"ERROR: {tmp_path / 'pyproject.toml'}: unknown key 'harnes' in "
        "[tool.harness-conformance]; known: harness, harness-cmd, level, wording, baseline, "
        "expect-fail, jobs"
    ]


def test_a_settings_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    """tomllib's UnicodeDecodeError is no TOMLDecodeError: a traceback and exit 1."""
    (tmp_path / "pyproject.toml").write_bytes(
        b'[tool.harness-conformance]\nlevel = "all" # caf\xe9\n'
    )
    done = run_suite("-q", cwd=tmp_path)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [
        f"ERROR: {tmp_path / 'pyproject.toml'}: not UTF-8 (byte 46: invalid continuation byte)"
    ]
    (tmp_path / "pyproject.toml").unlink()
    (tmp_path / "setup.cfg").write_bytes(b"[metadata]\nname = caf\xe9\n")  # read for old keys
    with pytest.raises(SettingsError, match=r"setup\.cfg: not UTF-8 \(byte 21: "):
        settings.read(tmp_path, None)


def test_the_config_option_given_twice_is_one_line(tmp_path: Path) -> None:
    """The second was left to pytest, which called it an unrecognized argument."""
    for name in ("a.toml", "b.toml"):
        (tmp_path / name).write_text('level = "all"\n')
    done = run_suite("-q", "--conformance-config", "a.toml", "--conformance-config=b.toml",
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 4
    assert done.stderr.strip().splitlines() == [
        "ERROR: --conformance-config is given twice: name one"
    ]


def test_a_config_file_with_an_empty_table_or_none_is_named_for_it(tmp_path: Path) -> None:
    """``--conformance-config``: an empty table took the whole document as the settings, so
    another project's pyproject.toml got "unknown key 'project' in [tool.harness-conformance]"."""
    empty = tmp_path / "empty.toml"
    empty.write_text("[tool.harness-conformance]\n")
    assert settings.read(tmp_path, str(empty)).overrides == {}
    other = tmp_path / "other.toml"
    other.write_text('[project]\nname = "x"\n[tool.black]\nline-length = 99\n')
    with pytest.raises(SettingsError) as caught:
        settings.read(tmp_path, str(other))
    assert str(caught.value) == f"{other}: has no [tool.harness-conformance] table"
    empty_key = tmp_path / "empty_key.toml"
    empty_key.write_text('wording = ""\n')
    with pytest.raises(SettingsError) as caught:
        settings.read(tmp_path, str(empty_key))
    assert str(caught.value) == f"{empty_key}: wording is empty at the top level: name the file"
    flat = tmp_path / "flat.toml"
    flat.write_text('level = "all"\nharnes = "x"\n')
    with pytest.raises(SettingsError) as caught:
        settings.read(tmp_path, str(flat))
    assert str(caught.value).startswith(f"{flat}: unknown key 'harnes' at the top level; known: ")


def test_a_package_with_its_own_pyproject_uses_the_repositorys_settings(tmp_path: Path) -> None:
    """A nearer pyproject.toml without the table ended the search: the run tested the reference
    instead of the harness the repository's settings named, and passed."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.harness-conformance]\nharness = "tests.fixtures.tools_only:harness"\n'
    )
    package = tmp_path / "packages" / "sub"
    package.mkdir(parents=True)
    (package / "pyproject.toml").write_text('[project]\nname = "sub"\nversion = "0"\n')
    found = settings.read(package, None)
    assert found.overrides == {"conformance_harness": "tests.fixtures.tools_only:harness"}
    assert found.module_path == str(tmp_path.resolve())
    (package / "pyproject.toml").write_text('[tool.harness-conformance]\nlevel = "behaviour"\n')
    assert settings.read(package, None).overrides == {"conformance_level": "behaviour"}
    # The package's own old keys (still read) configure it: nearer, they win too.
    (package / "pyproject.toml").write_text(
        '[project]\nname = "sub"\n[tool.pytest.ini_options]\nconformance_harness = "pkg_h:H"\n'
    )
    found = settings.read(package, None)
    assert found.overrides == {"conformance_harness": "pkg_h:H"}
    assert "are read for this release only" in found.notes[0]
    # A pytest configuration without them does not: the search goes on.
    (package / "pytest.ini").write_text("[pytest]\naddopts = -q\n")
    (package / "pyproject.toml").write_text('[project]\nname = "sub"\n')
    assert settings.read(package, None).overrides == {
        "conformance_harness": "tests.fixtures.tools_only:harness"
    }


def test_replay_finds_the_recorded_files_from_any_directory(tmp_path: Path) -> None:
    run_dir, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    run_dir.mkdir()
    elsewhere.mkdir()
    (run_dir / "wording.toml").write_text((REPO / "tests/fixtures/tools_only.toml").read_text())
    path = run_dir / "r.json"
    run_suite("--harness", TOOLS_ONLY, "--conformance-wording", "wording.toml", "--conformance-case",
              "GRD-001", "--conformance-report", str(path), cwd=run_dir)  # fmt: skip
    before = case_of(report(path), "GRD-001")["outcome"]
    replay = cli("replay", str(path), "GRD-001", "-p", "no:cacheprovider", cwd=elsewhere)
    assert replay.returncode == (1 if before == "failed" else 0), replay.stdout[-2000:]
    assert "[GRD-001]" in replay.stdout
    assert "cannot be read" not in replay.stdout + replay.stderr


def test_replay_reads_a_report_saved_with_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    run_suite("--harness", TOOLS_ONLY, "--conformance-case", "RD-001", "--conformance-report",
              str(path), cwd=tmp_path)  # fmt: skip
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    replay = cli("replay", str(path), "RD-001", "-p", "no:cacheprovider", cwd=tmp_path)
    assert replay.returncode == 0, (replay.stdout + replay.stderr)[-2000:]
    assert "PASSED [RD-001]" in replay.stdout


def test_a_baseline_given_as_a_report_is_named_as_such(tmp_path: Path) -> None:
    baseline = REPO / "examples" / "implementer" / "conformance-baseline.json"
    for command in (["baseline", str(baseline)], ["replay", str(baseline), "PRV-019"]):
        done = cli(*command, cwd=tmp_path)
        assert done.returncode == 4
        assert "is a baseline" in done.stderr
        assert "malformed" not in done.stderr


def test_a_baseline_is_never_made_from_part_of_the_suite(tmp_path: Path) -> None:
    # Such a baseline knows only the cases that ran: under it, every other case's failure is
    # "new since the baseline" and the run is green.
    path = tmp_path / "some.json"
    done = run_suite("--harness", TOOLS_ONLY, "-k", "GRD-00", "-q", "--conformance-report",
                     str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stdout[-2000:]
    selected = report(path)["selected"]
    assert isinstance(selected, dict)
    made = cli("baseline", str(path), cwd=tmp_path)
    assert (made.returncode, made.stdout) == (4, "")
    assert made.stderr.splitlines() == [
        f"ERROR: {path}: the run chose {selected['cases']} of {selected['of']} cases (-k, -m, "
        "--conformance-case or --lf): make the baseline from a run of the whole suite"
    ]


def test_replay_names_the_file_and_what_is_wrong_with_it(tmp_path: Path) -> None:
    whole = json.dumps({"suite": {}, "run": {"args": []}, "cases": []}, indent=2)
    files: dict[str, tuple[bytes, str]] = {
        "cut.json": (whole[:20].encode(), "cut.json: not JSON: "),
        "bin.jsonl": (b"ab\xd0\x01cd", "bin.jsonl: not UTF-8 text (byte 2: invalid continuation"),
        "other.txt": (b"hello\n", "other.txt: neither a conformance report nor a trace"),
        "nohead.jsonl": (
            b'{"kind": "send", "line": "{}", "case": null}\n{"kind": "recv", "line": "{}"}\n',
            "nohead.jsonl: a trace without its first line, the run's header",
        ),
        "none.json": (whole.encode(), "none.json: records no harness (--harness, --harness-cmd"),
        "norun.json": (
            json.dumps({"suite": {}, "cases": []}).encode(),
            "norun.json: a report that records no run options to replay",
        ),
        "badhead.jsonl": (
            json.dumps({"t": 0, "case": None, "kind": "run", "line": "{cut"}).encode(),
            "badhead.jsonl: the trace's first line, the run's header, does not hold the run's "
            "options (args) as JSON",
        ),
    }
    for name, (content, said) in files.items():
        (tmp_path / name).write_bytes(content)
        done = cli("replay", name, "RD-001", cwd=tmp_path)
        assert done.returncode == 4
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, lines
        assert lines[0].startswith(f"ERROR: {said}"), lines


def test_replay_of_a_run_that_did_not_start_says_so(tmp_path: Path) -> None:
    # Its report holds no options: the replay said it "records no harness", of a run that
    # named one, and that a replay "would test the reference instead".
    done = run_suite("--harness", TOOLS_ONLY, "--conformance-baseline", "missing.json",
                     "--conformance-report", "r.json", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 4
    replay = cli("replay", "r.json", "RD-001", cwd=tmp_path)
    assert (replay.returncode, replay.stdout) == (4, "")
    assert replay.stderr.splitlines() == [
        "ERROR: r.json: a report that records no run options to replay (the run did not start: "
        "baseline missing.json: cannot be read: No such file or directory)"
    ]


def test_snapshot_update_on_a_harness_without_loop_says_why_nothing_was_written(
    tmp_path: Path,
) -> None:
    snaps = tmp_path / "snaps"
    done = run_suite("--harness", TOOLS_ONLY, "--conformance-snapshots", str(snaps),
                     "--snapshot-update", "-k", "SCN", cwd=tmp_path)  # fmt: skip
    assert "NOTE: --snapshot-update wrote nothing: the pinned transcripts are the scenario " \
        "cases' (SCN), which need the loop capability, and this harness does not declare it" \
        in done.stdout  # fmt: skip
    assert not snaps.exists() or not any(snaps.iterdir())


def test_the_markdown_summary_says_why_cases_do_not_apply(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    run_suite("--harness", TOOLS_ONLY, "-k", "LOOP-01 or DRV", "--conformance-report-md", str(path),
              cwd=tmp_path)  # fmt: skip
    text = path.read_text()
    assert "### Not applicable" in text
    assert re.search(r"^- \d+ cases: needs the loop capability$", text, re.M), text


LEAVE = """
import atexit, sys, threading
from conformance.__main__ import leave
atexit.register(lambda: print("exit handler ran"))
if sys.argv[1] == "thread":  # still waiting for its stdin to end when leave is called
    threading.Thread(target=lambda: (sys.stdin.read(), print("the thread finished"))).start()
print("buffered, not yet flushed", end="")
print("leaving", file=sys.stderr, flush=True)
leave(3)
"""


def test_leaving_runs_the_exit_handlers_flushes_and_waits_for_a_thread(tmp_path: Path) -> None:
    """``python -m conformance`` skips only the interpreter's teardown (``leave``)."""
    for mode in ("plain", "thread"):
        child = subprocess.Popen([sys.executable, "-c", LEAVE, mode], cwd=tmp_path,
                                 env=child_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)  # fmt: skip
        assert child.stderr is not None
        assert child.stderr.readline() == "leaving\n"  # leave is being called now
        out, err = child.communicate(input="", timeout=60)  # only now may the thread finish
        assert child.returncode == 3, err
        assert out.startswith("buffered, not yet flushed"), out
        assert "exit handler ran" in out
        assert ("the thread finished" in out) is (mode == "thread")


def test_a_selection_of_no_case_still_writes_its_reports(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    path, md = work / "r.json", work / "r.md"
    path.write_text('{"complete": true, "cases": {"GRD-001": "passed"}}')  # an earlier run's
    done = run_suite("-q", "-k", "GRD-0001", "--conformance-report", str(path),
                     "--conformance-report-md", str(md), cwd=work)  # fmt: skip
    assert done.returncode == 5, done.stdout[-2000:]
    assert "INCOMPLETE: no case was selected" in done.stdout
    written = json.loads(path.read_text())
    assert (written["complete"], written["cases"]) == (False, [])
    assert written["reason"].startswith("no case was selected")
    assert "INCOMPLETE" in md.read_text()
