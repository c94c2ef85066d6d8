"""SPEC §4.3: the model-boundary remedy — the wrapper itself, and the five texts the model sees."""

from __future__ import annotations

from collections.abc import Callable

from conformance.cases import case, needs
from conformance.causes import (
    code_signature,
    passthrough_copied,
    shape_signature,
    subject_signature,
    text_shape,
)
from conformance.client import Client, Session, cause_ref
from conformance.disk import Disk
from conformance.display import show
from conformance.spec import REMEDIES, Wording, fs
from conformance.verdict import Judge

GUARDED = REMEDIES


@case("REM-001", rules=["remedy.stale"])
@needs("taxonomy")
def test_stale_version_gets_the_reread_remedy(client: Client, judge: Judge, w: Wording) -> None:
    """append ' — re-read the file, then retry' to FS_STALE_VERSION"""
    message = w("fs.changed", op="write", p="/w/a")
    original = client.error("FsError", message, code="FS_STALE_VERSION")
    ref, same = client.remediate({"handle": original})
    judge.equal(
        "remediate of an FS_STALE_VERSION error returned the same object:",
        same,
        False,
        rule="remedy.stale",
    )
    if "handle" in ref:
        judge.equal("the remedied message", client.inspect(str(ref["handle"]))["message"],
                    message + w("remedy.reread"), rule="remedy.stale", level="wording")  # fmt: skip


@case("REM-002", rules=["remedy.not-observed"])
@needs("taxonomy")
def test_not_observed_gets_the_read_remedy(client: Client, judge: Judge, w: Wording) -> None:
    """append ' — read the file, then retry' to FS_NOT_OBSERVED"""
    message = w("policy.edit_unobserved", p="/w/a")
    original = client.error("FsError", message, code="FS_NOT_OBSERVED")
    ref, same = client.remediate({"handle": original})
    judge.equal(
        "remediate of an FS_NOT_OBSERVED error returned the same object:",
        same,
        False,
        rule="remedy.not-observed",
    )
    if "handle" in ref:
        judge.equal("the remedied message", client.inspect(str(ref["handle"]))["message"],
                    message + w("remedy.read"), rule="remedy.not-observed", level="wording")  # fmt: skip


@case("REM-003", rules=["remedy.code"])
@needs("taxonomy")
def test_remedy_keeps_the_code(client: Client, judge: Judge) -> None:
    """keep the code of a remedied error unchanged"""
    for code in GUARDED:
        ref, _ = client.remediate({"handle": client.error("FsError", "m", code=code)})
        described = client.inspect(str(ref.get("handle")))
        got = (str(described["name"]), str(described["code"]))
        judge.equal(f"the remedied {code} error's name and code", got, ("FsError", code), rule="remedy.code",
                    signature=code_signature("remedy.code", None, None, got, ("FsError", code), remedied=True))  # fmt: skip


@case("REM-004", rules=["remedy.cause"])
@needs("taxonomy")
def test_remedy_chains_the_original(client: Client, judge: Judge) -> None:
    """chain the original error as the remedied error's cause"""
    for code in GUARDED:
        original = client.error("FsError", "m", code=code)
        ref, _ = client.remediate({"handle": original})
        cause = client.inspect(str(ref.get("handle")))["cause"]
        judge.equal(f"the cause of the remedied {code} error", cause_ref(cause), {"handle": original},
                    rule="remedy.cause", signature=subject_signature("remedy.cause", "remedied-cause-lost"))  # fmt: skip


@case("REM-005", rules=["remedy.cause"])
@needs("taxonomy")
def test_remedy_leaves_the_original_alone(client: Client, judge: Judge) -> None:
    """build a new error, leaving the original's message untouched"""
    for code in GUARDED:
        original = client.error("FsError", "as the provider said", code=code)
        ref, same = client.remediate({"handle": original})
        judge.equal(f"remediate of {code} gave back", (same, ref.get("handle") == original), (False, False),
                    rule="remedy.cause")  # fmt: skip
        judge.equal(f"the original {code} error's message after remediate",
                    client.inspect(original)["message"], "as the provider said", rule="remedy.cause")  # fmt: skip


