"""Pinned transcripts: secret-free syrupy snapshots stored under the top-level ``snapshots/``.

One amber file per case module (``snapshots/test_scenarios.ambr`` for
``conformance/cases/test_scenarios.py``), so two modules never collide. The files ship inside
the wheel (as ``conformance/_snapshots``) so an installed suite finds them; in a checkout they
are read from ``snapshots/`` beside the package.

Every snapshot passes through ``ConformanceSnapshots.serialize`` before it is compared or
written: the log is normalized (SPEC §5) and scanned for secrets there, in one place.

``python -m conformance.snapshots diff OLD_DIR NEW_DIR`` prints every changed model-visible
string as ``-`` old / ``+`` new; the ``snapshots`` nox session uses it before rewriting.
"""

from __future__ import annotations

import functools
import json
import os
import re
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final

from syrupy.extensions.amber import AmberSnapshotExtension
from syrupy.extensions.amber.serializer import AmberDataSerializer
from syrupy.location import PyTestLocation

from conformance.display import show
from conformance.harness.contract import Json, JsonObject
from conformance.secrets import check_snapshot

CWD: Final = "{{cwd}}"
SESSION_ID: Final = "{{sessionId}}"


def default_snapshot_dir() -> Path:
    """The normative snapshots shipped with the suite."""
    packaged = Path(__file__).parent / "_snapshots"
    return packaged if packaged.is_dir() else Path(__file__).parent.parent / "snapshots"


@dataclass(frozen=True)
class Transcript:
    """A session log to pin: the records, the workspace root they ran in, and a label."""

    records: Sequence[JsonObject]
    root: str
    where: str = "?"

    def __repr__(self) -> str:
        # Failure output shows reprs; an unredacted log must not reach a terminal or CI log.
        return f"Transcript({len(self.records)} records for {self.where})"


def normalize(records: Sequence[JsonObject], root: str) -> list[Json]:
    """Replace the root (as given and realpath'd) by ``{{cwd}}`` and the session id."""
    header = records[0] if records else {}
    session_id = header.get("id") if header.get("type") == "session" else None
    roots = sorted({os.path.abspath(root), os.path.realpath(root)}, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(r) + r"(?![\w.\-])" for r in roots))

    def walk(value: Json) -> Json:
        if isinstance(value, str):
            if isinstance(session_id, str) and session_id:
                value = value.replace(session_id, SESSION_ID)
            return pattern.sub(CWD, value)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    return [walk(record) for record in records]


def render(records: Sequence[Json]) -> str:
    """One JSON object per line, keys sorted so any harness's key order compares equal."""
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records)


class ConformanceSnapshots(AmberSnapshotExtension):
    """Amber snapshots kept in one shared directory instead of beside each test module.

    ``partial_run`` is set by the plugin when only part of the suite runs. syrupy judges which
    snapshots are unused by the tests that ran, and with the snapshots out of tree a run
    selected by node ID reports its siblings as unused (failing the run) and
    ``--snapshot-update`` then deletes them; so a partial run never deletes a snapshot.
    """

    directory: ClassVar[Path] = default_snapshot_dir()
    partial_run: ClassVar[bool] = False
    uncoded: ClassVar[bool] = False
    """Set for a harness without codes on its results (SPEC §6.2 ``toolCodes``): a transcript
    is compared without the ``error`` of its ``tool/result`` events, on both sides."""

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        """Every case module's snapshots live in the one directory."""
        return str(cls.directory)

    def delete_snapshots(self, snapshot_location: str, snapshot_names: set[str]) -> None:
        """Delete unused snapshots, but never during a partial run."""
        if not self.partial_run:
            super().delete_snapshots(snapshot_location, snapshot_names)

    def matches(self, *, serialized_data: Any, snapshot_data: Any) -> bool:
        """Equal, or, for a harness without codes, equal but for the results' ``error``."""
        if serialized_data == snapshot_data:
            return True
        if not (self.uncoded and isinstance(serialized_data, str)):
            return False
        return isinstance(snapshot_data, str) and without_result_errors(
            serialized_data
        ) == without_result_errors(snapshot_data)

    def serialize(self, data: Any, **kwargs: Any) -> str:
        """Normalize and scan a ``Transcript`` (any other value is scanned as its text)."""
        __tracebackhide__ = True  # its locals hold the unscanned text
        if isinstance(data, Transcript):
            text = render(normalize(data.records, data.root))
            check_snapshot(text, data.where)
            data = text
        else:
            check_snapshot(str(data), "?")
        serialized: str = super().serialize(data, **kwargs)
        return serialized


def without_result_errors(text: str) -> str:
    """A transcript's text (rendered, or as pinned) with no ``error`` in its ``tool/result``
    events; every other line as it was."""
    return "\n".join(_without_result_error(line) for line in text.split("\n"))


