"""Each peer's ``triage.toml``: every behaviour root cause, a defect or a deliberate design.

An entry explains one or more root causes, each named by the root-cause signature the suite gave
it (``rule · situation · deviation``, the ``signature`` of the JSON report's ``rootCauses``; see
docs/root-causes.md). One entry may name several signatures when they are one design of the
harness seen under several rules (no read-before-write guard at all breaks the write intent, the
edit intent and the version rules alike)::

    [[entry]]
    causes = [
      "policy.write-intent · existing-unread · accepted-instead-of-refused",
      "policy.edit-intent · existing-unread · accepted-instead-of-refused",
    ]
    verdict = "design"          # or "defect"
    summary = "no read-before-write guard: write_file overwrites a file the session never read"
    evidence = "middleware/filesystem.py@0.7.32:812: `…` (quoted from the installed package)"

Only the behaviour level is triaged: peers keep their own words, so wording failures need no
entry. A behaviour root cause is one the suite finds from a run's behaviour verdicts alone, in
the behaviour-level report and in the default-level one.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from conformance.causes import group

VERDICTS: Final = ("defect", "design")
_KEYS: Final = {"causes", "verdict", "summary", "evidence"}


class TriageError(ValueError):
    """A triage file that cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class Entry:
    """One triaged cause of the harness, under every root-cause signature it shows as."""

    causes: tuple[str, ...]
    verdict: str
    summary: str
    evidence: str


@dataclass(frozen=True)
class Cause:
    """One behaviour root cause of a report: its words and the cases it fails."""

    signature: str
    words: str
    cases: tuple[str, ...]


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
                causes=tuple(str(c).strip() for c in raw["causes"]),
                verdict=str(raw["verdict"]),
                summary=str(raw["summary"]).strip(),
                evidence=str(raw["evidence"]).strip(),
            )
        except KeyError as exc:
            raise TriageError(f"{at}: missing {exc}") from None
        if entry.verdict not in VERDICTS:
            raise TriageError(f"{at}: verdict {entry.verdict!r} is not one of {VERDICTS}")
        if not entry.causes or not entry.summary or not entry.evidence:
            raise TriageError(f"{at}: causes, summary and evidence may not be empty")
        entries.append(entry)
    return entries


def index(entries: list[Entry]) -> dict[str, Entry]:
    """Entry by root-cause signature; a signature claimed by two entries is an error."""
    found: dict[str, Entry] = {}
    for entry in entries:
        for signature in entry.causes:
            if signature in found:
                raise TriageError(f"root cause {signature!r} is triaged twice")
            found[signature] = entry
    return found


def causes(report: dict[str, Any]) -> dict[str, Cause]:
    """Every behaviour root cause of a report, by signature, as the suite groups them.

    The cases are grouped again with their wording verdicts left out, so a default-level
    report gives the causes its behaviour verdicts alone show (its own ``rootCauses`` fold a
    call's text into that call's behaviour cause, and list wording causes too).
    """
    judged = []
    for case in report.get("cases", []):
        if (case.get("levels") or {}).get("behaviour") != "failed":
            continue
        verdicts = [v for v in case.get("verdicts") or [] if v.get("level") == "behaviour"]
        judged.append({**case, "verdicts": verdicts})
    return {
        cause.signature: Cause(cause.signature, cause.words, tuple(cause.cases))
        for cause in group(judged).causes
    }
