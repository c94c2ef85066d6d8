"""Turning what a harness did into a verdict in plain words: behaviour first, then wording.

Each case has a ``Judge``. Checks never stop a case: every violation is collected, and when the
case ends they are reported together, disk first (what changed on disk, then accepted or
refused, then the rest of the behaviour, then the exact text and the structured code). Each
violation is one sentence: what the harness did, then the rule it breaks, cited from SPEC.md —
``write of "a.txt" accepted and "a.txt" overwritten (5 → 8 bytes: 'clobber\\n'); SPEC §4.1
{policy.write-intent}: …``.

Inside a hypothesis property the first violation is raised at once instead, so hypothesis can
shrink the example that shows it.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from conformance import causes, display
from conformance.harness.contract import Json, JsonObject
from conformance.rules import cite

LEVELS: Final = ("behaviour", "wording")
RANK_DISK: Final = 0
RANK_FLAG: Final = 1
RANK_BEHAVIOUR: Final = 2
RANK_TEXT: Final = 3
RANK_CODE: Final = 4
_SHOWN: Final = display.SHOWN
# Past this many characters "was X where Y was expected" no longer fits the one-line verdict the
# terminal shows: the verdict then shows where the two first differ.
_WHOLE: Final = 96
_BEFORE: Final = 8
_AFTER: Final = 24


@dataclass(frozen=True)
class Violation:
    """One broken rule, in one sentence."""

    level: str
    rank: int
    sentence: str
    rule: str | None
    signature: str | None = None
    """The root-cause signature (``conformance.causes``), when the violation is of a call."""
    call: int | None = None
    """Which call of the case broke the rule (its index in ``Judge.calls``)."""

    def to_json(self) -> JsonObject:
        """``{"level", "rule", "verdict"}``, and ``signature``/``call`` when known."""
        data: JsonObject = {"level": self.level, "rule": self.rule, "verdict": self.sentence}
        if self.signature is not None:
            data["signature"] = self.signature
        if self.call is not None:
            data["call"] = self.call
        return data


class ConformanceFailure(AssertionError):
    """A case broke rules; the message lists every violation, disk first."""

    def __init__(self, violations: list[Violation]) -> None:
        self.violations = sorted(
            collapse(violations), key=lambda v: (LEVELS.index(v.level), v.rank)
        )
        super().__init__("\n".join(v.sentence for v in self.violations))


def collapse(violations: list[Violation]) -> list[Violation]:
    """Identical violations once, saying how often: ``2 times: …``."""
    groups = _group((v, 0) for v in violations)
    return [v if len(n) == 1 else replace(v, sentence=f"{len(n)} times: {v.sentence}")
            for v, n in groups]  # fmt: skip


def _group(tagged: Iterable[tuple[Violation, int]]) -> list[tuple[Violation, list[int]]]:
    """Equal violations together, in the order they first came, with their tags."""
    groups: list[tuple[Violation, list[int]]] = []
    for violation, tag in tagged:
        for kept, tags in groups:
            if kept == violation:
                tags.append(tag)
                break
        else:
            groups.append((violation, [tag]))
    return groups


@dataclass
class CallRecord:
    """One tool call of a case: what was sent, what came back, what changed, what was expected."""

    tool: str
    arguments: Json
    result: JsonObject | None = None
    failure: str | None = None
    changes: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    expected: str | None = None
    rule: str | None = None
    situation: str | None = None
    """What the call met, a word of ``conformance.causes.SITUATIONS``."""
    target: str | None = None
    """The target's key relative to the root: calls on one file share it."""
    index: int | None = None

    def to_json(self) -> JsonObject:
        """The call as the JSON report records it."""
        record: JsonObject = {"tool": self.tool, "arguments": self.arguments}
        if self.result is not None:
            record["result"] = self.result
        if self.failure is not None:
            record["failure"] = self.failure
        if self.changes:
            record["changes"] = self.changes
        if self.situation is not None:
            record["situation"] = self.situation
        if self.target is not None:
            record["target"] = self.target
        if self.expected is not None:
            record["expected"] = self.expected
            record["rule"] = self.rule
        return record