def _without_result_error(line: str) -> str:
    body = line.lstrip(" ")
    try:
        record = json.loads(body) if body.startswith("{") else None
    except ValueError:
        return line
    if not (isinstance(record, dict) and record.get("type") == "tool/result"):
        return line
    data = record.get("data")
    if not (isinstance(data, dict) and "error" in data):
        return line
    del data["error"]
    return line[: len(line) - len(body)] + json.dumps(record, ensure_ascii=False, sort_keys=True)


# -- behaviour of a transcript, and what differs from a pinned one --------------------------

SCENARIO_SNAPSHOTS: Final = "test_scenarios.ambr"


def behaviour_of(records: Sequence[JsonObject]) -> list[Json]:
    """What a transcript shows of behaviour: event types, tools called, error flags, the end.

    No text and no codes: a harness with its own wording has the same behaviour.
    """
    shape: list[Json] = []
    for record in records[1:]:
        kind, data = record.get("type"), record.get("data") or {}
        if kind == "assistant/message":
            blocks = data.get("content") or []
            shape.append(
                [kind, [b.get("name", b.get("type")) for b in blocks if isinstance(b, dict)]]
            )
        elif kind == "tool/call":
            shape.append([kind, data.get("name")])
        elif kind == "tool/result":
            shape.append([kind, "error" if data.get("isError") else "ok"])
        elif kind == "turn/end":
            shape.append([kind, (data.get("reason") or {}).get("kind")])
        else:
            shape.append([kind])
    return shape


def _pinned(directory: Path, name: str) -> str | None:
    path = directory / SCENARIO_SNAPSHOTS
    try:
        found = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(found.st_mode):
        return None
    version = (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)
    data = _pinned_in(str(path), version).get(f"test_scenario_transcript[{name}]")
    return None if data is None else _unquote(data)


@functools.lru_cache(maxsize=4)
def _pinned_in(path: str, version: tuple[int, int, int, int, int]) -> dict[str, object]:
    """Every snapshot of one file by name, read once while the file stays as it is (each
    scenario case looks its transcript up). ``version``: its device, inode, size, mtime and
    ctime; a same-size rewrite in place within one tick of the file system's clock would go
    unseen, and none happens during a run (syrupy writes snapshots as the session ends)."""
    found: dict[str, object] = {}
    for snapshot in AmberDataSerializer.read_file(path):
        found.setdefault(snapshot.name, snapshot.data)
    return found


def normative_transcript(name: str) -> list[JsonObject]:
    """The suite's own pinned transcript of a scenario (normalized)."""
    text = _pinned(default_snapshot_dir(), name)
    if text is None:
        raise FileNotFoundError(f"the suite ships no transcript of {name}")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def transcript_difference(name: str, records: Sequence[JsonObject], root: str) -> str:
    """Where a run's transcript departs from the pinned one, in words (the first difference)."""
    pinned = _pinned(ConformanceSnapshots.directory, name)
    if pinned is None:
        return f"no transcript of {name} is pinned in {ConformanceSnapshots.directory}"
    ours = render(normalize(records, root))
    if ConformanceSnapshots.uncoded:  # compared as the snapshot extension compares them
        ours, pinned = without_result_errors(ours), without_result_errors(pinned)
    theirs, mine = visible_strings(pinned), visible_strings(ours)
    for where in sorted(set(theirs) | set(mine)):
        if theirs.get(where) != mine.get(where):
            return (
                f"{where}: the model saw {show(mine.get(where))} where {show(theirs.get(where))} "
                "is pinned"
            )
    for index, (a, b) in enumerate(zip(ours.splitlines(), pinned.splitlines(), strict=False)):
        if a != b:
            return f"record {index}: {show(a, 200)} where {show(b, 200)} is pinned"
    counts = len(ours.splitlines()), len(pinned.splitlines())
    return f"the transcript has {counts[0]} records where {counts[1]} are pinned"


def first_different_result(
    name: str, records: Sequence[JsonObject], root: str
) -> tuple[int, str, str] | None:
    """Which result (from 0, in order) holds the first difference ``transcript_difference``
    names, with its text and the pinned one (both normalized); None when that difference is
    not in a tool result."""
    pinned = _pinned(ConformanceSnapshots.directory, name)
    if pinned is None:
        return None
    ours = render(normalize(records, root))
    theirs, mine = visible_strings(pinned), visible_strings(ours)
    where = next((w for w in sorted(set(theirs) | set(mine)) if theirs.get(w) != mine.get(w)), None)
    if where is None or not where.endswith("]") or " result[" not in where:
        return None
    call_id = where.rsplit(" result[", 1)[0]
    ids = [
        str(json.loads(line).get("data", {}).get("callId"))
        for line in ours.splitlines()
        if line.strip() and json.loads(line).get("type") == "tool/result"
    ]
    if call_id not in ids:
        return None
    return ids.index(call_id), mine.get(where, ""), theirs.get(where, "")


