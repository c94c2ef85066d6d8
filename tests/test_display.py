"""Words that never change: paths by their place, values as JSON, one verdict per defect.

The unit half pins each verdict form exactly; the fixture half runs the suite twice, under two
different temporary directories, on harnesses that take absolute paths, and finds the same bytes.
"""

from __future__ import annotations

import json
import random
import string
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance import display, watch
from conformance.__main__ import main
from conformance.client import Result
from conformance.harness.contract import Profile
from conformance.report.terminal import _one_line
from conformance.verdict import (
    CallRecord,
    ConformanceFailure,
    Judge,
    Violation,
    differ,
    verdict_text,
)
from conformance.watch import Change, Watch, content_entry, diff
from tests.suite import REPO, case_of, cases, fixture, report, run_suite

ABSOLUTE_RACY = fixture("absolute_racy:harness")
ABSOLUTE_WORDING = str(REPO / "tests" / "fixtures" / "absolute_racy.toml")
PROFILE = Profile("h", "1", "python", frozenset({"tools"}))


@pytest.fixture
def places(tmp_path: Path) -> Iterator[Path]:
    """A case's directories registered as a run registers them; the case's workspace root."""
    base, root = tmp_path / "case0", tmp_path / "case0" / "ws"
    root.mkdir(parents=True)
    display.PLACES.run_directory("harness tmp", tmp_path / "scratch" / "tmp")
    display.PLACES.run_directory("harness cwd", tmp_path / "scratch" / "cwd")
    display.PLACES.run_directory("tmp", tmp_path)
    Watch(base, root)  # a case's watch names its workspace
    yield root
    display.PLACES.forget_all()


# -- handles ------------------------------------------------------------------------------------


def test_a_handle_is_named_by_its_first_appearance_in_the_case() -> None:
    try:
        shown = display.text('[{"handle": "err_1350"}, false] where [{"handle": "err_1349"}, '
                             'true]; {"session": "s7"} {"handle": "err_1349"} {"handle": "a\\"b"}')  # fmt: skip
        assert shown == ('[{"handle": "<handle 1>"}, false] where [{"handle": "<handle 2>"}, '
                         'true]; {"session": "<handle 3>"} {"handle": "<handle 2>"} '
                         '{"handle": "<handle 4>"}')  # fmt: skip
        assert display.text('"err_1350" is a value, not a handle') == (
            '"err_1350" is a value, not a handle'
        )
        display.PLACES.forget_case()  # the next case numbers its own from 1
        assert display.text('{"handle": "err_1351"}') == '{"handle": "<handle 1>"}'
    finally:
        display.PLACES.forget_all()


def test_a_value_the_run_made_up_is_named_by_its_variable() -> None:
    try:
        display.PLACES.run_values({"hc-short-1a2b3c": "<$TOKEN>",
                                   "hc-short-1a2b3c-rotated": "<$TOKEN_ROTATED>"})  # fmt: skip
        shown = display.show(["[REDACTED] hc-short-1a2b3c-rotated and hc-short-1a2b3c"])
        assert shown == '["[REDACTED] <$TOKEN_ROTATED> and <$TOKEN>"]'
    finally:
        display.PLACES.forget_all()
    assert display.text("hc-short-1a2b3c") == "hc-short-1a2b3c"


