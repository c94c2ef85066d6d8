"""A harness in its own process cannot take the suite down: hostile fixtures each end their
run in bounded time with a complete report, the right cases failed and a non-zero exit."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from tests.suite import REPO, case_of, cases, cli, fixture, outcomes, report, run_suite


def hostile_run(
    *args: str, cwd: Path
) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    """Run the suite on a hostile harness: it must end, failed, with a whole report.

    How long that takes is measured by ``bench/bench_isolation.py``, not asserted here.
    """
    path = cwd / "report.json"
    done = run_suite(*args, "--conformance-report", str(path), cwd=cwd)
    assert done.returncode == 1, done.stdout[-3000:]
    return done, report(path)


def test_a_harness_dead_inside_a_property_ends_it_in_one_line(tmp_path: Path) -> None:
    """Hypothesis would take a dead harness's failures for counterexamples and shrink them:
    a verdict of its "INTERESTING from HarnessDead at …/stdio.py" lines instead of one.

    A property's first timeout ends it, so two cases before it time out first: PROP-003's is
    the third in a row, and PROP-004 finds the harness dead."""
    done, data = hostile_run("--harness", fixture("hostile:hangs"), "--conformance-timeout", "1",
                             *(arg for case_id in ("GRD-001", "GRD-002", "PROP-003", "PROP-004")
                               for arg in ("--conformance-case", case_id)),
                             cwd=tmp_path)  # fmt: skip
    cases = [c for c in cast(list[dict[str, Any]], data["cases"]) if c["id"].startswith("PROP")]
    assert {c["id"] for c in cases if c["outcome"] == "failed"} == {"PROP-003", "PROP-004"}
    for case in cases:
        first = case["verdicts"][0]["verdict"]
        assert first.startswith("HarnessDead: "), first
        assert len(case["verdicts"]) == 1, case["verdicts"]
        assert "INTERESTING" not in first
    assert "INTERESTING" not in done.stdout
    assert "stdio.py" not in done.stdout


def test_a_harness_that_exits_inside_a_property_ends_it_in_that_calls_words(
    tmp_path: Path,
) -> None:
    """A fresh process answers hypothesis' replay of the example: its "FlakyFailure: …
    (probe=<conformance.client.Session object at 0x7f…>)" hid the exit, and the address
    changed the words on every run."""
    _, data = hostile_run("--harness", fixture("hostile:exits_every_twentieth"),
                          "--conformance-case", "PROP-003", "--conformance-case", "STM-001",
                          cwd=tmp_path)  # fmt: skip
    for case_id in ("PROP-003", "STM-001"):
        verdicts = case_of(data, case_id)["verdicts"]
        assert len(verdicts) == 1, verdicts  # type: ignore[arg-type]
        first = verdicts[0]["verdict"]  # type: ignore[index]
        assert first.startswith("HarnessCallError: call_tool("), first
        assert "failed: the harness exited with status 3" in first, first


def test_a_harness_that_exits_on_what_is_not_an_event_has_not_refused_it(tmp_path: Path) -> None:
    """DRV-006 takes an error answer for the refusal; the process ending is none."""
    _, data = hostile_run("--harness", fixture("hostile:exits_on_non_events"),
                          "--conformance-case", "DRV-006", cwd=tmp_path)  # fmt: skip
    case = case_of(data, "DRV-006")
    assert case["outcome"] == "failed"
    assert case["verdicts"][0]["verdict"] == (  # type: ignore[index]
        "HarnessCallError: derive_messages failed: the harness exited with status 0; "
        "it wrote nothing to stderr"
    )


def test_a_harness_that_hangs_is_timed_out_then_declared_dead(tmp_path: Path) -> None:
    done, data = hostile_run("--harness", fixture("hostile:hangs"), "--conformance-timeout", "1",
                       cwd=tmp_path)  # fmt: skip
    assert data["complete"] is True
    # A case that cannot reach the harness says so in one line, not the suite's traceback.
    assert "conformance/harness/stdio.py" not in done.stdout
    assert re.search(
        r"^[A-Z]+-\d+: open_workspace not made: the harness is dead", done.stdout, re.M
    )
    found = outcomes(data)
    assert "not-run" not in found.values()
    messages = [str(c.get("message")) for c in cases(data)]
    # Which call meets the limit first depends on scheduling (CON-002 makes two calls at once),
    # but the run names the limit somewhere, and every later case says why it failed.
    assert "did not answer within 1.0 s" in done.stdout + "".join(messages)
    dead = [m for m in messages if "the harness is dead: 3 calls in a row timed out" in m]
    assert len(dead) > 200  # every later case fails at once, taxonomy calls included
    assert found["TAX-001"] == "failed"
    assert found["PRV-012"] == ("skipped" if os.geteuid() == 0 else "failed")


@pytest.mark.parametrize(("name", "status"), [("exits_zero", 0), ("exits_three", 3)])
def test_a_harness_that_exits_mid_run(tmp_path: Path, name: str, status: int) -> None:
    done, data = hostile_run("--harness", fixture(f"hostile:{name}"), cwd=tmp_path)
    assert data["complete"] is True
    found = outcomes(data)
    assert "not-run" not in found.values()
    exited = [
        c["id"] for c in cases(data) if f"exited with status {status}" in str(c.get("message"))
    ]
    assert exited, "no case says the harness exited"
    # A fresh child serves the next case: most of the suite still passes.
    assert sum(o == "passed" for o in found.values()) > 150
    assert f"exited with status {status}" in done.stdout


def test_a_huge_result_fails_its_case_without_reading_it_into_memory(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    program = (
        "import resource, sys\n"
        "from conformance.__main__ import main\n"
        "code = main(sys.argv[1:])\n"
        "print('MAXRSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, "--harness", fixture("hostile:huge_result"),
         "--conformance-case", "PRV-011", "--conformance-case", "RD-001",
         "--conformance-report", str(path)],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout[-2000:]
    data = report(path)
    assert outcomes(data) == {"PRV-011": "failed", "RD-001": "passed"}
    assert "sent an answer of more than 2,097,152 bytes (the size limit)" in str(
        case_of(data, "PRV-011")["message"]
    )
    maxrss_kb = int(done.stdout.rsplit("MAXRSS_KB", 1)[1].split()[0])
    assert maxrss_kb < 150_000, f"the suite grew to {maxrss_kb} KB"


def test_writing_outside_the_root_is_a_failure_and_is_cleaned_up(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    _, data = hostile_run("--harness", fixture("hostile:writes_outside"), "--conformance-case", "GRD-002",
                       cwd=tmp_path)  # fmt: skip
    verdict = case_of(data, "GRD-002")["verdicts"][0]["verdict"]  # type: ignore[index]
    assert verdict.startswith('write of "new.txt" accepted, but "../stray-')
    assert '"<harness cwd>/stray-' in verdict
    assert '"<harness tmp>/stray-' in verdict
    assert "SPEC §4.1 {policy.write-intent}" in verdict
    assert sorted(os.listdir(tmp_path)) == ["report.json", "tmp"]


def test_a_run_past_its_deadline_reports_the_rest_as_not_run(tmp_path: Path) -> None:
    # The run's clock is driven: each reading advances it 10 s, so a 100 s deadline passes
    # after a handful of cases on any machine, however loaded.
    done, data = hostile_run("-p", "tests.fixtures.fake_clock", "--conformance-deadline", "100",
                             cwd=tmp_path)  # fmt: skip
    assert data["complete"] is False
    assert data["reason"] == "the run's deadline (100 s) passed"
    found = outcomes(data)
    ran = [case for case, outcome in found.items() if outcome != "not-run"]
    assert 0 < len(ran) < 12, ran
    assert all(outcome == "passed" for case, outcome in found.items() if case in ran)
    assert sum(o == "not-run" for o in found.values()) > 200
    assert "INCOMPLETE: the run's deadline (100 s) passed" in done.stdout
    assert "ERROR at teardown" not in done.stdout


# RD-001 fails on a failed call; PUB-010 is recommended (pytest's xfail); REG-022 catches the
# failed call and judges it itself.
@pytest.mark.parametrize("case_id", ["RD-001", "PUB-010", "REG-022"])
def test_a_case_the_deadline_cuts_short_is_not_run_never_failed(
    tmp_path: Path, case_id: str
) -> None:
    # Its call never answers, so the run's deadline passes while the case runs; the suite then
    # stops the harness itself, which is no defect of the harness's.
    marker, junit = tmp_path / "called", tmp_path / "junit.xml"
    done = run_suite("--harness", fixture("hangs_in_calls:harness"), "--conformance-case", case_id,
                     "--conformance-deadline", "6", "--conformance-report", str(tmp_path / "r.json"),
                     "--junitxml", str(junit), cwd=tmp_path, env={"HANGS_MARKER": str(marker)})  # fmt: skip
    assert marker.exists(), "the run's start-up took the whole deadline: the case never called"
    assert done.returncode == 1, done.stdout[-3000:]
    data = report(tmp_path / "r.json")
    assert outcomes(data) == {case_id: "not-run"}
    assert case_of(data, case_id)["message"] == "not run: the run's deadline passed while it ran"
    assert (data["complete"], data["reason"]) == (False, "the run's deadline (6 s) passed")
    assert 'failures="0"' in junit.read_text()
    assert "HarnessCallError" not in done.stdout
    assert "root causes" not in done.stdout
    assert "INCOMPLETE: the run's deadline (6 s) passed (1 case not run)" in done.stdout


def test_a_tools_method_answered_as_unknown_is_one_line_per_case_and_one_cause(
    tmp_path: Path,
) -> None:
    # As the Node kit answers a handler it does not have: no tracebacks through the suite, and
    # no advice to list it in describe.lacks, which the suite refuses for a tools method.
    done, _ = hostile_run("--harness", fixture("no_close:harness"), "-k", "RD-00", cwd=tmp_path)
    out = done.stdout + done.stderr
    assert "Traceback" not in out
    assert "conformance/client.py" not in out
    assert "as an unknown method; implement it (SPEC §6.2 {contract.declared}" in out
    assert "describe.lacks" not in out
    assert "RD-001: close_workspace: the harness declares the tools capability" in out
    assert "root causes: 1 distinct defect in 18 failed cases" in out


def test_a_racer_whose_call_fails_is_the_races_verdict_not_a_thread_warning(
    tmp_path: Path,
) -> None:
    # PUB-010's loser raises instead of refusing: that failed call was a warning with a
    # traceback through the suite's thread, and its round counted one winner and passed.
    path = tmp_path / "r.json"
    done = run_suite("--harness", fixture("hostile:raises_on_refusal"), "--conformance-case",
                     "PUB-010", "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    out = done.stdout + done.stderr
    assert "Exception in thread" not in out
    assert "PytestUnhandledThreadExceptionWarning" not in out
    entry = case_of(report(path), "PUB-010")
    assert entry["outcome"] == "recommended-fail"
    assert 'HarnessCallError: call_tool("write", ' in str(entry["message"])
    assert "failed in the harness: RuntimeError: refused: " in str(entry["message"])


def test_stray_prints_stay_off_the_protocol_stream(tmp_path: Path) -> None:
    done = run_suite("-q", "--harness", fixture("hostile:prints"), "-k", "GRD", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]


def test_an_answer_outside_the_contract_fails_its_call(tmp_path: Path) -> None:
    _, data = hostile_run("--harness", fixture("hostile:bad_shape"), "--conformance-case", "PRV-002",
                    cwd=tmp_path)  # fmt: skip
    assert str(case_of(data, "PRV-002")["message"]).startswith(
        'ContractError: call_tool("read", {"file_path": "nope.txt"}): callId must be a string '
        '(got {"callId": 7,'
    )
    _, data = hostile_run("--harness", fixture("hostile:bad_shape"), "--conformance-case",
                            "PRV-002", "--conformance-validate", cwd=tmp_path)  # fmt: skip
    assert (
        "the answer does not fit the protocol schema: at callId: 7 is not of type 'string'"
        in str(case_of(data, "PRV-002")["message"])
    )


def test_validation_accepts_every_answer_of_the_reference(tmp_path: Path) -> None:
    done = run_suite(
        "-q", "--conformance-validate", "-k", "TAX or GRD or LOOP or SCN", cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout[-3000:]


def test_a_failed_case_replays_alone_from_the_report_or_the_trace(tmp_path: Path) -> None:
    path, trace = tmp_path / "r.json", tmp_path / "trace.jsonl"
    done = run_suite("--harness", "tests.mutants.derive_leaks_error:harness", "-k", "DRV",
                     "--conformance-report", str(path), "--conformance-trace", str(trace),
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert records[0]["kind"] == "run"
    kinds = {r["kind"] for r in records}
    assert {"send", "recv"} <= kinds
    sent = [json.loads(r["line"]) for r in records if r["kind"] == "send"]
    assert {m["method"] for m in sent} == {"describe", "derive_messages", "run_scenario"}
    assert {r["case"] for r in records if r["kind"] == "send" and r["case"]} >= {
        "DRV-001",
        "DRV-005",
    }
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for source in (path, trace):
        replay = subprocess.run(
            [sys.executable, "-m", "conformance", "replay", str(source), "DRV-001"],
            cwd=tmp_path, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert replay.returncode == 1, replay.stdout[-2000:]
        assert "FAILED [DRV-001]" in replay.stdout
        assert "1 failed" in replay.stdout
        assert "DRV-002" not in replay.stdout.split("short test summary", 1)[1]


def _own_cache(tmp_path: Path) -> dict[str, str]:
    """A replay's pytest cache (it is a user's run) under the test's own directory."""
    return {"XDG_CACHE_HOME": str(tmp_path / "xdg-cache")}


