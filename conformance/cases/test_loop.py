"""SPEC §2.2 and §2.4: the session log a harness's real loop writes for a scripted model."""

from __future__ import annotations

import os
from pathlib import Path

from conformance.cases import case, needs
from conformance.causes import loop_error_signature, subject_signature
from conformance.client import Client
from conformance.display import show
from conformance.harness.contract import Json, JsonObject
from conformance.spec import Wording
from conformance.verdict import Judge

pytestmark = needs("loop")

READ_A = {"name": "read", "arguments": {"file_path": "a.txt"}}


def play(
    client: Client,
    root: Path,
    steps: list[Json],
    *,
    workspace: dict[str, str] | None = None,
    prompt: str = "go",
    options: JsonObject | None = None,
) -> list[JsonObject]:
    """Run an inline scenario; return its events (the log without the header)."""
    return client.scenario(
        str(root), inline(steps, workspace=workspace, prompt=prompt, options=options)
    )[1:]


def _texts(result: JsonObject, root: Path) -> list[str]:
    """The text blocks of a ``tool/result``, its workspace root written ``{root}``."""
    blocks = result.get("content")
    return [
        str(block.get("text")).replace(str(root), "{root}")
        for block in (blocks if isinstance(blocks, list) else [])
        if isinstance(block, dict)
    ]


def fresh(root: Path, run: int) -> Path:
    """The root of a case's ``run``-th scenario: an empty directory of its own ({scenario.workspace}).

    The first is the workspace itself; each later one a new directory inside it, so a harness
    that creates the workspace files exclusively never meets an earlier run's.
    """
    if run == 0:
        return root
    again = root / f"run-{run}"
    again.mkdir()
    return again


def inline(
    steps: list[Json],
    *,
    workspace: dict[str, str] | None = None,
    prompt: str = "go",
    options: JsonObject | None = None,
) -> JsonObject:
    """An inline scenario of these steps (``a.txt`` holds ``alpha`` unless a workspace is given)."""
    scenario: JsonObject = {
        "name": "inline",
        "workspace": dict(workspace or {"a.txt": "alpha\n"}),
        "prompt": prompt,
        "steps": steps,
    }
    if options:
        scenario["options"] = options
    return scenario


def flags(events: list[JsonObject]) -> list[Json]:
    """The error flags of a run's results, in the shape ``Judge.transcript`` compares."""
    return [
        ["tool/result", "error" if r.get("isError") else "ok"] for r in of(events, "tool/result")
    ]


def of(events: list[JsonObject], kind: str) -> list[JsonObject]:
    """The data of every event of one type."""
    return [e["data"] for e in events if e["type"] == kind]


@case("LOOP-001", rules=["loop.prompt", "loop.envelope"])
def test_prompt_opens_the_turn(client: Client, root: Path, judge: Judge) -> None:
    """record the prompt verbatim as a user/message of text blocks, in turn 1"""
    for run, prompt in enumerate(["Do the thing.", "  padded prompt \n\t", ""]):
        events = play(client, fresh(root, run), [{"text": "DONE"}], prompt=prompt)
        judge.equal(f"the first event for the prompt {show(prompt)}", events[0],
                    {"type": "user/message", "data": {"turn": 1, "content": [{"type": "text", "text": prompt}]}},
                    rule="loop.prompt")  # fmt: skip


