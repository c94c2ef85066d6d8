"""SPEC §4.2: what read, write and edit show the model, and the checks made before any I/O."""

from __future__ import annotations

from collections.abc import Callable

from conformance.cases import case, needs
from conformance.client import Session, Spelled
from conformance.disk import Disk
from conformance.spec import Wording, fs
from conformance.verdict import Judge


@case("RD-001", rules=["read.output", "read.footer", "read.no-trailing-newline"])
def test_read_numbers_lines(session: Session, disk: Disk, w: Wording, judge: Judge) -> None:
    """show '<n>: <line>' lines, a blank line and the end-of-file footer"""
    disk.write("a.txt", "first line\nsecond line\n")
    expected = w.read_output(disk.display("a.txt"), "first line\nsecond line\n")
    if not w.overrides:  # the spec's own example, byte for byte
        judge.equal("the suite's model of read", expected,
                    f"<path>{disk.display('a.txt')}</path>\n<type>file</type>\n<content>\n"
                    "1: first line\n2: second line\n\n(End of file - total 2 lines)\n</content>",
                    rule="read.output", level="wording")  # fmt: skip
    result = session.read("a.txt").accepted("read.output").says(expected, "read.output")
    judge.true(result.text != expected + "\n", "the read output goes on with a newline after its last line",
               rule="read.no-trailing-newline", level="wording")  # fmt: skip


@case("RD-002", rules=["read.lines", "read.empty", "read.footer"])
def test_lines_split_on_newline_only(session: Session, disk: Disk, w: Wording) -> None:
    """split lines on \\n only; a final \\n starts no line; '' is 0 lines; '\\n' is 1 empty line"""
    for content in ["", "\n", "a\n", "a", "a\n\nb", "a\rb\x0bc\u2028d\n"]:
        disk.write("f.txt", content)
        session.read("f.txt").accepted("read.lines").says(
            w.read_output(disk.display("f.txt"), content), "read.lines"
        )


@case("RD-003", rules=["read.lines"])
def test_one_trailing_cr_is_stripped(session: Session, disk: Disk, w: Wording) -> None:
    """strip one trailing \\r from each shown line (CRLF files read cleanly)"""
    content = "a\r\nb\r\r\nc\rd\r\n"
    disk.write("w.txt", content)
    session.read("w.txt").accepted("read.lines").says(
        w.read_output(disk.display("w.txt"), content), "read.lines"
    )


@case("RD-004", rules=["read.footer"])
@needs(options=["readWindow"])
def test_window_footer(session: Session, disk: Disk, w: Wording) -> None:
    """end a window with '(Showing lines A-B of T. Use offset=B+1 to continue.)'"""
    content = "".join(f"line {i}\n" for i in range(1, 11))
    disk.write("n.txt", content)
    p = disk.display("n.txt")
    for offset, limit in [(3, 2), (9, 2000), (10, 1), (1, 9)]:
        session.read("n.txt", offset=offset, limit=limit).accepted("read.footer").says(
            w.read_output(p, content, offset, limit), "read.footer")  # fmt: skip


@case("RD-005", rules=["read.offset-range"])
@needs(options=["readWindow"])
def test_offset_out_of_range(session: Session, disk: Disk, w: Wording) -> None:
    """refuse an offset past max(T, 1): 'offset <n> is out of range for "<p>" (<T> lines)'"""
    disk.write("n.txt", "a\nb\n")
    disk.write("e.txt", "")
    for path, offset, total in [("n.txt", 3, 2), ("e.txt", 2, 0)]:
        result = session.read(path, offset=offset).refused("read.offset-range")
        result.says(
            w.fs_error("read.offset_range", offset=offset, p=disk.display(path), total=total),
            "read.offset-range",
        )
        result.code(fs("FS_NOT_FOUND"), "read.offset-range")
    session.read("e.txt", offset=1).accepted("read.offset-range")
    session.read("n.txt", offset=2).accepted("read.offset-range")


@case("RD-006", rules=["read.long-line"])
def test_long_lines_are_cut(session: Session, disk: Disk, w: Wording) -> None:
    """cut a line longer than 2000 characters (not bytes) and say so; 2000 exactly stays whole"""
    content = "é" * 2000 + "\n" + "é" * 2001 + "\n" + "x" * 2000 + "\r\n" + "y" * 2001 + "\r\n"
    disk.write("long.txt", content)
    session.read("long.txt").accepted("read.long-line").says(
        w.read_output(disk.display("long.txt"), content), "read.long-line"
    )


