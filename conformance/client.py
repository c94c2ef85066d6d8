"""The suite's side of the contract: typed calls whose answers are checked, and tool results
that judge themselves.

Cases never call a transport directly; they go through ``Client`` and ``Session``, so an answer
outside the contract fails with a ``ContractError`` naming the call, and every tool call is
recorded with what it changed on disk. A tool ``Result`` then states what the spec expects of
it — ``accepted``/``refused`` (behaviour: the error flag and the disk) and ``says``/``code``
(wording: the exact text and the structured error) — and its judge keeps every violation.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, cast

from conformance import display, scenarios
from conformance.causes import (
    BEHAVIOUR_RULES,
    Observations,
    carries_remedy,
    code_signature,
    rule_for,
    signature,
    text_signature,
)
from conformance.harness.contract import (
    PROTOCOL_METHODS_OF,
    ContractError,
    Json,
    JsonObject,
    Profile,
)
from conformance.harness.transport import HarnessCallError, HarnessDead, Transport
from conformance.rules import cite
from conformance.secrets import RunSecrets
from conformance.spec import Wording
from conformance.verdict import (
    RANK_CODE,
    RANK_DISK,
    RANK_FLAG,
    RANK_TEXT,
    CallRecord,
    Judge,
    differ,
    shorten,
)
from conformance.watch import Change, Entry, Snapshot, Watch, content_entry, diff

DIR: Final = object()
"""In ``accepted(changes=…)``: a directory is created there."""

Expected = bytes | str | None | object


def _require(condition: bool, call: str | Callable[[], str], problem: str, got: object) -> None:
    if not condition:
        named = call if isinstance(call, str) else call()
        raise ContractError(f"{named}: {problem} (got {shorten(got, 300)})")


def _error_answer(answer: Json) -> JsonObject:
    """``make_error``'s answer, checked: ``{"handle": str}`` or ``{"rejected": str}``."""
    _require(
        isinstance(answer, dict)
        and (isinstance(answer.get("handle"), str) or isinstance(answer.get("rejected"), str)),
        "make_error",
        'answer {"handle": str} or {"rejected": str}',
        answer,
    )
    return cast(JsonObject, answer)


def _accepted(kind: str, answer: JsonObject) -> str:
    """The handle of an error the harness had to accept."""
    if "rejected" in answer:
        raise ContractError(
            f"make_error: the harness rejected a valid {kind}: {answer['rejected']}"
        )
    return str(answer["handle"])