@case("LOOP-002", rules=["loop.completed", "script.text"])
def test_final_answer_completes_the_turn(client: Client, root: Path, judge: Judge) -> None:
    """end a turn with a text answer: assistant/message then turn/end completed"""
    events = play(client, root, [{"text": "DONE"}])
    judge.equal("the events after the prompt", events[1:], [
        {"type": "assistant/message", "data": {"turn": 1, "step": 1, "content": [{"type": "text", "text": "DONE"}]}},
        {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ], rule="loop.completed")  # fmt: skip


@case("LOOP-003", rules=["loop.order"])
def test_calls_then_results_in_order(client: Client, root: Path, judge: Judge) -> None:
    """append the assistant/message, every tool/call in order, then each tool/result in order"""
    calls = [
        READ_A,
        {"name": "read", "arguments": {"file_path": "missing"}},
        {"name": "nope", "arguments": {}},
    ]
    events = play(client, root, [{"tool_calls": calls}, {"text": "DONE"}])
    judge.equal("the event types", [e["type"] for e in events], [
        "user/message", "assistant/message", "tool/call", "tool/call", "tool/call",
        "tool/result", "tool/result", "tool/result", "assistant/message", "turn/end",
    ], rule="loop.order")  # fmt: skip
    judge.equal(
        "the tool/call names",
        [c["name"] for c in of(events, "tool/call")],
        ["read", "read", "nope"],
        rule="loop.order",
    )
    judge.equal("the tool/result call ids", [r["callId"] for r in of(events, "tool/result")],
                ["call_1", "call_2", "call_3"], rule="loop.order")  # fmt: skip


@case("LOOP-004", rules=["loop.numbering"])
def test_call_ids_count_across_the_run(client: Client, root: Path, judge: Judge) -> None:
    """number calls call_1, call_2, … across the whole run, and steps from 1 per response"""
    steps: list[Json] = [
        {"tool_calls": [READ_A, READ_A]},
        {"tool_calls": [READ_A]},
        {"text": "DONE"},
    ]
    events = play(client, root, steps)
    judge.equal("(callId, step, turn) of each tool/call", [(c["callId"], c["step"], c["turn"]) for c in of(events, "tool/call")],
                [("call_1", 1, 1), ("call_2", 1, 1), ("call_3", 2, 1)], rule="loop.numbering")  # fmt: skip
    judge.equal("the steps of the assistant messages", [m["step"] for m in of(events, "assistant/message")], [1, 2, 3],
                rule="loop.numbering")  # fmt: skip


@case("LOOP-005", rules=["script.tool-calls", "loop.envelope", "loop.tool-use-id"])
def test_raw_arguments_and_parsed_input(client: Client, root: Path, judge: Judge) -> None:
    """record the raw argument text in tool/call, and the parsed input (or raw text) in tool_use"""
    calls = [
        {"name": "read", "arguments": {"file_path": "a.txt", "limit": 5}},
        {"name": "read", "arguments": '{"file_path":  "a.txt"}'},
        {"name": "read", "arguments": "{broken"},
    ]
    events = play(client, root, [{"tool_calls": calls}, {"text": "DONE"}])
    judge.equal("the raw arguments of each tool/call", [c["arguments"] for c in of(events, "tool/call")],
                ['{"file_path":"a.txt","limit":5}', '{"file_path":  "a.txt"}', "{broken"], rule="script.tool-calls")  # fmt: skip
    judge.equal("the tool_use blocks", of(events, "assistant/message")[0]["content"], [
        {"type": "tool_use", "id": "call_1", "name": "read", "input": {"file_path": "a.txt", "limit": 5}},
        {"type": "tool_use", "id": "call_2", "name": "read", "input": {"file_path": "a.txt"}},
        {"type": "tool_use", "id": "call_3", "name": "read", "input": "{broken"},
    ], rule="loop.envelope")  # fmt: skip


@case("LOOP-006", rules=["loop.result-error"])
def test_results_carry_the_structured_error(
    client: Client, root: Path, judge: Judge, w: Wording
) -> None:
    """copy the structured error into tool/result, and omit it when there is none"""
    steps: list[Json] = [
        {"tool_calls": [READ_A, {"name": "read", "arguments": {"file_path": "x"}}]},
        {"text": "D"},
    ]
    ok, failed = of(play(client, root, steps), "tool/result")
    judge.true(
        "error" not in ok,
        f"a successful tool/result carries an error: {show(ok.get('error'))}",
        rule="loop.result-error",
    )
    if client.profile.has("toolCodes"):
        want = {"name": "FsError", "code": "FS_NOT_FOUND"}
        judge.equal("(isError, error) of the failed tool/result", (failed.get("isError"), failed.get("error")),
                    (True, want), rule="loop.result-error",
                    signature=loop_error_signature("read", failed.get("error"), want, "loop.result-error")
                    if failed.get("isError") is True else None)  # fmt: skip
    else:  # its results carry no codes (SPEC §6.2): there is no error to copy, only the flag
        judge.equal("the error flag of the failed tool/result", failed.get("isError"), True,
                    rule="loop.result-error")  # fmt: skip
    judge.equal("the content of the failed tool/result", failed.get("content"),
                [{"type": "text", "text": w.fs_error("fs.read_missing", p=f"{root}/x")}], rule="loop.result-error", level="wording")  # fmt: skip


@case("LOOP-007", rules=["loop.failure-value", "script.fail", "loop.failed-step"])
def test_returned_failure_value(client: Client, root: Path, judge: Judge) -> None:
    """turn a returned failure value into an error event with code UNKNOWN, ending the turn"""
    events = play(client, root, [{"tool_calls": [READ_A]}, {"fail": {"code": 500, "detail": "no"}}])
    message = '{"code":500,"detail":"no"}'
    error: JsonObject = {"turn": 1, "step": 2, "message": message}
    judge.equal("the last two events", events[-2:], [
        {"type": "error", "data": {**error, "code": "UNKNOWN"}},
        {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "error", "message": message, "code": "UNKNOWN"}}},
    ], rule="loop.failure-value",
        signature=subject_signature("loop.failure-value", "failure-uncoded")
        if events[-2:-1] == [{"type": "error", "data": error}] else None)  # fmt: skip


