"""How a verdict names a path and shows a value: one form each, the same on every run.

The suite hands a harness paths under temporary directories of this run; a verdict never shows
them, so two runs of the same behaviour read the same, byte for byte. Every directory the suite
made is registered here (the case's workspace when its ``Watch`` is made, the harness child's
own directories when it starts, the run's temporary directory), and a path under one of them is
named by its place:

=====================  ===================  ===============================================
where                  in a sentence        inside a text the harness wrote (or was expected to)
=====================  ===================  ===============================================
the workspace root     ``a.txt``            ``<root>/a.txt``
beside the root        ``../b.txt``         ``<root>/../b.txt``
the outside area       ``<outside>/t.txt``  ``<outside>/t.txt``
an extra writable root ``<extra>/n.txt``    ``<extra>/n.txt``
the harness's temp     ``<harness tmp>/x``  ``<harness tmp>/x``
the harness's cwd      ``<harness cwd>/x``  ``<harness cwd>/x``
the run's temp, else   ``<tmp>/probe0/x``   ``<tmp>/probe0/x``
=====================  ===================  ===============================================

A text keeps ``<root>/`` where the harness wrote an absolute path, so a harness that shows
``a.txt`` where ``/…/ws/a.txt`` was expected still reads differently from one that does not.

A handle the harness made (``{"handle": "err_1350"}``, ``{"session": "s7"}``) is named by the
order it first appears in the case's verdicts: ``{"handle": "<handle 1>"}``. What a harness
numbers its handles by is its own history (how many cases the same instance ran before, and in
which process), so the same behaviour would otherwise read differently in a full run, a
replayed case and a split run.

A value the run made up at random, each of its planted secrets (SPEC §1.4), is named by its
variable: a harness that leaves one unredacted reads
``"[REDACTED] <$HARNESS_CONFORMANCE_DB_PASSWORD>"`` on every run, where the value itself
changes each time. A secret value the run found in its environment (``OPENAI_API_KEY``) reads
``[REDACTED]``, in every spelling (raw or JSON-escaped), before a value is cut or quoted: a
cut never leaves the start of one.

A name the harness drew at random for a file of its own (a temporary file it left behind) is
shown by its shape, each random part as ``…``: ``".a.txt.….tmp" created``. Random here is what
the common generators draw: a run of eight or more hex digits with a digit among them (tokens,
hashes, UUIDs' parts), of four or more decimal digits (process IDs, times, Go's temp names),
Python's ``tmp`` with its eight characters, and the eight it puts before a ``.tmp`` suffix
(``".new.txt.….tmp"``, in a harness's message too), the six letters and digits Rust's
``tempfile`` crate puts after the ``.tmp`` that starts its names (``".tmp…"``, a message's too);
in the harness's own temporary directory also
what Python's ``tempfile`` (eight characters) and Node's ``mkdtemp`` (six) add to a prefix the
harness chose: ``"<harness tmp>/oh_editor_history_…/….json"``. A name drawn otherwise can still
differ from run to run. Of the suite's own names only the look-alike temporary files of PUB-005 and
PUB-011 have such a run, and read by their shape too.

Only the display is normalized: every check compares what the harness really sent.

Values are shown as JSON (``true``, ``null``, ``{"name": "FsError"}``), strings as JSON strings,
so an author in any language reads them as sent; a control, format or lone surrogate character
is escaped, so what cannot be seen is not lost.
"""

from __future__ import annotations

import itertools
import json
import os
import posixpath
import re
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final

from conformance.basetemp import HARNESS_TMP

OUTSIDE: Final = "outside"
"""The suite's outside area: this directory beside the workspace root."""
EXTRA: Final = "extra"
"""An extra writable root: this directory beside the workspace root."""
_SUITE_AREAS: Final = tuple(f"<{name}>/" for name in (OUTSIDE, EXTRA))


def in_harness_dir(path: str) -> bool:
    """Whether a watched name (``<harness tmp>/…``, as a sentence spells it, quoted or not) is
    in the harness's own directories, not the suite's areas beside the root (``<outside>/…``)."""
    name = path.removeprefix('"')
    return name.startswith("<") and not name.startswith(_SUITE_AREAS)


SHOWN: Final = 160
"""How many characters of one value a verdict shows."""

_HIDDEN: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# What a cut may leave of an escape: a lone backslash (not one of a pair), a "\\u" and 0-3 digits.
_NOT_PLAIN: Final = re.compile(r"[^\x20-\x7e]")
_PARTIAL_ESCAPE: Final = re.compile(r"(?<!\\)(?:\\\\)*\\(?:u[0-9a-f]{0,3})?$")


