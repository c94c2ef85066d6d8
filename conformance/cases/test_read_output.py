"""SPEC §4.2: what read, write and edit show the model, and the checks made before any I/O."""

from __future__ import annotations

import pytest

from conformance import spec
from conformance.client import Session
from conformance.disk import Disk


@pytest.mark.case("RD-001")
def test_read_numbers_lines(session: Session, disk: Disk) -> None:
    """show '<n>: <line>' lines, a blank line and the end-of-file footer"""
    disk.write("a.txt", "first line\nsecond line\n")
    result = session.read("a.txt")
    assert (result.text, result.error) == (
        f"<path>{disk.display('a.txt')}</path>\n<type>file</type>\n<content>\n"
        "1: first line\n2: second line\n\n(End of file - total 2 lines)\n</content>",
        None,
    )


@pytest.mark.case("RD-002")
def test_lines_split_on_newline_only(session: Session, disk: Disk) -> None:
    """split lines on \\n only; a final \\n starts no line; '' is 0 lines; '\\n' is 1 empty line"""
    for content in ["", "\n", "a\n", "a", "a\n\nb", "a\rb\x0bc\u2028d\n"]:
        disk.write("f.txt", content)
        assert session.read("f.txt").text == spec.read_output(disk.display("f.txt"), content), repr(
            content
        )


@pytest.mark.case("RD-003")
def test_one_trailing_cr_is_stripped(session: Session, disk: Disk) -> None:
    """strip one trailing \\r from each shown line (CRLF files read cleanly)"""
    disk.write("w.txt", "a\r\nb\r\r\nc\rd\r\n")
    assert session.read("w.txt").text == spec.read_output(
        disk.display("w.txt"), "a\r\nb\r\r\nc\rd\r\n"
    )
    assert "\n2: b\r\n" in session.read("w.txt").text


@pytest.mark.case("RD-004")
def test_window_footer(session: Session, disk: Disk) -> None:
    """end a window with '(Showing lines A-B of T. Use offset=B+1 to continue.)'"""
    content = "".join(f"line {i}\n" for i in range(1, 11))
    disk.write("n.txt", content)
    p = disk.display("n.txt")
    assert session.read("n.txt", offset=3, limit=2).text == spec.read_output(p, content, 3, 2)
    assert session.read("n.txt", offset=3, limit=2).text.endswith(
        "(Showing lines 3-4 of 10. Use offset=5 to continue.)\n</content>"
    )
    assert session.read("n.txt", offset=9).text == spec.read_output(p, content, 9)


@pytest.mark.case("RD-005")
def test_offset_out_of_range(session: Session, disk: Disk) -> None:
    """refuse an offset past max(T, 1): 'offset <n> is out of range for "<p>" (<T> lines)'"""
    disk.write("n.txt", "a\nb\n")
    disk.write("e.txt", "")
    for path, offset, total in [("n.txt", 3, 2), ("e.txt", 2, 0)]:
        result = session.read(path, offset=offset)
        assert (result.text, result.error) == (
            spec.error_text(spec.offset_out_of_range(offset, disk.display(path), total)),
            spec.fs("FS_NOT_FOUND"),
        )
    assert session.read("e.txt", offset=1).error is None


@pytest.mark.case("RD-006")
def test_long_lines_are_cut(session: Session, disk: Disk) -> None:
    """cut a line longer than 2000 characters (not bytes) and say so"""
    content = "é" * 2000 + "\n" + "é" * 2001 + "\n" + "x" * 2000 + "\r\n"
    disk.write("long.txt", content)
    text = session.read("long.txt").text
    assert text == spec.read_output(disk.display("long.txt"), content)
    assert "\n2: " + "é" * 2000 + "... (line truncated to 2000 chars)\n" in text


@pytest.mark.case("RD-007")
def test_output_cap(session: Session, disk: Disk) -> None:
    """stop before the line that would pass 51200 bytes: '(Output capped. Showing lines A-B. …)'"""
    for last_bytes, shown_to in [(2024, 25), (2025, 24)]:
        content = (
            ("é" * 1024 + "\n") * 24 + "é" * (last_bytes // 2) + "a" * (last_bytes % 2) + "\nb\n"
        )
        disk.write("wide.txt", content)
        text = session.read("wide.txt").text
        assert text == spec.read_output(disk.display("wide.txt"), content)
        assert text.endswith(
            f"(Output capped. Showing lines 1-{shown_to}. Use offset={shown_to + 1} to continue.)\n</content>"
        )


@pytest.mark.case("RD-008")
def test_whole_file_is_decoded(session: Session, disk: Disk) -> None:
    """refuse invalid UTF-8 even past the window, and count every line"""
    disk.write("tail.txt", b"ok\n" * 30_000 + b"caf\xe9\n")
    result = session.read("tail.txt", limit=1)
    assert result.error == spec.fs("FS_NOT_TEXT")
    disk.write("many.txt", "x\n" * 30_000)
    assert session.read("many.txt", limit=1).text.endswith(
        "(Showing lines 1-1 of 30000. Use offset=2 to continue.)\n</content>"
    )


@pytest.mark.case("RD-009")
def test_write_outputs(session: Session, disk: Disk) -> None:
    """report 'Created file' then 'Updated file', never echoing the content"""
    p = disk.display("new.txt")
    first = session.write("new.txt", "secret body\n")
    second = session.write("new.txt", "second body\n")
    assert (first.text, second.text) == (
        spec.write_output(p, created=True),
        spec.write_output(p, created=False),
    )
    assert disk.read("new.txt") == b"second body\n"


@pytest.mark.case("RD-010")
def test_edit_outputs(session: Session, disk: Disk) -> None:
    """report a single edit and a replace_all edit in their exact words"""
    disk.write("e.txt", "a a b\n")
    session.read("e.txt")
    p = disk.display("e.txt")
    assert session.edit("e.txt", "b", "c").text == spec.edit_output(p)
    assert session.edit("e.txt", "a", "z", replace_all=True).text == spec.edit_output(
        p, replace_all=True
    )
    assert disk.read("e.txt") == b"z z c\n"


@pytest.mark.case("RD-011")
def test_read_checks_before_io(session: Session) -> None:
    """check file_path, offset, limit (≤ 2000) in order, as plain errors without a code"""
    checks = [
        ({"file_path": ""}, "file_path"),
        ({"file_path": "", "offset": 0}, "file_path"),
        ({"file_path": "a", "offset": 0, "limit": 0}, "offset"),
        ({"file_path": "a", "limit": 0}, "limit"),
        ({"file_path": "a", "limit": 2001}, "limit_max"),
    ]
    for arguments, check in checks:
        result = session.call("read", arguments)
        assert (result.text, result.is_error, result.error) == (
            spec.error_text(spec.POST_SCHEMA[check]),
            True,
            None,
        ), arguments


@pytest.mark.case("RD-012")
def test_edit_and_write_checks_before_io(session: Session, disk: Disk) -> None:
    """check file_path, then old_string non-empty, then old_string != new_string, touching nothing"""
    checks = [
        ("edit", {"file_path": "", "old_string": "", "new_string": ""}, "file_path"),
        ("edit", {"file_path": "a.txt", "old_string": "", "new_string": "x"}, "old_string"),
        ("edit", {"file_path": "a.txt", "old_string": "x", "new_string": "x"}, "differ"),
        ("write", {"file_path": "", "content": "x"}, "file_path"),
    ]
    for tool, arguments, check in checks:
        result = session.call(tool, arguments)
        assert (result.text, result.error) == (spec.error_text(spec.POST_SCHEMA[check]), None), (
            arguments
        )
    assert list(disk.root.iterdir()) == []
