"""SPEC §4.1 as a state machine: any interleaving of tool calls and outside changes.

The model tracks one file (``f.txt``, also reachable through the symlink ``alias.txt``): whether
it exists, its content, a version counter bumped by every change, and the version this session
last saw. Every tool result is compared, text and structured error, with what the model says;
after every step the disk must hold exactly what the model holds, with nothing left behind.

Outside changes are made visible whatever the timestamp granularity: replacements and
recreations carry content never seen before, and same-size rewrites change bytes in place.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from typing import ClassVar

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from conformance import spec
from conformance.client import Client, ToolOutcome
from conformance.disk import Disk

STEPS = 20
PATHS = st.sampled_from(["f.txt", "alias.txt"])
# No "@" (the absent needle) and no "#" (the marker of outside content).
CONTENT = st.text(alphabet="abcxyz ABC012é\n\r", max_size=24)
STALE = spec.fs("FS_STALE_VERSION")
UNOBSERVED = spec.fs("FS_NOT_OBSERVED")


class GuardMachine(RuleBasedStateMachine):
    """One session, one file, and the world around it."""

    client: ClassVar[Client]

    def __init__(self) -> None:
        super().__init__()
        self.root = os.path.realpath(tempfile.mkdtemp(prefix="conformance-stm-"))
        self.disk = Disk(self.root)
        self.disk.write("f.txt", "initial\n")
        self.disk.symlink("alias.txt", "f.txt")
        self.session = self.client.open(self.root)
        self.unique = itertools.count(1)
        self.exists = True
        self.content = "initial\n"
        self.version = 0
        self.seen: int | None = None

    def teardown(self) -> None:
        self.session.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def _expect(self, result: ToolOutcome, text: str, error: tuple[str, str] | None) -> None:
        assert (result.text, result.error) == (text, error)

    def _changed(self, content: str) -> None:
        self.exists, self.content, self.version = True, content, self.version + 1

    # -- the session's tool calls ---------------------------------------------------------

    @rule(path=PATHS)
    def read(self, path: str) -> None:
        result = self.session.read(path)
        p = self.disk.display(path)
        if not self.exists:
            self._expect(result, spec.error_text(spec.read_missing(p)), spec.fs("FS_NOT_FOUND"))
            return
        self._expect(result, spec.read_output(p, self.content), None)
        self.seen = self.version

    @rule(path=PATHS, content=CONTENT)
    def write(self, path: str, content: str) -> None:
        result = self.session.write(path, content)
        p = self.disk.display(path)
        if self.seen is None and self.exists:
            self._expect(
                result, spec.error_text(spec.exists_unread(p) + spec.READ_FIRST), UNOBSERVED
            )
        elif self.seen is not None and not self.exists:
            self._expect(result, spec.error_text(spec.write_vanished(p) + spec.REREAD), STALE)
        elif self.seen is not None and self.seen != self.version:
            self._expect(result, spec.error_text(spec.changed("write", p) + spec.REREAD), STALE)
        else:
            self._expect(result, spec.write_output(p, created=not self.exists), None)
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
        replace_all = data.draw(st.booleans(), label="replace_all")
        result = self.session.edit(path, old, new, replace_all=replace_all)
        p = self.disk.display(path)
        count = self.content.count(old) if self.exists else 0
        if old == new:
            self._expect(result, spec.error_text(spec.POST_SCHEMA["differ"]), None)
        elif self.seen is None:
            self._expect(
                result, spec.error_text(spec.edit_unobserved(p) + spec.READ_FIRST), UNOBSERVED
            )
        elif not self.exists or self.seen != self.version:
            self._expect(result, spec.error_text(spec.changed("edit", p) + spec.REREAD), STALE)
        elif count == 0:
            self._expect(
                result, spec.error_text(spec.edit_not_found(p)), spec.fs("FS_EDIT_NOT_FOUND")
            )
        elif count > 1 and not replace_all:
            self._expect(
                result, spec.error_text(spec.edit_ambiguous(p, count)), spec.fs("FS_AMBIGUOUS_EDIT")
            )
        else:
            self._expect(result, spec.edit_output(p, replace_all=replace_all), None)
            self._changed(self.content.replace(old, new, -1 if replace_all else 1))
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
        index = data.draw(st.sampled_from(ascii_at), label="index")
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
        assert sorted(os.listdir(self.root)) == expected, "a temp file or stray file was left"
        assert self.disk.path("alias.txt").is_symlink()
        if self.exists:
            assert self.disk.read("f.txt") == self.content.encode("utf-8")


@pytest.mark.case("STM-001")
def test_guard_state_machine(client: Client) -> None:
    """agree with the model of §4.1 on every verdict and message, for any interleaving"""
    machine = type("GuardMachineFor", (GuardMachine,), {"client": client})
    run_state_machine_as_test(machine, settings=settings(stateful_step_count=STEPS))