@case("REM-006", rules=["remedy.passthrough"])
@needs("taxonomy")
def test_other_fs_errors_pass_through(client: Client, judge: Judge) -> None:
    """return every other FsError unchanged: the same object"""
    from conformance.spec import FS_CODES  # noqa: PLC0415

    for code in FS_CODES:
        if code not in GUARDED:
            original = client.error("FsError", "m", code=code)
            passed = client.remediate({"handle": original})
            judge.equal(f"remediate of an {code} FsError", passed, ({"handle": original}, True), rule="remedy.passthrough",
                        signature=passthrough_copied(client.is_copy({"handle": original}, passed)))  # fmt: skip


@case("REM-007", rules=["remedy.passthrough"])
@needs("taxonomy")
def test_non_fs_errors_pass_through(client: Client, judge: Judge) -> None:
    """return non-FsError errors unchanged, even one carrying a guarded code"""
    for kind, extra in [
        ("HarnessError", {"code": "FS_STALE_VERSION"}),
        ("HarnessError", {"code": "FS_NOT_OBSERVED"}),
        ("LlmError", {"code": "FS_STALE_VERSION"}),
        ("ToolArgsError", {"violations": ["v"]}),
        ("Exception", {}),
    ]:
        original = client.error(kind, "m", **extra)  # type: ignore[arg-type]
        passed = client.remediate({"handle": original})
        judge.equal(f"remediate of a {kind} {extra}", passed, ({"handle": original}, True), rule="remedy.passthrough",
                    signature=passthrough_copied(client.is_copy({"handle": original}, passed)))  # fmt: skip


@case("REM-008", rules=["remedy.passthrough"])
@needs("taxonomy")
def test_non_error_values_pass_through(client: Client, judge: Judge) -> None:
    """return non-error values unchanged"""
    for value in ["FS_STALE_VERSION", {"code": "FS_STALE_VERSION"}, None, 3]:
        passed = client.remediate({"value": value})
        judge.equal(f"remediate of the value {show(value)}", passed, ({"value": value}, True), rule="remedy.passthrough",
                    signature=passthrough_copied(client.is_copy({"value": value}, passed)))  # fmt: skip


def _observed(session: Session, disk: Disk, path: str, content: str) -> None:
    disk.write(path, content)
    session.read(path).accepted("policy.record")


@case("REM-009", rules=["remedy.texts", "remedy.once", "fs.msg.changed"])
def test_stale_write_text(session: Session, disk: Disk, w: Wording) -> None:
    """show a stale write as '…: file changed since it was read — re-read the file, then retry'"""
    _observed(session, disk, "a.txt", "one\n")
    disk.replace("a.txt", "two, from someone else\n")
    result = session.write("a.txt", "three\n").refused("fs.msg.changed")
    result.says(
        w.remedied("fs.changed", "FS_STALE_VERSION", op="write", p=disk.display("a.txt")),
        "remedy.once",
    )
    result.code(fs("FS_STALE_VERSION"), "remedy.texts")


@case("REM-010", rules=["remedy.texts", "remedy.once", "fs.msg.write-vanished"])
def test_vanished_write_text(session: Session, disk: Disk, w: Wording) -> None:
    """show a write to a deleted file as '…: file no longer exists — re-read the file, then retry'"""
    _observed(session, disk, "a.txt", "one\n")
    disk.delete("a.txt")
    result = session.write("a.txt", "three\n").refused("fs.msg.write-vanished")
    result.says(
        w.remedied("fs.write_vanished", "FS_STALE_VERSION", p=disk.display("a.txt")), "remedy.once"
    )
    result.code(fs("FS_STALE_VERSION"), "remedy.texts")


