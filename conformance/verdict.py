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

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from conformance.harness.contract import Json, JsonObject
from conformance.rules import cite

LEVELS: Final = ("behaviour", "wording")
RANK_DISK: Final = 0
RANK_FLAG: Final = 1
RANK_BEHAVIOUR: Final = 2
RANK_TEXT: Final = 3
RANK_CODE: Final = 4
_SHOWN: Final = 160


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
        self.violations = sorted(violations, key=lambda v: (LEVELS.index(v.level), v.rank))
        super().__init__("\n".join(v.sentence for v in self.violations))


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

    def runs(self, level: str) -> bool:
        """Whether this run judges ``level``."""
        return level in self.levels

    def record(self, level: str, ok: bool, sentence: Callable[[], str] | str, rule: str | None,
               rank: int = RANK_BEHAVIOUR, *, signature: str | None = None,
               call: int | None = None) -> bool:  # fmt: skip
        """Count one check; keep (or, in a property, raise) its violation. Returns ``ok``."""
        if level not in self.levels:
            return True
        self.checks[level] += 1
        if ok:
            return True
        text = sentence() if callable(sentence) else sentence
        violation = Violation(level, rank, text, rule, signature, call)
        self.violations.append(violation)
        if self.immediate:
            raise ConformanceFailure([violation])
        return False

    def true(self, ok: bool, happened: str, *, rule: str, level: str = "behaviour") -> bool:
        """Check a condition; ``happened`` says what the harness did when it does not hold."""
        rank = RANK_BEHAVIOUR if level == "behaviour" else RANK_TEXT
        return self.record(level, ok, lambda: f"{happened}; {cite(rule)}", rule, rank)

    def equal(
        self, what: str, actual: object, expected: object, *, rule: str, level: str = "behaviour"
    ) -> bool:
        """Check that ``actual`` is ``expected``; the verdict shows both."""
        rank = RANK_BEHAVIOUR if level == "behaviour" else RANK_TEXT
        return self.record(
            level,
            actual == expected,
            lambda: f"{what} {differ(actual, expected)}; {cite(rule)}",
            rule,
            rank,
        )

    def outcomes(self, failed_by_exception: bool = False) -> dict[str, str]:
        """Each judged level: ``passed``, ``failed`` or ``not-applicable`` (nothing to judge)."""
        outcomes = {}
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
                harness_dirs = all(change.startswith('"<') for change in record.outside)
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


def shorten(value: object, limit: int = _SHOWN) -> str:
    """A value for a verdict: strings quoted, long ones cut with an ellipsis."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def differ(actual: object, expected: object) -> str:
    """``was X where Y was expected``, pointing at the first difference of two long strings."""
    if (
        isinstance(actual, str)
        and isinstance(expected, str)
        and (len(actual) > _SHOWN or len(expected) > _SHOWN)
    ):
        at = next(
            (i for i, (a, b) in enumerate(zip(actual, expected, strict=False)) if a != b),
            min(len(actual), len(expected)),
        )
        start = max(0, at - 40)
        got, want = actual[start : at + 60], expected[start : at + 60]
        lead = "…" if start else ""
        return (
            f"differs from the expected text at character {at} "
            f"(of {len(actual)}; {len(expected)} expected): was {lead}{got!r} "
            f"where {lead}{want!r} was expected"
        )
    return f"was {shorten(actual)} where {shorten(expected)} was expected"


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
                error = f" {result['error']}" if "error" in result else ""
                lines.append(f"     → isError {str(flag).lower()}{error}: {shorten(text, 300)}")
            if call.failure is not None:
                lines.append(f"     → the call failed: {call.failure.splitlines()[0]}")
            for change in call.changes:
                lines.append(f"     changed: {change}")
            if call.expected is not None:
                lines.append(f"     expected: {call.expected} ({{{call.rule}}})")
    return "\n".join(lines)