@dataclass
class Result:
    """One tool result, unpacked, with what the call changed on disk."""

    wire: JsonObject
    call_id: str
    text: str
    is_error: bool
    error: tuple[str, str] | None
    blocks: int
    record: CallRecord
    changes: list[Change]
    judge: Judge | None
    profile: Profile
    after: Snapshot = field(default_factory=dict)
    remedies: Mapping[str, str] = field(default_factory=dict)
    """The recovery instructions of the harness's wording, to name a wrong text's shape."""
    not_text: str | None = None
    """For a refused read: the rule whose words (the harness's wording) it said, that its file
    is binary or not UTF-8 (``Wording.not_text_rule``)."""

    @property
    def what(self) -> str:
        """``write of "a.txt"``: the call in words."""
        arguments = self.record.arguments
        path = arguments.get("file_path") if isinstance(arguments, dict) else None
        target = f" of {display.named(path)}" if isinstance(path, str) else ""
        return f"{self.record.tool}{target}"

    def _gate(self) -> Judge | None:
        return self.judge

    # -- behaviour --------------------------------------------------------------------------

    def _cause(self, expected: str, deviation: str, cited: str) -> tuple[str, str]:
        """(rule, signature) of this call's deviation, through the one table of causes."""
        record = self.record
        rule = rule_for(record.tool, record.situation, expected, deviation, cited)
        where = "any" if deviation in BEHAVIOUR_RULES else record.situation
        return rule, signature(rule, where, deviation)

    def _deviate(self, expected: str, deviation: str, cited: str, happened: str,
                 rank: int) -> None:  # fmt: skip
        judge = self._gate()
        assert judge is not None
        rule, sig = self._cause(expected, deviation, cited)
        judge.record("behaviour", False, f"{self.what} {happened}; {cite(rule)}", rule, rank,
                     signature=sig, call=self.record.index)  # fmt: skip

    def _strays(self, wanted: Mapping[str, Expected]) -> bool:
        """Whether all that changed beyond ``wanted`` is new files beside the call's target,
        none of them the target: a temporary file left behind, whatever the case was about.

        Beside: in the target's own directory. A new file anywhere else (outside the fence,
        through a symlink swapped in) is where the call wrote, not what it left behind.
        """
        target, keys = self.record.target, {os.path.normpath(path) for path in wanted}
        if target is None:
            return False
        extra = [c for c in self.changes if os.path.normpath(c.path) not in keys]
        beside = os.path.dirname(os.path.normpath(target))
        return bool(extra) and all(
            c.before is None
            and os.path.normpath(c.path) != target
            and os.path.dirname(os.path.normpath(c.path)) == beside
            for c in extra
        )

    def accepted(self, rule: str, *, changes: Mapping[str, Expected] | None = None) -> Result:
        """Not an error, and the disk changed exactly as ``changes`` says (nothing by default).

        ``changes`` maps paths relative to the root to the bytes (or text) they now hold,
        ``None`` for a deletion, or ``DIR``; parents of a created file may be created too.
        """
        # A read refused in the harness's own words for a file that is not text broke the rule
        # of those words, whatever the case was about: it took this file for binary (or not
        # UTF-8), one defect wherever such a file is read.
        rule = self.not_text or rule
        self.record.expected, self.record.rule = "accepted", rule
        judge = self._gate()
        if judge is None:
            return self
        wanted = changes or {}
        wrong = _unexpected(self.changes, wanted, self.after)
        flag = f"refused ({shorten(self.text)}) and" if self.is_error else "accepted, but"
        if wrong:
            # The first deviation's verdict says everything that changed; another kind of
            # deviation in the same call is a violation of its own, so causes never merge.
            kinds = list(_sorted_deviations(wrong, wanted, self.is_error).items())
            if [kind for kind, _ in kinds] == ["other-files-changed"] and self._strays(wanted):
                kinds = [("stray-files", kinds[0][1])]
            self._deviate("accepted", kinds[0][0], rule, f"{flag} {' and '.join(wrong)}",
                          RANK_DISK)  # fmt: skip
            for deviation, parts in kinds[1:]:
                self._deviate("accepted", deviation, rule, f"{flag} {' and '.join(parts)}",
                              RANK_DISK)  # fmt: skip
            return self
        if self.is_error:
            self._deviate("accepted", "refused-instead-of-accepted", rule,
                          f"refused ({shorten(self.text)})", RANK_FLAG)  # fmt: skip
        else:
            judge.record("behaviour", True, "", rule, RANK_FLAG)
        judge.record("behaviour", True, "", rule, RANK_DISK)
        return self

    def refused(self, rule: str) -> Result:
        """An error, and nothing changed anywhere."""
        self.record.expected, self.record.rule = "refused", rule
        judge = self._gate()
        if judge is None:
            return self
        happened = [] if self.is_error else ["accepted"]
        happened += [change.describe() for change in self.changes]
        if self.changes:
            verb = "" if not self.is_error else "refused, yet "
            if not self.is_error:
                deviation = "accepted-instead-of-refused"
            elif all(display.in_harness_dir(c.path) for c in self.changes):
                deviation = "harness-dir-files"
            elif self._strays({}):
                deviation = "stray-files"
            else:
                deviation = "refused-and-changed"
            self._deviate("refused", deviation, rule, f"{verb}{' and '.join(happened)}", RANK_DISK)
            return self
        if not self.is_error:
            self._deviate("refused", "accepted-instead-of-refused", rule,
                          f"accepted ({shorten(self.text)})", RANK_FLAG)  # fmt: skip
        else:
            judge.record("behaviour", True, "", rule, RANK_FLAG)
        judge.record("behaviour", True, "", rule, RANK_DISK)
        return self

    # -- wording ----------------------------------------------------------------------------

    def says(self, expected: str, rule: str) -> Result:
        """The model sees exactly ``expected`` (one text block)."""
        judge = self._gate()
        if judge is not None:
            judge.record(
                "wording",
                self.text == expected and self.blocks == 1,
                lambda: (
                    (
                        f"{self.what}: the model saw {self.blocks} text blocks, not one"
                        if self.blocks != 1
                        else f"{self.what}: the model saw text that {differ(self.text, expected)}"
                    )
                    + f"; {cite(rule)}"
                ),
                rule,
                RANK_TEXT,
                signature=lambda: text_signature(
                    rule, self.record.situation, self.text, expected, self.remedies
                ),
                call=self.record.index,
            )
        return self

    def code(self, expected: tuple[str, str] | None, rule: str) -> Result:
        """The structured error is ``{name, code}`` (or absent); judged only with toolCodes."""
        judge = self._gate()
        if judge is not None and self.profile.has("toolCodes"):

            def sentence() -> str:
                got = "no structured error" if self.error is None else _pair(self.error)
                want = "none" if expected is None else _pair(expected)
                return f"{self.what} carried {got} where {want} was expected; {cite(rule)}"

            def cause() -> str | None:
                remedied = expected is not None and carries_remedy(
                    self.text, expected[1], self.remedies
                )
                return code_signature(rule, self.record.situation, self.record.tool,
                                      self.error, expected, remedied=remedied)  # fmt: skip

            judge.record("wording", self.error == expected, sentence, rule, RANK_CODE,
                         signature=cause, call=self.record.index)  # fmt: skip
        return self