@case("REM-011", rules=["remedy.texts", "remedy.once", "fs.msg.edit-changed"])
def test_stale_edit_text(session: Session, disk: Disk, w: Wording) -> None:
    """show a stale edit as '…: file changed since it was read — re-read the file, then retry'"""
    _observed(session, disk, "a.txt", "one\n")
    disk.replace("a.txt", "one, changed\n")
    result = session.edit("a.txt", "one", "1").refused("fs.msg.edit-changed")
    result.says(
        w.remedied("fs.changed", "FS_STALE_VERSION", op="edit", p=disk.display("a.txt")),
        "remedy.once",
    )
    result.code(fs("FS_STALE_VERSION"), "remedy.texts")


@case("REM-012", rules=["remedy.texts", "remedy.once", "fs.msg.exists-unread"])
def test_overwrite_unread_text(session: Session, disk: Disk, w: Wording) -> None:
    """show an overwrite of an unread file as '… without reading it first — read the file, then retry'"""
    disk.write("a.txt", "keep\n")
    result = session.write("a.txt", "clobber\n").refused("fs.msg.exists-unread")
    result.says(
        w.remedied("fs.exists_unread", "FS_NOT_OBSERVED", p=disk.display("a.txt")), "remedy.once"
    )
    result.code(fs("FS_NOT_OBSERVED"), "remedy.texts")


@case("REM-013", rules=["remedy.where", "remedy.texts", "policy.edit-intent"])
def test_edit_before_read_text(session: Session, disk: Disk, w: Wording) -> None:
    """give the policy's own refusal the remedy too: 'edit requires reading "<p>" first — read …'"""
    disk.write("a.txt", "keep\n")
    result = session.edit("a.txt", "keep", "x").refused("policy.edit-intent")
    expected = w.remedied("policy.edit_unobserved", "FS_NOT_OBSERVED", p=disk.display("a.txt"))
    # Left without its remedy, the refusal breaks this rule; in other words, the policy's own.
    left_out = text_shape(result.text, expected, w.remedies()) == "remedy-missing"
    result.says(expected, "remedy.where" if left_out else "policy.edit-intent")
    result.code(fs("FS_NOT_OBSERVED"), "remedy.texts")


@case("REM-014", rules=["remedy.where", "fs.msg.read-missing"])
def test_read_gets_no_remedy(session: Session, disk: Disk, w: Wording) -> None:
    """apply no remedy to read failures"""
    result = session.read("missing.txt").refused("fs.msg.read-missing")
    # Only a recovery instruction in the text breaks this rule: other words for a missing file
    # are PRV-002's defect, and judged under its rule they are that one cause, not another.
    remedied = any(remedy and remedy in result.text for remedy in w.remedies().values())
    rule = "remedy.where" if remedied else "fs.msg.read-missing"
    result.says(w.fs_error("fs.read_missing", p=disk.display("missing.txt")), rule)
    result.code(fs("FS_NOT_FOUND"), rule)