def first_different_error(
    name: str, records: Sequence[JsonObject], root: str
) -> tuple[int, Json, Json, str] | None:
    """Which result (from 0, in order) first carries another structured error than the pinned
    transcript's, with both (None where absent) and the result's text (normalized); None where
    the results differ in number or every error agrees, and for a harness without codes."""
    pinned = _pinned(ConformanceSnapshots.directory, name)
    if pinned is None or ConformanceSnapshots.uncoded:
        return None
    mine, theirs = _results(render(normalize(records, root))), _results(pinned)
    if len(mine) != len(theirs):
        return None
    pairs = enumerate(zip(mine, theirs, strict=True))
    return next(((i, a[0], b[0], a[1]) for i, (a, b) in pairs if a[0] != b[0]), None)


def uncoded_failures(name: str, records: Sequence[JsonObject], root: str) -> bool:
    """Whether the run's ``error`` events are the pinned ones but each without the pinned code
    ``UNKNOWN`` (a failure that has no code of its own recorded with none)."""
    pinned = _pinned(ConformanceSnapshots.directory, name)
    if pinned is None:
        return False
    mine, theirs = _error_events(render(normalize(records, root))), _error_events(pinned)
    return (
        bool(theirs)
        and len(mine) == len(theirs)
        and all(
            isinstance(a, dict) and "code" not in a and b == {**a, "code": "UNKNOWN"}
            for a, b in zip(mine, theirs, strict=True)
        )
    )


def _error_events(transcript: str) -> list[Json]:
    events = [json.loads(line) for line in transcript.splitlines() if line.strip()]
    return [e.get("data") for e in events if e.get("type") == "error"]


def result_texts(name: str, records: Sequence[JsonObject], root: str) -> list[tuple[str, str]]:
    """(this run's text, the pinned text) of each tool result, both normalized, where the run
    has as many results as the pinned transcript; else none."""
    pinned = _pinned(ConformanceSnapshots.directory, name)
    if pinned is None:
        return []
    mine, theirs = _results(render(normalize(records, root))), _results(pinned)
    if len(mine) != len(theirs):
        return []
    return [(a[1], b[1]) for a, b in zip(mine, theirs, strict=True)]


def _results(transcript: str) -> list[tuple[Json, str]]:
    """(error, text) of each tool/result of a transcript."""
    events = [json.loads(line) for line in transcript.splitlines() if line.strip()]
    found = []
    for event in events:
        if event.get("type") == "tool/result":
            data = event.get("data", {})
            blocks = [b for b in data.get("content", []) if isinstance(b, dict)]
            found.append((data.get("error"), "".join(str(b.get("text", "")) for b in blocks)))
    return found


# -- the old → new diff of model-visible strings --------------------------------------------


def _unquote(data: object) -> str:
    text = str(data)
    if text.startswith("'''\n") and text.endswith("\n'''"):
        return text[4:-4]
    return text


def visible_strings(transcript: str) -> dict[str, str]:
    """Model- and user-visible strings of a transcript, keyed by where they appear."""
    found: dict[str, str] = {}
    for line in transcript.splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        data = record.get("data", {})
        kind = record.get("type")
        if kind == "tool/result":
            for index, block in enumerate(data.get("content", [])):
                found[f"{data.get('callId')} result[{index}]"] = block.get("text", "")
        elif kind == "error":
            found[f"step {data.get('step')} error"] = data.get("message", "")
        elif kind == "assistant/message":
            for index, block in enumerate(data.get("content", [])):
                if block.get("type") == "text":
                    found[f"step {data.get('step')} text[{index}]"] = block["text"]
    return found


def read_dir(directory: Path) -> dict[str, str]:
    """Every snapshot in ``directory``: ``file::name`` → transcript text."""
    snapshots: dict[str, str] = {}
    for path in sorted(directory.glob("*.ambr")):
        for snapshot in AmberDataSerializer.read_file(str(path)):
            snapshots[f"{path.name}::{snapshot.name}"] = _unquote(snapshot.data)
    return snapshots


def diff_dirs(old: Path, new: Path) -> list[str]:
    """Lines describing every changed model-visible string between two snapshot directories."""
    before, after = read_dir(old), read_dir(new)
    lines: list[str] = []
    for name in sorted(set(before) | set(after)):
        if name not in after:
            lines.append(f"removed snapshot {name}")
            continue
        if name not in before:
            lines.append(f"new snapshot {name}")
        old_strings = visible_strings(before.get(name, ""))
        new_strings = visible_strings(after[name])
        for where in sorted(set(old_strings) | set(new_strings)):
            was, now = old_strings.get(where), new_strings.get(where)
            if was != now:
                lines.append(f"{name} {where}")
                if was is not None:
                    lines.append(f"  - {was!r}")
                if now is not None:
                    lines.append(f"  + {now!r}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """``diff OLD_DIR NEW_DIR``: print changed model-visible strings; 0 if none, 1 if some."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 3 or args[0] != "diff":
        print("usage: python -m conformance.snapshots diff OLD_DIR NEW_DIR", file=sys.stderr)
        return 2
    lines = diff_dirs(Path(args[1]), Path(args[2]))
    print("\n".join(lines) if lines else "no model-visible string changed")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
