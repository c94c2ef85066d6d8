"""The conformance suite itself: choosing harnesses, reporting, snapshots and their guard."""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
from pathlib import Path

import pytest

from conformance.plugin import output_clash
from conformance.secrets import (
    SecretInSnapshot,
    check_snapshot,
    find_secret,
    plant_canary,
    secret_values,
)
from conformance.snapshots import Transcript, default_snapshot_dir, diff_dirs, normalize, render
from tests.suite import (
    REPO,
    case_of,
    error_lines,
    fixture,
    outcomes,
    report,
    run_pytest,
    run_suite,
)

SNAPSHOT_FILE = "test_scenarios.ambr"
ONE_SNAPSHOT = "conformance/cases/test_scenarios.py::test_scenario_transcript[fs-policy-reject]"


def names_in(path: Path) -> list[str]:
    return re.findall(r"^# name: (.+)$", path.read_text(encoding="utf-8"), re.M)


# -- the reference adapter: the README's complete example -----------------------------------


@pytest.mark.parametrize("transport", ["stdio", "in-process"])
def test_the_reference_adapter_passes_the_whole_suite(tmp_path: Path, transport: str) -> None:
    path = tmp_path / "report.json"
    extra = ["--conformance-in-process"] if transport == "in-process" else []
    done = run_suite("--harness", "reference.adapter:ReferenceHarness", "--conformance-report",
                     str(path), *extra, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    data = report(path)
    harness = data["harness"]
    assert isinstance(harness, dict)
    assert (harness["name"], harness["version"], harness["language"]) == (
        "reference",
        "0.1.0",
        "python",
    )
    assert harness["capabilities"] == ["tools", "taxonomy", "loop", "native", "toolErrors", "pause"]
    assert harness["capabilitiesInferred"] is False
    assert data["suite"] == {"name": "harness-conformance", "version": "0.1.0"}
    assert (data["spec"], data["level"], data["complete"]) == ("2.14.0", "all", True)
    found = outcomes(data)
    assert len(found) >= 200
    odd = {case: outcome for case, outcome in found.items() if outcome != "passed"}
    # Root bypasses permissions; two processes cannot race inside one.
    expected = {"PRV-012": "skipped"} if os.geteuid() == 0 else {}
    if transport == "in-process":
        # Two processes cannot race inside one; the child's TMPDIR and stderr, and batches,
        # exist only over stdio.
        expected |= dict.fromkeys(["PUB-010", "SBX-014", "SEC-007", "CON-004"], "not-applicable")
    assert odd == expected
    assert isinstance(data["duration_s"], float)
    assert "harness conformance" in done.stdout
    assert "harness: reference 0.1.0 (python)" in done.stdout
    assert sorted(os.listdir(tmp_path)) == ["report.json"], "the run left something behind"


# -- choosing the harness -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--harness", "no.such.module:thing"],
         "ERROR: harness \"no.such.module:thing\" cannot be loaded: No module named 'no'"),
        (["--harness", "reference.adapter:Nothing"],
         'ERROR: harness "reference.adapter:Nothing" cannot be loaded'),
        (["--harness", "not-registered"],
         'ERROR: harness "not-registered" is neither module:attr nor a registered name'),
        (["--harness", "tests.fixtures.hooked:Incomplete"],
         'ERROR: harness "tests.fixtures.hooked:Incomplete": the tools capability '
         "(open_workspace, call_tool, close_workspace) is the minimum every harness implements"),
        (["--harness", "tests.fixtures.hooked:UnknownCapability"],
         "ERROR: harness \"tests.fixtures.hooked:UnknownCapability\": unknown capability 'telepathy'; "
         "known: tools, taxonomy, loop, native, toolErrors, pause"),
        (["--harness-cmd", "no-such-command --flag"],
         "ERROR: --harness-cmd 'no-such-command --flag' did not complete the handshake: describe not "
         "made: the harness command 'no-such-command --flag' cannot start: [Errno 2] No such file or "
         "directory: 'no-such-command'"),
        (["--harness-cmd", f"{sys.executable} -c 'print(1)'"],
         "ERROR: --harness-cmd"),
        (["--conformance-level", "sloppy"],
         "ERROR: --conformance-level 'sloppy' does not exist; choose one of all, behaviour"),
        (["--conformance-case", "NOPE-001"],
         "ERROR: --conformance-case: no case NOPE-001 in this suite"),
        (["--conformance-timeout", "0"], "ERROR: --conformance-timeout must be positive, got 0.0"),
        (["--conformance-max-answer-bytes", "0"],
         "ERROR: --conformance-max-answer-bytes must be positive, got 0"),
        (["--conformance-max-answer-bytes=-5"],
         "ERROR: --conformance-max-answer-bytes must be positive, got -5"),
    ],
)  # fmt: skip
def test_bad_input_stops_the_run_with_one_line(
    tmp_path: Path, args: list[str], message: str
) -> None:
    done = run_suite(*args, cwd=tmp_path)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    errors = error_lines(done)
    assert len(errors) == 1, errors
    assert errors[0].startswith(message), errors[0]
    assert " passed" not in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--conformance-timeout", "abc"],
         "ERROR: argument --conformance-timeout: invalid float value: 'abc'; "
         "python -m conformance --help lists the options"),
        (["--conformance-jobs", "3"],
         "ERROR: argument --conformance-jobs: invalid choice: '3' (choose from 'auto', '1'); "
         "python -m conformance --help lists the options"),
        (["--frobnicate"],
         "ERROR: unrecognized arguments: --frobnicate; python -m conformance --help lists the "
         "options"),
        (["--conformance-report", "{taken}"], "ERROR: --conformance-report {taken}: is a "
         "directory, not a file"),
        (["--conformance-report-md", "{file}/r.md"],
         "ERROR: --conformance-report-md {file}/r.md: {file} is not a directory"),
        (["--conformance-trace", "{file}/deeper/t.jsonl"],
         "ERROR: --conformance-trace {file}/deeper/t.jsonl: {file} is not a directory"),
        (["--junitxml={file}/j.xml"], "ERROR: --junitxml {file}/j.xml: {file} is not a directory"),
    ],
)  # fmt: skip
def test_a_bad_option_is_one_line_and_nothing_else(
    tmp_path: Path, args: list[str], message: str
) -> None:
    # pytest's own (a value its parser refuses, an option it does not know) and a file the
    # run could not write at its end: one line before anything runs, in the suite's words
    work = tmp_path / "work"
    (work / "taken").mkdir(parents=True)
    (work / "file").write_text("", encoding="utf-8")
    names = {"taken": str(work / "taken"), "file": str(work / "file")}
    done = run_suite(*(a.format(**names) for a in args), cwd=work)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [message.format(**names)]
    assert "passed" not in done.stdout
    assert sorted(os.listdir(work)) == ["file", "taken"]
    assert not os.listdir(work / "taken")


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--frobnicate"],
         "unrecognized arguments: --frobnicate; python -m conformance --help lists the options"),
        (["--conformance-level", "sloppy"],
         "--conformance-level 'sloppy' does not exist; choose one of all, behaviour"),
        (["--format", "json"],  # the case list's format, taken for the report's
         "--format (--conformance-list-format) goes with --conformance-list-cases"),
    ],
)  # fmt: skip
def test_bad_input_replaces_an_earlier_runs_reports_with_its_reason(
    tmp_path: Path, args: list[str], error: str
) -> None:
    # A CI job uploads its reports whatever the exit status: after a typo it uploaded the
    # last good run's, as if this run had passed.
    path, summary = tmp_path / "report.json", tmp_path / "summary.md"
    path.write_text('{"complete": true, "cases": []}\n', encoding="utf-8")
    summary.write_text("## all passed\n", encoding="utf-8")
    done = run_suite(*args, "--conformance-report", str(path), "--conformance-report-md",
                     str(summary), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert error_lines(done) == [f"ERROR: {error}"]
    data = report(path)
    assert (data["complete"], data["reason"], data["cases"]) == (
        False,
        f"the run did not start: {error}",
        [],
    )
    assert summary.read_text(encoding="utf-8").startswith("## Harness conformance: harness not")
    assert f"the run did not start: {error}" in summary.read_text(encoding="utf-8")


def test_a_report_named_as_the_baseline_is_refused_and_the_baseline_kept(tmp_path: Path) -> None:
    baseline = tmp_path / "conformance-baseline.json"
    kept = '{"format": 1, "failures": {}, "cases": ["GRD-001"]}\n'
    baseline.write_text(kept, encoding="utf-8")
    done = run_suite("--conformance-baseline", str(baseline), "--conformance-report",
                     f"{tmp_path}/./{baseline.name}", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert error_lines(done) == [
        f"ERROR: --conformance-report {tmp_path}/./{baseline.name}: is also "
        "--conformance-baseline; the run would write over what it reads: name another file"
    ]
    assert baseline.read_text(encoding="utf-8") == kept


def test_bad_input_writes_no_report_over_a_file_the_run_reads(tmp_path: Path) -> None:
    # The bad input is the baseline itself (a report named in its place): the one file named
    # both ways stays as it was, the run's own report goes where it was asked.
    named = tmp_path / "last-run.json"
    kept = '{"complete": true, "cases": []}\n'
    named.write_text(kept, encoding="utf-8")
    summary = tmp_path / "summary.md"
    done = run_suite("--conformance-baseline", str(named), "--conformance-report", str(named),
                     "--conformance-report-md", str(summary), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert len(error_lines(done)) == 1, error_lines(done)
    assert named.read_text(encoding="utf-8") == kept
    assert "the run did not start: baseline " in summary.read_text(encoding="utf-8")


def test_two_outputs_named_as_one_file_are_one_line(tmp_path: Path) -> None:
    done = run_suite("--conformance-report", "out.json", "--conformance-trace", "./out.json",
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert error_lines(done) == [
        "ERROR: --conformance-trace ./out.json: is also --conformance-report; one would write "
        "over the other: name another file"
    ]
    assert " passed" not in done.stdout


def test_special_files_never_clash() -> None:
    outputs = {"--conformance-report": os.devnull, "--junitxml": os.devnull}
    assert output_clash(outputs, {"--conformance-baseline": None}) is None


def test_pytests_junit_file_is_an_output_too(tmp_path: Path) -> None:
    done = run_suite("--conformance-report", "out.xml", "--junitxml=out.xml", cwd=tmp_path)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert error_lines(done) == [
        "ERROR: --junitxml out.xml: is also --conformance-report; one would write over the "
        "other: name another file"
    ]


def test_a_report_the_disk_refuses_at_the_end_is_one_line_and_never_green(tmp_path: Path) -> None:
    # Checked at the start, a report's place can still be lost by the end (here a plugin puts
    # a directory there): the run says so in one line each, fails, and leaves no .partial.
    plugin = tmp_path / "plugins" / "take_place.py"
    plugin.parent.mkdir()
    plugin.write_text(
        "import os\n\n\ndef pytest_collection_finish(session):\n"
        "    for name in ('conformance_report', 'conformance_report_md'):\n"
        "        os.makedirs(session.config.getoption(name), exist_ok=True)\n",
        encoding="utf-8",
    )
    work = tmp_path / "work"
    work.mkdir()
    env = {"PYTHONPATH": f"{REPO}{os.pathsep}{plugin.parent}"}
    done = run_suite("-p", "take_place", "--conformance-case", "RD-001", "--conformance-report",
                     "out/r.json", "--conformance-report-md", "out/r.md", cwd=work, env=env)  # fmt: skip
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]
    assert error_lines(done) == [
        "ERROR: the JSON report could not be written to out/r.json: Is a directory",
        "ERROR: the Markdown summary could not be written to out/r.md: Is a directory",
    ]
    assert "Traceback" not in done.stdout + done.stderr
    assert sorted(os.listdir(work / "out")) == ["r.json", "r.md"]  # no r.json.partial
    assert not os.listdir(work / "out" / "r.json")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_report_on_a_full_device_is_one_line_and_the_device_stays(tmp_path: Path) -> None:
    # /dev/full refuses every write as a full disk does; the report was published over it
    done = run_suite("--conformance-case", "RD-001", "--conformance-report", "/dev/full",
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]
    assert error_lines(done) == [
        "ERROR: the JSON report could not be written to /dev/full: No space left on device"
    ]
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_harness_that_fails_the_handshake_still_gets_a_report(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    done = run_suite(
        "--harness-cmd", "no-such-command", "--conformance-report", str(path), cwd=tmp_path
    )
    assert done.returncode == 4
    data = report(path)
    assert data["complete"] is False
    assert str(data["reason"]).startswith(
        "the harness could not be started: --harness-cmd 'no-such-command' did not complete the handshake"
    )
    assert data["cases"] == []


def test_a_harness_by_registered_name(tmp_path: Path) -> None:
    done = run_suite("-q", "--harness", "reference", "--conformance-case", "TAX-001", cwd=tmp_path)
    assert done.returncode == 0, done.stdout


def test_the_hook_hands_a_harness_over_in_process(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    done = run_suite("-q", "-p", "tests.fixtures.hooked", "-k", "TAX", "--conformance-report",
                     str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout
    data = report(path)
    assert data["harness"]["name"] == "hooked-reference"  # type: ignore[index]
    assert data["run"]["kind"] == "object"  # type: ignore[index]


def test_the_ini_option_names_the_harness(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nconformance_harness = tests.fixtures.hooked:Incomplete\n"
    )
    done = run_suite("-q", cwd=tmp_path)
    assert done.returncode == 4
    assert (
        'harness "tests.fixtures.hooked:Incomplete": the tools capability'
        in done.stdout + done.stderr
    )


def test_the_option_beats_the_hook_and_the_hook_beats_the_ini(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nconformance_harness = tests.fixtures.hooked:Incomplete\n"
    )
    path = tmp_path / "r.json"
    hooked = run_suite("-q", "-p", "tests.fixtures.hooked", "--conformance-case", "TAX-001",
                       "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert hooked.returncode == 0, hooked.stdout
    assert report(path)["harness"]["name"] == "hooked-reference"  # type: ignore[index]
    option = run_suite(
        "-q", "-p", "tests.fixtures.hooked", "--harness", "reference", "--conformance-case", "TAX-001",
        "--conformance-report", str(path), cwd=tmp_path,
    )  # fmt: skip
    assert option.returncode == 0, option.stdout
    assert report(path)["harness"]["name"] == "reference"  # type: ignore[index]


def test_two_harnesses_at_once_are_refused(tmp_path: Path) -> None:
    done = run_suite("--harness", "reference", "--harness-cmd", "node x.mjs", cwd=tmp_path)
    assert done.returncode == 4
    assert error_lines(done) == [
        "ERROR: choose one harness: --harness-cmd and --harness were both given"
    ]


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        # An unset CI variable: "$MCP_CMD" is empty. The reference passing instead would be green.
        (["--harness-mcp", ""], "--harness-mcp is empty: name the harness to test"),
        (["--harness-cmd="], "--harness-cmd is empty: name the harness to test"),
        (["--harness", " "], "--harness is empty: name the harness to test"),
        (
            ["--harness-mcp-map", "map.toml"],
            "--harness-mcp-map applies only to --harness-mcp, not given",
        ),
    ],
)
def test_an_empty_harness_option_is_refused(tmp_path: Path, args: list[str], problem: str) -> None:
    path = tmp_path / "r.json"
    done = run_suite(*args, "--conformance-report", str(path), cwd=tmp_path)
    assert done.returncode == 4
    assert error_lines(done) == [f"ERROR: {problem}"]
    # checked before anything starts: the report says no case ran, and why
    data = report(path)
    assert (data["complete"], data["reason"], data["cases"], data["harness"]) == (
        False,
        f"the run did not start: {problem}",
        [],
        {},
    )


def test_unrelated_pytest_runs_are_left_alone(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("def test_ok():\n    assert True\n")
    done = run_pytest("-q", str(tmp_path / "test_plain.py"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert "harness conformance" not in done.stdout


def test_a_failing_test_beside_passing_cases_fails_the_run(tmp_path: Path) -> None:
    # Mutation testing runs the cases and the project's own tests in one pytest run: a failed
    # plain test must not be hidden behind a green conformance report.
    shutil.copytree(REPO / "conformance", tmp_path / "conformance")
    shutil.copy(REPO / "SPEC.md", tmp_path / "SPEC.md")
    (tmp_path / "test_plain.py").write_text("def test_broken():\n    assert False\n")
    case = "conformance/cases/test_taxonomy.py::test_code_stays_out_of_the_message"
    done = run_pytest("-q", case, "test_plain.py", "--conformance-in-process", cwd=tmp_path)
    assert done.returncode == 1, done.stdout
    assert "1 failed, 1 passed" in done.stdout


# -- selecting cases ---------------------------------------------------------------------------


def test_exact_selection_by_case_id(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    exact = run_suite("-q", "--conformance-case", "RD-004", "--conformance-case", "TAX-001",
                      "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert exact.returncode == 0, exact.stdout
    assert sorted(outcomes(report(path))) == ["RD-004", "TAX-001"]
    substring = run_suite("-q", "-k", "RD-004", "--conformance-report", str(path), cwd=tmp_path)
    assert sorted(outcomes(report(path))) == ["GRD-004", "RD-004"], substring.stdout


def test_the_case_list_works_for_any_harness_or_none(tmp_path: Path) -> None:
    for args in [[], ["--harness", "no.such.module:thing"], ["--harness-cmd", "no-such-command"]]:
        done = run_suite("-q", "--conformance-list-cases", *args, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        rows = [line for line in done.stdout.splitlines() if re.match(r"^\| [A-Z]+-\d{3} \|", line)]
        ids = [row.split("|")[1].strip() for row in rows]
        assert len(ids) == len(set(ids)) >= 200
        assert all(row.count("|") == 5 and row.split("|")[4].strip() for row in rows)
        assert all("`" in row.split("|")[3] for row in rows), "every case names its rules"


# -- reporting ------------------------------------------------------------------------------


def test_expected_failures_are_reported_as_such(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    done = run_suite(
        "-q", "--harness", "tests.mutants.derive_leaks_error:harness", "-k", "DRV",
        "--conformance-expect-fail", "DRV-001", "--conformance-expect-fail", "DRV-002",
        "--conformance-report", str(path), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout
    assert outcomes(report(path)) == {
        "DRV-001": "expected-fail",
        "DRV-002": "expected-fail",
        "DRV-003": "passed",
        "DRV-004": "passed",
        "DRV-005": "passed",
        "DRV-006": "passed",
    }


def test_a_case_that_passes_against_expectation_fails(tmp_path: Path) -> None:
    from conformance.baseline import make_baseline

    path = tmp_path / "report.json"
    done = run_suite("-q", "--conformance-case", "TAX-001", "--conformance-expect-fail", "TAX-001",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    words = (
        "[XPASS(strict)] TAX-001 declared as expected to fail, and passes: remove it from "
        "--conformance-expect-fail or the settings' expect-fail"
    )
    assert f"  TAX-001   {words}" in done.stdout
    # It fails the run, but the harness failed nothing: no level, no defect, no known failure.
    data = report(path)
    entry = case_of(data, "TAX-001")
    assert (entry["outcome"], entry["message"]) == ("failed", words)
    assert entry["levels"] == {"behaviour": "passed", "wording": "not-applicable"}
    assert data["rootCauses"] == []
    assert "root causes" not in done.stdout
    assert make_baseline(data)["failures"] == {}


def test_unknown_expected_failures_are_refused(tmp_path: Path) -> None:
    done = run_suite("-q", "--conformance-expect-fail", "NOPE-001", cwd=tmp_path)
    assert done.returncode == 4
    assert error_lines(done) == [
        "ERROR: unknown case ID(s) declared as expected to fail (--conformance-expect-fail): "
        "NOPE-001"
    ]
    (tmp_path / "pyproject.toml").write_text(
        '[tool.harness-conformance]\nexpect-fail = ["NOPE-2"]\n'
    )
    done = run_suite("-q", cwd=tmp_path)
    assert done.returncode == 4
    assert error_lines(done) == [
        "ERROR: unknown case ID(s) declared as expected to fail "
        "(the settings' expect-fail or -o): NOPE-2"
    ]


def test_failed_cases_are_listed_with_one_verdict_each(tmp_path: Path) -> None:
    done = run_suite("--harness", "tests.mutants.derive_leaks_error:harness", "-k", "DRV",
                     cwd=tmp_path, profile="triage")  # fmt: skip
    assert done.returncode == 1
    summary = done.stdout.split("= harness conformance =", 1)[1]
    assert re.search(r"^derive_messages\s+4\s+2\s+0\s+0\s+0\s+0\s+4/6\s+0/0$", summary, re.M), (
        summary
    )
    failed = re.findall(r"^  (DRV-\d{3}) +(.*)$", summary, re.M)
    assert [case for case, _ in failed] == ["DRV-001", "DRV-002"]
    # The one line keeps where the two differ: the leaked error, not the common start.
    assert failed[0][1] == (
        'derive_messages differs at character 316: was …r": true, '
        '"error": {"name": "FsE… where …r": true}] was expected; SPEC §2.3 {history.fold}'
    )
    assert "FAILED [DRV-001]" in done.stdout
    assert (
        "DRV-001: fold user, assistant and tool results into {role, …} messages, in order"
        in done.stdout
    )


def test_a_failure_shows_every_violation_and_the_calls_made(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    done = run_suite("--harness", fixture("non_atomic:harness"), "--conformance-case", "PUB-001",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    assert "PUB-001: 2 violations (behaviour first)" in done.stdout
    assert "calls made:" in done.stdout
    entry = case_of(report(path), "PUB-001")
    assert entry["levels"] == {"behaviour": "failed", "wording": "not-applicable"}
    verdicts = entry["verdicts"]
    assert isinstance(verdicts, list)
    assert verdicts[0]["verdict"].startswith(
        """write of "a.txt" accepted, but "b.txt" overwritten (12 → 12 bytes: "new content\\n"); """
        "SPEC §3.3 {fs.publish.atomic}: Writes publish atomically"
    )
    calls = entry["calls"]
    assert isinstance(calls, list)
    assert [(c["tool"], c.get("expected")) for c in calls] == [
        ("read", "accepted"),
        ("write", "accepted"),
        ("read", "accepted"),
        ("edit", "accepted"),
    ]
    assert calls[1]["result"]["isError"] is False
    assert calls[1]["changes"] == [
        '"a.txt" overwritten (12 → 12 bytes: "new content\\n")',
        '"b.txt" overwritten (12 → 12 bytes: "new content\\n")',
    ]


def test_the_case_id_is_shown_beside_each_verbose_result(tmp_path: Path) -> None:
    done = run_suite("-v", "-k", "REM-001 or TAX-002", cwd=tmp_path)
    assert re.search(
        r"test_remedy\.py::test_stale_version_gets_the_reread_remedy PASSED \[REM-001\]",
        done.stdout,
    )
    assert re.search(r"PASSED \[TAX-002\]", done.stdout)


def test_junit_xml_carries_the_case_id_and_no_verdict_data(tmp_path: Path) -> None:
    xml = tmp_path / "junit.xml"
    done = run_suite("-q", "--harness", "tests.mutants.derive_leaks_error:harness",
                     "--conformance-case", "DRV-001", f"--junitxml={xml}", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    text = xml.read_text()
    assert '<property name="case_id" value="DRV-001"' in text
    assert "conformance-data" not in text


def test_the_markdown_summary(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    done = run_suite("-q", "--harness", fixture("non_atomic:harness"), "--conformance-case",
                     "PUB-001", "--conformance-case", "GRD-001", "--conformance-report-md", str(path),
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    text = path.read_text()
    assert text.startswith("## Harness conformance: reference 0.1.0 — FAILED\n")
    assert "level: **behaviour + wording**" in text
    assert "| guards | 1 | 0 | 0 | 0 | 0 | 0 | 1/1 | 1/1 |" in text
    assert "| publication | 0 | 1 | 0 | 0 | 0 | 0 | 0/1 | 0/0 |" in text
    assert "- **PUB-001** (`fs.publish.atomic`)" in text
    assert """  - write of "a.txt" accepted, but "b.txt" overwritten""" in text


def test_a_run_stopped_early_is_incomplete_and_fails(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    done = run_suite("-x", "--harness", "tests.mutants.derive_leaks_error:harness", "-k", "DRV",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    data = report(path)
    assert data["complete"] is False
    assert data["reason"] == "the run stopped before every case ran (-x or --maxfail?)"
    assert outcomes(data)["DRV-005"] == "not-run"
    assert "INCOMPLETE: the run stopped before every case ran" in done.stdout


# -- snapshots ------------------------------------------------------------------------------


@pytest.fixture
def snapshot_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "snapshots"
    shutil.copytree(REPO / "snapshots", copy)
    return copy


def test_the_shipped_snapshots_are_found(tmp_path: Path) -> None:
    assert (default_snapshot_dir() / SNAPSHOT_FILE).is_file()


def test_updating_a_node_id_subset_never_deletes_snapshots(
    tmp_path: Path, snapshot_copy: Path
) -> None:
    before = names_in(snapshot_copy / SNAPSHOT_FILE)
    shutil.copytree(REPO / "conformance", tmp_path / "conformance")
    shutil.copy(REPO / "SPEC.md", tmp_path / "SPEC.md")
    done = run_pytest(
        ONE_SNAPSHOT,
        "--conformance-snapshots",
        str(snapshot_copy),
        "--snapshot-update",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout
    assert "1 snapshot passed." in done.stdout
    assert names_in(snapshot_copy / SNAPSHOT_FILE) == before
    assert len(before) == 18


def test_comparing_a_node_id_subset_does_not_fail_on_its_siblings(
    tmp_path: Path, snapshot_copy: Path
) -> None:
    shutil.copytree(REPO / "conformance", tmp_path / "conformance")
    shutil.copy(REPO / "SPEC.md", tmp_path / "SPEC.md")
    done = run_pytest(ONE_SNAPSHOT, "--conformance-snapshots", str(snapshot_copy), cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert "1 snapshot passed." in done.stdout


def test_updating_a_keyword_subset_never_deletes_snapshots(
    tmp_path: Path, snapshot_copy: Path
) -> None:
    before = (snapshot_copy / SNAPSHOT_FILE).read_bytes()
    done = run_suite(
        "-q",
        "-k",
        "SCN-001",
        "--conformance-snapshots",
        str(snapshot_copy),
        "--snapshot-update",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout
    assert (snapshot_copy / SNAPSHOT_FILE).read_bytes() == before


@pytest.mark.parametrize(
    ("how", "extra", "status"),
    [("INTERRUPTED_AT", (), pytest.ExitCode.INTERRUPTED), ("FAILED_AT", ("-x",), 1)],
    ids=["interrupted", "stopped-by-x"],
)
def test_a_run_cut_short_keeps_the_snapshots_of_the_cases_it_never_ran(
    tmp_path: Path, snapshot_copy: Path, how: str, extra: tuple[str, ...], status: int
) -> None:
    """syrupy called the transcripts after the cut unused: an interrupted run exited 3, not 2,
    and ``--snapshot-update`` deleted them (9 of 18, cut at SCN-010)."""
    before = (snapshot_copy / SNAPSHOT_FILE).read_bytes()
    for update in ((), ("--snapshot-update",)):
        done = run_suite("-q", "-p", "tests.fixtures.cut_short_at", *extra, *update,
                         "--conformance-snapshots", str(snapshot_copy), cwd=tmp_path,
                         env={how: "SCN-010"})  # fmt: skip
        assert done.returncode == status, done.stdout[-3000:] + done.stderr[-2000:]
        assert "9 snapshots passed. 9 snapshots unused." in done.stdout
        assert "snapshots deleted" not in done.stdout
        assert (snapshot_copy / SNAPSHOT_FILE).read_bytes() == before


def test_a_whole_run_reports_and_an_update_removes_an_obsolete_snapshot(
    tmp_path: Path, snapshot_copy: Path
) -> None:
    path = snapshot_copy / SNAPSHOT_FILE
    path.write_text(
        path.read_text() + "# name: test_scenario_transcript[retired]\n  'gone'\n# ---\n"
    )
    compare = run_suite("-q", "--conformance-snapshots", str(snapshot_copy), cwd=tmp_path)
    assert compare.returncode == 1
    assert "1 snapshot unused" in compare.stdout
    update = run_suite(
        "-q", "--conformance-snapshots", str(snapshot_copy), "--snapshot-update", cwd=tmp_path
    )
    assert update.returncode == 0, update.stdout
    assert "test_scenario_transcript[retired]" not in names_in(path)
    assert len(names_in(path)) == 18


def test_own_snapshot_directory_mode(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    (mine / "sub").mkdir(parents=True)  # a directory without the file: each transcript missing
    missing = run_suite("-q", "-k", "SCN", "--conformance-snapshots", str(mine), cwd=tmp_path)
    assert missing.returncode == 1
    assert f"SCN-001   fs-policy-reject: no transcript of fs-policy-reject is pinned in {mine}" in (
        missing.stdout
    )
    created = run_suite(
        "-q", "-k", "SCN", "--conformance-snapshots", str(mine), "--snapshot-update", cwd=tmp_path
    )
    assert created.returncode == 0, created.stdout
    assert (mine / SNAPSHOT_FILE).read_text() == (REPO / "snapshots" / SNAPSHOT_FILE).read_text()
    assert (
        run_suite("-q", "-k", "SCN", "--conformance-snapshots", str(mine), cwd=tmp_path).returncode
        == 0
    )


def test_a_snapshot_directory_that_cannot_be_one_is_bad_input(tmp_path: Path) -> None:
    """A file, or a misspelt directory, failed every scenario case as the harness's defect. A
    missing one is refused only where transcripts would be compared with it: an update makes
    it, and the behaviour level, a harness without ``loop`` or a run without a scenario case
    never reads it (they ran before, and an update there writes nothing to make it)."""
    afile = tmp_path / "afile"
    afile.write_text("hi\n")
    missing = tmp_path / "mysnapz"
    for path, extra, problem in (
        (afile, (), "is not a directory"),
        (afile, ("--snapshot-update",), "is not a directory"),
        (missing, (), "no such directory; --snapshot-update makes it and pins this harness's "
                      "transcripts there"),
    ):  # fmt: skip
        done = run_suite("-q", "-k", "SCN-002", "--conformance-snapshots", str(path), *extra,
                         cwd=tmp_path)  # fmt: skip
        assert done.returncode == 4, done.stdout[-2000:]
        assert done.stderr.strip().splitlines() == [
            f"ERROR: --conformance-snapshots {path}: {problem}"
        ]
    assert afile.read_text() == "hi\n"
    runs: list[tuple[str, ...]] = [
        ("-k", "SCN-002", "--conformance-level", "behaviour"),
        ("-k", "SCN-002", "--harness", "tests.fixtures.tools_only:harness"),
        ("-k", "GRD-001"),
    ]
    for options in runs:
        done = run_suite("-q", "--conformance-snapshots", str(missing), *options, cwd=tmp_path)
        assert done.returncode == 0, " ".join(options) + done.stdout[-2000:] + done.stderr[-2000:]
    assert not missing.exists()


def test_an_update_at_the_behaviour_level_says_it_wrote_nothing(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    done = run_suite("-q", "-k", "SCN", "--conformance-snapshots", str(mine), "--snapshot-update",
                     "--conformance-level", "behaviour", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    assert (
        "NOTE: --snapshot-update wrote nothing: the pinned transcripts are wording, which "
        "--conformance-level behaviour does not compare"
    ) in done.stdout
    assert not (mine / SNAPSHOT_FILE).exists()


def test_normative_snapshots_are_not_rewritten_with_another_harness(tmp_path: Path) -> None:
    done = run_suite(
        "-q", "-p", "tests.fixtures.hooked", "-k", "SCN-001", "--snapshot-update", cwd=tmp_path
    )
    assert done.returncode == 4
    assert (
        "--snapshot-update would rewrite the suite's normative snapshots"
        in done.stdout + done.stderr
    )


def test_a_harness_answering_reference_does_not_rewrite_the_normative_snapshots(
    tmp_path: Path,
) -> None:
    """The guard went by the name ``describe`` gives: a mutant of the reference (and any copy
    of its adapter) answers "reference", and its transcripts replaced the suite's own, so the
    reference itself then failed SCN-002…006. It runs on a copy of the package and its
    snapshots, so a broken guard cannot touch this checkout's."""
    copy = tmp_path / "checkout"
    shutil.copytree(REPO / "conformance", copy / "conformance",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    shutil.copytree(REPO / "snapshots", copy / "snapshots")
    shutil.copy(REPO / "SPEC.md", copy / "SPEC.md")
    shipped = copy / "snapshots" / SNAPSHOT_FILE
    before = shipped.read_bytes()
    done = run_suite("-q", "--harness", "tests.mutants.provider_remedy:harness", "-k", "SCN",
                     "--snapshot-update", cwd=copy)  # fmt: skip
    assert done.returncode == 4, done.stdout[-3000:]
    assert (
        "--snapshot-update would rewrite the suite's normative snapshots with the output of "
        'harness "tests.mutants.provider_remedy:harness"; pass --conformance-snapshots DIR'
    ) in done.stdout + done.stderr
    assert shipped.read_bytes() == before


def test_a_copy_of_the_reference_package_does_not_rewrite_the_normative_snapshots(
    tmp_path: Path,
) -> None:
    """``--harness reference`` imports the first ``reference`` on the path: run from a project
    that holds a copy of the package (as the README invites), the copy's transcripts replaced
    the suite's own. The suite's own reference, by either name, may still update them."""
    suite, project = tmp_path / "suite", tmp_path / "project"
    for part in ("conformance", "reference"):
        shutil.copytree(REPO / part, suite / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "snapshots", suite / "snapshots")
    shutil.copy(REPO / "SPEC.md", suite / "SPEC.md")
    shutil.copytree(REPO / "reference", project / "reference",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    shipped = suite / "snapshots" / SNAPSHOT_FILE
    before = shipped.read_bytes()
    env = {"PYTHONPATH": str(suite)}
    copied = run_suite("-q", "-k", "SCN-001", "--snapshot-update", "--harness", "reference",
                       cwd=project, env=env)  # fmt: skip
    assert copied.returncode == 4, copied.stdout[-3000:]
    assert 'with the output of harness "reference"; pass --conformance-snapshots DIR' in (
        copied.stdout + copied.stderr
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name in ("reference", "reference.adapter:ReferenceHarness"):
        own = run_suite("-q", "-k", "SCN-001", "--snapshot-update", "--harness", name,
                        cwd=elsewhere, env=env)  # fmt: skip
        assert own.returncode == 0, name + own.stdout[-3000:] + own.stderr[-2000:]
    assert shipped.read_bytes() == before


def test_the_diff_shows_every_changed_model_visible_string(
    tmp_path: Path, snapshot_copy: Path
) -> None:
    changed = tmp_path / "changed"
    shutil.copytree(snapshot_copy, changed)
    path = changed / SNAPSHOT_FILE
    path.write_text(
        path.read_text().replace("— read the file, then retry", "— please read the file first")
    )
    lines = diff_dirs(snapshot_copy, changed)
    assert f"{SNAPSHOT_FILE}::test_scenario_transcript[fs-policy-reject] call_1 result[0]" in lines
    assert (
        '  - \'Error: edit requires reading "{{cwd}}/settings.txt" first'
        " — read the file, then retry'" in lines
    )
    assert (
        '  + \'Error: edit requires reading "{{cwd}}/settings.txt" first'
        " — please read the file first'" in lines
    )
    assert diff_dirs(snapshot_copy, snapshot_copy) == []


# -- secrets and normalization --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("-----BEGIN RSA PRIVATE KEY-----\nMII", "a private key block"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----", "a private key block"),
        ("key sk-proj-abcdefghijklmnopqrstuv1234", "an API key shaped like sk-…"),
        ("AKIAIOSFODNN7EXAMPLE in a line", "an AWS access key id (AKIA…)"),
        ("ghp_" + "a" * 36, "a GitHub token (ghp_…)"),
        ("xoxb-1234567890-abcdef", "a Slack token (xox?-…)"),
    ],
)
def test_credential_shapes_are_found(text: str, kind: str) -> None:
    assert find_secret(text, canaries=()) == kind


@pytest.mark.parametrize(
    "text",
    [
        "task-list done",
        "risk-assessment",
        "AKIA too short",
        "ghp_short",
        "xoxb",
        "a normal transcript line",
    ],
)
def test_ordinary_text_is_not_a_secret(text: str) -> None:
    assert find_secret(text, canaries=()) is None


def test_a_secret_snapshot_is_refused_by_kind_never_by_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", "s3cr3t-v4lue-123")
    with pytest.raises(SecretInSnapshot) as info:
        check_snapshot('{"text": "using s3cr3t-v4lue-123"}', "snapshots/x.ambr::case")
    message = str(info.value)
    assert message == (
        "snapshot snapshots/x.ambr::case holds a secret: "
        "the value of a secret environment variable (refusing to compare or write it)"
    )
    assert "s3cr3t" not in message
    canary = plant_canary()
    with pytest.raises(SecretInSnapshot, match="a planted canary"):
        check_snapshot(f"…{canary}…", "somewhere")


def test_short_or_unmarked_environment_values_are_not_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SHORT_TOKEN", "abc")
    monkeypatch.setenv("PLAIN_SETTING", "long-enough-value")
    check_snapshot("abc long-enough-value", "x")


def test_a_variable_is_secret_by_any_marker_anywhere_in_its_name() -> None:
    environ = {
        "OPENAI_API_KEY": "sk-0123456789",
        "github_token": "ghp-abcdefgh",  # any case
        "MYSECRETSTUFF": "hidden-value",  # anywhere in the name
        "DB_PASSWORD": "short",  # under eight characters
        "HOME": "/root/not-a-secret",
        "KEYBOARD_LAYOUT": "us-international",  # a marker is a marker
    }
    assert secret_values(environ) == {
        "sk-0123456789", "ghp-abcdefgh", "hidden-value", "us-international",
    }  # fmt: skip


def test_normalize_replaces_root_realpath_and_session_id(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    records: list[dict[str, object]] = [
        {"type": "session", "version": 1, "id": "abc-123", "cwd": str(link)},
        {
            "type": "x",
            "data": {"a": f"{link}/f and {real}/g", "b": f"{link}2/other", "c": "abc-123!"},
        },
    ]
    assert normalize(records, str(link)) == [
        {"type": "session", "version": 1, "id": "{{sessionId}}", "cwd": "{{cwd}}"},
        {
            "type": "x",
            "data": {"a": "{{cwd}}/f and {{cwd}}/g", "b": f"{link}2/other", "c": "{{sessionId}}!"},
        },
    ]
    assert render([{"b": 1, "a": "é"}]) == '{"a": "é", "b": 1}\n'


def test_a_transcript_never_shows_its_records() -> None:
    assert repr(Transcript([{"secret": "x"}], "/w", "here")) == "Transcript(1 records for here)"