def test_an_unredacted_secret_reads_the_same_on_every_run(tmp_path: Path) -> None:
    # The run plants new random values each time: a verdict quoting one changed from run to
    # run (SEC-004 against a harness that redacts nothing read "UPPER-D…", then "UPPER-4…").
    messages = []
    for run in range(2):
        path = tmp_path / f"r{run}.json"
        run_suite("--harness", "tests.mutants.no_redaction:harness", "--conformance-case",
                  "SEC-004", "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
        entry = case_of(report(path), "SEC-004")
        assert entry["outcome"] == "failed", entry
        messages.append(str(entry["message"]))
    assert messages[0] == messages[1]
    assert '["<$harness_conformance_api_key>' in messages[0], messages[0]


def test_a_case_alone_reads_as_it_does_in_the_whole_run(tmp_path: Path) -> None:
    """A harness numbers its handles by its own history; the verdict does not."""
    harness = ("--harness", "tests.mutants.remedy_copies_others:harness")
    verdicts: list[Any] = []
    for name, selection in (("whole", ()), ("alone", ("--conformance-case", "REM-006"))):
        path = tmp_path / f"{name}.json"
        run_suite(*harness, *selection, "--conformance-report", str(path), cwd=tmp_path)
        verdicts.append(case_of(report(path), "REM-006")["verdicts"])
    assert verdicts[0] == verdicts[1]
    assert '{"handle": "<handle 1>"}' in verdicts[0][0]["verdict"]


# -- paths --------------------------------------------------------------------------------------


def test_a_path_in_a_sentence_is_named_by_its_place(places: Path) -> None:
    base = places.parent
    assert display.path(str(places / "a.txt")) == "a.txt"
    assert display.path(str(places)) == "."
    assert display.path(str(places / "../outside/t.txt")) == "../outside/t.txt"  # as spelled
    assert display.path(str(base / "outside" / "t.txt")) == "<outside>/t.txt"
    assert display.path(str(base / "extra" / "n.txt")) == "<extra>/n.txt"
    assert display.path(str(base / "free.txt")) == "../free.txt"
    assert display.path(str(base / "ws2" / "x.txt")) == "../ws2/x.txt"  # not inside "ws"
    assert display.path(str(base.parent / "scratch" / "tmp" / "u.bak")) == "<harness tmp>/u.bak"
    assert display.path(str(base.parent / "scratch" / "cwd" / "c")) == "<harness cwd>/c"
    assert display.path(str(base.parent / "probe0" / "p")) == "<tmp>/probe0/p"
    assert display.path("sub/a.txt") == "sub/a.txt"
    assert display.path("/etc/passwd") == "/etc/passwd"


def test_a_path_in_a_harness_text_keeps_that_it_was_absolute(places: Path) -> None:
    base = places.parent
    said = (
        f"Error: {places}/a.txt was modified; see {base}/outside/t.txt, {base}/ws2/x, "
        f"{base}/free.txt and {base.parent}/scratch/tmp/u.bak in {places}."
    )
    assert display.text(said) == (
        "Error: <root>/a.txt was modified; see <outside>/t.txt, <root>/../ws2/x, "
        "<root>/../free.txt and <harness tmp>/u.bak in <root>."
    )


def test_a_symlinked_temporary_directory_is_named_both_ways(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "ws").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(real)
    places = display.Places()
    places.case(tmp_path / "alias" / "ws", tmp_path / "alias")
    assert places.path(str(real / "ws" / "a.txt")) == "a.txt"
    assert places.text(f"{real}/ws/a.txt or {tmp_path}/alias/ws/a.txt") == (
        "<root>/a.txt or <root>/a.txt"
    )


def test_a_case_with_a_workspace_per_run_names_every_run_as_it_did_then(tmp_path: Path) -> None:
    """The state machine makes ``run-N/ws`` per run and lists its calls after the last one:
    an earlier run's paths were shown as ``<tmp>/cases/STM-001-<random>/run-1/ws/…``."""
    case = tmp_path / "cases" / "STM-001-k3j2x9a1"
    places = display.Places()
    for run in (1, 2):
        places.case(case / f"run-{run}" / "ws", case / f"run-{run}")
    assert places.text(f"{case}/run-1/ws/f.txt and {case}/run-2/ws/f.txt") == (
        "<root>/f.txt and <root>/f.txt"
    )
    places.forget_case()
    places.case(tmp_path / "ws", tmp_path)
    assert places.path(str(case / "run-1" / "ws" / "f.txt")) == (
        "../cases/STM-001-k3j2x9a1/run-1/ws/f.txt"  # forgotten with its case
    )


def test_a_change_names_its_path_by_place(places: Path) -> None:
    created = Change("../outside/t.txt", None, content_entry(b"hi\n"))
    assert created.describe() == '"<outside>/t.txt" created (3 bytes: "hi\\n")'
    link = Change("l", content_entry(b""), None)
    assert link.describe() == '"l" deleted'
    beside = Change("../stray.txt", None, content_entry(b"\xff"))
    assert beside.describe() == '"../stray.txt" created (1 bytes: "\ufffd")'


def test_a_path_a_harness_wrote_into_a_file_is_named_before_the_preview_cuts_it(
    places: Path,
) -> None:
    """Seen on openhands: its history files hold the absolute path they are keyed by. Cut at
    the preview's 48 bytes, the run's random directory name showed, or not, by HOME's length."""
    content = json.dumps({"key": f"{places}/new.txt", "value": "x" * 60}).encode()
    made = Change("../stray.json", None, content_entry(content))
    assert made.describe() == (
        f'"../stray.json" created ({len(content)} bytes: '
        '"{\\"key\\": \\"<root>/new.txt\\", \\"value\\": \\"xxxxxxxxxxxx"…)'
    )


def test_naming_a_file_preview_brings_no_secret_forward(
    monkeypatch: pytest.MonkeyPatch, places: Path
) -> None:
    """A name is shorter than what it names: what follows moves into the preview. A secret cut
    by the end of what is named must not move in with it, started but not whole (a review's
    example: a long session string, named ``<handle 1>``, and a key at the stored head's end)."""
    key = "sk-proj-" + "Q7" * 24
    monkeypatch.setenv("OPENAI_API_KEY", key)
    window = watch._PREVIEW_BYTES + 2 * display.PLACES.longest()
    for end in (window, watch._HEAD_BYTES):  # the named window's end, and the stored head's
        for filler in (f"{places}/a ", "s"):
            lead = '{"session": "' + filler * (end // len(filler))
            content = (lead[: end - 10] + '", "t": "' + key + '"}' + "x" * 9000).encode()
            shown = Change("../k.txt", None, content_entry(content)).describe()
            assert "sk-" not in shown, (end, shown)
            assert shown.startswith(f'"../k.txt" created ({len(content)} bytes: "{{')


def test_a_handle_past_a_file_preview_takes_no_number(places: Path) -> None:
    content = json.dumps({"note": "y" * 60, "handle": "h9"}).encode()
    assert "h9" not in Change("../h.json", None, content_entry(content)).describe()
    assert display.PLACES.handle("the first one shown") == "<handle 1>"


def test_a_file_preview_cuts_before_a_name_not_inside_it(places: Path) -> None:
    content = ("x" * 44 + f"{places}/a.txt").encode()
    assert Change("../n.txt", None, content_entry(content)).describe() == (
        f'"../n.txt" created ({len(content)} bytes: "{"x" * 44}"…)'
    )
    harness_tmp = places.parent.parent / "scratch" / "tmp"  # named "<harness tmp>", a space in it
    content = ("x" * 40 + f"{harness_tmp}/f").encode()
    assert Change("../m.txt", None, content_entry(content)).describe() == (
        f'"../m.txt" created ({len(content)} bytes: "{"x" * 40}"…)'
    )
    assert Change("../b.bin", None, content_entry(b"\xff" * 60)).describe() == (
        '"../b.bin" created (60 bytes: "' + "\ufffd" * 48 + '"…)'
    )


def test_a_name_the_harness_drew_at_random_is_shown_by_its_shape() -> None:
    # what the common generators draw: hex tokens, process IDs and times, Python's tempfile
    assert display.shaped(".a.txt.c85448b589af.reference-tmp") == ".a.txt.….reference-tmp"
    assert display.shaped("a.txt.tmp.12345") == "a.txt.tmp.…"
    assert display.shaped("<harness tmp>/tmpk3j2_x9a") == "<harness tmp>/tmp…"
    assert display.shaped("tmpq1w2e3r4/b.txt") == "tmp…/b.txt"
    assert display.shaped("x/DEADBEEF12.part") == "x/….part"
    # Rust's tempfile crate: ".tmp" and six letters or digits (NamedTempFile::new_in)
    assert display.shaped(".tmpAb3xYz") == ".tmp…"
    assert display.shaped("d/.tmpq1W2e3") == "d/.tmp…"
    assert (
        display.text("cannot persist '/x/.tmpAb3xYz': denied")
        == "cannot persist '/x/.tmp…': denied"
    )
    # the suite's own names, and a harness's fixed ones, stay as they are
    for kept in ("latin1.txt", "sbx-014.txt", "shared3.txt", "a.txt~", ".a.txt.swp", "deadbeef",
                 "a.tmpAb3xYz", ".tmpAb3xYz7"):  # fmt: skip
        assert display.shaped(kept) == kept
    made = Change(".a.txt.4f0e2d9c1b3a.tmp", None, content_entry(b"x"))
    assert made.describe() == '".a.txt.….tmp" created (1 bytes: "x")'


def test_a_temporary_name_in_the_harnesss_own_directory_is_shown_by_its_shape() -> None:
    # OpenHands' editor history: mkdtemp(prefix="oh_editor_history_") read differently on every
    # run of the same harness, in 26 of its verdicts
    assert display.shaped("<harness tmp>/oh_editor_history_5r0368so/1a2b3c4d5e6f7a8b.json") == (
        "<harness tmp>/oh_editor_history_…/….json"
    )
    assert display.shaped("<harness tmp>/cache_abcdefgh.json") == "<harness tmp>/cache_….json"
    assert display.shaped("<harness tmp>/session-Ab3xYz/a.txt") == "<harness tmp>/session-…/a.txt"
    # what tempfile draws before a .tmp suffix, in a name and in a harness's message
    assert display.shaped("deep/er/.new.txt._ocqqqoa.tmp") == "deep/er/.new.txt.….tmp"
    said = "No such file or directory: '/x/.new.txt.z0njjqze.tmp' while trying to write"
    assert (
        display.text(said) == "No such file or directory: '/x/.new.txt.….tmp' while trying to write"
    )
    # the same names in the workspace are the harness's or the suite's own, and stay
    for kept in ("oh_editor_history_5r0368so/x.json", "data-Ab3xYz/a.txt", "<harness tmp>/notes"):
        assert display.shaped(kept) == kept


def test_every_draw_of_a_temporary_name_has_the_same_shape() -> None:
    # A draw with four digits in a row ("2685_k84") was taken for a drawn number alone, and
    # OpenHands' verdict read "oh_editor_history_…_k84" on one run in about two thousand.
    assert display.shaped("<harness tmp>/oh_editor_history_2685_k84/a.json") == (
        "<harness tmp>/oh_editor_history_…/a.json"
    )
    assert display.shaped("<harness tmp>/tmpa_bcdefg") == "<harness tmp>/tmp…"
    draw = random.Random(14)
    python, node = (
        string.ascii_lowercase + string.digits + "_",
        string.ascii_letters + string.digits,
    )
    # name with {} for the draw, its alphabet and length, and the shape every draw must show
    for name, alphabet, length, shape in [
        ("oh_editor_history_{}/a.json", python, 8, "oh_editor_history_…/a.json"),
        ("tmp{}/a.json", python, 8, "tmp…/a.json"),
        ("tmp{}", python, 8, "tmp…"),
        ("x.txt.{}.tmp", python, 8, "x.txt.….tmp"),
        ("gemini-{}/x.txt", node, 6, "gemini-…/x.txt"),
    ]:
        shapes = {
            display.shaped("<harness tmp>/" + name.format(_drawn(draw, alphabet, length)))
            for _ in range(20_000)
        }
        assert shapes == {f"<harness tmp>/{shape}"}


def _drawn(draw: random.Random, alphabet: str, length: int) -> str:
    return "".join(draw.choice(alphabet) for _ in range(length))


def test_changes_that_read_alike_come_in_the_order_of_their_words() -> None:
    # Two history files OpenHands names at random: ordered by their random names, the verdict
    # listed them one way on one run and the other way on the next.
    temp = "<harness tmp>/oh_editor_history_k3j2x9a1"
    after = {f"{temp}/0011ffee22.json": content_entry(b"b" * 146),
             f"{temp}/ffee0011aa.json": content_entry(b"a" * 118)}  # fmt: skip
    described = [change.describe() for change in diff({}, after)]
    assert [d.split(" (")[1][:9] for d in described] == ["118 bytes", "146 bytes"]
    assert described[0].startswith('"<harness tmp>/oh_editor_history_…/….json" created')


def test_a_race_of_two_failing_calls_ends_on_the_first_calls_failure() -> None:
    # Which racer failed first was the scheduler's choice: GRD-013 named "writer 0" on one run
    # and "writer 1" on the next for a harness whose every write fails.
    from conformance.cases.test_guards import _at_once

    second_failed = threading.Event()

    def first() -> Result:
        second_failed.wait()
        raise RuntimeError("the first call")

    def second() -> Result:
        try:
            raise RuntimeError("the second call")
        finally:
            second_failed.set()

    with pytest.raises(RuntimeError, match=r"^the first call$"):
        _at_once([first, second])


def test_rounds_of_a_race_are_one_verdict_and_a_single_round_keeps_its_words() -> None:
    # GRD-025 named its rounds ("round 3: … shared3.txt"): which rounds a race lost in is the
    # scheduler's choice, so the words changed from run to run.
    judge = Judge(frozenset({"behaviour"}))
    for number in judge.rounds(10):
        judge.true(number % 2 == 0, "an edit was lost", rule="fs.cas.one-winner")
    assert [v.sentence.split(";")[0] for v in judge.violations] == [
        "in some of 10 rounds: an edit was lost"
    ]
    once = Judge(frozenset({"behaviour"}))
    for _ in once.rounds(1):
        once.true(False, "an edit was lost", rule="fs.cas.one-winner")
    assert [v.sentence.split(";")[0] for v in once.violations] == ["an edit was lost"]


def test_a_call_on_an_absolute_path_reads_as_the_relative_one(places: Path) -> None:
    record = CallRecord("write", {"file_path": str(places / "a.txt"), "content": "x"})
    wire = {"callId": "c1", "content": [{"type": "text", "text": "ok"}], "isError": False}
    result = Result(wire, "c1", "ok", False, None, 1, record, [], None, PROFILE)
    assert result.what == 'write of "a.txt"'
    record.arguments = {"file_path": "a\x1b\ud800.txt"}
    assert result.what == 'write of "a\\u001b\\ud800.txt"'


# -- values -------------------------------------------------------------------------------------


def test_values_are_shown_as_json() -> None:
    assert display.show(True) == "true"
    assert display.show(None) == "null"
    assert display.show({"name": "FsError", "code": None}) == '{"name": "FsError", "code": null}'
    assert display.show(("a", 1)) == '["a", 1]'
    assert display.show('say "hi"\n') == '"say \\"hi\\"\\n"'
    assert display.show("é\u200b\x7f") == '"é\\u200b\\u007f"'
    assert display.show("\U000e0001") == '"\\udb40\\udc01"'
    assert display.show(b"clobber\n") == '"clobber\\n"'
    assert display.show(b"caf\xe9") == "<bytes 636166e9>"


def test_a_long_value_is_cut_and_a_string_stays_a_string() -> None:
    assert display.show("x" * 200, 12) == '"xxxxxxxxx"…'
    assert display.show("\n" * 200, 12) == '"\\n\\n\\n\\n"…'  # never half an escape
    assert display.show(list(range(100)), 12) == "[0, 1, 2, 3…"


def test_a_value_cut_before_it_is_shown_reads_as_the_whole_one_cut(places: Path) -> None:
    # show() cuts long values before escaping and renaming them; what a verdict reads must be
    # exactly what the whole value would give, paths named and hidden characters escaped.
    root = str(places)
    values: list[object] = [
        f"{root}/a.txt\u200b" * 5000,
        {"file_path": f"{root}/b.txt", "content": "é\x00" * 100_000},
        [f"{places.parent}/outside/t.txt"] * 3000,
        "x" * 1_000_000,
    ]
    for value in values:
        whole = display._json(value)
        for limit in (12, 160, 200):
            shown = display.show(value, limit)
            assert len(whole) > limit
            assert shown.endswith("…")
            assert len(shown) <= limit + 1
            body = shown[:-1].removesuffix('"') if shown.startswith('"') else shown[:-1]
            assert whole.startswith(body), (shown, whole[:limit])
            assert root not in shown


# -- differences --------------------------------------------------------------------------------


def test_a_short_difference_shows_both_whole() -> None:
    assert differ("Created.", "Created file") == 'was "Created." where "Created file" was expected'
    assert differ(True, None) == "was true where null was expected"


def test_a_long_difference_points_at_where_it_starts(places: Path) -> None:
    got = f"Error: {places}/a.txt was modified since you last read it — read it again"
    want = f'Error: cannot write "{places}/a.txt": file changed since it was read — retry'
    assert differ(got, want) == (
        'differs at character 7: was "Error: <root>/a.txt was modified"… '
        'where "Error: cannot write \\"<root>/a.tx"… was expected'
    )
    assert differ([{"text": "a" * 60 + "b"}], [{"text": "a" * 60 + "c"}]) == (
        'differs at character 71: was …aaaaaaaab"}] where …aaaaaaaac"}] was expected'
    )


def test_the_one_line_verdict_keeps_where_expected_and_actual_differ(places: Path) -> None:
    judge = Judge(frozenset({"behaviour", "wording"}))
    got = (
        f"<path>{places}/deep/er/new.txt</path>\n<type>file</type>\n<content>\nCreated.\n</content>"
    )
    want = got.replace("Created.", "Created file")
    judge.equal('write of "deep/er/new.txt": the model saw text that', got, want,
                rule="write.output", level="wording")  # fmt: skip
    line = _one_line(judge.violations[0].sentence)
    assert line == (
        'write of "deep/er/new.txt": the model saw text that differs at character 71: '
        'was …"\\nCreated.\\n</content>" where …"\\nCreated file\\n</content>" was '
        "expected; SPEC §4.2 {write.output}"
    )


# -- one verdict per defect -----------------------------------------------------------------------


def test_a_defect_of_every_round_is_one_verdict() -> None:
    judge = Judge(frozenset({"behaviour"}))
    for number in judge.rounds(10):
        judge.equal("the writes accepted", 2, 1, rule="fs.cas.one-winner")
        if number % 3 == 0:
            judge.true(False, "the file holds neither writer's bytes", rule="fs.cas.one-winner")
    sentences = [v.sentence.split("; SPEC")[0] for v in judge.violations]
    assert sentences == [
        "in all 10 rounds: the writes accepted was 2 where 1 was expected",
        "in some of 10 rounds: the file holds neither writer's bytes",
    ]


def test_identical_violations_are_told_once() -> None:
    same = Violation("wording", 3, 'write of "a.txt": the model saw …', "remedy.once")
    other = Violation("wording", 3, 'edit of "a.txt": the model saw …', "remedy.once")
    failure = ConformanceFailure([same, other, same])
    assert [v.sentence for v in failure.violations] == [
        '2 times: write of "a.txt": the model saw …',
        'edit of "a.txt": the model saw …',
    ]


def test_a_case_cut_short_passes_no_level() -> None:
    judge = Judge(frozenset({"behaviour", "wording"}))
    judge.equal("the text", "a", "a", rule="write.output", level="wording")
    judge.violations.append(Violation("behaviour", -1, "ContractError: …", None))
    assert judge.outcomes() == {"behaviour": "failed", "wording": "passed"}
    judge.cut_short = True
    assert judge.outcomes() == {"behaviour": "failed", "wording": "failed"}


def test_the_calls_made_are_shown_as_json_with_paths_by_place(places: Path) -> None:
    judge = Judge(frozenset({"behaviour"}))
    wire = {"callId": "c1", "content": [{"type": "text", "text": f"{places}/a.txt"}],
            "isError": True, "error": {"name": "FsError", "code": "FS_NOT_FOUND"}}  # fmt: skip
    judge.calls.append(CallRecord("read", {"file_path": str(places / "a.txt")}, wire))
    judge.true(False, "read refused", rule="policy.record")
    text = verdict_text("RD-001", ConformanceFailure(judge.violations), judge)
    assert text.splitlines()[2:] == [
        "calls made:",
        '  1. read {"file_path": "<root>/a.txt"}',
        '     → isError true {"name": "FsError", "code": "FS_NOT_FOUND"}: "<root>/a.txt"',
    ]


# -- whole runs on harnesses that are not the reference ----------------------------------------


def _verdict_texts(data: dict[str, object]) -> str:
    return json.dumps([[c.get("message"), c.get("verdicts")] for c in cases(data)])


def test_two_runs_under_different_temporary_directories_give_identical_baselines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baselines = []
    for name in ("a", "a-much-longer-temporary-directory"):
        work, temp = tmp_path / f"work-{name[:1]}{len(name)}", tmp_path / name / "tmp"
        work.mkdir()
        temp.mkdir(parents=True)
        path = work / "report.json"
        done = run_suite("--harness", ABSOLUTE_RACY, "--conformance-wording", ABSOLUTE_WORDING,
                         "--conformance-report", str(path), cwd=work,
                         env={"TMPDIR": str(temp)})  # fmt: skip
        assert done.returncode == 1, done.stdout[-3000:]
        data = report(path)
        assert str(temp) not in _verdict_texts(data)
        assert str(tmp_path) not in _verdict_texts(data)
        assert main(["baseline", str(path)]) == 0  # python -m conformance baseline REPORT.json
        baselines.append(capsys.readouterr().out)
        wording = case_of(data, "PRV-014")["verdicts"][0]["verdict"]  # type: ignore[index]
        assert wording == (
            'edit of "a.txt": the model saw text that differs at character 7: '
            'was "Error: No match for old_string i"… where "Error: String to replace '
            'not fou"… was expected; SPEC §3.4 {fs.msg.edit-not-found}: edit, `old_string` not '
            'present: FS_EDIT_NOT_FOUND `old_string was not found in "<p>"`'
        )
        race = case_of(data, "GRD-013")["verdicts"]
        assert isinstance(race, list)
        assert [v["verdict"].split("; SPEC")[0] for v in race] == [
            "in all 10 rounds: the number of guarded writes accepted was 2 where 1 was expected"
        ]
    assert baselines[0] == baselines[1]


def test_no_verdict_of_a_tools_only_run_carries_a_temporary_path(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    path = tmp_path / "r.json"
    done = run_suite("--harness", fixture("tools_only:harness"), "--conformance-report", str(path),
                     cwd=tmp_path, env={"TMPDIR": str(temp)})  # fmt: skip
    assert done.returncode == 1
    data = report(path)
    carrying = [c["id"] for c in cases(data) if str(tmp_path) in json.dumps(c.get("verdicts"))]
    assert carrying == []
    assert str(tmp_path) not in done.stdout.split("= harness conformance =")[1]
    verdict = case_of(data, "PRV-002")["verdicts"][0]["verdict"]  # type: ignore[index]
    assert verdict == (
        'read of "nope.txt": the model saw text that was "Error: File not found: <root>/nope.txt" '
        'where "Error: cannot read \\"<root>/nope.txt\\": not found" was expected; SPEC §3.4 '
        '{fs.msg.read-missing}: read, missing: FS_NOT_FOUND `cannot read "<p>": not found`'
    )


def test_a_blocked_call_names_its_tool_and_arguments(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    done = run_suite("--harness", fixture("blocks_on_fifo:harness"), "--conformance-case",
                     "PRV-004", "--conformance-timeout", "1", "--conformance-report", str(path),
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:]
    entry = case_of(report(path), "PRV-004")
    assert entry["levels"] == {"behaviour": "failed", "wording": "failed"}
    assert entry["message"] == (
        'HarnessCallError: call_tool("read", {"file_path": "<root>/pipe"}) did not answer '
        "within 1.0 s (--conformance-timeout); it wrote nothing to stderr"
    )


def test_after_an_answer_outside_the_contract_no_level_passed(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    done = run_suite("--harness", fixture("hostile:bad_shape"), "--conformance-case", "RD-001",
                     "--conformance-report", str(path), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:]
    entry = case_of(report(path), "RD-001")
    assert str(entry["message"]).startswith('ContractError: call_tool("read", {"file_path": ')
    assert entry["levels"] == {"behaviour": "failed", "wording": "failed"}