def _require_workspace(root: str, scenario: Mapping[str, Json]) -> None:
    """Every workspace file of the scenario that no external step deletes is there afterwards.

    A harness that leaves them to the suite would otherwise fail later, on a raw missing file.
    """
    workspace = scenario.get("workspace")
    if not isinstance(workspace, dict):
        return
    deleted = {
        op.get("path")
        for step in scenario.get("steps") or []
        if isinstance(step, dict)
        for op in step.get("external") or []
        if isinstance(op, dict) and op.get("op") == "delete"
    }
    for relpath in workspace:
        if relpath not in deleted and not os.path.lexists(os.path.join(root, relpath)):
            raise ContractError(
                f"run_scenario: the scenario's workspace file {relpath!r} is not there after the "
                f"run; {cite('scenario.workspace')}"
            )


def cause_ref(cause: Json) -> Json:
    """What an ``inspect_error`` cause names, as a ref: ``{"handle"}`` for an error however fully
    described, ``{"value"}`` for a value, ``None`` for none.

    Compared in this shape, a verdict names a handle by its order in the case
    (``conformance.display``), never as the harness spelled it: a bare ``"err_17"`` counts the
    harness's history, and a harness may draw its handles at random.
    """
    if isinstance(cause, dict) and "handle" in cause:
        return {"handle": cause["handle"]}
    return cause


def _pair(error: tuple[str, str]) -> str:
    return display.show({"name": error[0], "code": error[1]})


def _unexpected(
    changes: list[Change], expected: Mapping[str, Expected], after: Snapshot
) -> list[str]:
    """Describe every change that is not expected, and every expected change that is missing.

    A write of the bytes a file already holds changes nothing a snapshot can see, so an
    expected content that is already on disk counts as written.
    """
    wanted = {os.path.normpath(path): value for path, value in expected.items()}
    parents = {parent for path in wanted for parent in _ancestors(path)}
    seen: set[str] = set()
    problems = []
    for change in changes:
        path = os.path.normpath(change.path)
        if path not in wanted:
            if (
                change.before is None
                and change.after is not None
                and change.after.kind == "dir"
                and path in parents
            ):
                continue
            problems.append(change.describe())
            continue
        seen.add(path)
        value = wanted[path]
        if value is None:
            if change.after is not None:
                problems.append(change.describe() + " instead of deleted")
            continue
        if value is DIR:
            if change.after is None or change.after.kind != "dir":
                problems.append(change.describe() + " instead of a directory created")
            continue
        data = value.encode("utf-8") if isinstance(value, str) else cast(bytes, value)
        target = content_entry(data)
        now = change.after
        mode_kept = change.before is None or now is None or change.before.mode == now.mode
        if now is None or not now.same_content(target) or not mode_kept:
            problems.append(f"{change.describe()} instead of holding {shorten(data, 80)}")
    for path, value in wanted.items():
        if path not in seen and value is not None and value is not DIR:
            data = value.encode("utf-8") if isinstance(value, str) else cast(bytes, value)
            present = after.get(path)
            if present is not None and present.same_content(content_entry(data)):
                continue
            shown = display.quote(display.watched(path))
            problems.append(f"{shown} not written (it should hold {shorten(data, 80)})")
        elif path not in seen and value is None:
            problems.append(f"{display.quote(display.watched(path))} not deleted")
    return problems


