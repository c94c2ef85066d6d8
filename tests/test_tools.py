"""SPEC §4: the fs tools — outputs, checks, the remedy at the model boundary, the sandbox marker."""

from __future__ import annotations

import errno
import itertools
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference import FsError, open_workspace
from reference.tools import LineWindow
from reference.workspace import Workspace
from tests.conftest import error_of, leftovers, text_of

STALE = ("FsError", "FS_STALE_VERSION")
UNOBSERVED = ("FsError", "FS_NOT_OBSERVED")


def read(ws: Workspace, path: str, **kw: object) -> tuple[str, tuple[str, str] | None]:
    result = ws.call_tool("read", {"file_path": path, **kw})
    return text_of(result), error_of(result)


def write(ws: Workspace, path: str, content: str) -> tuple[str, tuple[str, str] | None]:
    result = ws.call_tool("write", {"file_path": path, "content": content})
    return text_of(result), error_of(result)


def edit(
    ws: Workspace, path: str, old: str, new: str, **kw: object
) -> tuple[str, tuple[str, str] | None]:
    result = ws.call_tool("edit", {"file_path": path, "old_string": old, "new_string": new, **kw})
    return text_of(result), error_of(result)


def shown(p: str, body: str) -> str:
    return f"<path>{p}</path>\n<type>file</type>\n<content>\n{body}\n</content>"


# -- read output ----------------------------------------------------------------------------


