"""Each peer's ``triage.toml``: every behaviour failure, a defect or a deliberate design, and why.

An entry covers one or more failures of the same cause, each named by case ID and the rule its
verdict cites (the case ID alone for a failure without a violation: a call that failed outright).
Until the suite names root causes, entries are keyed by case and rule; ``signature`` is reserved
for the root-cause signature, so a later session can re-key them without rewriting the evidence::

    [[entry]]
    failures = ["GRD-001 policy.write-intent", "REM-012 fs.msg.exists-unread", "PRV-004"]
    signature = ""              # the root-cause signature, once the reports carry one
    verdict = "defect"          # or "design"
    summary = "write_file overwrites a file the session never read"
    evidence = "middleware/filesystem.py@0.7.32:812: `…` (quoted from the installed package)"

Only the behaviour level is triaged: peers keep their own words, so wording failures are expected.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

VERDICTS: Final = ("defect", "design")
_KEYS: Final = {"failures", "signature", "verdict", "summary", "evidence"}

Key = tuple[str, str]
"""(case ID, rule ID or "")."""


class TriageError(ValueError):
    """A triage file that cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class Entry:
    """One triaged cause."""

    keys: tuple[Key, ...]
    signature: str
    verdict: str
    summary: str
    evidence: str

    def failures(self) -> list[Key]:
        """The failures this entry covers."""
        return list(self.keys)


def load(path: Path) -> list[Entry]:
    """The entries of one triage file (none when it does not exist)."""
    if not path.is_file():
        return []
    where = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise TriageError(f"{where}: not TOML: {exc}") from None
    entries = []
    for number, raw in enumerate(data.get("entry", []), 1):
        at = f"{where}: entry {number}"
        unknown = sorted(set(raw) - _KEYS)
        if unknown:
            raise TriageError(f"{at}: unknown key {', '.join(unknown)}")
        try:
            entry = Entry(
                keys=tuple(_key(str(f)) for f in raw["failures"]),
                signature=str(raw.get("signature", "")),
                verdict=str(raw["verdict"]),
                summary=str(raw["summary"]).strip(),
                evidence=str(raw["evidence"]).strip(),
            )
        except KeyError as exc:
            raise TriageError(f"{at}: missing {exc}") from None
        if entry.verdict not in VERDICTS:
            raise TriageError(f"{at}: verdict {entry.verdict!r} is not one of {VERDICTS}")
        if not entry.keys or not entry.summary or not entry.evidence:
            raise TriageError(f"{at}: failures, summary and evidence may not be empty")
        entries.append(entry)
    return entries


def _key(failure: str) -> Key:
    case, _, rule = failure.strip().partition(" ")
    return case, rule.strip()


def failures(report: dict[str, Any]) -> dict[Key, str]:
    """Every behaviour failure of a report: (case, rule) → the verdict sentence (or message)."""
    found: dict[Key, str] = {}
    for case in report.get("cases", []):
        if (case.get("levels") or {}).get("behaviour") != "failed":
            continue
        verdicts = [v for v in case.get("verdicts") or [] if v.get("level") == "behaviour"]
        if not verdicts:
            found.setdefault((case["id"], ""), str(case.get("message") or ""))
        for verdict in verdicts:
            found.setdefault((case["id"], str(verdict.get("rule") or "")), verdict["verdict"])
    return found


def index(entries: list[Entry]) -> dict[Key, Entry]:
    """Entry by failure key; a failure claimed by two entries is an error."""
    found: dict[Key, Entry] = {}
    for entry in entries:
        for key in entry.failures():
            if key in found:
                raise TriageError(f"{key[0]} ({key[1] or 'no rule'}) is triaged twice")
            found[key] = entry
    return found