def test_a_replay_tests_the_harness_the_settings_named(tmp_path: Path) -> None:
    # The harness and level come from pyproject.toml, which a replay from elsewhere does not
    # find: the report must carry them, or the replay tests the reference and says "passed".
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "pyproject.toml").write_text(
        '[tool.harness-conformance]\nharness = "tests.fixtures.never_overwrites:harness"\n'
        'level = "behaviour"\n'
    )
    path, trace = project / "r.json", project / "trace.jsonl"
    done = run_suite("--conformance-case", "GRD-003", "--conformance-report", str(path),
                     "--conformance-trace", str(trace), cwd=project)  # fmt: skip
    assert done.returncode == 1, done.stdout[-2000:]
    assert report(path)["run"]["args"] == [  # type: ignore[index]
        "--harness", "tests.fixtures.never_overwrites:harness", "--conformance-level", "behaviour",
        "--hypothesis-profile", "default",
    ]  # fmt: skip
    for source in (path, trace):
        replay = cli("replay", str(source), "GRD-003", cwd=elsewhere, env=_own_cache(tmp_path))
        assert replay.returncode == 1, replay.stdout[-2000:]
        assert "FAILED [GRD-003]" in replay.stdout  # the reference passes it
        assert "level: behaviour only" in replay.stdout