def _sorted_deviations(
    wrong: list[str], wanted: Mapping[str, Expected], is_error: bool
) -> dict[str, list[str]]:
    """The unexpected changes of an accepted call, by the deviation each shows."""
    found: dict[str, list[str]] = {}
    for problem in wrong:
        path = os.path.normpath(problem.split('"')[1]) if problem.count('"') >= 2 else ""
        if path in wanted:
            if is_error:
                deviation = "refused-instead-of-accepted"
            else:
                deviation = "not-written" if " not written " in problem else "bytes-differ"
        elif display.in_harness_dir(path):
            deviation = "harness-dir-files"
        else:
            deviation = "other-files-changed"
        found.setdefault(deviation, []).append(problem)
    return found


def _ancestors(path: str) -> Iterator[str]:
    parent = os.path.dirname(path)
    while parent and parent not in (".", ".."):
        yield parent
        parent = os.path.dirname(parent)


def unpack(
    wire: object, call: str | Callable[[], str]
) -> tuple[JsonObject, str, str, bool, tuple[str, str] | None, int]:
    """Check a wire result's shape (SPEC §2.1) and unpack it."""
    _require(isinstance(wire, dict), call, "the result must be an object", wire)
    result = cast(JsonObject, wire)
    allowed = {"callId", "content", "isError", "error"}
    _require(set(result) <= allowed, call, f"result keys must be within {sorted(allowed)}", result)
    content = result.get("content")
    _require(
        isinstance(content, list) and bool(content),
        call,
        "content must be a list of blocks",
        content,
    )
    blocks = cast(list[Json], content)
    for block in blocks:
        _require(
            isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str),
            call,
            'every block must be {"type": "text", "text": str}',
            block,
        )
    _require(isinstance(result.get("callId"), str), call, "callId must be a string", result)
    _require(isinstance(result.get("isError"), bool), call, "isError must be a boolean", result)
    info: tuple[str, str] | None = None
    if "error" in result:
        error = result["error"]
        _require(
            isinstance(error, dict)
            and set(error) == {"name", "code"}
            and all(type(v) is str for v in error.values()),
            call,
            'error must be {"name": str, "code": str} (or absent)',
            error,
        )
        info = (error["name"], error["code"])
    text = "\n".join(cast(dict[str, str], b)["text"] for b in blocks)
    return result, str(result["callId"]), text, bool(result["isError"]), info, len(blocks)


class Spelled(str):
    """A path whose spelling is what the case checks (``sub/../a.txt``, ``a.txt/``): sent as is."""

    __slots__ = ()


@dataclass
class Pause:
    """Whether an armed pause point was reached."""

    fired: bool = False


