"""The child process contract (docs/child-process.md): where a harness command is found, how it
starts, and how one case's stuck call stays that case's.

Time is driven, never measured: a fixture that blocks meets a short timeout, and the tests
assert what the run reports, not how long it took.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import threading
from pathlib import Path

import pytest

from conformance.harness.loading import absolute_words
from conformance.harness.stdio import Stdio, Trace
from conformance.harness.transport import HarnessCallError
from tests.suite import REPO, case_of, error_lines, fixture, outcomes, report, run_suite

ENV = {**os.environ, "PYTHONPATH": str(REPO)}
PYTHON = shlex.quote(sys.executable)


def _python_cmd(program: str) -> str:
    return f"{PYTHON} -c {shlex.quote(program)}"


# -- where the command is found ---------------------------------------------------------------


def test_relative_paths_in_the_command_are_the_callers(tmp_path: Path) -> None:
    (tmp_path / "adapters").mkdir()
    (tmp_path / "adapters" / "h.mjs").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "harness.mjs").write_text("")
    (tmp_path / "node").write_text("")
    words = ["node", "adapters/h.mjs", "./adapters", "-m", "pkg", "--flag=adapters/h.mjs",
             "missing/file.js", "/abs/x.js", "harness.mjs", "missing.js"]  # fmt: skip
    assert absolute_words(words, str(tmp_path)) == [
        "node",  # the program: found on PATH, as a shell would, even with a file of that name
        str(tmp_path / "adapters" / "h.mjs"),
        str(tmp_path / "adapters"),
        "-m",
        "pkg",  # no slash: a module, a package's directory, a word
        "--flag=adapters/h.mjs",  # an option's value is the harness's to resolve
        "missing/file.js",
        "/abs/x.js",
        "harness.mjs",  # no slash: a wrapper (env -C, docker -w) may mean another file
        "missing.js",
    ]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_settings_node_command_works_from_the_scripts_directory(tmp_path: Path) -> None:
    # README's settings example, `harness-cmd = "node harness.mjs"`, beside the script.
    work = tmp_path / "work"
    (work / "example").mkdir(parents=True)
    shutil.copy(REPO / "adapters" / "node" / "index.mjs", work)
    shutil.copy(REPO / "adapters" / "node" / "example" / "harness.mjs", work / "example")
    (work / "example" / "pyproject.toml").write_text(
        '[tool.harness-conformance]\nharness-cmd = "node ./harness.mjs"\nlevel = "behaviour"\n'
    )
    done = run_suite("--conformance-case", "GRD-001", cwd=work / "example")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
    # Without the slash the name is left as written; the failed start says how to name it.
    bare = run_suite("--harness-cmd", "node harness.mjs", "--conformance-case", "GRD-001",
                     cwd=work / "example")  # fmt: skip
    assert bare.returncode == 4
    assert error_lines(bare)[0].startswith(
        "ERROR: --harness-cmd 'node harness.mjs' did not complete the handshake (the harness "
        "runs in a directory of its own, and 'harness.mjs' is a file where you started: write "
        "./harness.mjs to name it): "
    ), error_lines(bare)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_readmes_node_command_works_from_the_repo_root(tmp_path: Path) -> None:
    path = tmp_path / "R.json"
    done = run_suite(
        "--harness-cmd", "node adapters/node/example/harness.mjs", "--conformance-level",
        "behaviour", "--conformance-case", "GRD-001", "--conformance-case", "SBX-010",
        "--conformance-report", str(path), "--conformance-basetemp", str(tmp_path / "base"),
        cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert set(outcomes(report(path)).values()) <= {"passed", "not-applicable"}


# -- start-up ---------------------------------------------------------------------------------

FIFTEEN_LINES_THEN_EXIT = (
    "import sys\n"
    "for n in range(1, 16):\n"
    "    print(f'startup line {n}', file=sys.stderr)\n"
    "sys.exit(1)\n"
)


def test_a_failed_start_shows_what_the_child_wrote_to_stderr(tmp_path: Path) -> None:
    done = run_suite("--harness-cmd", _python_cmd(FIFTEEN_LINES_THEN_EXIT), cwd=tmp_path)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    [error] = error_lines(done)
    assert "did not complete the handshake" in error
    assert "exited with status 1; the last lines of its stderr:" in error
    output = done.stdout + done.stderr
    # The last twelve lines, below the one error line.
    for n in range(4, 16):
        assert f"    startup line {n}\n" in output
    assert "startup line 3\n" not in output


SILENT = "import time\ntime.sleep(3600)\n"


def test_a_harness_that_cannot_answer_describe_in_time_stops_the_run(tmp_path: Path) -> None:
    done = run_suite("--harness-cmd", _python_cmd(SILENT), "--conformance-handshake-timeout",
                     "0.5", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    [error] = error_lines(done)
    assert "describe did not answer within 0.5 s" in error
    assert "--conformance-handshake-timeout" in error


NO_PROTOCOL = (
    "import json, sys\n"
    "request = json.loads(sys.stdin.readline())\n"
    "answer = {'name': 'h', 'version': '1', 'language': 'py', 'capabilities': ['tools']}\n"
    "print(json.dumps({'id': request['id'], 'result': answer}), flush=True)\n"
    "sys.stdin.read()\n"
)


def test_a_handshake_without_the_protocol_field_says_it_is_missing(tmp_path: Path) -> None:
    done = run_suite("--harness-cmd", _python_cmd(NO_PROTOCOL), cwd=tmp_path)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    [error] = error_lines(done)
    assert error.endswith(": the handshake must answer protocol 1, got no protocol field"), error


def test_a_deadline_passing_during_start_up_leaves_every_case_not_run(tmp_path: Path) -> None:
    path = tmp_path / "R.json"
    done = run_suite("--harness-cmd", _python_cmd(SILENT), "--conformance-deadline", "0.5",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert error_lines(done) == []
    data = report(path)
    assert data["complete"] is False
    assert data["reason"] == "the run's deadline (0.5 s) passed while the harness started"
    found = outcomes(data)
    assert len(found) > 200
    assert set(found.values()) == {"not-run"}


def test_a_fresh_child_is_greeted_before_its_first_call(tmp_path: Path) -> None:
    trace = Trace(str(tmp_path / "trace.jsonl"), {})
    transport = Stdio(
        [sys.executable, "-m", "conformance.serve", "--harness", "reference"],
        label="reference", env=ENV, timeout_s=30, handshake_timeout_s=30, trace=trace,
    )  # fmt: skip
    try:
        transport.call("describe", {})
        transport.close()
        # A restarted child owes the handshake (SPEC {proto.handshake}) before anything else.
        answer = transport.call("make_error", {"spec": {"kind": "Exception", "message": "m"}})
        assert isinstance(answer, dict)
        assert "handle" in answer
    finally:
        transport.close()
        trace.close()
    records = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    sent = [json.loads(r["line"])["method"] for r in records if r["kind"] == "send"]
    assert sent == ["describe", "describe", "make_error"]


# -- one case's stuck call is that case's -----------------------------------------------------


def test_a_session_of_a_stopped_child_is_never_sent_to_the_next(tmp_path: Path) -> None:
    transport = Stdio(
        [sys.executable, "-m", "conformance.serve", "--harness", "reference"],
        label="reference", env=ENV, timeout_s=30,
    )  # fmt: skip
    try:
        transport.call("describe", {})
        session = transport.call("open_workspace", {"root": str(tmp_path), "options": {}})
        transport.close()
        with pytest.raises(HarnessCallError) as stale:
            transport.call("close_workspace", {"session": session})
        assert str(stale.value) == (
            f"close_workspace not made: session {session!r} belonged to a harness process "
            "that was stopped by the suite"
        )
    finally:
        transport.close()


def test_an_abandoned_call_is_failed_with_the_reason_and_the_next_call_is_answered(
    tmp_path: Path,
) -> None:
    transport = Stdio(
        [sys.executable, "-m", "conformance.serve", "--harness", fixture("hostile:hangs")],
        label="hangs", env=ENV, timeout_s=3600,
    )  # fmt: skip
    failures: list[str] = []
    try:
        session = transport.call("open_workspace", {"root": str(tmp_path), "options": {}})
        sent = threading.Event()

        def stuck() -> None:
            sent.set()
            try:
                transport.call("call_tool", {"session": session, "name": "read",
                                             "arguments": {"file_path": "a.txt"}})  # fmt: skip
            except HarnessCallError as exc:
                failures.append(str(exc))

        worker = threading.Thread(target=stuck)
        worker.start()
        sent.wait()
        while not transport.abandon("CASE-001 ended with a call still waiting for its answer"):
            pass  # until the call is on its way
        worker.join()
        assert failures == [
            'call_tool("read", {"file_path": "a.txt"}) failed: the harness was stopped: CASE-001 '
            "ended with a call still waiting for its answer"
        ]
        assert transport.abandon("nothing waits now") is False
        assert transport.call("describe", {})["name"] == "reference"
    finally:
        transport.close()


def test_a_call_that_times_out_is_the_headline_of_its_case_not_an_unknown_handle(
    tmp_path: Path,
) -> None:
    path = tmp_path / "R.json"
    done = run_suite("--harness", fixture("hostile:blocks_on_fifos"), "--conformance-timeout", "2",
                     "--conformance-case", "PRV-004", "--conformance-case", "PRV-006",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:]
    data = report(path)
    assert outcomes(data) == {"PRV-004": "failed", "PRV-006": "passed"}
    message = str(case_of(data, "PRV-004")["message"])
    assert (
        'call_tool("read", {"file_path": "pipe"}) did not answer within 2.0 s (--conformance-timeout)'
        in message
    )
    assert "unknown" not in done.stdout
    assert "ERROR at teardown" not in done.stdout


def test_a_call_a_case_gives_up_on_never_fails_the_next_case(tmp_path: Path) -> None:
    # PRV-004 waits 20 s for each call itself; the per-call timeout is far longer, so without
    # the suite stopping the harness when the case ends, the stuck read would time out in the
    # middle of PRV-006.
    path = tmp_path / "R.json"
    done = run_suite("--harness", fixture("hostile:blocks_on_fifos"), "--conformance-timeout", "600",
                     "--conformance-case", "PRV-004", "--conformance-case", "PRV-006",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:]
    data = report(path)
    assert outcomes(data) == {"PRV-004": "failed", "PRV-006": "passed"}
    assert 'read {"file_path": "pipe"} blocked for 20 s' in str(case_of(data, "PRV-004")["message"])
    # The blocked call is a verdict under the rule it broke, not a bare assertion.
    listed = data["rootCauses"]
    assert isinstance(listed, list)
    causes = {c["signature"] for c in listed if isinstance(c, dict)}
    assert "fs.nonblocking · not-a-file · blocks" in causes, causes


# -- a second instance of the harness ----------------------------------------------------------

STARTS_WITH_A_LOG = (
    "import os, sys; open(f'started-{os.getpid()}.log', 'w').close(); "
    "from conformance.harness.serve import main; sys.exit(main(['--harness', 'reference']))"
)


def test_the_second_instance_is_started_and_greeted_with_the_first_only_when_a_case_needs_it(
    tmp_path: Path,
) -> None:
    """PUB-010 races two processes: the second starts with the first and is greeted before
    the first case, so what it writes as it starts (a log here) lands before any case's call."""
    out, trace = tmp_path / "r.json", tmp_path / "t.jsonl"
    done = run_suite("--harness-cmd", _python_cmd(STARTS_WITH_A_LOG), "--conformance-case", "PUB-010",
                     "--conformance-case", "RD-001", "--conformance-report", str(out),
                     "--conformance-trace", str(trace), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout
    assert outcomes(report(out)) == {"PUB-010": "passed", "RD-001": "passed"}
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    starts = [
        i for i, e in enumerate(events) if e["kind"] == "event" and e["line"].startswith("started ")
    ]
    first_of_a_case = next(i for i, e in enumerate(events) if e["case"] is not None)
    assert len(starts) == 2
    assert max(starts) < first_of_a_case
    greetings = [
        i for i, e in enumerate(events) if e["kind"] == "send" and '"describe"' in e["line"]
    ]
    assert len(greetings) == 2
    assert max(greetings) < first_of_a_case
    # Without PUB-010 no second instance starts at all.
    trace.unlink()
    done = run_suite("--harness-cmd", _python_cmd(STARTS_WITH_A_LOG), "--conformance-case", "RD-001",
                     "--conformance-trace", str(trace), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout
    assert trace.read_text(encoding="utf-8").count("started ") == 1