def test_a_replay_draws_with_the_recorded_runs_hypothesis_profile_and_seed(
    tmp_path: Path,
) -> None:
    # CI's profile (chosen by CI=true) draws 500 examples where a laptop's draws 30: a replay
    # with the profile of where it is started called a property failure found in CI passing.
    path = tmp_path / "r.json"
    done = run_suite("--harness", "tests.fixtures.never_overwrites:harness", "--conformance-case",
                     "RD-001", "--hypothesis-seed", "7", "--conformance-report", str(path),
                     cwd=tmp_path, profile="triage")  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    args = report(path)["run"]["args"]  # type: ignore[index]
    assert args[-4:] == ["--hypothesis-profile", "triage", "--hypothesis-seed", "7"]
    replay = cli("replay", str(path), "RD-001", cwd=tmp_path, env=_own_cache(tmp_path))
    assert replay.returncode == 0, replay.stdout[-2000:]
    assert "hypothesis profile 'triage'" in replay.stdout


def test_a_replay_ignores_the_settings_where_it_is_started(tmp_path: Path) -> None:
    # A replay runs the recorded options: another project's level or expect-fail would turn
    # the failure it replays into a pass or an expected failure.
    path = tmp_path / "r.json"
    done = run_suite("--harness", "tests.fixtures.never_overwrites:harness", "--conformance-case",
                     "GRD-003", "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stdout[-2000:]
    for setting in ('level = "behaviour"', 'expect-fail = ["GRD-003"]'):
        other = tmp_path / ("other-" + setting.split(" ", 1)[0])
        other.mkdir()
        (other / "pyproject.toml").write_text(f"[tool.harness-conformance]\n{setting}\n")
        replay = cli("replay", str(path), "GRD-003", cwd=other, env=_own_cache(tmp_path))
        assert replay.returncode == 1, setting + replay.stdout[-2000:]
        assert "FAILED [GRD-003]" in replay.stdout
        assert "level: behaviour + wording" in replay.stdout


def test_a_replay_finds_a_relative_file_where_it_is_started(tmp_path: Path) -> None:
    # A CI report copied out of a checkout that is gone: the wording file is where the replay
    # starts (the checkout again), not beside the report.
    project, reports = tmp_path / "project", tmp_path / "reports"
    project.mkdir()
    reports.mkdir()
    (project / "wording.toml").write_text((REPO / "tests/fixtures/tools_only.toml").read_text())
    path = reports / "r.json"
    run_suite("--harness", "tests.fixtures.tools_only:harness", "--conformance-wording",
              "wording.toml", "--conformance-case", "GRD-001", "--conformance-report", str(path),
              cwd=project)  # fmt: skip
    checkout = tmp_path / "checkout"
    project.rename(checkout)
    replay = cli("replay", str(path), "GRD-001", cwd=checkout, env=_own_cache(tmp_path))
    assert "[GRD-001]" in replay.stdout, (replay.stdout + replay.stderr)[-2000:]
    assert "cannot be read" not in replay.stdout + replay.stderr


def test_a_replay_finds_a_module_harness_named_in_the_settings_from_a_subdirectory(
    tmp_path: Path,
) -> None:
    # The settings are not applied by a replay, but the module they named is found beside them
    # as the run found it.
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "myharness.py").write_text("from tests.fixtures.never_overwrites import harness\n")
    (project / "pyproject.toml").write_text(
        '[tool.harness-conformance]\nharness = "myharness:harness"\n'
    )
    path = project / "r.json"
    done = run_suite("--conformance-case", "GRD-003", "--conformance-report", str(path),
                     cwd=project / "src")  # fmt: skip
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    for where in (project / "src", tmp_path):
        replay = cli("replay", str(path), "GRD-003", cwd=where, env=_own_cache(tmp_path))
        assert "FAILED [GRD-003]" in replay.stdout, (replay.stdout + replay.stderr)[-2000:]