class Session:
    """One open workspace session of the harness."""

    def __init__(self, client: Client, root: str, options: JsonObject) -> None:
        self._client = client
        self.root = root
        self.options = options
        self.handle = ""
        self.generation = -1
        self.observations = Observations(root, options)
        """What the spec says this session has seen: the situation of each call comes from it."""
        self.suite_changes: dict[str, Entry | None] | None = None
        """What a pause action this session armed changed during its call (the suite's doing)."""
        self._open()

    def _open(self) -> None:
        handle = self._client.call("open_workspace", {"root": self.root, "options": self.options})
        _require(isinstance(handle, str), "open_workspace", "a session handle string", handle)
        self.handle = cast(str, handle)
        self.generation = self._client.transport.generation

    def current(self) -> str:
        """The session's handle, reopened if the harness restarted since."""
        if self.generation != self._client.transport.generation:
            self._open()
        return self.handle

    def spell(self, path: str) -> str:
        """``path`` (relative to the root, or absolute) as this harness takes paths.

        To a harness that takes absolute paths a case sends the plainest one, normalized
        (``<root>/../x`` is ``<parent>/x``), unless the spelling is what the case is about
        (``Spelled``): a harness may refuse ``..`` for reasons of its own, and a case about
        something else must not fail or pass by that accident.
        """
        if isinstance(path, Spelled):
            if self._client.profile.paths == "absolute" and not os.path.isabs(path):
                return os.path.join(self.root, path)
            return str(path)
        if self._client.profile.paths == "absolute":
            return os.path.normpath(os.path.join(self.root, path))
        return path

    def call(self, name: str, arguments: Json) -> Result:
        """Call any tool with any arguments (a ``str`` is raw JSON text); record what changed."""
        client = self._client
        record = CallRecord(name, arguments)
        judge = client.judge
        if judge is not None:
            record.index = len(judge.calls)
            judge.calls.append(record)
        watch = client.watch
        path = arguments.get("file_path") if isinstance(arguments, dict) else None
        if name in ("read", "write", "edit") and isinstance(path, str) and "\0" not in path:
            key, roots = self.observations.key(path), self.observations.real_roots()
            record.situation = self.observations.situation(name, path, (key, roots))
            record.target = os.path.relpath(key[1], roots[0])
        self.suite_changes = None
        before = watch.snapshot() if watch is not None else {}
        try:
            wire = client.call(
                "call_tool", {"session": self.current(), "name": name, "arguments": arguments}
            )
        except Exception as exc:
            record.failure = str(exc)
            raise
        suite_changes = self._take_suite_changes()
        if suite_changes is not None:
            before = dict(before)
            for path, entry in suite_changes.items():
                if entry is None:
                    before.pop(path, None)
                else:
                    before[path] = entry
        after = watch.snapshot() if watch is not None else {}
        changes = diff(before, after)
        record.result = wire if isinstance(wire, dict) else {"invalid": wire}
        record.changes = [change.describe() for change in changes]
        if watch is not None:
            record.outside = [c.describe() for c in changes if not watch.inside(c.path)]

        # Named only when the answer breaks the contract: most calls never need the words.
        def call() -> str:
            return f"call_tool({display.show(name)}, {display.show(arguments, 200)})"

        result, call_id, text, is_error, error, blocks = unpack(wire, call)
        if record.situation is not None and isinstance(path, str):
            self.observations.after(name, path, is_error)
        not_text = client.wording.not_text_rule(text, name) if is_error and name == "read" else None
        return Result(
            result, call_id, text, is_error, error, blocks, record, changes, judge, client.profile,
            after, client.wording.remedies(), not_text,
        )  # fmt: skip

    def _take_suite_changes(self) -> dict[str, Entry | None] | None:
        """What this session's pause action changed during its call, once.

        This session's own: a racing call of another session ends first or last by timing,
        and must never take (and so undo) what this call's pause action changed.
        """
        changes, self.suite_changes = self.suite_changes, None
        return changes

    def read(self, path: str, **extra: Json) -> Result:
        """``read``."""
        return self.call("read", {"file_path": self.spell(path), **extra})

    def write(self, path: str, content: str) -> Result:
        """``write``."""
        return self.call("write", {"file_path": self.spell(path), "content": content})

    def edit(self, path: str, old: str, new: str, **extra: Json) -> Result:
        """``edit``."""
        arguments = {"file_path": self.spell(path), "old_string": old, "new_string": new, **extra}
        return self.call("edit", arguments)

    def probe(self, kind: str, message: str, code: str | None = None) -> Result:
        """The probe tool (SPEC §2.1c)."""
        args: JsonObject = {"kind": kind, "message": message}
        if code is not None:
            args["code"] = code
        return self.call("probe_raise", args)

    def tool_error(self, call_id: str) -> str | None:
        """The handle of the error behind a failed result (``toolErrors``)."""
        answer = self._client.call("tool_error", {"session": self.current(), "callId": call_id})
        _require(
            answer is None or (isinstance(answer, dict) and isinstance(answer.get("handle"), str)),
            "tool_error",
            '{"handle": str} or null',
            answer,
        )
        return None if answer is None else str(answer["handle"])

    @contextmanager
    def paused(self, point: str, action: Callable[[], None]) -> Iterator[Pause]:
        """Arm a pause point: ``action`` runs when the next mutation reaches it (SPEC §6.4).

        What ``action`` changes on disk is the suite's doing, not the harness's: the call's
        changes are counted from the moment it ends.
        """
        pause = Pause()
        client = self._client

        def handler(session: str, at: str) -> None:
            if session != self.handle or at != point or pause.fired:
                return
            watch = client.watch
            before = watch.snapshot() if watch is not None else {}
            try:
                action()
            finally:
                pause.fired = True
                if watch is not None:  # what the action changed is the suite's own doing
                    after = watch.snapshot()
                    self.suite_changes = {c.path: after.get(c.path) for c in diff(before, after)}

        client.transport.add_pause_handler(handler)
        try:
            client.call("arm_pause", {"session": self.current(), "point": point})
            yield pause
        finally:
            client.transport.remove_pause_handler(handler)

    def close(self) -> None:
        """Forget the session (nothing to do if the harness restarted meanwhile)."""
        if self.generation == self._client.transport.generation:
            self._client.call("close_workspace", {"session": self.handle})


