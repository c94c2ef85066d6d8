"""A run split over two processes judges every case as a run in one process does.

``conformance.parallel``: on Linux with two CPUs, a helper process runs the property,
state-machine, publication and contract cases with a harness instance of its own. Shown on
harnesses with defects in exactly those cases, run in their own processes (the split needs one).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conformance import parallel, speed
from tests.suite import child_env, report, run_suite

pytestmark = pytest.mark.once
splits = pytest.mark.skipif(
    not sys.platform.startswith("linux") or speed.usable_cpus() < 2,
    reason="a run splits only on Linux with two usable CPUs",
)

HELPER_AREAS = ("PROP-", "STM-", "PUB-", "CON-")
"""The areas of ``parallel.HELPER_MODULES`` (PUB-010 stays: it races a second instance)."""
CASE_IN_LINE = re.compile(r"^\S+::\S+ (?:PASSED|FAILED|XFAIL|XPASS) \[([A-Z]+-\d{3})\]", re.M)
"""A case's line of ``-v`` progress, as it is logged."""

Run = tuple[subprocess.CompletedProcess[str], dict[str, Any], list[str], list[str]]


def _run(tmp_path: Path, name: str, *args: str, env: dict[str, str] | None = None) -> Run:
    """The run's output, JSON report, case IDs in JUnit, and case IDs in the order logged."""
    workdir = tmp_path / name
    workdir.mkdir()
    path, xml = workdir / "report.json", workdir / "junit.xml"
    done = run_suite("-v", *args, "--conformance-report", str(path), f"--junitxml={xml}",
                     cwd=workdir, env=env)  # fmt: skip
    assert path.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    junit = [
        prop.get("value") or ""
        for case in ET.parse(xml).getroot().iter("testcase")
        for prop in case.iter("property")
        if prop.get("name") == "case_id"
    ]
    return done, report(path), junit, CASE_IN_LINE.findall(done.stdout)


def _judged(data: dict[str, Any]) -> dict[str, Any]:
    """A report's verdicts: all but the raw answers of the calls (they hold the run's paths)."""
    cases = [{k: v for k, v in case.items() if k != "calls"} for case in data["cases"]]
    return {"cases": cases, **{k: data[k] for k in ("rootCauses", "summary", "complete")}}


@splits
@pytest.mark.parametrize(
    ("base", "caught"),
    [
        ("tests.mutants.provider_remedy", "STM-001"),
        ("tests.mutants.remedy_copies_others", "PROP-002"),
        ("tests.fixtures.non_atomic", "PUB-001"),
    ],
)
def test_a_split_run_judges_every_case_as_one_process_does(
    tmp_path: Path, base: str, caught: str
) -> None:
    env = {"COUNTED_BASE": base}
    one_pids, two_pids = tmp_path / "one.pids", tmp_path / "two.pids"
    harness = ("--harness", "tests.fixtures.counted:harness")
    one = _run(tmp_path, "one", *harness, "--conformance-jobs", "1",
               env={**env, "COUNTED_PIDS": str(one_pids)})  # fmt: skip
    two = _run(tmp_path, "two", *harness, env={**env, "COUNTED_PIDS": str(two_pids)})
    assert one[0].returncode == two[0].returncode == 1
    assert _judged(two[1]) == _judged(one[1])
    assert {c["id"]: c["outcome"] for c in two[1]["cases"]}[caught] == "failed"
    # Every case once in JUnit; the helper's cases are logged after the main process's own.
    assert sorted(two[2]) == sorted(one[2]) == sorted(set(one[2]))
    helper = [c for c in two[3] if c.startswith(HELPER_AREAS) and c != "PUB-010"]
    assert helper
    assert two[3][-len(helper) :] == helper
    assert one[3] != two[3]
    assert sorted(one[3]) == sorted(two[3])
    # The helper had a harness instance of its own: one process more than the run in one.
    assert len(two_pids.read_text().split()) == len(one_pids.read_text().split()) + 1
    assert "NOTE" not in two[0].stdout