@case("LOOP-008", rules=["loop.failure", "script.raise"])
def test_raised_provider_error(client: Client, root: Path, judge: Judge) -> None:
    """record a raised LlmError with its message and code, ending the turn"""
    events = play(
        client, root, [{"raise": {"message": "slow down", "code": "RATE_LIMIT", "status": 429}}]
    )
    judge.equal("the last two events", events[-2:], [
        {"type": "error", "data": {"turn": 1, "step": 1, "message": "slow down", "code": "RATE_LIMIT"}},
        {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "error", "message": "slow down", "code": "RATE_LIMIT"}}},
    ], rule="loop.failure")  # fmt: skip


@case("LOOP-009", rules=["script.out-of-steps", "loop.failed-step"])
def test_script_runs_out(client: Client, root: Path, judge: Judge, w: Wording) -> None:
    """fail with EMPTY_RESPONSE 'scripted model has no more steps' when the script runs out"""
    events = play(client, root, [{"tool_calls": [READ_A]}])
    judge.equal("the error events", of(events, "error"),
                [{"turn": 1, "step": 2, "message": w("loop.out_of_steps"), "code": "EMPTY_RESPONSE"}],
                rule="script.out-of-steps")  # fmt: skip


@case("LOOP-010", rules=["script.external", "script.external.write"])
def test_external_steps_take_no_step(client: Client, root: Path, judge: Judge) -> None:
    """apply external steps between responses without giving them a step number"""
    steps: list[Json] = [
        {"tool_calls": [READ_A]},
        {"external": [{"op": "write", "path": "a.txt", "content": "changed!\n"}]},
        {
            "tool_calls": [
                {
                    "name": "edit",
                    "arguments": {"file_path": "a.txt", "old_string": "alpha", "new_string": "x"},
                }
            ]
        },
        {"text": "DONE"},
    ]
    events = play(client, root, steps)
    judge.equal("the steps of the assistant messages", [m["step"] for m in of(events, "assistant/message")], [1, 2, 3],
                rule="script.external")  # fmt: skip
    judge.transcript("the error flags of the results (the edit after the external write is stale)",
                     flags(events), [["tool/result", "ok"], ["tool/result", "error"]],
                     script=inline(steps), rule="script.external.write")  # fmt: skip
    if client.profile.has("toolCodes"):  # else the flag above is all its results say
        second, want = (
            of(events, "tool/result")[1].get("error"),
            {"name": "FsError", "code": "FS_STALE_VERSION"},
        )
        judge.equal("the second result's error", second, want, rule="script.external.write",
                    signature=loop_error_signature("edit", second, want, "script.external.write"))  # fmt: skip
    judge.equal(
        "a.txt after the run",
        (root / "a.txt").read_bytes(),
        b"changed!\n",
        rule="script.external.write",
    )


@case("LOOP-011", rules=["log.header"])
def test_session_header(client: Client, root: Path, judge: Judge) -> None:
    """start the log with {"type": "session", "version": 1, "id", "cwd": <root>}"""
    header = client.scenario(
        str(root), {"name": "h", "workspace": {}, "prompt": "p", "steps": [{"text": "ok"}]}
    )[0]
    judge.equal(
        "the header's keys", sorted(header), ["cwd", "id", "type", "version"], rule="log.header"
    )
    judge.true(
        isinstance(header.get("id"), str) and bool(header["id"]),
        f"the session id is {show(header.get('id'))}",
        rule="log.header",
    )
    judge.true(
        header.get("cwd") in (str(root), str(root.resolve())),
        f"the header's cwd is {show(header.get('cwd'))}",
        rule="log.header",
    )


@case("LOOP-012", rules=["script.external.write", "script.external.delete", "script.external.touch",
                         "script.external.same-size"])  # fmt: skip
