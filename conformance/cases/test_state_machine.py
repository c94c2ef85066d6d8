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
recreated, an ``old_string`` found twice (with and without ``replace_all``) in a file with CRLF
endings. The random steps seldom reach the last: an edit is accepted only on a file read and
unchanged since, and one in a hundred of them met a repeated ``old_string``.

A divergence does not stop the machine. Each step is judged on its own; when the harness and
the model disagree, the model takes what the disk shows (and what a fresh read tells the
session) and goes on, so one defect does not hide the next. Divergences are collected per
distinct ``divergence_key`` — the tool, the situation the step met, the deviation — each with
the shortest sequence of steps that showed it (one from a run with no earlier divergence when
there is one). A step whose behaviour diverged has its wording left unjudged: its text follows
from the behaviour, and a level no step judged is never reported as passed.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Final

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from conformance import display
from conformance.cases import case
from conformance.causes import refines_one_of, signature
from conformance.client import Client, Result
from conformance.disk import Disk
from conformance.encoding import json_text
from conformance.plugin import case_seed
from conformance.spec import Wording, fs
from conformance.verdict import RANK_CODE, RANK_DISK, RANK_FLAG, RANK_TEXT, Judge, Violation
from conformance.watch import Watch

STEPS = 20
PATHS = st.sampled_from(["f.txt", "alias.txt"])
# No "@" (the absent needle) and no "#" (the marker of outside content).
CONTENT = st.text(alphabet="abcxyz ABC012é\n\r", max_size=24)
STALE = fs("FS_STALE_VERSION")
UNOBSERVED = fs("FS_NOT_OBSERVED")
SHOWN_STEPS = 12
"""A reproducing sequence longer than this is shown as its last steps."""

DEVIATIONS = {
    RANK_DISK: "changed the disk otherwise than the model",
    RANK_TEXT: "showed other text",
    RANK_CODE: "carried another structured error",
}


STRAYS: Final = signature("tool.changes-only-target", "any", "stray-files")
"""The cause of new files the model does not expect beside ``f.txt`` (a temporary file left)."""


def divergence_key(
    tool: str, situation: str, violation: Violation, expected: str | None
) -> tuple[str, str, str]:
    """What makes two divergences the same defect: the tool, the situation, the deviation.

    The one place the state machine decides sameness. A violation of a tool call carries the
    suite's root-cause signature (``conformance.causes``: rule · situation · deviation), so the
    state machine and the reports agree on what one defect is; a check of the machine's own has
    none and is keyed by the model's words for the step.
    """
    if violation.signature:
        return (tool, "", violation.signature)
    if violation.rank == RANK_FLAG and expected is not None:
        deviation = f"{'refused' if expected == 'accepted' else 'accepted'} instead of {expected}"
    else:
        deviation = DEVIATIONS.get(violation.rank, "disagreed with the model")
    return (tool, situation, f"{violation.level}: {deviation} ({{{violation.rule}}})")


@dataclass
class Divergence:
    """One distinct divergence: the shortest sequence that showed it, and the verdict of its
    last step (the words, rule and call are that step's, never another run's)."""

    sentence: str
    level: str
    rank: int
    rule: str | None
    steps: list[str]
    clean: bool
    """Whether no earlier step of that run diverged (the sequence reproduces it alone)."""
    signature: str | None = None
    call: int | None = None
    """The case's call that showed it (an index into the case's calls), when of a call."""

    def better(self, steps: list[str], clean: bool) -> bool:
        """Whether ``steps`` reproduces it better: clean first, then shorter."""
        return (not clean, len(steps)) < (not self.clean, len(self.steps))

    def violation(self) -> Violation:
        """The divergence as the case reports it, with its reproducing sequence."""
        shown = self.steps if len(self.steps) <= SHOWN_STEPS else ["…", *self.steps[-SHOWN_STEPS:]]
        after = "" if self.clean else " (seen only after an earlier divergence)"
        steps = f"{len(self.steps)} step{'s' if len(self.steps) != 1 else ''}"
        return Violation(self.level, self.rank,
                         f"{self.sentence} — reproduced in {steps}{after}: {' → '.join(shown)}",
                         self.rule, self.signature, self.call)  # fmt: skip