@case("RD-007", rules=["read.cap", "read.footer"])
def test_output_cap(session: Session, disk: Disk, w: Wording) -> None:
    """stop before the line that would pass 51200 bytes: '(Output capped. Showing lines A-B. …)'"""
    for last_bytes in [2024, 2025]:
        content = (
            ("é" * 1024 + "\n") * 24 + "é" * (last_bytes // 2) + "a" * (last_bytes % 2) + "\nb\n"
        )
        disk.write("wide.txt", content)
        session.read("wide.txt").accepted("read.cap").says(
            w.read_output(disk.display("wide.txt"), content), "read.cap"
        )


@case("RD-008", rules=["read.whole-file", "fs.msg.invalid-utf8"])
@needs(options=["readWindow"])
def test_whole_file_is_decoded(session: Session, disk: Disk, w: Wording) -> None:
    """refuse invalid UTF-8 even past the window, and count every line"""
    disk.write("tail.txt", b"ok\n" * 30_000 + b"caf\xe9\n")
    session.read("tail.txt", limit=1).refused("read.whole-file").code(
        fs("FS_NOT_TEXT"), "fs.msg.invalid-utf8"
    )
    content = "x\n" * 30_000
    disk.write("many.txt", content)
    session.read("many.txt", limit=1).accepted("read.whole-file").says(
        w.read_output(disk.display("many.txt"), content, 1, 1), "read.whole-file")  # fmt: skip


@case("RD-009", rules=["write.output"])
def test_write_outputs(session: Session, disk: Disk, w: Wording) -> None:
    """report 'Created file' then 'Updated file', never echoing the content"""
    p = disk.display("new.txt")
    session.write("new.txt", "secret body\n").accepted("write.output", changes={"new.txt": "secret body\n"}).says(
        w.write_output(p, created=True), "write.output")  # fmt: skip
    session.write("new.txt", "second body\n").accepted("write.output", changes={"new.txt": "second body\n"}).says(
        w.write_output(p, created=False), "write.output")  # fmt: skip


@case("RD-010", rules=["edit.output"])
@needs(options=["replaceAll"])
def test_edit_outputs(session: Session, disk: Disk, w: Wording) -> None:
    """report a single edit and a replace_all edit in their exact words"""
    disk.write("e.txt", "a a b\n")
    session.read("e.txt").accepted("policy.record")
    p = disk.display("e.txt")
    session.edit("e.txt", "b", "c").accepted("edit.output", changes={"e.txt": "a a c\n"}).says(
        w.edit_output(p), "edit.output"
    )
    session.edit("e.txt", "a", "z", replace_all=True).accepted("edit.output", changes={"e.txt": "z z c\n"}).says(
        w.edit_output(p, replace_all=True), "edit.output")  # fmt: skip
    # replace_all with a single occurrence still says "All occurrences".
    session.edit("e.txt", "c", "d", replace_all=True).accepted("edit.output", changes={"e.txt": "z z d\n"}).says(
        w.edit_output(p, replace_all=True), "edit.output")  # fmt: skip


@case("RD-011", rules=["check.order", "read.limit-max", "tool.error.plain"])
@needs(options=["readWindow"])
def test_read_checks_before_io(session: Session, w: Wording) -> None:
    """check file_path, offset, limit (≤ 2000) in order, as plain errors without a code"""
    a = session.spell("a")
    checks = [
        ({"file_path": ""}, "check.file_path"),
        ({"file_path": "", "offset": 0}, "check.file_path"),
        ({"file_path": a, "offset": 0, "limit": 0}, "check.offset"),
        ({"file_path": a, "limit": 0}, "check.limit"),
        ({"file_path": a, "limit": 2001}, "check.limit_max"),
        ({"file_path": session.spell("a\0b"), "offset": 0}, "check.nul"),
    ]
    for arguments, check in checks:
        session.call("read", arguments).refused("check.order").says(
            w.error(w(check)), "check.order"
        ).code(None, "tool.error.plain")


@case("RD-012", rules=["check.order", "tool.error.plain"])
def test_edit_and_write_checks_before_io(session: Session, w: Wording) -> None:
    """check file_path, then old_string non-empty, then old_string != new_string, touching nothing"""
    a, nul, cancelled = (
        session.spell("a.txt"),
        session.spell("a\0.txt"),
        session.spell(Spelled("x\0/../y.txt")),
    )
    checks = [
        ("edit", {"file_path": "", "old_string": "", "new_string": ""}, "check.file_path"),
        ("edit", {"file_path": a, "old_string": "", "new_string": ""}, "check.old_string"),
        ("edit", {"file_path": a, "old_string": "", "new_string": "x"}, "check.old_string"),
        ("edit", {"file_path": a, "old_string": "x", "new_string": "x"}, "check.differ"),
        ("edit", {"file_path": nul, "old_string": "x", "new_string": "x"}, "check.nul"),
        ("write", {"file_path": "", "content": "x"}, "check.file_path"),
        ("write", {"file_path": cancelled, "content": "x"}, "check.nul"),
    ]
    for tool, arguments, check in checks:
        session.call(tool, arguments).refused("check.order").says(
            w.error(w(check)), "check.order"
        ).code(None, "tool.error.plain")


@case("RD-013", rules=["read.limit-max", "read.footer"])
@needs(options=["readWindow"])
def test_limit_bounds(session: Session, disk: Disk, w: Wording) -> None:
    """accept limit 2000 and 1, refuse 2001 and 0"""
    content = "".join(f"{i}\n" for i in range(2100))
    disk.write("n.txt", content)
    session.read("n.txt", limit=2000).accepted("read.limit-max").says(
        w.read_output(disk.display("n.txt"), content, 1, 2000), "read.footer"
    )
    session.read("n.txt", limit=1).accepted("read.limit-max")
    session.read("n.txt", limit=2001).refused("read.limit-max")
    session.read("n.txt", limit=0).refused("check.order")


@case("RD-014", rules=["read.cap", "read.long-line"])
def test_cap_counts_truncated_lines_with_their_marker(
    session: Session, disk: Disk, w: Wording
) -> None:
    """count a truncated line's marker toward the 51,200-byte cap"""
    # 25 truncated lines of 2000 'x' + a 34-byte marker: 25 × 2034 + 24 = 50,874 bytes fit,
    # a 26th would pass the cap, so the footer says the output was capped after line 25.
    content = ("x" * 3000 + "\n") * 30
    disk.write("w.txt", content)
    session.read("w.txt").accepted("read.cap").says(
        w.read_output(disk.display("w.txt"), content), "read.cap"
    )


@case("RD-015", rules=["read.empty", "read.footer"])
def test_one_line_and_no_lines(session: Session, disk: Disk, w: Wording) -> None:
    """say 'total 1 lines' for one line, and show only the footer for an empty file"""
    disk.write("one.txt", "only\n")
    disk.write("none.txt", "")
    session.read("one.txt").accepted("read.footer").says(
        w.read_output(disk.display("one.txt"), "only\n"), "read.footer"
    )
    session.read("none.txt").accepted("read.empty").says(
        w.read_output(disk.display("none.txt"), ""), "read.empty"
    )


@case("RD-016", rules=["fs.msg.too-large"])
@needs(options=["maxReadBytes"])
def test_a_zero_byte_limit(open_session: Callable[..., Session], disk: Disk, w: Wording) -> None:
    """allow only empty files under max_read_bytes 0"""
    session = open_session(maxReadBytes=0)
    disk.write("empty.txt", "")
    disk.write("one.txt", "x")
    session.read("empty.txt").accepted("fs.msg.too-large")
    session.read("one.txt").refused("fs.msg.too-large").says(
        w.fs_error("fs.too_large", p=disk.display("one.txt"), size=1, limit=0), "fs.msg.too-large")  # fmt: skip


@case("RD-017", rules=["read.order"])
@needs(options=["maxReadBytes"])
def test_read_check_order(open_session: Callable[..., Session], disk: Disk) -> None:
    """order read checks: not regular → too large → binary → invalid UTF-8 → offset"""
    session = open_session(maxReadBytes=4)
    disk.path("dir").mkdir()
    disk.write("big.bin", b"\0" * 10)
    session.read("dir").refused("read.order").code(fs("FS_NOT_REGULAR_FILE"), "read.order")
    session.read("big.bin").refused("read.order").code(fs("FS_TOO_LARGE"), "read.order")


@case("RD-018", rules=["read.order", "fs.msg.binary"])
@needs(options=["readWindow"])
def test_binary_then_utf8_then_offset(session: Session, disk: Disk) -> None:
    """refuse a file both binary and invalid UTF-8 as binary, and an invalid file before its offset"""
    disk.write("both.bin", b"\0caf\xe9\n")
    disk.write("bad.txt", b"caf\xe9\n")
    session.read("both.bin").refused("read.order").code(fs("FS_NOT_TEXT"), "read.order")
    session.read("bad.txt", offset=99).refused("read.order").code(fs("FS_NOT_TEXT"), "read.order")


@case("RD-019", rules=["read.output", "fs.resolve.display"])
def test_paths_are_shown_as_resolved(session: Session, disk: Disk, w: Wording) -> None:
    """show the lexically normalized path: '..', '.' and a trailing slash collapsed, '~' kept"""
    disk.write("sub/a.txt", "x\n")
    disk.write("~/b.txt", "y\n")
    for spelling in ["sub/../sub/./a.txt", "sub/a.txt/"]:
        session.read(Spelled(spelling)).accepted("fs.resolve.display").says(
            w.read_output(disk.display("sub/a.txt"), "x\n"), "fs.resolve.display")  # fmt: skip
    session.read("~/b.txt").accepted("fs.resolve.display").says(
        w.read_output(disk.display("~/b.txt"), "y\n"), "fs.resolve.display")  # fmt: skip


@case("RD-020", rules=["args.integer-value", "read.footer"])
@needs(options=["readWindow"])
def test_integer_valued_numbers_are_integers(session: Session, disk: Disk, w: Wording) -> None:
    """accept 2.0 as the integer 2 for offset and limit, showing '2', never '2.0'"""
    disk.write("a.txt", "a\nb\nc\n")
    arguments = f'{{"file_path": "{session.spell("a.txt")}", "offset": 2.0, "limit": 1.0}}'
    session.call("read", arguments).accepted("args.integer-value").says(
        w.read_output(disk.display("a.txt"), "a\nb\nc\n", 2, 1), "args.integer-value")  # fmt: skip