class Places:
    """The directories of this run and of the current case, and their names in verdicts."""

    def __init__(self) -> None:
        self._run: dict[str, str] = {}
        self._root: str | None = None
        self._base: str | None = None
        self._earlier: list[tuple[str, str]] = []
        self._pattern: re.Pattern[str] | None = None
        self._cached: list[tuple[str, str]] | None = None
        self._handles: dict[str, str] = {}
        self._values: dict[str, str] = {}
        self._value_pattern: re.Pattern[str] | None = None

    def run_directory(self, label: str, directory: str | os.PathLike[str]) -> None:
        """A directory that lives for the whole run (``harness tmp``, ``tmp``…)."""
        self._run[label] = os.fspath(directory)
        self._pattern = self._cached = None

    def run_values(self, names: Mapping[str, str]) -> None:
        """Values this run made up at random (its planted secrets), each with its name: a
        verdict that quotes one reads the same on the next run (``<$VARIABLE>``)."""
        self._values.update({value: name for value, name in names.items() if value})
        self._value_pattern = None

    def forget_values(self) -> None:
        """The run's made-up values are no longer named (its secrets were taken back)."""
        self._values.clear()
        self._value_pattern = None

    def case(self, root: str | os.PathLike[str], base: str | os.PathLike[str]) -> None:
        """The current case's workspace ``root`` inside the directory ``base`` it owns.

        A case that makes a workspace per run (the state machine) keeps naming the earlier
        ones as it named them then: its calls are shown after its last run."""
        if self._root is not None and self._base is not None:
            self._earlier.append((self._root, self._base))
        self._root, self._base = os.fspath(root), os.fspath(base)
        self._pattern = self._cached = None

    def forget_all(self) -> None:
        """Nothing is named any more (a fresh registry, for tests)."""
        self._run.clear()
        self.forget_values()
        self.forget_case()

    def forget_handles(self) -> None:
        """Handles are named afresh from ``<handle 1>`` (a property's next example)."""
        self._handles.clear()

    def forget_case(self) -> None:
        """The case is over: its directories are no longer named."""
        self._root = self._base = None
        self._earlier.clear()
        self._pattern = self._cached = None
        self._handles.clear()

    def _entries(self) -> list[tuple[str, str]]:
        """(spelling, name) of every registered directory, deepest first.

        The root is named ``""``, the case's own directory by its way up from the root (``..``).
        """
        if self._cached is not None:
            return self._cached
        pairs: list[tuple[str, str]] = []
        if self._root is not None and self._base is not None:
            for root, base in [(self._root, self._base), *reversed(self._earlier)]:
                up = posixpath.relpath(base, root)
                beside = [(os.path.join(base, name), f"<{name}>") for name in (OUTSIDE, EXTRA)]
                pairs += [(root, ""), *beside, (base, up)]
        pairs += [(directory, f"<{label}>") for label, directory in self._run.items()]
        entries: dict[str, str] = {}
        for directory, name in pairs:
            for spelling in _spellings(directory):
                entries.setdefault(spelling, name)
        self._cached = sorted(entries.items(), key=lambda e: len(e[0]), reverse=True)
        return self._cached

    def names(self) -> list[str]:
        """Every name ``text`` puts in a text for a place or a value: ``<root>``, ``[REDACTED]``…"""
        places = [name for _, name in self._entries() if name.startswith("<")]
        return ["<root>", *places, *self._values.values()]

    def longest(self) -> int:
        """The length of the longest registered spelling (at least that of a short path)."""
        return max((len(spelling) for spelling, _ in self._entries()), default=0) + 16

    def path(self, path: str) -> str:
        """A path the suite sent or saw, as a sentence names it (see the module docstring)."""
        if not path.startswith("/"):
            return path
        for spelling, name in self._entries():
            if path != spelling and not path.startswith(spelling.rstrip("/") + "/"):
                continue
            rest = path[len(spelling) :].lstrip("/")
            if name == "":
                return rest or "."
            if name.startswith("<"):
                return f"{name}/{rest}" if rest else name
            return posixpath.join(name, rest) if rest else name
        return path

    def watched(self, name: str) -> str:
        """A path a snapshot names relative to the root (``../outside/t.txt``), for a sentence."""
        if name.startswith("<") or self._root is None or name.startswith("/"):
            return name
        return self.path(posixpath.normpath(posixpath.join(self._root, name)))

    def values(self, text: str) -> str:
        """A text with every made-up value of the run (and secret it found) named: before it is
        cut or quoted, so no cut leaves the start of one and no escape hides one."""
        if self._values:
            if self._value_pattern is None:  # longest first: one value may start another
                ordered = sorted(self._values, key=len, reverse=True)
                self._value_pattern = re.compile("|".join(map(re.escape, ordered)))
            text = self._value_pattern.sub(lambda match: self._values[match.group(0)], text)
        return text

    def text(self, text: str, *, handles: bool = True) -> str:
        """A text with every registered directory in it replaced by its place's name, and
        every handle by its name in the case, and every made-up value of the run by its own
        (and the eight characters Python's ``tempfile`` drew for a ``.tmp`` file by ``…``).

        Without ``handles`` the handles stay as they are: for a text cut after it is named,
        whose handles are numbered only once it is shown (a handle cut off takes no number).
        """
        text = self.values(text)
        if ".tmp" in text:  # a harness's message naming its temp file: ".a.txt._ocqqqoa.tmp"
            text = _RUST_TEMP.sub(r"\1…", _TEMP_FILE.sub("…", text))
        if handles and '"' in text:
            text = _HANDLE.sub(self._handle, text)
        if "/" not in text:
            return text
        entries = self._entries()
        names = dict(entries)
        if self._pattern is None:  # compiled only when a text is named: most cases never need it
            # A directory ends where the path does: "/x/ws" is not the start of "/x/ws2".
            alternatives = "|".join(re.escape(spelling) for spelling, _ in entries) or "(?!)"
            self._pattern = re.compile(f"(?:{alternatives})" + r"(?![\w-]|\.[\w-])")

        def name_of(match: re.Match[str]) -> str:
            name = names[match.group(0)]
            return name if name.startswith("<") else "<root>" + (f"/{name}" if name else "")

        return self._pattern.sub(name_of, text)

    def handle(self, value: str) -> str:
        """A handle's name in this case: ``<handle N>`` by the order handles first appear."""
        if _NAMED.fullmatch(value):
            return value  # named already (a text shown twice)
        return self._handles.setdefault(value, f"<handle {len(self._handles) + 1}>")

    def _handle(self, match: re.Match[str]) -> str:
        return f'{match.group(1)}"{self.handle(match.group(2))}"'


