"""SPEC §4.1 as a state machine: any interleaving of tool calls and outside changes.

The model tracks one file (``f.txt``, also reachable through the symlink ``alias.txt``): whether
it exists, its content, a version counter bumped by every change, and the version this session
last saw. Every tool result is judged like any case — accepted or refused with exactly the disk
changes the model predicts (behaviour), then the exact text and code (wording) — so at
``--conformance-level behaviour`` this is the behaviour-level machine, comparing no text.

Outside changes are made visible whatever the timestamp granularity: replacements and
recreations carry content never seen before, and same-size rewrites change bytes in place.
Before the random exploration, a fixed tour reaches the states that matter on every run:
``replace_all`` with one occurrence, a read that fails after a change, a file deleted and then
recreated.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import ClassVar

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from conformance.cases import case
from conformance.client import Client, Result
from conformance.disk import Disk
from conformance.plugin import case_seed
from conformance.spec import Wording, fs
from conformance.verdict import Judge
from conformance.watch import Watch

STEPS = 20
PATHS = st.sampled_from(["f.txt", "alias.txt"])
# No "@" (the absent needle) and no "#" (the marker of outside content).
CONTENT = st.text(alphabet="abcxyz ABC012é\n\r", max_size=24)
STALE = fs("FS_STALE_VERSION")
UNOBSERVED = fs("FS_NOT_OBSERVED")


class GuardMachine(RuleBasedStateMachine):
    """One session, one file, and the world around it."""

    client: ClassVar[Client]
    judge: ClassVar[Judge]
    base: ClassVar[Path]
    runs: ClassVar[itertools.count[int]]

    def __init__(self) -> None:
        super().__init__()
        run = self.base / f"run-{next(self.runs)}"
        run.mkdir()
        root = run / "ws"
        root.mkdir()
        self.client.watch = Watch(run, root)
        self.w: Wording = self.client.wording
        self.w.root = str(root)
        self.disk = Disk(root)
        self.disk.write("f.txt", "initial\n")
        self.disk.symlink("alias.txt", "f.txt")
        self.session = self.client.open(str(root))
        self.replace_all = self.client.profile.supports("replaceAll")
        self.unique = itertools.count(1)
        self.exists = True
        self.content = "initial\n"
        self.version = 0
        self.seen: int | None = None

    def teardown(self) -> None:
        self.session.close()

    def _changed(self, content: str) -> None:
        self.exists, self.content, self.version = True, content, self.version + 1

    def _refused(self, result: Result, rule: str, text: str, error: tuple[str, str] | None) -> None:
        result.refused(rule).says(text, rule).code(error, rule)

    # -- the session's tool calls ---------------------------------------------------------

    @rule(path=PATHS)
    def read(self, path: str) -> None:
        result = self.session.read(path)
        p = self.disk.display(path)
        if not self.exists:
            self._refused(
                result,
                "policy.failed-read",
                self.w.fs_error("fs.read_missing", p=p),
                fs("FS_NOT_FOUND"),
            )
            return
        result.accepted("policy.record").says(self.w.read_output(p, self.content), "read.output")
        self.seen = self.version

    @rule(path=PATHS, content=CONTENT)
    def write(self, path: str, content: str) -> None:
        result = self.session.write(path, content)
        p = self.disk.display(path)
        w = self.w
        if self.seen is None and self.exists:
            self._refused(
                result,
                "policy.write-intent",
                w.remedied("fs.exists_unread", "FS_NOT_OBSERVED", p=p),
                UNOBSERVED,
            )
        elif self.seen is not None and not self.exists:
            self._refused(
                result,
                "policy.dead-end",
                w.remedied("fs.write_vanished", "FS_STALE_VERSION", p=p),
                STALE,
            )
        elif self.seen is not None and self.seen != self.version:
            self._refused(
                result,
                "fs.version.changes",
                w.remedied("fs.changed", "FS_STALE_VERSION", op="write", p=p),
                STALE,
            )
        else:
            result.accepted("policy.write-intent", changes={"f.txt": content}).says(
                w.write_output(p, created=not self.exists), "write.output")  # fmt: skip
            self._changed(content)
            self.seen = self.version

    @rule(path=PATHS, data=st.data())
    def edit(self, path: str, data: st.DataObject) -> None:
        old = "@absent@"
        if self.exists and self.content and data.draw(st.booleans(), label="present"):
            start = data.draw(st.integers(0, len(self.content) - 1), label="start")
            end = data.draw(st.integers(start + 1, min(len(self.content), start + 4)), label="end")
            old = self.content[start:end]
        new = data.draw(st.text(alphabet="xyzé\n", max_size=4), label="new")
        # A harness without replace_all is never sent it (and edits exactly one occurrence).
        replace_all = self.replace_all and data.draw(st.booleans(), label="replace_all")
        self._edit(path, old, new, replace_all)

    def _edit(self, path: str, old: str, new: str, replace_all: bool) -> None:
        extra = {"replace_all": replace_all} if self.replace_all else {}
        result = self.session.edit(path, old, new, **extra)
        p = self.disk.display(path)
        w = self.w
        count = self.content.count(old) if self.exists else 0
        if old == new:
            self._refused(result, "check.order", w.error(w("check.differ")), None)
        elif self.seen is None:
            self._refused(result, "policy.edit-intent",
                          w.remedied("policy.edit_unobserved", "FS_NOT_OBSERVED", p=p), UNOBSERVED)  # fmt: skip
        elif not self.exists or self.seen != self.version:
            self._refused(result, "fs.version.changes",
                          w.remedied("fs.changed", "FS_STALE_VERSION", op="edit", p=p), STALE)  # fmt: skip
        elif count == 0:
            self._refused(
                result,
                "fs.msg.edit-not-found",
                w.fs_error("fs.edit_not_found", p=p),
                fs("FS_EDIT_NOT_FOUND"),
            )
        elif count > 1 and not replace_all:
            self._refused(
                result,
                "fs.msg.ambiguous",
                w.fs_error("fs.ambiguous", p=p, n=count),
                fs("FS_AMBIGUOUS_EDIT"),
            )
        else:
            content = self.content.replace(old, new, -1 if replace_all else 1)
            result.accepted("edit.occurrences", changes={"f.txt": content}).says(
                w.edit_output(p, replace_all=replace_all), "edit.output")  # fmt: skip
            self._changed(content)
            self.seen = self.version

    # -- the world --------------------------------------------------------------------------

    @precondition(lambda self: self.exists)
    @rule(content=CONTENT)
    def someone_replaces_it(self, content: str) -> None:
        content = f"#{next(self.unique)} {content}"
        self.disk.replace("f.txt", content)
        self._changed(content)

    @precondition(lambda self: self.exists and any(c.isascii() for c in self.content))
    @rule(data=st.data())
    def someone_rewrites_it_in_place(self, data: st.DataObject) -> None:
        ascii_at = [i for i, c in enumerate(self.content) if c.isascii()]
        self._rewrite_at(data.draw(st.sampled_from(ascii_at), label="index"))

    def _rewrite_at(self, index: int) -> None:
        replacement = "Q" if self.content[index] != "Q" else "R"
        content = self.content[:index] + replacement + self.content[index + 1 :]
        self.disk.same_size_rewrite("f.txt", content)
        self._changed(content)

    @precondition(lambda self: self.exists)
    @rule()
    def someone_deletes_it(self) -> None:
        self.disk.delete("f.txt")
        self.exists, self.version = False, self.version + 1

    @precondition(lambda self: not self.exists)
    @rule(content=CONTENT)
    def someone_recreates_it(self, content: str) -> None:
        content = f"#{next(self.unique)} {content}"
        self.disk.write("f.txt", content)
        self._changed(content)

    @invariant()
    def disk_holds_what_the_model_holds(self) -> None:
        expected = ["alias.txt", "f.txt"] if self.exists else ["alias.txt"]
        found = sorted(os.listdir(self.disk.root))
        self.judge.equal("the workspace's files", found, expected, rule="fs.publish.identical")
        if self.exists:
            self.judge.equal(
                "f.txt",
                self.disk.read("f.txt"),
                self.content.encode("utf-8"),
                rule="fs.publish.atomic",
            )

    # -- the fixed tour -------------------------------------------------------------------------

    def tour(self) -> None:
        """The states that matter, reached on every run before any random step."""
        self.read("alias.txt")
        self._edit("f.txt", "initial", "only", replace_all=self.replace_all)  # with one occurrence
        self.someone_replaces_it("changed")
        self.read("f.txt")
        self._rewrite_at(1)
        self.disk.write("f.txt", "\0binary\n")  # a read that fails after a change
        self._changed("\0binary\n")
        result = self.session.read("f.txt")
        result.refused("policy.failed-read").code(fs("FS_NOT_TEXT"), "fs.msg.binary")
        self.write("f.txt", "after the failed read\n")
        self.someone_deletes_it()  # deleted, then recreated
        self.write("f.txt", "to nowhere\n")
        self.someone_recreates_it("reborn")
        self.write("alias.txt", "still stale\n")
        self.read("alias.txt")
        self.write("alias.txt", "fresh again\n")
        self.disk_holds_what_the_model_holds()


@case("STM-001", rules=["policy.write-intent", "policy.edit-intent", "policy.record", "policy.failed-read",
                        "policy.dead-end", "fs.version.changes", "edit.occurrences"], model_based=True)  # fmt: skip
def test_guard_state_machine(
    client: Client, judge: Judge, tmp_path: Path, pytestconfig: object
) -> None:
    """agree with the model of §4.1 on every verdict and message, for any interleaving"""
    machine = type(
        "GuardMachineFor",
        (GuardMachine,),
        {"client": client, "judge": judge, "base": tmp_path, "runs": itertools.count(1)},
    )
    tour = machine()
    try:
        tour.tour()
    finally:
        tour.teardown()
    explicit = getattr(getattr(pytestconfig, "option", None), "hypothesis_seed", None)
    if explicit is None:
        machine._hypothesis_internal_use_seed = case_seed("STM-001")  # type: ignore[attr-defined]
    run_state_machine_as_test(machine, settings=settings(stateful_step_count=STEPS))