class HarnessGone(BaseException):
    """A property's call found the harness dead, or stopped it (a timeout, an exit, a broken
    protocol): the case ends here, in that call's words.

    Not an ``Exception``, so hypothesis lets it through: a dead harness is no counterexample,
    and shrinking against one only piles up its failures (and their tracebacks) in the verdict.
    Nor is a stopped one: hypothesis' replay of the example meets a fresh process, and the
    case would end in its ``FlakyFailure`` words, which hide what happened.
    """

    def __init__(self, error: HarnessCallError) -> None:
        super().__init__(str(error))
        self.error = error


class Client:
    """Contract calls with their answers checked."""

    def __init__(self, transport: Transport, profile: Profile, wording: Wording) -> None:
        self.transport = transport
        self.profile = profile
        self.wording = wording
        self.judge: Judge | None = None
        self.watch: Watch | None = None
        self.secrets: RunSecrets | None = None
        """The secrets planted in the harness's environment for this run."""
        self.scratch: dict[str, Path] = {}
        """The harness child's own working and temporary directories, watched in every case."""
        self.case_id: str | None = None
        """The case being run, so a method found missing in it can be named by later cases."""
        self.unknown: dict[str, str] = {}
        """Declared methods the harness answered as unknown → the line every case says."""
        self.lacking: Callable[[str], None] | None = None
        """Called (the plugin skips the case as not applicable) before a lacked method is used."""
        self.dead_ends_case = False
        """Inside a property's body: a dead or stopped harness raises ``HarnessGone`` (the
        plugin sets it)."""

    def call(self, method: str, params: JsonObject) -> Json:
        """One raw contract call.

        A method the harness lists in ``describe.lacks`` is never sent: the case is not
        applicable. A declared method the harness answers as unknown fails every case that
        needs it in the same line; after the first answer it is not sent again. The line names
        no case: which case met it first depends on what ran before (a replayed case, the
        other half of a split run).
        """
        self._may_send(method)
        try:
            return self.transport.call(method, params)
        except HarnessCallError as exc:
            return self._settle(method, exc)

    def _may_send(self, method: str) -> None:
        if method in self.profile.lacks and self.lacking is not None:
            self.lacking(method)
        if method in self.unknown:
            raise ContractError(self.unknown[method])

    def _settle(self, method: str, outcome: Json) -> Json:
        """A request's result, or its failure raised as ``call`` raises it."""
        if not isinstance(outcome, HarnessCallError):
            return outcome
        if self.dead_ends_case and (isinstance(outcome, HarnessDead) or outcome.stopped):
            raise HarnessGone(outcome) from outcome
        if not outcome.unknown or not self.profile.implements(method):
            raise outcome
        owners = [c for c, ms in PROTOCOL_METHODS_OF.items() if method in ms]
        owner = next((c for c in owners if self.profile.has(c)), "a")
        # A tools method cannot be listed as lacking (SPEC {contract.declared}): every harness
        # implements all three, so the only advice is to implement it.
        remedy = (
            "implement it" if owner == "tools" else "implement it, or list it in describe.lacks"
        )
        self.unknown[method] = (
            f"{method}: the harness declares the {owner} capability but answered {method} "
            f"as an unknown method; {remedy} ({cite('contract.declared')})"
        )
        raise ContractError(self.unknown[method]) from None

    def batch(self, requests: Sequence[tuple[str, JsonObject]]) -> Iterator[Json]:
        """Several raw calls, in one round trip where the harness takes batches (SPEC
        {proto.batch}); a ref ``{"answer": k}`` names the handle request k answered.

        Yields each result in order and raises the first failure where ``call`` would have,
        so a case reads the same whether the harness took one batch or every request alone.
        """
        for method in dict.fromkeys(method for method, _ in requests):
            self._may_send(method)
        for (method, _), outcome in zip(
            requests, self.transport.call_batch(requests), strict=False
        ):
            yield self._settle(method, outcome)

    # -- errors -------------------------------------------------------------------------------

    def try_error(self, kind: str, message: Json = "m", **spec: Json) -> JsonObject:
        """``make_error``'s raw answer: ``{"handle"}`` or ``{"rejected"}``."""
        return _error_answer(
            self.call("make_error", {"spec": {"kind": kind, "message": message, **spec}})
        )

    def error(self, kind: str, message: Json = "m", **spec: Json) -> str:
        """Build an error the harness must accept; return its handle."""
        return _accepted(kind, self.try_error(kind, message, **spec))

    def chained(
        self, links: Sequence[tuple[str, Json, JsonObject]], cause: JsonObject | None = None
    ) -> str:
        """Build errors ``(kind, message, spec)``, each the cause of the next (the first's is
        ``cause``), as ``error`` builds each; return the last one's handle.

        One batch where the harness takes batches: a chain of 3,000 is one round trip.
        """
        requests: list[tuple[str, JsonObject]] = []
        for index, (kind, message, spec) in enumerate(links):
            full: JsonObject = {"kind": kind, "message": message, **spec}
            link = cause if index == 0 else {"answer": index - 1}
            if link is not None:
                full["cause"] = link
            requests.append(("make_error", {"spec": full}))
        handle = ""
        for (kind, _, _), answer in zip(links, self.batch(requests), strict=False):
            handle = _accepted(kind, _error_answer(answer))
        return handle

    def inspect(self, handle: str) -> JsonObject:
        """``inspect_error``, checked for the description's shape."""
        described = self.call("inspect_error", {"handle": handle})
        call = f"inspect_error({display.show({'handle': handle})})"
        _require(isinstance(described, dict), call, "a description object", described)
        described = cast(JsonObject, described)
        for key in ("handle", "name", "message", "text"):
            _require(
                isinstance(described.get(key), str), call, f"{key} must be a string", described
            )
        _require(
            isinstance(described.get("isHarnessError"), bool), call, "isHarnessError", described
        )
        _require(described.get("handle") == handle, call, "handle must echo the handle", described)
        code = described.get("code")
        _require(code is None or isinstance(code, str), call, "code must be a string or null", code)
        _require("cause" in described, call, "cause must be present (null if none)", described)
        return described

    def set_cause(self, handle: str, cause: str | None) -> None:
        """Chain ``cause`` (a handle) as the cause of ``handle``."""
        self.call(
            "set_cause", {"handle": handle, "cause": None if cause is None else {"handle": cause}}
        )

    def is_copy(self, sent: JsonObject, back: tuple[JsonObject, bool]) -> bool:
        """Whether ``remediate`` of ``sent`` gave back another object that says the same (name,
        code and message of an error; the value itself)."""
        ref, same = back
        if same:
            return False
        if "handle" not in sent or "handle" not in ref:
            return ref == sent
        try:
            mine, theirs = self.inspect(str(ref["handle"])), self.inspect(str(sent["handle"]))
        except ContractError:  # no error to compare: not a copy, the check says what it is
            return False
        return all(mine.get(k) == theirs.get(k) for k in ("name", "code", "message"))

    def remediate(self, ref: JsonObject) -> tuple[JsonObject, bool]:
        """``remediate``: the result ref and whether the same object came back."""
        answer = self.call("remediate", {"ref": ref})
        _require(
            isinstance(answer, dict) and isinstance(answer.get("same"), bool),
            "remediate",
            "same: bool",
            answer,
        )
        return {k: v for k, v in answer.items() if k != "same"}, bool(answer["same"])

    def to_error(self, ref: JsonObject) -> tuple[str, bool]:
        """``to_error``: the result's handle and whether the same object came back."""
        answer = self.call("to_error", {"ref": ref})
        _require(
            isinstance(answer, dict)
            and isinstance(answer.get("handle"), str)
            and isinstance(answer.get("same"), bool),
            "to_error",
            '{"handle": str, "same": bool}',
            answer,
        )
        return str(answer["handle"]), bool(answer["same"])

    def chain(self, ref: JsonObject) -> str:
        """``error_chain``."""
        text = self.call("error_chain", {"ref": ref})
        _require(isinstance(text, str), "error_chain", "a string", text)
        return cast(str, text)

    # -- native (Python harnesses) --------------------------------------------------------------

    def roundtrip(self, handle: str, how: str) -> str:
        """Pickle, copy or deepcopy an error inside the harness; the copy's handle."""
        answer = self.call("native_roundtrip", {"handle": handle, "how": how})
        _require(isinstance(answer, dict) and isinstance(answer.get("handle"), str),
                 "native_roundtrip", '{"handle": str}', answer)  # fmt: skip
        return str(answer["handle"])

    def native_repr(self, handle: str) -> str:
        """``repr`` of an error."""
        text = self.call("native_repr", {"handle": handle})
        _require(isinstance(text, str), "native_repr", "a string", text)
        return cast(str, text)

    def native_raise(self, handle: str, cause: str | None) -> JsonObject:
        """Raise an error ``from`` a cause (``"context"``: while handling another); its cause."""
        answer = self.call("native_raise", {"handle": handle, "cause": cause})
        _require(isinstance(answer, dict) and "cause" in answer, "native_raise",
                 '{"cause": ref | null, "context": bool}', answer)  # fmt: skip
        return cast(JsonObject, answer)

    def unrenderable(self) -> str:
        """A plain exception whose string form cannot be made (``native``)."""
        answer = self.call("native_unrenderable", {})
        _require(isinstance(answer, dict) and isinstance(answer.get("handle"), str),
                 "native_unrenderable", '{"handle": str}', answer)  # fmt: skip
        return str(answer["handle"])

    # -- sessions, scenarios, history ---------------------------------------------------------

    def open(self, root: str, **options: Json) -> Session:
        """Open a session over ``root`` (defaults: policy on, danger-full-access, no probe)."""
        self.wording.opened(root)  # {rel} of its paths is relative to it
        return Session(self, root, options)

    @contextmanager
    def session(self, root: str, **options: Json) -> Iterator[Session]:
        """A session that is closed afterwards."""
        session = self.open(root, **options)
        try:
            yield session
        finally:
            session.close()

    def scenario(self, root: str, scenario: Mapping[str, Json]) -> list[JsonObject]:
        """Run a scenario; return the session log (header, then events)."""
        sent = dict(scenario)
        if self.profile.paths == "absolute":
            sent = scenarios.spelled(sent, root)
        records = self.call("run_scenario", {"root": root, "scenario": sent})
        if sent != scenario and isinstance(records, list):
            records = scenarios.unspelled(records, sent, dict(scenario))
        _require(
            isinstance(records, list) and bool(records), "run_scenario", "a non-empty list", records
        )
        header = records[0]
        _require(
            isinstance(header, dict)
            and header.get("type") == "session"
            and header.get("version") == 1,
            "run_scenario",
            'the log must start with {"type": "session", "version": 1, …}',
            header,
        )
        for record in records[1:]:
            _require(
                isinstance(record, dict)
                and isinstance(record.get("type"), str)
                and isinstance(record.get("data"), dict),
                "run_scenario",
                'every event must be {"type": str, "data": {…}}',
                record,
            )
        _require_workspace(root, scenario)
        return cast(list[JsonObject], records)

    def derive(self, events: list[JsonObject]) -> list[JsonObject]:
        """``derive_messages``."""
        messages = self.call("derive_messages", {"events": events})
        _require(isinstance(messages, list), "derive_messages", "a list of messages", messages)
        return cast(list[JsonObject], messages)