@case("REM-015", rules=["fs.msg.no-remedy", "remedy.cause", "contract.tool-error"])
@needs("taxonomy", "toolErrors")
def test_the_provider_message_behind_a_remedy_is_bare(session: Session, disk: Disk, client: Client,
                                                      judge: Judge, w: Wording) -> None:  # fmt: skip
    """keep the recovery out of the provider's own message: only the model-facing error has it"""
    disk.write("a.txt", "keep\n")
    # the provider's refusal of a write, and the policy's own refusal of an edit
    for result, key in [
        (session.write("a.txt", "clobber\n").refused("fs.msg.exists-unread"), "fs.exists_unread"),
        (session.edit("a.txt", "keep", "x").refused("policy.edit-intent"), "policy.edit_unobserved"),
    ]:  # fmt: skip
        bare = w(key, p=disk.display("a.txt"))
        handle = session.tool_error(result.call_id)
        judge.true(handle is not None, f"tool_error gave no error for the refused {result.record.tool}",
                   rule="contract.tool-error")  # fmt: skip
        if handle is None:
            continue
        tool, cause = result.record.tool, client.inspect(handle)["cause"]
        # No error behind the remedy at all is a remedied error without its cause, not a
        # provider message with a recovery in it: that is all there is to judge. Where the
        # model's text lacks the recovery, no remedy ran: that text's shape is the defect.
        missing = shape_signature(result.text, w.remedied(key, "FS_NOT_OBSERVED", p=disk.display("a.txt")),
                                  w.remedies())  # fmt: skip
        if not judge.true(isinstance(cause, dict),
                          f"the error behind the refused {tool} has no cause: the error the remedy "
                          "was appended to is not chained", rule="remedy.cause",
                          signature=missing or subject_signature("remedy.cause", "remedied-cause-lost"),
                          call=result.record.index if missing else None):  # fmt: skip
            continue
        assert isinstance(cause, dict)
        behind = "provider error" if tool == "write" else "policy's error"
        message = cause.get("message")
        # A recovery instruction in it is the defect the model-facing texts show: one cause.
        sig = shape_signature(message, bare, w.remedies()) if isinstance(message, str) else None
        judge.equal(f"the {behind} behind the remedy has the message", message, bare,
                    rule="fs.msg.no-remedy", level="wording", signature=sig,
                    call=result.record.index if sig else None)  # fmt: skip
        judge.equal(f"the {behind} behind the remedy has the code", cause.get("code"),
                    "FS_NOT_OBSERVED", rule="remedy.cause")  # fmt: skip


@case("REM-016", rules=["fs.os-error.cause", "fs.os-error.node", "contract.tool-error"])
@needs("taxonomy", "toolErrors")
def test_an_os_error_stays_chained(session: Session, client: Client, judge: Judge) -> None:
    """keep the OS error as the cause of the FsError the model's result came from"""
    for tool, result in [
        ("read", session.read("n" * 300)),
        ("write", session.write("n" * 300, "x")),
    ]:
        result.refused("fs.msg.os-error")
        handle = session.tool_error(result.call_id)
        described = client.inspect(handle) if handle is not None else {}
        chain = []
        node: object = described
        while isinstance(node, dict) and "name" in node:
            chain.append((node["name"], node["isHarnessError"]))
            node = node.get("cause")
        judge.true(any(not ours for _, ours in chain[1:]),
                   f"the error behind the failed {tool} chains no OS error (chain: {chain})",
                   rule="fs.os-error.cause")  # fmt: skip


@case("REM-017", rules=["marker.sandbox", "fs.os-error.cause", "contract.tool-error"])
@needs("taxonomy", "toolErrors", options=["sandbox:read-only"])
def test_the_marker_chains_the_denial(open_session: Callable[..., Session], disk: Disk, client: Client,
                                       judge: Judge, w: Wording) -> None:  # fmt: skip
    """chain the provider's sandbox denial as the cause of the marker the model sees"""
    session = open_session(sandbox="read-only")
    for op, result in [
        ("write", session.write("a.txt", "x")),
        ("edit", session.edit("a.txt", "x", "y")),
    ]:
        result.refused("sandbox.read-only")
        handle = session.tool_error(result.call_id)
        cause = (client.inspect(handle)["cause"] if handle else None) or {}
        code = cause.get("code")
        # a cause of another code is that code's refusal (the policy spoke first): keyed by the pair
        sig = None
        if isinstance(code, str) and code != "FS_SANDBOX_DENIED":
            name = str(cause.get("name"))
            sig = code_signature("marker.sandbox", result.record.situation, op, (name, code),
                                 (name, "FS_SANDBOX_DENIED"))  # fmt: skip
        judge.equal(f"the error behind the marker of the {op} has as its cause", (code, cause.get("message")),
                    ("FS_SANDBOX_DENIED", w("fs.sandbox", op=op, p=disk.display("a.txt"), mode="read-only")),
                    rule="marker.sandbox", level="wording", signature=sig,
                    call=result.record.index if sig else None)  # fmt: skip