class Judge:
    """The checks of one case, at the levels the run judges."""

    def __init__(self, levels: frozenset[str], *, immediate: bool = False) -> None:
        self.levels = levels
        self.immediate = immediate
        self.checks: Counter[str] = Counter()
        self.violations: list[Violation] = []
        self.calls: list[CallRecord] = []
        self.capability_gaps: list[str] = []
        self.cut_short = False
        """The case ended on an error before it was fully judged (no level of it passed)."""

    def runs(self, level: str) -> bool:
        """Whether this run judges ``level``."""
        return level in self.levels

    def record(self, level: str, ok: bool, sentence: Callable[[], str] | str, rule: str | None,
               rank: int = RANK_BEHAVIOUR, *,
               signature: str | Callable[[], str | None] | None = None,
               call: int | None = None) -> bool:  # fmt: skip
        """Count one check; keep (or, in a property, raise) its violation. Returns ``ok``.

        ``sentence`` and ``signature`` may be functions, called only for a violation: most
        checks pass, and naming a wrong text's shape compares the texts character by character.
        """
        if level not in self.levels:
            return True
        self.checks[level] += 1
        if ok:
            return True
        text = display.text(sentence() if callable(sentence) else sentence)
        cause = signature() if callable(signature) else signature
        violation = Violation(level, rank, text, rule, cause, call)
        self.violations.append(violation)
        if self.immediate:
            raise ConformanceFailure([violation])
        return False

    def true(self, ok: bool, happened: str, *, rule: str, level: str = "behaviour",
             signature: str | None = None, call: int | None = None) -> bool:  # fmt: skip
        """Check a condition; ``happened`` says what the harness did when it does not hold."""
        rank = RANK_BEHAVIOUR if level == "behaviour" else RANK_TEXT
        return self.record(level, ok, lambda: f"{happened}; {cite(rule)}", rule, rank,
                           signature=signature, call=call)  # fmt: skip

    def equal(self, what: str, actual: object, expected: object, *, rule: str,
              level: str = "behaviour", signature: str | None = None,
              call: int | None = None) -> bool:  # fmt: skip
        """Check that ``actual`` is ``expected``; the verdict shows both (under ``signature``
        where the caller knows the cause, of ``call`` where it is about one)."""
        rank = RANK_BEHAVIOUR if level == "behaviour" else RANK_TEXT
        return self.record(
            level,
            actual == expected,
            lambda: f"{what} {differ(actual, expected)}; {cite(rule)}",
            rule,
            rank,
            signature=signature,
            call=call,
        )

    def scripted(self, call: causes.Scripted) -> int:
        """Record a call a script made inside the harness's loop; its index, for a verdict."""
        path = call.arguments.get("file_path") if isinstance(call.arguments, dict) else None
        record = CallRecord(call.tool, call.arguments, situation=call.situation,
                            expected=call.expected, rule=call.signature("").split(" · ")[0] or None,
                            index=len(self.calls))  # fmt: skip
        record.target = os.path.normpath(path) if isinstance(path, str) else None
        self.calls.append(record)
        return len(self.calls) - 1

    def transcript(self, what: str, actual: list[Json], expected: list[Json], *,
                   script: JsonObject, rule: str,
                   texts: Sequence[tuple[str, str]] = ()) -> bool:  # fmt: skip
        """Check a scripted run's shape; where it first differs at a call's error flag, the
        verdict is of that call (``causes.scripted_divergence``), under its signature — or under
        its text's shape where ``texts`` (each result's text and the expected one) shows one
        that explains the flag (``causes.behaviour_shape``)."""
        if actual == expected:
            return self.record("behaviour", True, "", rule)
        call = causes.scripted_divergence(script, actual, expected)
        pair = texts[call.number] if call and call.number < len(texts) else None
        shaped = causes.behaviour_shape(*pair) if pair else None
        return self.record(
            "behaviour", False, lambda: f"{what} {differ(actual, expected)}; {cite(rule)}", rule,
            signature=shaped or (call.signature(rule) if call else None),
            call=self.scripted(call) if call else None,
        )  # fmt: skip

    def rounds(self, count: int) -> Iterator[int]:
        """Round numbers of a repeated check (a race); what fails in several rounds is one verdict.

        After each round the violations of the rounds so far are collapsed: each distinct one
        once, as ``in all 10 rounds: …`` or ``in some of 10 rounds: …``. Not how many: in a race
        that is the scheduler's choice, and the same harness would read otherwise on the next
        run. A single round is no repetition: its words stand.
        """
        if count == 1:
            yield 0
            return
        start = len(self.violations)
        tagged: list[tuple[Violation, int]] = []
        for number in range(count):
            before = len(self.violations)
            yield number
            tagged += [(v, number) for v in self.violations[before:]]
            self.violations[start:] = [
                replace(v, sentence=f"{_how_often(len(set(r)), number + 1)}: {v.sentence}")
                for v, r in _group(tagged)
            ]

    def outcomes(self, failed_by_exception: bool = False) -> dict[str, str]:
        """Each judged level: ``passed``, ``failed`` or ``not-applicable`` (nothing to judge).

        A case cut short by an error passes no level: what it did not reach was not judged.
        """
        outcomes = {}
        failed_by_exception = failed_by_exception or self.cut_short
        for level in LEVELS:
            if level not in self.levels:
                outcomes[level] = "not-run"
            elif any(v.level == level for v in self.violations) or failed_by_exception:
                outcomes[level] = "failed"
            elif self.checks[level]:
                outcomes[level] = "passed"
            else:
                outcomes[level] = "not-applicable"
        return outcomes

    def check_unjudged_calls(self) -> None:
        """A call no check looked at may still not change anything outside the workspace."""
        for record in self.calls:
            if record.expected is None and record.outside:
                harness_dirs = all(display.in_harness_dir(change) for change in record.outside)
                deviation = "harness-dir-files" if harness_dirs else "other-files-changed"
                self.record(
                    "behaviour",
                    False,
                    f"{record.tool} changed {' and '.join(record.outside)} outside the workspace "
                    f"root it was given; {cite('tool.changes-only-target')}",
                    "tool.changes-only-target",
                    RANK_DISK,
                    signature=f"tool.changes-only-target · any · {deviation}",
                    call=record.index,
                )

    def settle(self) -> None:
        """End of the case: raise every violation together, if any."""
        if self.violations:
            raise ConformanceFailure(self.violations)


