"""The rule book: every normative rule of SPEC.md, by its stable ID.

SPEC.md tags each rule with ``{#area.topic}`` where it starts. A rule's text runs from its tag to
the next tag, or to the end of its bullet or table row. Verdicts cite rules by ID, section and
first sentence; the project's tests check that every rule has a case and every case cites only
rules that exist.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

RULE_TAG: Final = re.compile(r"\{#([a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+)\}")
_HEADING: Final = re.compile(r"^(#{2,3}) (\d+(?:\.\d+[a-z]?)?)\.? ")
_VERSION: Final = re.compile(r"^Spec version: \*\*(\d+\.\d+\.\d+)\*\*", re.M)
_SUMMARY_CHARS: Final = 200


@dataclass(frozen=True)
class Rule:
    """One normative rule: its ID, where it stands, and what it says."""

    id: str
    section: str
    text: str
    recommended: bool

    @property
    def summary(self) -> str:
        """The rule's first sentence, for a one-line verdict."""
        sentence = _first_sentence(self.text)
        if len(sentence) > _SUMMARY_CHARS:
            sentence = sentence[: _SUMMARY_CHARS - 1].rstrip() + "…"
        return sentence

    def cite(self) -> str:
        """``SPEC §3.4 {fs.msg.changed}: <summary>``."""
        return f"SPEC §{self.section} {{{self.id}}}: {self.summary}"


def spec_path() -> Path:
    """SPEC.md as shipped in the wheel, or at the top of a checkout."""
    packaged = Path(__file__).parent / "SPEC.md"
    return packaged if packaged.is_file() else Path(__file__).parent.parent / "SPEC.md"


def parse_rules(text: str) -> dict[str, Rule]:
    """Every tagged rule of a SPEC.md text, in document order.

    A tag opens a rule; its text runs to the next tag or to the end of its block (a blank line,
    a heading, the next bullet or table row). Other rules are mentioned by bare ID.
    """
    rules: dict[str, Rule] = {}
    section = "0"
    open_rule: list[str] = []  # [id, section, text…] of the rule being read

    def close() -> None:
        if open_rule:
            rule_id, where, *pieces = open_rule
            if rule_id in rules:
                raise ValueError(f"SPEC.md tags rule {rule_id} twice")
            body = _clean(" ".join(pieces))
            rules[rule_id] = Rule(rule_id, where, body, "(recommended)" in body)
            open_rule.clear()

    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading or not line.strip() or re.match(r"^\s*(- |\|)", line):
            close()
        if heading:
            section = heading.group(2)
            continue
        position = 0
        for tag in RULE_TAG.finditer(line):
            if open_rule:
                open_rule.append(line[position : tag.start()])
            close()
            open_rule.extend([tag.group(1), section])
            position = tag.end()
        if open_rule:
            open_rule.append(line[position:])
    close()
    return rules


def _clean(text: str) -> str:
    text = text.replace("**", "")
    cells = [cell.strip() for cell in text.split("|") if cell.strip()]
    if len(cells) >= 3:  # a table row: "op, condition: CODE `message`"
        text = f"{', '.join(cells[:-2])}: {cells[-2]} {cells[-1]}"
    return re.sub(r"\s+", " ", text).strip()


def _first_sentence(text: str) -> str:
    """Up to the first '. ' outside code spans."""
    in_code = False
    for index, char in enumerate(text):
        if char == "`":
            in_code = not in_code
        elif char == "." and not in_code and text[index + 1 : index + 2] in (" ", ""):
            return text[:index]
    return text


@functools.cache
def rule_book() -> dict[str, Rule]:
    """The rules of the SPEC.md this suite ships with."""
    return parse_rules(spec_path().read_text(encoding="utf-8"))


@functools.cache
def spec_version() -> str:
    """The version of the SPEC.md this suite ships with."""
    found = _VERSION.search(spec_path().read_text(encoding="utf-8"))
    if found is None:
        raise ValueError(f"{spec_path()} does not state its version")
    return found.group(1)


def cite(rule_id: str) -> str:
    """The citation of one rule, or a plain mention of an unknown ID."""
    rule = rule_book().get(rule_id)
    return rule.cite() if rule is not None else f"SPEC {{{rule_id}}}"