def test_read_shows_numbered_lines_and_the_end_footer(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("first line\nsecond line\n")
    assert read(ws, "a.txt") == (
        shown(
            f"{tmp_path}/a.txt", "1: first line\n2: second line\n\n(End of file - total 2 lines)"
        ),
        None,
    )


@pytest.mark.parametrize(
    ("content", "lines", "total"),
    [
        ("", [], 0),
        ("\n", ["1: "], 1),
        ("a\n", ["1: a"], 1),
        ("a", ["1: a"], 1),
        ("a\n\nb", ["1: a", "2: ", "3: b"], 3),
        ("a\r\nb\r\n", ["1: a", "2: b"], 2),
        ("a\r\r\n", ["1: a\r"], 1),
        ("a\rb\x0bc\u2028d\n", ["1: a\rb\x0bc\u2028d"], 1),
    ],
)
def test_lines_split_on_newline_only(
    ws: Workspace, tmp_path: Path, content: str, lines: list[str], total: int
) -> None:
    (tmp_path / "f.txt").write_bytes(content.encode())
    footer = f"(End of file - total {total} lines)"
    body = "\n".join(lines) + "\n\n" + footer if lines else footer
    assert read(ws, "f.txt")[0] == shown(f"{tmp_path}/f.txt", body)


def test_window_footer_tells_where_to_continue(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("".join(f"l{i}\n" for i in range(1, 11)))
    assert read(ws, "n.txt", offset=3, limit=2)[0] == shown(
        f"{tmp_path}/n.txt", "3: l3\n4: l4\n\n(Showing lines 3-4 of 10. Use offset=5 to continue.)"
    )
    assert read(ws, "n.txt", offset=9, limit=2)[0] == shown(
        f"{tmp_path}/n.txt", "9: l9\n10: l10\n\n(End of file - total 10 lines)"
    )
    assert read(ws, "n.txt", offset=10.0)[0] == shown(
        f"{tmp_path}/n.txt", "10: l10\n\n(End of file - total 10 lines)"
    )


def test_offset_past_the_end_is_not_found(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("a\nb\n")
    assert read(ws, "n.txt", offset=3) == (
        f'Error: offset 3 is out of range for "{tmp_path}/n.txt" (2 lines)',
        ("FsError", "FS_NOT_FOUND"),
    )
    (tmp_path / "e.txt").write_text("")
    assert read(ws, "e.txt", offset=1)[1] is None
    assert read(ws, "e.txt", offset=2) == (
        f'Error: offset 2 is out of range for "{tmp_path}/e.txt" (0 lines)',
        ("FsError", "FS_NOT_FOUND"),
    )


def test_long_lines_are_cut_to_2000_characters(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text(
        "é" * 2000 + "\n" + "é" * 2001 + "\r\n" + "x" * 2000 + "\r\n"
    )
    text, _ = read(ws, "long.txt")
    lines = text.split("\n")[3:6]
    assert lines == [
        "1: " + "é" * 2000,
        "2: " + "é" * 2000 + "... (line truncated to 2000 chars)",
        "3: " + "x" * 2000,
    ]


def test_output_is_capped_at_51200_bytes(ws: Workspace, tmp_path: Path) -> None:
    # 2000 four-byte characters: 8000 bytes a line; 6 lines and 5 separators are 48005 bytes,
    # a 7th line would pass 51200.
    (tmp_path / "wide.txt").write_text(("😀" * 2000 + "\n") * 10)
    text, _ = read(ws, "wide.txt", offset=2)
    assert text.endswith(
        "\n\n(Output capped. Showing lines 2-7. Use offset=8 to continue.)\n</content>"
    )
    assert text.count("😀" * 2000) == 6


@pytest.mark.parametrize(("last_bytes", "shown_to"), [(2024, 25), (2025, 24)])
def test_the_cap_allows_exactly_51200_bytes(
    ws: Workspace, tmp_path: Path, last_bytes: int, shown_to: int
) -> None:
    # 24 lines of 2048 bytes (1024 two-byte characters) and 23 separators are 49175 bytes;
    # a 25th line of 2024 bytes plus its separator makes exactly 51200, which is allowed.
    last = "é" * (last_bytes // 2) + "a" * (last_bytes % 2)
    (tmp_path / "exact.txt").write_text(("é" * 1024 + "\n") * 24 + last + "\n" + "b\n")
    text, _ = read(ws, "exact.txt")
    assert text.endswith(
        f"(Output capped. Showing lines 1-{shown_to}. Use offset={shown_to + 1} to continue.)"
        "\n</content>"
    )
    assert f"\n{shown_to}: " in text
    assert f"\n{shown_to + 1}: " not in text


def test_the_window_holds_only_what_it_shows() -> None:
    window = LineWindow(offset=3, limit=2)
    for chunk in ["a\nb", "\nc\nd\ne", "\n" * 1000, "tail without newline"]:
        window.feed(chunk)
    window.finish()
    assert window.total == 1005
    assert window.shown == ["3: c", "4: d"]
    assert window.footer() == "(Showing lines 3-4 of 1005. Use offset=5 to continue.)"


def test_a_giant_single_line_is_held_only_up_to_the_cut() -> None:
    window = LineWindow(offset=1, limit=10)
    for _ in range(100):
        window.feed("x" * 10_000)
        assert sum(len(piece) for piece in window._head) <= 2000
    window.finish()
    assert window.shown == ["1: " + "x" * 2000 + "... (line truncated to 2000 chars)"]


def _window_model(text: str, offset: int, limit: int) -> tuple[int, list[str], str]:
    """What a read shows, computed the plain way: split, strip one \r, cut, cap, footer."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    shown: list[str] = []
    used, capped = 0, False
    for number, raw in enumerate(lines[offset - 1 : offset - 1 + limit], start=offset):
        line = raw.removesuffix("\r")
        body = line[:2000] + "... (line truncated to 2000 chars)" if len(line) > 2000 else line
        cost = len(body.encode()) + (1 if shown else 0)
        if used + cost > 51200:
            capped = True
            break
        used += cost
        shown.append(f"{number}: {body}")
    last = offset + len(shown) - 1
    if capped:
        footer = (
            f"(Output capped. Showing lines {offset}-{last}. Use offset={last + 1} to continue.)"
        )
    elif shown and last < len(lines):
        footer = (
            f"(Showing lines {offset}-{last} of {len(lines)}. Use offset={last + 1} to continue.)"
        )
    else:
        footer = f"(End of file - total {len(lines)} lines)"
    return len(lines), shown, footer


_LINE = st.tuples(
    st.sampled_from(["", "a", "é", "\r", "a\r"]),
    st.sampled_from([0, 1, 2, 1999, 2000, 2001, 30_000]),
    st.sampled_from(["\n", "\r\n", "\r\r\n"]),
).map(lambda t: "x" * t[1] + t[0] + t[2])


@given(
    lines=st.lists(_LINE, max_size=40),
    tail=st.sampled_from(["", "z", "z\r", "y" * 2001]),
    cuts=st.lists(st.integers(min_value=0, max_value=200_000), max_size=12),
    offset=st.integers(min_value=1, max_value=45),
    limit=st.integers(min_value=1, max_value=45),
)
def test_the_window_shows_what_a_plain_split_would_however_the_text_arrives(
    lines: list[str], tail: str, cuts: list[int], offset: int, limit: int
) -> None:
    text = "".join(lines) + tail
    window = LineWindow(offset=offset, limit=limit)
    bounds = [0, *sorted(c for c in cuts if c < len(text)), len(text)]
    for start, stop in itertools.pairwise(bounds):
        window.feed(text[start:stop])
        assert sum(len(piece) for piece in window._head) <= 2000
    window.finish()
    total, shown, footer = _window_model(text, offset, limit)
    assert window.total == total
    if offset <= max(total, 1):
        assert window.shown == shown
        assert window.footer() == footer


def test_the_window_holds_at_most_the_cut_of_a_line_fed_small_then_large() -> None:
    window = LineWindow(offset=1, limit=1)
    window.feed("x" * 100)
    window.feed("y" * 5000)
    assert sum(len(piece) for piece in window._head) == 2000
    window.finish()
    assert window.shown == ["1: " + "x" * 100 + "y" * 1900 + "... (line truncated to 2000 chars)"]


def test_a_last_line_split_across_pieces_past_the_window_is_counted() -> None:
    window = LineWindow(offset=1, limit=1)
    window.feed("a\nbbb")
    window.feed("bbb")
    window.finish()
    assert window.total == 2
    assert window.footer() == "(Showing lines 1-1 of 2. Use offset=2 to continue.)"
    # The same, when the piece before the last one ends past the window after a newline.
    window = LineWindow(offset=1, limit=1)
    for piece in ("a\n", "x\nbbb", "bbb"):
        window.feed(piece)
    window.finish()
    assert window.total == 3


def test_the_window_holds_at_most_the_cut_of_a_line_fed_in_small_pieces() -> None:
    window = LineWindow(offset=1, limit=1)
    for _ in range(300):
        window.feed("x" * 100)
        assert sum(len(piece) for piece in window._head) <= 2000
    window.finish()
    assert window.shown == ["1: " + "x" * 2000 + "... (line truncated to 2000 chars)"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"file_path": ""}, "file_path must be a non-empty string"),
        ({"file_path": "", "offset": 0}, "file_path must be a non-empty string"),
        ({"file_path": "a", "offset": 0, "limit": 0}, "offset must be a positive integer"),
        ({"file_path": "a", "offset": -3}, "offset must be a positive integer"),
        ({"file_path": "a", "limit": 0}, "limit must be a positive integer"),
        ({"file_path": "a", "limit": 2001}, "limit must be less than or equal to 2000"),
    ],
)
def test_read_checks_after_the_schema_are_plain_errors(
    ws: Workspace, args: dict[str, object], message: str
) -> None:
    result = ws.call_tool("read", args)
    assert (text_of(result), result.is_error, result.error) == (f"Error: {message}", True, None)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"file_path": "", "old_string": "", "new_string": ""},
            "file_path must be a non-empty string",
        ),
        (
            {"file_path": "a", "old_string": "", "new_string": ""},
            "old_string must be a non-empty string",
        ),
        (
            {"file_path": "a", "old_string": "x", "new_string": "x"},
            "old_string and new_string must differ",
        ),
    ],
)
def test_edit_checks_after_the_schema_are_plain_errors(
    ws: Workspace, tmp_path: Path, args: dict[str, object], message: str
) -> None:
    result = ws.call_tool("edit", args)
    assert (text_of(result), result.error) == (f"Error: {message}", None)
    assert os.listdir(tmp_path) == []


def test_write_check_after_the_schema_is_a_plain_error(ws: Workspace) -> None:
    result = ws.call_tool("write", {"file_path": "", "content": "x"})
    assert (text_of(result), result.error) == ("Error: file_path must be a non-empty string", None)


# -- write and edit outputs -----------------------------------------------------------------


def test_write_reports_created_then_updated_and_never_echoes_content(
    ws: Workspace, tmp_path: Path
) -> None:
    p = f"{tmp_path}/new.txt"
    assert write(ws, "new.txt", "secret body\n") == (shown(p, "Created file"), None)
    assert write(ws, "new.txt", "second body\n") == (shown(p, "Updated file"), None)
    assert (tmp_path / "new.txt").read_text() == "second body\n"


def test_edit_outputs(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("a a b\n")
    read(ws, "e.txt")
    assert edit(ws, "e.txt", "b", "c") == (
        f"The file {tmp_path}/e.txt has been updated successfully.",
        None,
    )
    assert edit(ws, "e.txt", "a", "z", replace_all=True) == (
        f"The file {tmp_path}/e.txt has been updated. All occurrences were successfully replaced.",
        None,
    )
    assert (tmp_path / "e.txt").read_text() == "z z c\n"


def test_edit_not_found_and_ambiguous_carry_no_remedy(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("item\nitem\n")
    read(ws, "e.txt")
    p = f"{tmp_path}/e.txt"
    assert edit(ws, "e.txt", "nope", "x") == (
        f'Error: old_string was not found in "{p}"',
        ("FsError", "FS_EDIT_NOT_FOUND"),
    )
    assert edit(ws, "e.txt", "item", "x") == (
        f'Error: old_string matched 2 times in "{p}"; provide a more specific old_string '
        "or set replace_all to true",
        ("FsError", "FS_AMBIGUOUS_EDIT"),
    )


# -- the remedy texts of §4.3, on a real directory ------------------------------------------


def test_stale_write_gets_the_reread_remedy(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    read(ws, "a.txt")
    (tmp_path / "a.txt").write_text("two!\n")
    assert write(ws, "a.txt", "three\n") == (
        f'Error: cannot write "{tmp_path}/a.txt": file changed since it was read'
        " — re-read the file, then retry",
        STALE,
    )
    assert (tmp_path / "a.txt").read_text() == "two!\n"


def test_vanished_write_gets_the_reread_remedy(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    read(ws, "a.txt")
    (tmp_path / "a.txt").unlink()
    assert write(ws, "a.txt", "three\n") == (
        f'Error: cannot write "{tmp_path}/a.txt": file no longer exists'
        " — re-read the file, then retry",
        STALE,
    )


def test_stale_edit_gets_the_reread_remedy(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    read(ws, "a.txt")
    (tmp_path / "a.txt").write_text("two!\n")
    assert edit(ws, "a.txt", "one", "1") == (
        f'Error: cannot edit "{tmp_path}/a.txt": file changed since it was read'
        " — re-read the file, then retry",
        STALE,
    )


def test_overwrite_unread_gets_the_read_remedy(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("keep\n")
    assert write(ws, "a.txt", "clobber\n") == (
        f'Error: cannot overwrite existing "{tmp_path}/a.txt" without reading it first'
        " — read the file, then retry",
        UNOBSERVED,
    )
    assert (tmp_path / "a.txt").read_text() == "keep\n"


def test_edit_before_read_gets_the_read_remedy(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("keep\n")
    assert edit(ws, "a.txt", "keep", "x") == (
        f'Error: edit requires reading "{tmp_path}/a.txt" first — read the file, then retry',
        UNOBSERVED,
    )


def test_the_remedied_error_keeps_the_provider_error_as_its_cause(tmp_path: Path) -> None:
    from reference.fs import LocalFs
    from reference.policy import ObservationPolicy
    from reference.tools import FsTools

    (tmp_path / "a.txt").write_text("keep\n")
    tools = FsTools(
        LocalFs(), cwd=str(tmp_path), policy=ObservationPolicy(), sandbox_mode="danger-full-access"
    )
    with pytest.raises(FsError) as info:
        tools.write({"file_path": "a.txt", "content": "x"})
    err = info.value
    assert err.message.endswith(" — read the file, then retry")
    assert isinstance(err.cause, FsError)
    assert (
        err.cause.message
        == f'cannot overwrite existing "{tmp_path}/a.txt" without reading it first'
    )
    assert err.cause.code == err.code
    with pytest.raises(FsError) as policy_info:
        tools.edit({"file_path": "a.txt", "old_string": "keep", "new_string": "x"})
    assert isinstance(policy_info.value.cause, FsError)
    assert policy_info.value.cause.message == f'edit requires reading "{tmp_path}/a.txt" first'


@pytest.mark.parametrize("how", ["link", "without hard links"])
def test_a_missing_file_and_a_lost_create_race_chain_the_os_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    # SPEC {fs.os-error.cause}: every FsError made from an OS error chains it, also through
    # the remedy. The text the model sees is unchanged.
    ws = open_workspace(tmp_path)
    missing = ws.call_tool("read", {"file_path": "missing.txt"})
    assert text_of(missing) == f'Error: cannot read "{tmp_path}/missing.txt": not found'
    err = ws.failure(missing.call_id)
    assert isinstance(err, FsError)
    assert isinstance(err.cause, FileNotFoundError)

    if how == "without hard links":

        def no_links(*args: object, **where: object) -> None:
            raise OSError(errno.EPERM, os.strerror(errno.EPERM))

        monkeypatch.setattr(os, "link", no_links)

    def compete() -> None:
        (tmp_path / "new.txt").write_text("competitor")

    ws.arm_pause("staged", compete)
    lost = ws.call_tool("write", {"file_path": "new.txt", "content": "mine"})
    assert (text_of(lost), error_of(lost)) == (
        f'Error: cannot overwrite existing "{tmp_path}/new.txt" without reading it first'
        " — read the file, then retry",
        UNOBSERVED,
    )
    remedied = ws.failure(lost.call_id)
    assert isinstance(remedied, FsError)
    assert isinstance(remedied.cause, FsError)
    assert isinstance(remedied.cause.cause, FileExistsError)
    assert (tmp_path / "new.txt").read_text() == "competitor"


def test_read_applies_no_remedy(ws: Workspace, tmp_path: Path) -> None:
    assert read(ws, "missing.txt") == (
        f'Error: cannot read "{tmp_path}/missing.txt": not found',
        ("FsError", "FS_NOT_FOUND"),
    )


# -- observations ---------------------------------------------------------------------------


def test_own_write_and_edit_count_as_observations(ws: Workspace, tmp_path: Path) -> None:
    assert write(ws, "a.txt", "one\n")[1] is None
    assert edit(ws, "a.txt", "one", "two")[1] is None
    assert edit(ws, "a.txt", "two", "three")[1] is None
    assert write(ws, "a.txt", "four\n")[1] is None
    assert (tmp_path / "a.txt").read_text() == "four\n"


def test_a_failed_read_keeps_the_previous_observation(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    read(ws, "a.txt")
    assert read(ws, "a.txt", offset=9)[1] == ("FsError", "FS_NOT_FOUND")
    assert write(ws, "a.txt", "fresh\n")[1] is None


def test_a_failed_read_does_not_refresh_a_stale_observation(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    read(ws, "a.txt")
    (tmp_path / "a.txt").write_bytes(b"\0binary now")
    assert read(ws, "a.txt")[1] == ("FsError", "FS_NOT_TEXT")
    assert write(ws, "a.txt", "x")[1] == STALE


def test_symlink_aliases_share_one_observation(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("one\n")
    (tmp_path / "alias.txt").symlink_to("real.txt")
    read(ws, "alias.txt")
    assert write(ws, "real.txt", "two\n")[1] is None
    (tmp_path / "real.txt").write_text("external\n")
    assert edit(ws, "alias.txt", "two", "x")[1] == STALE


def test_observations_belong_to_one_session(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    first, second = open_workspace(tmp_path), open_workspace(tmp_path)
    read(first, "a.txt")
    assert write(second, "a.txt", "x")[1] == UNOBSERVED
    assert write(first, "a.txt", "x")[1] is None


def test_without_a_policy_the_tools_are_unguarded(tmp_path: Path) -> None:
    ws = open_workspace(tmp_path, policy=False)
    (tmp_path / "a.txt").write_text("one\n")
    assert edit(ws, "a.txt", "one", "two")[1] is None
    assert write(ws, "a.txt", "three\n")[1] is None
    assert edit(ws, "gone.txt", "a", "b") == (
        f'Error: cannot edit "{tmp_path}/gone.txt": file changed since it was read'
        " — re-read the file, then retry",
        STALE,
    )


# -- the deleted-target dead end (§4.1) -----------------------------------------------------


def test_deleted_target_is_a_dead_end_until_it_reappears_and_is_read(
    ws: Workspace, tmp_path: Path
) -> None:
    path = tmp_path / "draft.txt"
    p = f"{tmp_path}/draft.txt"
    path.write_text("first\n")
    read(ws, "draft.txt")
    path.unlink()
    gone = (
        f'Error: cannot write "{p}": file no longer exists — re-read the file, then retry',
        STALE,
    )
    changed_edit = (
        f'Error: cannot edit "{p}": file changed since it was read — re-read the file, then retry',
        STALE,
    )
    assert write(ws, "draft.txt", "second\n") == gone
    assert edit(ws, "draft.txt", "first", "second") == changed_edit
    assert read(ws, "draft.txt") == (
        f'Error: cannot read "{p}": not found',
        ("FsError", "FS_NOT_FOUND"),
    )
    assert write(ws, "draft.txt", "second\n") == gone
    assert edit(ws, "draft.txt", "first", "second") == changed_edit
    assert not path.exists()
    assert os.listdir(tmp_path) == []
    path.write_text("reappeared\n")
    assert write(ws, "draft.txt", "second\n") == (
        f'Error: cannot write "{p}": file changed since it was read — re-read the file, then retry',
        STALE,
    )
    assert path.read_text() == "reappeared\n"
    read(ws, "draft.txt")
    assert write(ws, "draft.txt", "second\n") == (shown(p, "Updated file"), None)


# -- sandbox (§3.5, §4.4) -------------------------------------------------------------------


MARKER = "Error: [sandbox: file access denied under {mode} mode]"


@pytest.fixture
def fenced(tmp_path: Path) -> tuple[Workspace, Path, Path]:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "target.txt").write_text("untouched\n")
    return open_workspace(root, sandbox="workspace-write"), root, outside


@pytest.mark.parametrize("spelling", ["../outside/target.txt", "ABS", "link/target.txt"])
def test_workspace_write_fences_every_way_out(
    fenced: tuple[Workspace, Path, Path], spelling: str
) -> None:
    ws, root, outside = fenced
    (root / "link").symlink_to(outside)
    path = str(outside / "target.txt") if spelling == "ABS" else spelling
    assert write(ws, path, "escaped\n") == (
        MARKER.format(mode="workspace-write"),
        ("FsError", "FS_SANDBOX_DENIED"),
    )
    assert edit(ws, path, "untouched", "x") == (
        MARKER.format(mode="workspace-write"),
        ("FsError", "FS_SANDBOX_DENIED"),
    )
    assert (outside / "target.txt").read_text() == "untouched\n"
    assert sorted(os.listdir(outside)) == ["target.txt"]


def test_a_symlinked_file_pointing_outside_is_outside(fenced: tuple[Workspace, Path, Path]) -> None:
    ws, root, outside = fenced
    (root / "inside-looking.txt").symlink_to(outside / "target.txt")
    read(ws, "inside-looking.txt")
    assert write(ws, "inside-looking.txt", "x")[1] == ("FsError", "FS_SANDBOX_DENIED")
    assert (outside / "target.txt").read_text() == "untouched\n"


def test_the_fence_speaks_before_the_policy(fenced: tuple[Workspace, Path, Path]) -> None:
    ws, _, _ = fenced
    assert write(ws, "../outside/target.txt", "x")[0] == MARKER.format(mode="workspace-write")
    assert edit(ws, "../outside/new.txt", "a", "b")[0] == MARKER.format(mode="workspace-write")


def test_reads_are_not_fenced(fenced: tuple[Workspace, Path, Path]) -> None:
    ws, _, outside = fenced
    assert read(ws, "../outside/target.txt")[0] == shown(
        f"{outside}/target.txt", "1: untouched\n\n(End of file - total 1 lines)"
    )


def test_read_only_mode_fences_the_workspace_too(tmp_path: Path) -> None:
    ws = open_workspace(tmp_path, sandbox="read-only")
    (tmp_path / "a.txt").write_text("one\n")
    read(ws, "a.txt")
    assert write(ws, "a.txt", "x") == (
        MARKER.format(mode="read-only"),
        ("FsError", "FS_SANDBOX_DENIED"),
    )
    assert (tmp_path / "a.txt").read_text() == "one\n"


def test_extra_writable_roots_are_inside(tmp_path: Path) -> None:
    root, extra = tmp_path / "ws", tmp_path / "extra"
    root.mkdir()
    extra.mkdir()
    ws = open_workspace(root, sandbox="workspace-write", writable_roots=[str(extra)])
    assert write(ws, "../extra/new.txt", "ok\n")[1] is None
    assert write(ws, "../elsewhere.txt", "no\n")[1] == ("FsError", "FS_SANDBOX_DENIED")


def test_danger_full_access_has_no_fence(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    ws = open_workspace(root)
    assert write(ws, "../free.txt", "ok\n")[1] is None
    assert (tmp_path / "free.txt").read_text() == "ok\n"


def test_the_marker_chains_the_provider_denial(tmp_path: Path) -> None:
    from reference.fs import LocalFs, SandboxFs
    from reference.tools import FsTools

    fs = SandboxFs(LocalFs(), "read-only", [str(tmp_path)])
    tools = FsTools(fs, cwd=str(tmp_path), policy=None, sandbox_mode="read-only")
    with pytest.raises(FsError) as info:
        tools.write({"file_path": "a.txt", "content": "x"})
    assert info.value.message == "[sandbox: file access denied under read-only mode]"
    assert isinstance(info.value.cause, FsError)
    assert (
        info.value.cause.message
        == f'cannot write "{tmp_path}/a.txt": file access denied under read-only mode'
    )


@pytest.mark.parametrize("path", ["loop", "loop/a.txt"])
@pytest.mark.parametrize("sandbox", ["danger-full-access", "workspace-write"])
def test_a_symlink_loop_gets_reads_answer_from_every_tool(
    tmp_path: Path, path: str, sandbox: str
) -> None:
    # Neither a redirect nor a sandbox denial: the key kept the link because it cannot be
    # resolved, and every tool says so as read does (SPEC {fs.msg.os-error}, {fs.os-error.cause}).
    (tmp_path / "loop").symlink_to("loop")
    ws = open_workspace(tmp_path, sandbox=sandbox, policy=False)
    calls = {
        "read": {"file_path": path},
        "write": {"file_path": path, "content": "x"},
        "edit": {"file_path": path, "old_string": "a", "new_string": "b"},
    }
    for op, arguments in calls.items():
        result = ws.call_tool(op, arguments)
        assert (text_of(result), error_of(result)) == (
            f'Error: cannot {op} "{tmp_path}/{path}": too many levels of symbolic links',
            ("FsError", "FS_IO_ERROR"),
        )
        err = ws.failure(result.call_id)
        assert isinstance(err, FsError)
        assert isinstance(err.cause, OSError)
        assert err.cause.errno == errno.ELOOP
    assert os.listdir(tmp_path) == ["loop"]


def test_an_unknown_sandbox_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown sandbox mode 'yolo'"):
        open_workspace(tmp_path, sandbox="yolo")


# -- nothing is lost ------------------------------------------------------------------------


def test_failed_mutations_leave_no_temp_files(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    write(ws, "a.txt", "x")
    edit(ws, "a.txt", "one", "two")
    read(ws, "a.txt")
    (tmp_path / "a.txt").write_text("changed\n")
    write(ws, "a.txt", "x")
    edit(ws, "a.txt", "changed", "y")
    assert leftovers(tmp_path) == []
    assert (tmp_path / "a.txt").read_text() == "changed\n"


def test_workspace_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError, match="workspace root is not a directory"):
        open_workspace(tmp_path / "missing")


def test_the_tool_descriptions_the_model_sees_are_exactly_these(ws: Workspace) -> None:
    """A description is a prompt: a change in it is a change in agent behaviour."""
    specs = {spec["name"]: spec for spec in ws.tool_specs()}
    assert {name: spec["description"] for name, spec in specs.items()} == {
        "read": "Read a text file, with line numbers, a window of lines at a time.",
        "write": "Create a file, or replace one you have read, with new content.",
        "edit": "Replace exact text in a file you have read.",
    }
    arguments = {
        name: {key: (value["type"], value["description"]) for key, value in props.items()}
        for name, spec in specs.items()
        for props in [spec["parameters"]["properties"]]  # type: ignore[index]
    }
    path = ("string", "Path of the file, absolute or relative.")
    assert arguments == {
        "read": {
            "file_path": path,
            "offset": ("integer", "First line to show, from 1 (default 1)."),
            "limit": ("integer", "Lines to show, 1-2000 (default 2000)."),
        },
        "write": {
            "file_path": path,
            "content": ("string", "The complete new content of the file."),
        },
        "edit": {
            "file_path": path,
            "old_string": ("string", "Exact text to replace."),
            "new_string": ("string", "Text to put in its place."),
            "replace_all": (
                "boolean",
                "Replace every occurrence instead of exactly one (default false).",
            ),
        },
    }
