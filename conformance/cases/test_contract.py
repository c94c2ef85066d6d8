"""SPEC §6: the contract itself — the handshake, concurrent calls, the line framing, batches."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Final

import pytest

from conformance import spec
from conformance.cases import case, needs
from conformance.client import Client, Result, Session
from conformance.disk import Disk
from conformance.display import show
from conformance.harness.contract import CAPABILITIES, ContractError, Json, JsonObject
from conformance.harness.transport import HarnessCallError
from conformance.spec import Wording
from conformance.verdict import Judge


@case("CON-001", rules=["proto.handshake", "contract.capabilities"])
def test_the_harness_describes_itself(client: Client, judge: Judge) -> None:
    """name itself, its version and language, and declare the tools capability at least"""
    profile = client.profile
    judge.true(all((profile.name, profile.version, profile.language)),
               f"describe answered name {show(profile.name)}, version {show(profile.version)}, language {show(profile.language)}",
               rule="proto.handshake")  # fmt: skip
    judge.true(profile.has("tools") and profile.capabilities <= set(CAPABILITIES),
               f"the declared capabilities are {sorted(profile.capabilities)}", rule="contract.capabilities")  # fmt: skip


@case("CON-002", rules=["proto.concurrent", "proto.ids"])
def test_concurrent_calls_are_answered_each_by_its_id(open_session: Callable[..., Session], disk: Disk,
                                                      judge: Judge) -> None:  # fmt: skip
    """answer calls sent before earlier ones were answered, each with its own result"""
    for index in range(8):
        disk.write(f"f{index}.txt", f"file {index}\n")
    disk.write("first.txt", "first\n")
    # A session of its own makes the harness's first call alone, unjudged: a harness that fails
    # its first call (an MCP server's stray output) fails in that call on every run, not in
    # whichever racer came first. The racers' sessions stay fresh: crossed answers in a
    # session's start are what this case is for.
    open_session().read("first.txt")
    sessions = [open_session() for _ in range(4)]
    results: dict[int, Result] = {}
    failures: dict[int, BaseException] = {}
    barrier = threading.Barrier(8)

    def read(index: int) -> None:
        barrier.wait()
        try:
            results[index] = sessions[index % 4].read(f"f{index}.txt")
        except BaseException as exc:
            failures[index] = exc

    # daemons: a racer left at the barrier by an interrupted case must not hold the process
    threads = [threading.Thread(target=read, args=(i,), daemon=True) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[min(failures)]  # the first by index, not by the moment it failed
    for index, result in sorted(results.items()):
        result.accepted("proto.concurrent")
        judge.true(f"file {index}" in result.text, f"the read of f{index}.txt answered {show(result.text, 80)}",
                   rule="proto.ids")  # fmt: skip


REFUSED_AS: Final = {
    "FS_TOO_LARGE": "fs.msg.too-large",
    "FS_IO_ERROR": "fs.msg.os-error",
    "FS_PERMISSION_DENIED": "fs.msg.permission",
    "FS_NOT_FOUND": "fs.msg.read-missing",
    "FS_NOT_REGULAR_FILE": "fs.msg.not-regular",
}
"""A refused read's code → the rule whose condition it claims (CON-003's file meets none)."""


@case("CON-003", rules=["proto.lines", "write.output", "fs.msg.binary", *REFUSED_AS.values()])
def test_any_text_crosses_the_line_framing(session: Session, disk: Disk, w: Wording) -> None:
    """carry any text through one JSON line each way: separators, escapes, a 300 KB body"""
    content = (
        "".join(chr(c) for c in range(1, 0x3000) if not 0xD800 <= c < 0xE000)
        + "\u2028\u2029\r\n" * 50
    )
    content = (content * 30)[:300_000]
    session.write("wide.txt", content).accepted("proto.lines", changes={"wide.txt": content}).says(
        w.write_output(disk.display("wide.txt"), created=True), "write.output")  # fmt: skip
    read = session.read("wide.txt")
    # A refusal came back whole, so the framing held: the harness refused the file itself. Its
    # code says why (a size limit of its own coded FS_IO_ERROR is no binary sniff); uncoded, or
    # FS_NOT_TEXT, the rule is the one that says this text (valid UTF-8, no NUL) is not binary.
    code = read.error[1] if read.error is not None else None
    read.accepted(
        "proto.lines" if not read.is_error else REFUSED_AS.get(code or "", "fs.msg.binary")
    )


@case("CON-004", rules=["proto.batch"])
@needs("taxonomy")
def test_a_batch_is_its_requests_one_after_another(client: Client, judge: Judge) -> None:
    """answer a batch as its requests one after another, a ref to an earlier answer resolved"""
    if not client.transport.batches:
        pytest.skip("not applicable: the harness takes no batches (describe.batch)")
    looks_like_a_ref: JsonObject = {"answer": 0}
    requests: list[tuple[str, JsonObject]] = [
        ("make_error", {"spec": {"kind": "Exception", "message": "root"}}),
        ("make_error", {"spec": {"kind": "HarnessError", "message": "outer", "code": "C",
                                 "cause": {"answer": 0}}}),
        ("make_error", {"spec": {"kind": "HarnessError", "message": "kept", "code": "C",
                                 "cause": {"value": looks_like_a_ref}}}),
        ("error_chain", {"ref": {"answer": 1}}),
        ("error_chain", {"ref": {"answer": 2}}),
        ("error_chain", {"ref": {"answer": 4}}),  # names a chain, not an error: must fail
    ]  # fmt: skip
    results: list[Json] = []
    try:
        for result in client.batch(requests):
            results.append(result)
    except (HarnessCallError, ContractError):
        if len(results) < len(requests) - 1:  # an earlier request failed: that is the verdict
            raise
    judge.equal("the chains a batch rendered of its own errors", results[3:5],
                ["outer: root", spec.chain_of(["kept"], spec.render_value(looks_like_a_ref))],
                rule="proto.batch")  # fmt: skip
    judge.true(len(results) < len(requests), "the batch answered a request whose ref names a "
               f"string, not a handle, with a result: {show(results[-1])}", rule="proto.batch")  # fmt: skip


@case("CON-005", rules=["pause.point"])
@needs("pause", options=["pausePoints:checked"])
def test_a_refused_mutation_disarms_its_pause(session: Session, disk: Disk, judge: Judge) -> None:
    """disarm a pause when the mutation it was armed for is refused before reaching it"""
    # Else the pause fires in the session's next mutation, and a suite that drives a race
    # there (GRD-025, PUB-004) changes the disk at a moment the harness never meant.
    disk.write("a.txt", "one\n")
    refusals: list[tuple[str, Callable[[], Result], str]] = [
        ("an edit of a file never read", lambda: session.edit("a.txt", "one", "two"),
         "policy.edit-intent"),
        ("an edit whose strings are the same", lambda: session.edit("a.txt", "one", "one"),
         "check.order"),
    ]  # fmt: skip
    for what, refused, rule in refusals:
        with session.paused("checked", lambda: None) as pause:
            refused().refused(rule)
            session.read("a.txt").accepted("policy.record")
            session.write("a.txt", "later\n").accepted("write.output", changes={"a.txt": "later\n"})
        judge.true(not pause.fired, f"the pause armed before {what} (refused) fired in the "
                   "session's next write", rule="pause.point")  # fmt: skip
        disk.write("a.txt", "one\n")
        disk.backdate("a.txt")
        session.read("a.txt").accepted("policy.record")  # the next round starts from a read


@case("CON-006", rules=["pause.point"])
@needs("pause", options=["pausePoints:checked"])
def test_a_read_keeps_the_pause_for_the_next_mutation(
    session: Session, disk: Disk, judge: Judge
) -> None:
    """keep a pause armed across reads, accepted or refused: it is for the next write or edit"""
    # The flow of every agent: the pause is armed, the model reads the file, then edits it. A
    # harness that disarms on any call never pauses there, and a race driven at that moment
    # (GRD-025, PUB-004) is never run.
    disk.write("a.txt", "one\n")
    during = ["the read"]
    fired_in: list[str] = []
    with session.paused("checked", lambda: fired_in.append(during[0])):
        session.read("a.txt").accepted("policy.record")
        during[0] = "the refused read"
        session.read("missing.txt").refused("fs.msg.read-missing")
        during[0] = "the edit"
        session.edit("a.txt", "one", "two").accepted("edit.output", changes={"a.txt": "two\n"})
    happened = (f"fired in {fired_in[0]}, not in the edit" if fired_in
                else "did not fire in the edit")  # fmt: skip
    judge.true(fired_in == ["the edit"], "the pause armed before a read, a refused read and an "
               f"edit {happened}", rule="pause.point")  # fmt: skip