def _how_often(failed: int, rounds: int) -> str:
    """``in all 10 rounds`` or ``in some of 10 rounds`` (``Judge.rounds``)."""
    return f"in all {rounds} rounds" if failed == rounds else f"in some of {rounds} rounds"


def shorten(value: object, limit: int = _SHOWN) -> str:
    """A value for a verdict, as JSON: strings quoted, long ones cut with an ellipsis."""
    return display.show(value, limit)


def differ(actual: object, expected: object) -> str:
    """``was X where Y was expected``; when that is long, where the two first differ.

    Both are shown as JSON with this run's directories named by their places, so the verdict
    (and the character it points at) is the same on every run.
    """
    got, want = display.show(actual, 1 << 30), display.show(expected, 1 << 30)
    if len(got) + len(want) <= _WHOLE:
        return f"was {got} where {want} was expected"
    strings = isinstance(actual, str) and isinstance(expected, str)
    a = display.text(actual) if isinstance(actual, str) else got
    b = display.text(expected) if isinstance(expected, str) else want
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    start = max(0, at - _BEFORE)
    lead = "…" if start else ""

    end = start + _BEFORE + _AFTER

    def window(text: str) -> str:
        part = text[start:end]
        tail = "…" if end < len(text) else ""
        return lead + (display.quote(part) if strings else part) + tail

    # No lengths: a harness's text may hold, past the window, what differs from run to run
    # (gemini-cli names a temp directory after the workspace), and the words must not.
    return f"differs at character {at}: was {window(a)} where {window(b)} was expected"


def verdict_text(case_id: str, failure: ConformanceFailure, judge: Judge) -> str:
    """A failed case as its failure output shows it: every violation, then the calls made."""
    count = len(failure.violations)
    lines = [f"{case_id}: {count} violation{'s' if count != 1 else ''} (behaviour first)"]
    for number, violation in enumerate(failure.violations, 1):
        lines.append(f"  {number}. [{violation.level}] {violation.sentence}")
    if judge.calls:
        lines.append("calls made:")
        for number, call in enumerate(judge.calls, 1):
            lines.append(f"  {number}. {call.tool} {shorten(call.arguments, 200)}")
            if call.result is not None:
                result = call.result
                flag = result.get("isError")
                content = result.get("content")
                blocks = content if isinstance(content, list) else []
                text = " ".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
                error = f" {shorten(result['error'])}" if "error" in result else ""
                lines.append(f"     → isError {shorten(flag)}{error}: {shorten(text, 300)}")
            if call.failure is not None:
                failure_line = display.text(call.failure.splitlines()[0])
                lines.append(f"     → the call failed: {failure_line}")
            for change in call.changes:
                lines.append(f"     changed: {change}")
            if call.expected is not None:
                lines.append(f"     expected: {call.expected} ({{{call.rule}}})")
    return "\n".join(lines)