def test_a_replay_of_a_harness_an_installed_plugin_handed_over_is_not_refused(
    tmp_path: Path,
) -> None:
    # An installed plugin's hook records no option (pytest loads the plugin by itself), and
    # loads it again for the replay.
    path = tmp_path / "r.json"
    run_suite("-p", "tests.fixtures.hooked", "--conformance-case", "GRD-003",
              "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    data = json.loads(path.read_text())
    data["run"]["args"] = []
    path.write_text(json.dumps(data))
    replay = cli("replay", str(path), "GRD-003", cwd=tmp_path, env=_own_cache(tmp_path))
    assert "records no harness" not in replay.stderr, replay.stderr
    assert "[GRD-003]" in replay.stdout, (replay.stdout + replay.stderr)[-2000:]


def test_a_replay_tests_the_harness_a_plugins_hook_handed_over(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path = tmp_path / "r.json"
    done = run_suite("-p", "tests.fixtures.hooked", "--conformance-case", "GRD-003",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    assert report(path)["run"]["args"] == [  # type: ignore[index]
        "-p", "tests.fixtures.hooked", "--hypothesis-profile", "default"
    ]  # fmt: skip
    replay = cli("replay", str(path), "GRD-003", cwd=elsewhere, env=_own_cache(tmp_path))
    assert "harness: hooked-reference" in replay.stdout, replay.stdout[-2000:]


def test_a_replay_finds_a_relative_harness_command_from_anywhere_and_after_a_move(
    tmp_path: Path,
) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    script = project / "run_h.sh"
    script.write_text(
        f"#!/bin/sh\nexec {sys.executable} -m conformance.serve --harness "
        "tests.fixtures.never_overwrites:harness\n"
    )
    script.chmod(0o755)
    path = project / "r.json"
    done = run_suite("--harness-cmd", "./run_h.sh", "--conformance-case", "GRD-003",
                     "--conformance-report", str(path), cwd=project)  # fmt: skip
    assert done.returncode == 1, done.stdout[-2000:]

    def replay(source: Path) -> subprocess.CompletedProcess[str]:
        return cli("replay", str(source), "GRD-003", cwd=elsewhere, env=_own_cache(tmp_path))

    found = replay(path)
    assert "FAILED [GRD-003]" in found.stdout, (found.stdout + found.stderr)[-2000:]
    # A CI report opened elsewhere: the run's directory is gone, its files beside the report.
    moved = tmp_path / "moved"
    project.rename(moved)
    found = replay(moved / "r.json")
    assert "FAILED [GRD-003]" in found.stdout, (found.stdout + found.stderr)[-2000:]


def test_a_replay_finds_the_files_the_settings_named_after_the_checkout_moved(
    tmp_path: Path,
) -> None:
    # The settings name files by absolute paths (found beside pyproject.toml), and so does the
    # report: once the checkout moved (or on another machine), the replay looked for the old
    # wording table and script, and for a module harness where only the old settings were.
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "wording.toml").write_text((REPO / "tests/fixtures/tools_only.toml").read_text())
    (project / "myharness.py").write_text("from tests.fixtures.tools_only import harness\n")
    script = project / "run_h.sh"
    script.write_text(
        f"#!/bin/sh\nexec {sys.executable} -m conformance.serve --harness "
        "tests.fixtures.tools_only:harness\n"
    )
    script.chmod(0o755)
    for harness in ('harness = "myharness:harness"', 'harness-cmd = "./run_h.sh"'):
        (project / "pyproject.toml").write_text(
            f'[tool.harness-conformance]\n{harness}\nwording = "wording.toml"\n'
        )
        path = project / "sub" / "r.json"
        done = run_suite("--conformance-case", "RD-001", "--conformance-report", str(path),
                         cwd=project / "sub")  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:]
        moved = tmp_path / "moved"
        project.rename(moved)
        for where in (moved / "sub", tmp_path):
            replay = cli("replay", str(moved / "sub" / "r.json"), "RD-001", cwd=where,
                         env=_own_cache(tmp_path))  # fmt: skip
            assert "PASSED [RD-001]" in replay.stdout, (
                harness + (replay.stdout + replay.stderr)[-2000:]
            )
            assert "harness: tools-only" in replay.stdout
        moved.rename(project)


def test_a_run_leaves_nothing_in_its_directories(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    done = run_suite("-q", "-k", "PROP or STM or GRD-01", cwd=tmp_path, env={"TMPDIR": str(temp)})
    assert done.returncode == 0, done.stdout[-2000:]
    assert os.listdir(tmp_path) == ["tmp"]
    assert os.listdir(temp) == []


def _breaks_a_call(how: str) -> str:
    fixture = REPO / "tests/fixtures/breaks_a_call.py"
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(fixture))} {how}"