class GuardMachine(RuleBasedStateMachine):
    """One session, one file, and the world around it."""

    client: ClassVar[Client]
    judge: ClassVar[Judge]
    base: ClassVar[Path]
    runs: ClassVar[itertools.count[int]]
    found: ClassVar[dict[tuple[str, str, str], Divergence]]

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
        self.steps: list[str] = []
        self.clean = True

    def teardown(self) -> None:
        self.session.close()

    # -- judging one step at a time ---------------------------------------------------------------

    def _situation(self) -> str:
        """The state the step met, in the fixed words of the guard's situations.

        Which spelling the step used (the name or its symlink) is not part of it: the guard
        is one per file, and one defect seen through both spellings is one divergence.
        """
        if not self.exists:
            return "file missing" if self.seen is None else "file deleted since read"
        if self.seen is None:
            return "existing file never read"
        if self.seen != self.version:
            return "file changed since read"
        return "file read, unchanged"

    def _step(self, tool: str, situation: str, description: str, act: Callable[[], object]) -> None:
        """Run one step under a judge of its own; keep what diverged, then follow the disk."""
        main = self.judge
        step = Judge(main.levels)
        self.client.judge = step
        offset = len(main.calls)
        try:
            act()
        finally:
            self.client.judge = main
            main.calls.extend(step.calls)
        self.steps.append(description)
        behaviour = [v for v in step.violations if v.level == "behaviour"]
        main.checks["behaviour"] += step.checks["behaviour"]
        if not behaviour:
            main.checks["wording"] += step.checks["wording"]
        first = min(behaviour or step.violations, key=lambda v: v.rank, default=None)
        if first is None:
            return
        expected = step.calls[-1].expected if step.calls else None
        key = divergence_key(tool, situation, first, expected)
        known = self.found.get(key)
        call = offset + first.call if first.call is not None else None
        if known is None or known.better(self.steps, self.clean):
            # Kept whole, the words too: one key may gather calls of either spelling, in several
            # situations, under several rules (one root cause), so they are the reproducing step's.
            self.found[key] = Divergence(first.sentence, first.level, first.rank, first.rule,
                                         list(self.steps), self.clean, first.signature, call)  # fmt: skip
        self.clean = False
        if behaviour:
            self._follow_the_disk()

    def _follow_the_disk(self) -> None:
        """After a divergence the model takes what the disk shows, and what a read tells the session."""
        path = self.disk.path("f.txt")
        exists = path.exists()
        content = path.read_bytes().decode("utf-8", "replace") if exists else ""
        if (exists, content) != (self.exists, self.content if self.exists else ""):
            self.exists, self.content, self.version = exists, content, self.version + 1
        # A fresh observation, so the next step starts from a known state. A failed read
        # records nothing (SPEC {policy.failed-read}): what the session remembers of a file
        # that is gone or unreadable cannot be learnt, so the file is made empty and read; a
        # model that guessed "never read" expected the wrong refusals after it.
        synced = exists and self._read_quietly()
        if not synced:
            self.disk.write("f.txt", "")
            self._changed("")
            made = "replaces f.txt with" if exists else "recreates f.txt as"
            self.steps.append(f'someone {made} ""')
            synced = self._read_quietly()
        self.seen = self.version if synced else None

    def _read_quietly(self) -> bool:
        self.client.judge = Judge(frozenset())
        try:
            return not self.session.read("f.txt").is_error
        finally:
            self.client.judge = self.judge

    def _changed(self, content: str) -> None:
        self.exists, self.content, self.version = True, content, self.version + 1

    def _refused(self, result: Result, rule: str, text: str, error: tuple[str, str] | None,
                 words: str | None = None) -> None:  # fmt: skip
        """Refused under ``rule``; its text and code under ``words`` where another rule owns them."""
        result.refused(rule).says(text, words or rule).code(error, words or rule)

    # -- the session's tool calls ---------------------------------------------------------

    @rule(path=PATHS)
    def read(self, path: str) -> None:
        self._step("read", self._situation(), f"read {path}", lambda: self._read(path))

    def _read(self, path: str) -> None:
        result = self.session.read(path)
        p = self.disk.display(path)
        if not self.exists:
            # the words of a missing file are PRV-002's rule: other words are that one defect
            self._refused(result, "policy.failed-read", self.w.fs_error("fs.read_missing", p=p),
                          fs("FS_NOT_FOUND"), words="fs.msg.read-missing")  # fmt: skip
            return
        result.accepted("policy.record").says(self.w.read_output(p, self.content), "read.output")
        self.seen = self.version

    @rule(path=PATHS, content=CONTENT)
    def write(self, path: str, content: str) -> None:
        self._step("write", self._situation(), f"write {path} {json_text(content)}",
                   lambda: self._write(path, content))  # fmt: skip

    def _write(self, path: str, content: str, rule: str = "policy.write-intent") -> None:
        """A write; ``rule`` is what the bytes of an accepted one are judged by."""
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
            result.accepted(rule, changes={"f.txt": content}).says(
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

    def _edit(self, path: str, old: str, new: str, replace_all: bool,
              rule: str = "edit.occurrences") -> None:  # fmt: skip
        """An edit; ``rule`` is what the bytes of an accepted one are judged by."""
        count = self.content.count(old) if self.exists else 0
        situation = self._situation()
        if old == new:
            situation = "old_string equal to new_string"
        elif situation == "file read, unchanged":  # only then does the text decide the outcome
            needle = "absent" if count == 0 else "once" if count == 1 else "repeated"
            situation += f", old_string {needle}{', replace_all' if replace_all else ''}"
        flag = " replace_all" if replace_all else ""
        description = f"edit {path} {json_text(old)} → {json_text(new)}{flag}"
        self._step("edit", situation, description,
                   lambda: self._edit_now(path, old, new, replace_all, rule))  # fmt: skip

    def _edit_now(self, path: str, old: str, new: str, replace_all: bool, rule: str) -> None:
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
            result.accepted(rule, changes={"f.txt": content}).says(
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
        self.steps.append(f"someone replaces f.txt with {json_text(content)}")

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
        self.steps.append(f"someone rewrites f.txt in place as {json_text(content)}")

    @precondition(lambda self: self.exists)
    @rule()
    def someone_deletes_it(self) -> None:
        self.disk.delete("f.txt")
        self.exists, self.version = False, self.version + 1
        self.steps.append("someone deletes f.txt")

    @precondition(lambda self: not self.exists)
    @rule(content=CONTENT)
    def someone_recreates_it(self, content: str) -> None:
        content = f"#{next(self.unique)} {content}"
        self.disk.write("f.txt", content)
        self._changed(content)
        self.steps.append(f"someone recreates f.txt as {json_text(content)}")

    @invariant()
    def disk_holds_what_the_model_holds(self) -> None:
        self._step("disk", "after the step", "(the disk is compared with the model)",
                   self._compare_the_disk)  # fmt: skip
        self.steps.pop()  # the comparison is not a step of the sequence

    def _compare_the_disk(self) -> None:
        judge = self.client.judge  # the step's (``_step``), so a divergence is kept once
        assert judge is not None
        expected = ["alias.txt", "f.txt"] if self.exists else ["alias.txt"]
        # a stray file's random name shown by its shape: the same words on every run
        found = sorted(display.shaped(name) for name in os.listdir(self.disk.root))
        # Only new files beside what the model expects: what the call that left them showed
        # (``stray-files``), one cause with it, not one of this check's own.
        strays = set(expected) < set(found)
        judge.equal("the workspace's files", found, expected, rule="fs.publish.identical",
                    signature=STRAYS if strays else None)  # fmt: skip
        if self.exists:
            judge.equal(
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
        self.steps.append("someone writes a NUL byte into f.txt")
        # A read that shows the binary file broke {fs.msg.binary} (PRV-006's defect); the write
        # after it is {policy.failed-read}'s, and a consequence of the read where it diverged.
        self._step("read", "binary file, changed since read", "read f.txt",
                   lambda: self.session.read("f.txt").refused("fs.msg.binary").code(
                       fs("FS_NOT_TEXT"), "fs.msg.binary"))  # fmt: skip
        self.write("f.txt", "after the failed read\n")
        self.someone_deletes_it()  # deleted, then recreated
        self.write("f.txt", "to nowhere\n")
        self.someone_recreates_it("reborn")
        self.write("alias.txt", "still stale\n")
        self.read("alias.txt")
        self.write("alias.txt", "fresh again\n")
        # CRLF endings, and an old_string found twice: the edits the random steps rarely reach
        # (an edit is accepted only on a file read and unchanged since). The CRLF write's bytes
        # are judged as PRV-019 judges them, read first as there: one cause with it.
        self.read("f.txt")
        crlf = "one\r\ntwo two\r\n"
        self._step("write", self._situation(), f"write f.txt {json_text(crlf)}",
                   lambda: self._write("f.txt", crlf, rule="fs.text.utf8"))  # fmt: skip
        self._edit("f.txt", "two", "2", replace_all=False)  # ambiguous
        # the other CRLF stays: judged as PRV-019 judges it, one cause with it
        self._edit("f.txt", "one", "1", replace_all=False, rule="fs.text.utf8")
        if self.replace_all:
            self._edit("f.txt", "two", "2", replace_all=True)  # both
        self.disk_holds_what_the_model_holds()


@case("STM-001", rules=["policy.write-intent", "policy.edit-intent", "policy.record", "policy.failed-read",
                        "policy.dead-end", "fs.version.changes", "edit.occurrences",
                        "fs.text.utf8", "fs.msg.read-missing", "fs.msg.binary"])  # fmt: skip
def test_guard_state_machine(
    client: Client, judge: Judge, tmp_path: Path, pytestconfig: object
) -> None:
    """agree with the model of §4.1 on every verdict and message, for any interleaving"""
    found: dict[tuple[str, str, str], Divergence] = {}
    machine = type(
        "GuardMachineFor",
        (GuardMachine,),
        {"client": client, "judge": judge, "base": tmp_path, "runs": itertools.count(1),
         "found": found},
    )  # fmt: skip
    tour = machine()
    try:
        tour.tour()
    finally:
        tour.teardown()
    explicit = getattr(getattr(pytestconfig, "option", None), "hypothesis_seed", None)
    if explicit is None:
        machine._hypothesis_internal_use_seed = case_seed("STM-001")  # type: ignore[attr-defined]
    # Not a hypothesis test itself, so set here: a call that stops or finds dead the harness
    # ends the case in its words (HarnessGone), where hypothesis' replay of the steps on a
    # fresh process would call the machine's data generation flaky instead.
    client.dead_ends_case = True
    try:
        run_state_machine_as_test(machine, settings=settings(stateful_step_count=STEPS))
    finally:
        client.dead_ends_case = False
        # a divergence in a situation that refines another one's, same rule and deviation, is
        # that divergence (as in the run's root causes): reported once, under the broader one
        shown = [d.signature for d in found.values() if d.signature]
        judge.violations.extend(
            divergence.violation()
            for divergence in found.values()
            if not (divergence.signature and refines_one_of(divergence.signature, shown))
        )