_HANDLE: Final = re.compile(r'("(?:handle|session)": )"((?:[^"\\]|\\.)*)"')
"""A handle as a verdict shows it (JSON): its key, then the string the harness made."""
_HANDLE_KEYS: Final = frozenset({"handle", "session"})
_NAMED: Final = re.compile(r"<handle \d+>")


def _spellings(directory: str) -> list[str]:
    """The directory as given and as the system resolves it (``/tmp`` may be a symlink)."""
    spellings = [directory.rstrip("/") or "/"]
    real = os.path.realpath(directory)
    if real not in spellings:
        spellings.append(real)
    return spellings


PLACES: Final = Places()
"""The one registry of this process (a run judges one case at a time)."""


def path(value: str) -> str:
    """A path as a sentence names it: ``a.txt``, ``<outside>/t.txt``…"""
    return PLACES.path(value)


def watched(name: str) -> str:
    """A path a snapshot names relative to the root, as a sentence names it."""
    return PLACES.watched(name)


_DRAWN: Final = re.compile(
    r"(?<![A-Za-z0-9])(?:(?=[0-9a-f]*[0-9])[0-9a-f]{8,}|(?=[0-9A-F]*[0-9])[0-9A-F]{8,}|[0-9]{4,})"
    r"(?![A-Za-z0-9])|(?<![A-Za-z0-9])(tmp)[a-z0-9_]{8}(?![A-Za-z0-9_])"
)


_TEMP_FILE: Final = re.compile(r"(?<=[._-])[a-z0-9_]{8}(?=\.tmp(?![A-Za-z0-9]))")
"""What ``tempfile`` draws between a prefix and a ``.tmp`` suffix, wherever a text names it."""

_RUST_TEMP: Final = re.compile(r"((?:^|(?<=[/\s'\"`]))\.tmp)[A-Za-z0-9]{6}(?![A-Za-z0-9_])")
"""What Rust's ``tempfile`` crate draws after the ``.tmp`` its names start with
(``NamedTempFile::new_in``: ``.tmpAb3xYz``), in a name or a message naming one."""

_TEMP_DRAWN: Final = re.compile(
    r"(?<![A-Za-z0-9])(tmp)[a-z0-9_]{8}(?![A-Za-z0-9_])"
    r"|(?<=[_.-])(?:[a-z0-9_]{8}(?=$|[/.])|[A-Za-z0-9]{6}(?=$|/))"
)
"""What a temporary name's generator adds to the prefix the harness chose (or to ``tmp``, its
default): Python's ``tempfile`` eight characters of ``[a-z0-9_]``, Node's ``mkdtemp`` six of
``[A-Za-z0-9]``."""