def test_an_answer_sent_twice_fails_its_own_case_under_the_protocol_rule(tmp_path: Path) -> None:
    # The second copy came in the same read as the first: it was taken without a word, or,
    # after a case's last call, told to the next case instead.
    proxy = _breaks_a_call("twice")
    _, data = hostile_run("--harness-cmd", proxy, "--conformance-case", "RD-001",
                          "--conformance-case", "RD-002", cwd=tmp_path)  # fmt: skip
    first = case_of(data, "RD-001")["verdicts"]
    assert isinstance(first, list)
    assert len(first) == 1
    assert first[0]["rule"] == "proto.ids"
    assert first[0]["verdict"].startswith(
        "HarnessCallError: after the last call: the harness sent a second answer to request 3: "
        '"{\\"id\\": 3, '
    )
    # the fresh process (a proxy of its own) doubles its first answer too, in RD-002's calls
    second = case_of(data, "RD-002")["verdicts"]
    assert isinstance(second, list)
    assert len(second) == 1
    assert second[0]["rule"] == "proto.ids"
    assert "the harness sent a second answer to request 6: " in second[0]["verdict"]
    assert [(c["signature"], c["cases"]) for c in data["rootCauses"]] == [  # type: ignore[attr-defined]
        ("proto.ids · protocol-broken · check-failed", ["RD-001", "RD-002"])
    ]


def test_an_answer_outside_the_protocol_names_its_rule_and_is_one_cause(tmp_path: Path) -> None:
    # A verdict of a line that is not JSON cited no rule, and each case that met one was a
    # cause of its own in its own words.
    proxy = _breaks_a_call("garble")
    _, data = hostile_run("--harness-cmd", proxy, "--conformance-case", "RD-001",
                          "--conformance-case", "RD-002", cwd=tmp_path)  # fmt: skip
    for case_id in ("RD-001", "RD-002"):
        verdicts = case_of(data, case_id)["verdicts"]
        assert isinstance(verdicts, list)
        [verdict] = verdicts
        assert verdict["rule"] == "proto.ids"
        assert 'failed: the harness answered with a line that is not JSON: "not an answer"; ' \
            "SPEC §6.3 {proto.ids}: " in verdict["verdict"]  # fmt: skip
    causes = data["rootCauses"]
    assert isinstance(causes, list)
    assert [(c["signature"], c["cases"]) for c in causes] == [
        ("proto.ids · protocol-broken · check-failed", ["RD-001", "RD-002"])
    ]