@splits
def test_a_case_the_helper_did_not_report_runs_here(tmp_path: Path) -> None:
    """Whether the helper ends after it was given its cases or before, the run is whole and says so.

    Both orders are driven (``tests.fixtures.helper_ends``): left to the machine's load, the
    helper once reached PROP-003 before this process had finished collecting (a fresh-clone CI
    run on 3.13, after many that passed). Ending first, it ends at its first case, so it has
    sent nothing that could fill the pipe this process does not read yet.
    """
    plugin = ("-p", "tests.fixtures.helper_ends")
    one = _run(tmp_path, "one", "--conformance-jobs", "1", *plugin)
    after = _run(tmp_path, "after", *plugin, env={"HELPER_ENDS_AT": "PROP-003"})
    first = _run(tmp_path, "first", *plugin,
                 env={"HELPER_ENDS_AT": "CON-001", "HELPER_ENDS_FIRST": "1"})  # fmt: skip
    notes = {}
    for name, run in (("after", after), ("first", first)):
        assert run[0].returncode == one[0].returncode == 0, run[0].stdout[-3000:]
        assert _judged(run[1]) == _judged(one[1])
        assert sorted(run[2]) == sorted(one[2])
        notes[name] = [line for line in run[0].stdout.splitlines() if line.startswith("NOTE")]
    assert notes["after"] == [
        "NOTE: the helper process ended (exit 3) before it reported "
        "conformance/cases/test_properties.py::test_registry_reports_every_harness_error: it, "
        "and any of the helper's cases after it, ran in this process"
    ]
    assert notes["first"] == [
        "NOTE: the helper process ended (exit 3) before it was given its cases: they all ran "
        "in this process"
    ]


@splits
def test_a_warning_in_the_helper_reaches_the_summary(tmp_path: Path) -> None:
    done, data, _, _ = _run(tmp_path, "run", "-p", "tests.fixtures.helper_ends",
                            env={"HELPER_WARNS_AT": "PROP-001"})  # fmt: skip
    assert done.returncode == 0
    assert data["complete"] is True
    assert "warnings summary" in done.stdout
    assert "UserWarning: warned in the helper by PROP-001" in done.stdout
    assert "1 warning" in done.stdout.splitlines()[-1]


class _Options(SimpleNamespace):
    """A pytest config's options and plugins, as ``why_one_process`` reads them."""

    def getoption(self, name: str, default: object = None) -> object:
        return getattr(self, name, default)

    def getini(self, name: str) -> object:
        return ""


def _config(**options: object) -> Any:
    capman = SimpleNamespace(_global_capturing=None)
    plugins = SimpleNamespace(getplugin=lambda name: capman, has_plugin=lambda name: False)
    values: dict[str, object] = {"capture": "fd", "maxfail": 0, **options}
    config = SimpleNamespace(option=SimpleNamespace(), pluginmanager=plugins)
    config.getoption = _Options(**values).getoption
    config.getini = _Options().getini
    return config


@pytest.mark.parametrize(
    ("options", "why"),
    [
        ({}, None),
        ({"conformance_jobs": "1"}, "--conformance-jobs 1"),
        ({"maxfail": 1}, "-x or --maxfail"),
        ({"usepdb": True}, "--pdb or --trace"),
        ({"capture": "no"}, "a capture method other than fd"),
        ({"conformance_trace": "t.jsonl"}, "--conformance-trace"),
        ({"conformance_deadline": 5.0}, "--conformance-deadline"),
        ({"conformance_case": ["GRD-001"]}, "--conformance-case"),
    ],
)
def test_a_run_stays_in_one_process_where_it_must(
    monkeypatch: pytest.MonkeyPatch, options: dict[str, object], why: str | None
) -> None:
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 2)
    monkeypatch.setattr("threading.active_count", lambda: 1)
    assert parallel.why_one_process(_config(**options)) == why


def test_one_cpu_or_a_running_thread_keeps_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 1)
    assert parallel.why_one_process(_config()) == "one usable CPU"
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 2)
    monkeypatch.setattr("threading.active_count", lambda: 2)
    assert parallel.why_one_process(_config()) == "a thread is running"


def _order(tmp_path: Path, name: str, *args: str) -> list[str]:
    """The areas of a small run's cases, in the order they are logged."""
    workdir = tmp_path / name
    workdir.mkdir()
    done = run_suite("-v", "-k", "properties or taxonomy", *args, cwd=workdir)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    areas = [case.split("-")[0] for case in CASE_IN_LINE.findall(done.stdout)]
    return [area for index, area in enumerate(areas) if index == 0 or areas[index - 1] != area]


@splits
def test_jobs_1_in_the_settings_keeps_one_process_and_a_bad_value_is_one_line(
    tmp_path: Path,
) -> None:
    assert _order(tmp_path, "split") == ["TAX", "PROP"]  # the helper's cases come last
    assert _order(tmp_path, "flag", "--conformance-jobs", "1") == ["PROP", "TAX"]
    settings = tmp_path / "settings"
    settings.mkdir()
    (settings / "pyproject.toml").write_text("[tool.harness-conformance]\njobs = 1\n")
    done = run_suite("-v", "-k", "properties or taxonomy", cwd=settings)
    assert next(c.split("-")[0] for c in CASE_IN_LINE.findall(done.stdout)) == "PROP"
    (settings / "pyproject.toml").write_text("[tool.harness-conformance]\njobs = 2\n")
    done = run_suite("-q", cwd=settings)
    assert done.returncode == 4
    assert done.stderr.strip().splitlines() == [
        f'ERROR: {settings / "pyproject.toml"}: jobs must be "auto" or 1, got 2'
    ]