HARNESS_TEMP: Final = f"<{HARNESS_TMP}>/"
"""How a watched name in the harness's own temporary directory starts."""


def shaped(name: str) -> str:
    """A path with the random parts of its names shown as ``…`` (see the module's text)."""
    if name.startswith(HARNESS_TEMP):  # what a harness keeps there, it names by a generator
        # First: a generator's draw can hold four digits in a row ("2685_k84"), which the
        # shape of a drawn number below would take alone, leaving "…_k84" on one run only.
        drawn = name[len(HARNESS_TEMP) :]
        name = HARNESS_TEMP + _TEMP_DRAWN.sub(lambda match: f"{match.group(1) or ''}…", drawn)
    name = _TEMP_FILE.sub("…", _DRAWN.sub(lambda match: f"{match.group(1) or ''}…", name))
    return _RUST_TEMP.sub(r"\1…", name) if ".tmp" in name else name


def text(value: str) -> str:
    """A text with this run's directories named by their places."""
    return PLACES.text(value)


def text_to_cut(value: str) -> str:
    """A text with this run's directories and values named but not its handles, to be cut and
    then shown (``show`` numbers the handles of what is left)."""
    return PLACES.text(value, handles=False)


def values(value: str) -> str:
    """A text with this run's made-up values and secrets named (``<$VARIABLE>``, ``[REDACTED]``)."""
    return PLACES.values(value)


def quote(value: str) -> str:
    """A string as a JSON string, with invisible characters escaped."""
    return _escape_hidden(json.dumps(value, ensure_ascii=False))


def named(value: str) -> str:
    """A path the suite sent, named and quoted for a sentence: ``"a.txt"``."""
    return quote(path(value))


def show(value: object, limit: int = SHOWN) -> str:
    """A value for a verdict, as JSON: strings quoted, long values cut with an ellipsis."""
    shown = _json(_clip(value, (limit + 2) * PLACES.longest()))
    if len(shown) <= limit:
        return shown
    if shown.startswith('"'):  # a string stays a string: cut inside it, then close it
        return _PARTIAL_ESCAPE.sub("", shown[: limit - 2]) + '"…'
    return shown[: limit - 1] + "…"


def _json(value: object) -> str:
    if isinstance(value, bytes):
        decoded = _bytes_text(value)
        if decoded is None:
            return f"<bytes {value.hex()}>"
        value = decoded
    return _escape_hidden(json.dumps(_plain(value), ensure_ascii=False, default=_fallback))


def _bytes_text(value: str | bytes) -> str | None:
    if isinstance(value, str):
        return value
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _plain(value: object) -> object:
    """``value`` with this run's directories renamed in every string, and containers as JSON's."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, bytes):
        decoded = _bytes_text(value)
        return text(decoded) if decoded is not None else f"<bytes {value.hex()}>"
    if isinstance(value, Mapping):
        # A handle is named before anything is measured or cut: its own length is history.
        return {
            text(str(k)) if isinstance(k, str) else k: PLACES.handle(v)
            if k in _HANDLE_KEYS and isinstance(v, str)
            else _plain(v)
            for k, v in value.items()
        }
    if isinstance(value, set | frozenset):
        return [_plain(v) for v in sorted(value, key=repr)]
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _fallback(value: object) -> object:
    """What JSON cannot carry is shown by its own words (a path, an exception…)."""
    if isinstance(value, Path):
        return text(os.fspath(value))
    if isinstance(value, Iterable):
        return [_plain(v) for v in value]
    return text(str(value))


def _escape_hidden(shown: str) -> str:
    """JSON escapes for what JSON leaves raw but nobody can see (or UTF-8 cannot carry)."""
    if shown.isascii() and shown.isprintable():
        return shown
    return _NOT_PLAIN.sub(_escape_char, shown)


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    if unicodedata.category(char) not in _HIDDEN:
        return char
    code = ord(char)
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def _clip(value: object, budget: int) -> object:
    """``value`` with every string and container cut to what a verdict of ``budget`` can show.

    Bytes stay whole: cut inside a character they would no longer read as text.

    A verdict shows at most ``limit`` characters, and naming a directory shortens a string by
    at most its longest spelling: ``(limit + 2) × longest`` characters of each string are all
    a verdict can reach, so a megabyte of content is never escaped and renamed only to be cut.
    """
    if isinstance(value, str):
        return value[:budget] if len(value) > budget else value
    if isinstance(value, Mapping):
        return {k: _clip(v, budget) for k, v in itertools.islice(value.items(), budget)}
    if isinstance(value, list | tuple):
        return [_clip(v, budget) for v in value[:budget]]
    return value