def test_external_operations(client: Client, root: Path, judge: Judge) -> None:
    """apply external write, delete, touch and same_size_rewrite to the workspace"""
    workspace = {"gone.txt": "x\n", "touched.txt": "t\n", "same.txt": "bbb\n", "a.txt": "a\n"}
    steps: list[Json] = [
        {"external": [
            {"op": "write", "path": "sub/new.txt", "content": "new\n"},
            {"op": "delete", "path": "gone.txt"},
            {"op": "touch", "path": "touched.txt"},
            {"op": "same_size_rewrite", "path": "same.txt", "content": "BBB\n"},
        ]},
        {"text": "DONE"},
    ]  # fmt: skip
    events = play(client, root, steps, workspace=workspace)
    judge.equal(
        "the turn's end",
        of(events, "turn/end"),
        [{"turn": 1, "reason": {"kind": "completed"}}],
        rule="script.external",
    )
    judge.equal(
        "sub/new.txt",
        (root / "sub" / "new.txt").read_bytes(),
        b"new\n",
        rule="script.external.write",
    )
    judge.true(
        not (root / "gone.txt").exists(),
        "gone.txt still exists after an external delete",
        rule="script.external.delete",
    )
    judge.equal(
        "touched.txt", (root / "touched.txt").read_bytes(), b"t\n", rule="script.external.touch"
    )
    judge.equal(
        "same.txt", (root / "same.txt").read_bytes(), b"BBB\n", rule="script.external.same-size"
    )


@case("LOOP-013", rules=["loop.text-and-calls"])
def test_text_and_tool_calls_in_one_response(client: Client, root: Path, judge: Judge) -> None:
    """record text then tool_use blocks in one assistant/message, and go on to the next step"""
    events = play(
        client, root, [{"text": "Let me look.", "tool_calls": [READ_A]}, {"text": "DONE"}]
    )
    first = of(events, "assistant/message")[0]
    judge.equal("the first assistant message", first["content"], [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "call_1", "name": "read", "input": {"file_path": "a.txt"}},
    ], rule="loop.text-and-calls")  # fmt: skip
    judge.equal(
        "the steps",
        [m["step"] for m in of(events, "assistant/message")],
        [1, 2],
        rule="loop.text-and-calls",
    )


@case("LOOP-014", rules=["loop.failed-step", "script.external"])
def test_a_failed_step_after_external_steps(client: Client, root: Path, judge: Judge) -> None:
    """number a failed step as the response it replaced, external steps not counted"""
    steps: list[Json] = [{"tool_calls": [READ_A]}, {"external": [{"op": "delete", "path": "a.txt"}]},
                         {"raise": {"message": "boom", "code": "SERVER"}}]  # fmt: skip
    judge.equal("the step of the error event", [e["step"] for e in of(play(client, root, steps), "error")], [2],
                rule="loop.failed-step")  # fmt: skip


@case("LOOP-015", rules=["script.external.timing", "script.out-of-steps"])
def test_when_external_steps_apply(client: Client, root: Path, judge: Judge) -> None:
    """never apply external steps after the final answer; apply them before the script runs out"""
    play(
        client,
        root,
        [{"text": "DONE"}, {"external": [{"op": "write", "path": "late.txt", "content": "x"}]}],
    )
    judge.true(not (root / "late.txt").exists(), "an external step after the final answer was applied",
               rule="script.external.timing")  # fmt: skip
    again = fresh(root, 1)
    events = play(
        client,
        again,
        [
            {"tool_calls": [READ_A]},
            {"external": [{"op": "write", "path": "early.txt", "content": "y"}]},
        ],
    )
    judge.true((again / "early.txt").exists(), "an external step before the script ran out was not applied",
               rule="script.external.timing")  # fmt: skip
    judge.equal("the codes of the error events", [e.get("code") for e in of(events, "error")], ["EMPTY_RESPONSE"],
                rule="script.out-of-steps")  # fmt: skip