def _alive_with(marker: str) -> list[int]:
    """The processes, not yet ended, whose environment holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in environ and state not in ("Z", "X"):
            found.append(int(entry))
    return found


@splits
def test_a_run_stopped_while_the_helper_works_leaves_no_process_behind(tmp_path: Path) -> None:
    told, pids = tmp_path / "told", tmp_path / "pids"
    os.mkfifo(told)
    reader = os.open(told, os.O_RDWR)  # opening never blocks; the helper's line is waited for
    base, path = tmp_path / "base", tmp_path / "report.json"
    command = [sys.executable, "-m", "conformance", "-p", "no:cacheprovider", "--hypothesis-profile",
               "default", "-p", "tests.fixtures.helper_ends", "--harness",
               "tests.fixtures.counted:harness", "--conformance-basetemp", str(base),
               "--conformance-report", str(path)]  # fmt: skip
    env = child_env(XDG_CACHE_HOME=str(tmp_path / "xdg"), COUNTED_PIDS=str(pids),
                    HELPER_TELLS=str(told), HELPER_TELLS_AT="STM-001")  # fmt: skip
    run = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert os.read(reader, 100) == b"STM-001\n"  # the helper is at work, on its last case
        run.send_signal(signal.SIGTERM)
        out, _ = run.communicate(timeout=120)
    finally:
        run.kill()
        os.close(reader)
    assert run.returncode == 2, out[-2000:]  # interrupted
    data = report(path)
    assert data["complete"] is False
    assert data["reason"] == "the run was interrupted"
    assert len(pids.read_text().split()) == 3  # the main instance, its second, the helper's
    assert _alive_with(str(pids)) == []  # no helper, harness or remover left running
    assert not base.exists() or list(base.iterdir()) == []


@splits
def test_a_baselined_split_run_is_green_and_keeps_its_helper(tmp_path: Path) -> None:
    """The helper collects only its modules; the baseline's cases outside them are not its
    business (it used to refuse them and leave every case to the main process)."""
    pids = tmp_path / "pids"
    env = {"COUNTED_BASE": "tests.mutants.provider_remedy", "COUNTED_PIDS": str(pids)}
    harness = ("--harness", "tests.fixtures.counted:harness")
    first = _run(tmp_path, "first", *harness, env=env)
    failed = {c["id"] for c in first[1]["cases"] if c["outcome"] == "failed"}
    assert "STM-001" in failed
    assert any(c.startswith("REM-") for c in failed)
    made = subprocess.run([sys.executable, "-m", "conformance", "baseline",
                           str(tmp_path / "first" / "report.json")], env=child_env(),
                          capture_output=True, text=True, check=True)  # fmt: skip
    baseline = tmp_path / "baseline.json"
    baseline.write_text(made.stdout)
    pids.unlink()
    done, data, _, _ = _run(tmp_path, "second", *harness, "--conformance-baseline",
                            str(baseline), "--conformance-expect-fail", "REM-009",
                            env=env)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    assert "NOTE" not in done.stdout
    assert len(pids.read_text().split()) == 3  # the helper ran with its own instance
    junit = ET.parse(tmp_path / "second" / "junit.xml").getroot()
    assert sum(int(suite.get("failures", "0")) for suite in junit.iter("testsuite")) == 0
    assert {c["id"] for c in data["cases"] if c["outcome"] == "expected-fail"} == failed


@splits
def test_the_helper_starts_before_its_list_and_follows_the_list_once_it_comes(
    tmp_path: Path,
) -> None:
    """The helper starts on its own choice as soon as it has collected (the main process here
    waits, while collecting, until the helper is at PROP-002); the main process's list, which
    lacks CON-002 (deselected there alone), then wins: CON-002, run by the helper meanwhile, is
    neither reported nor run again."""
    told = tmp_path / "told"
    os.mkfifo(told)
    plugin = ("-p", "tests.fixtures.helper_ends")
    one = _run(tmp_path, "one", "--conformance-jobs", "1", "--deselect",
               "conformance/cases/test_contract.py::test_concurrent_calls_are_answered_each_by_its_id",
               *plugin)  # fmt: skip
    env = {"HELPER_TELLS": str(told), "HELPER_TELLS_AT": "PROP-002", "MAIN_AWAITS": str(told),
           "MAIN_DESELECTS": "CON-002"}  # fmt: skip
    two = _run(tmp_path, "two", *plugin, env=env)
    assert two[0].returncode == one[0].returncode == 0, two[0].stdout[-3000:]
    assert "CON-002" not in two[2]
    assert sorted(two[2]) == sorted(one[2]) == sorted(set(two[2]))
    assert _judged(two[1]) == _judged(one[1])
    assert "NOTE" not in two[0].stdout
    assert "1 deselected" in two[0].stdout.splitlines()[-1]