@case("LOOP-016", rules=["script.external.touch", "script.external.same-size"])
def test_touch_and_same_size_rewrite_exactly(client: Client, root: Path, judge: Judge) -> None:
    """move the mtime by one second on touch; rewrite in place with the mtime restored (to the µs)"""
    workspace = {"t.txt": "t\n", "s.txt": "abc\n"}
    (root / "t.txt").write_text("t\n")
    (root / "s.txt").write_text("abc\n")
    # Whole seconds: every runtime can read and set them exactly (Node's utimes keeps µs).
    os.utime(root / "t.txt", ns=(1_600_000_000_000_000_000, 1_600_000_123_000_000_000))
    os.utime(root / "s.txt", ns=(1_600_000_000_000_000_000, 1_600_000_987_000_000_000))
    before = {name: os.stat(root / name) for name in workspace}
    steps: list[Json] = [{"external": [{"op": "touch", "path": "t.txt"},
                                       {"op": "same_size_rewrite", "path": "s.txt", "content": "xyz\n"}]},
                         {"text": "DONE"}]  # fmt: skip
    scenario = {"name": "inline", "workspace": {}, "prompt": "go", "steps": steps}
    client.scenario(str(root), scenario)
    touched, rewritten = os.stat(root / "t.txt"), os.stat(root / "s.txt")
    judge.equal("the mtime after touch (µs)", touched.st_mtime_ns // 1000,
                (before["t.txt"].st_mtime_ns + 1_000_000_000) // 1000, rule="script.external.touch")  # fmt: skip
    judge.equal("(inode, mtime µs) after same_size_rewrite", (rewritten.st_ino, rewritten.st_mtime_ns // 1000),
                (before["s.txt"].st_ino, before["s.txt"].st_mtime_ns // 1000), rule="script.external.same-size")  # fmt: skip


@case("LOOP-017", rules=["script.tool-calls"])
def test_argument_json_is_compact_and_unescaped(client: Client, root: Path, judge: Judge) -> None:
    """send object arguments as compact JSON in their key order, non-ASCII and <>& unescaped; none as {}"""
    arguments = {"file_path": "é <&> ü.txt", "limit": 3, "offset": 1}
    calls: list[Json] = [{"name": "read", "arguments": arguments}, {"name": "read"}]
    events = play(client, root, [{"tool_calls": calls}, {"text": "D"}])
    judge.equal("the raw arguments", [call["arguments"] for call in of(events, "tool/call")],
                ['{"file_path":"é <&> ü.txt","limit":3,"offset":1}', "{}"], rule="script.tool-calls")  # fmt: skip


@case("LOOP-018", rules=["loop.envelope"])
def test_every_event_has_exactly_type_and_data(client: Client, root: Path, judge: Judge) -> None:
    """shape every event as exactly {"type", "data"}"""
    steps: list[Json] = [{"tool_calls": [READ_A]}, {"fail": "x"}]
    for event in play(client, root, steps):
        judge.equal(
            f"the keys of a {event.get('type')} event",
            sorted(event),
            ["data", "type"],
            rule="loop.envelope",
        )


@case("LOOP-019", rules=["scenario.options"])
@needs(options=["probe"])
def test_probe_tools_only_when_a_scenario_asks(client: Client, root: Path, judge: Judge) -> None:
    """register the probe tools in a scenario only when its options say probe: true"""
    echo: list[Json] = [{"tool_calls": [{"name": "probe_echo", "arguments": {"todos": []}}]},
                        {"text": "D"}]  # fmt: skip
    coded = client.profile.has("toolCodes")
    refusal: list[str] = []  # without probe: what the harness says of a tool it does not have
    for run, (options, unknown) in enumerate([(None, True), ({"probe": True}, False)]):
        where = fresh(root, run)
        result = of(play(client, where, echo, options=options), "tool/result")[0]
        error = result.get("error") or {}
        # an unknown tool's error flag without its error: the event lost it, not the options
        lost = coded and unknown and result.get("isError") is True and "error" not in result
        if coded:
            found = error.get("code") == "UNKNOWN_TOOL"
        else:  # no codes (SPEC §6.2), nor words to rely on: the refusal it gave without probe
            said = _texts(result, where)
            found = result.get("isError") is True and (unknown or said == refusal)
            refusal = said if unknown else refusal
        judge.equal(f"probe_echo in a scenario with options {options} is an unknown tool",
                    found, unknown, rule="scenario.options",
                    signature=loop_error_signature(None, None, {"code": "UNKNOWN_TOOL"}, "")
                    if lost else None)  # fmt: skip


@case("LOOP-020", rules=["scenario.options", "policy.off"])
@needs(options=["unguarded"])
def test_a_scenario_without_the_policy_is_unguarded(
    client: Client, root: Path, judge: Judge
) -> None:
    """run a scenario with policy: false unguarded: a file never read is overwritten"""
    clobber: list[Json] = [{"tool_calls": [{"name": "write", "arguments": {"file_path": "a.txt", "content": "new\n"}}]},
                           {"text": "D"}]  # fmt: skip
    for run, (options, refused) in enumerate([(None, True), ({"policy": False}, False)]):
        events = play(client, fresh(root, run), clobber, options=options)
        judge.transcript(f"the write of a file never read, with options {options}, is an error",
                         flags(events)[:1], [["tool/result", "error" if refused else "ok"]],
                         script=inline(clobber, options=options), rule="scenario.options")  # fmt: skip
