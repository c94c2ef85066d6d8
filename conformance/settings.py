"""The suite's own settings, read by ``python -m conformance`` from the caller's files.

A run never reads pytest's configuration of the project it starts in (``conformance/run.ini``
is its only ini file). Its settings come, first match wins, from:

1. ``--conformance-config FILE``: a TOML file, keys at its top level or under
   ``[tool.harness-conformance]``;
2. ``[tool.harness-conformance]`` in the ``pyproject.toml`` of the starting directory or of
   its nearest ancestor that configures the suite (a package of a monorepo, with a
   ``pyproject.toml`` of its own, uses the settings of the repository's). The old
   ``conformance_*`` keys of a pytest configuration count as configuring it, in their
   directory's place.

Keys: ``harness``, ``harness-cmd``, ``level``, ``wording``, ``baseline`` (strings; a relative
file is found beside the file that names it: a file ``harness-cmd`` names, the module
``harness`` names, the wording and baseline files), ``expect-fail`` (a list of case IDs) and
``jobs`` (``"auto"`` or ``1``, as ``--conformance-jobs``). Command line options win over them.
The old ``conformance_*`` keys of a pytest ini file are still read for this release, with a
note to move them.
"""

from __future__ import annotations

import configparser
import os
import shlex
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

TABLE: Final = "harness-conformance"
KEYS: Final = {
    "harness": "conformance_harness",
    "harness-cmd": "conformance_harness_cmd",
    "level": "conformance_level",
    "wording": "conformance_wording",
    "baseline": "conformance_baseline",
    "expect-fail": "conformance_expect_fail",
    "jobs": "conformance_jobs",
}
PATHS: Final = frozenset({"wording", "baseline"})
LIST_FORMATS: Final = ("markdown", "json")
"""What ``--conformance-list-cases`` prints: a Markdown table or JSON (``--format``)."""
OLD_KEYS: Final = {ini: key for key, ini in KEYS.items()}
"""Every key as a pytest ini file spelled it (``--help`` lists them there, so all are read)."""
LEVELS: Final = ("all", "behaviour")
"""The levels a run may be limited to (``--conformance-level``)."""


class SettingsError(ValueError):
    """A settings file that cannot be used; the message names the file and the key."""


@dataclass
class Found:
    """Settings as pytest ini overrides, and notes for the user."""

    overrides: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    module_path: str | None = None
    """The directory of the file that names a Python harness: where its module is found."""

    def args(self) -> list[str]:
        """``-o key=value`` for each setting."""
        return [arg for key, value in self.overrides.items() for arg in ("-o", f"{key}={value}")]


def read(start: Path, explicit: str | None) -> Found:
    """The settings for a run started in ``start``."""
    found = Found()
    if explicit is not None:
        path = Path(explicit)
        data = _toml(path)
        table = _table(data)
        if table is None and isinstance(data.get("tool"), dict):
            # Another project's pyproject.toml: its [project] is not an unknown setting.
            raise SettingsError(f"{path}: has no [tool.{TABLE}] table")
        _take(found, data if table is None else table, path, table is None)
        return found
    for directory in [start, *start.parents]:
        project = directory / "pyproject.toml"
        table = _table(_toml(project)) if project.is_file() else None
        if table is not None:
            _take(found, table, project)
            return found
        if _old_keys(found, directory):
            return found
    return found


def _take(found: Found, table: object, path: Path, top_level: bool = False) -> None:
    where = "at the top level" if top_level else f"in [tool.{TABLE}]"
    if not isinstance(table, dict):
        raise SettingsError(f"{path}: [tool.{TABLE}] must be a table")
    if "harness" in table and "harness-cmd" in table:
        raise SettingsError(f"{path}: choose one of harness and harness-cmd in [tool.{TABLE}]")
    level = table.get("level", LEVELS[0])
    if level not in LEVELS:
        raise SettingsError(
            f"{path}: level {level!r} does not exist; choose one of {', '.join(LEVELS)}"
        )
    for key, value in table.items():
        if key not in KEYS:
            raise SettingsError(f"{path}: unknown key {key!r} {where}; known: {', '.join(KEYS)}")
        if key == "expect-fail":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise SettingsError(f"{path}: {key} must be a list of case IDs")
            found.overrides[KEYS[key]] = "\n".join(value)
            continue
        if key == "jobs" and (value in ("auto", "1") or (type(value) is int and value == 1)):
            found.overrides[KEYS[key]] = str(value)
            continue
        if key == "jobs":
            raise SettingsError(f'{path}: jobs must be "auto" or 1, got {value!r}')
        if not isinstance(value, str):
            raise SettingsError(f"{path}: {key} must be a string, got {value!r}")
        if key in ("harness", "harness-cmd") and not value.strip():
            raise SettingsError(f"{path}: {key} is empty {where}: name the harness")
        if key in PATHS and not value.strip():  # joined to the directory, it named that
            raise SettingsError(f"{path}: {key} is empty {where}: name the file")
        if key == "harness":
            found.module_path = str(path.parent.resolve())
        found.overrides[KEYS[key]] = _resolved(key, value, path.parent)


def _resolved(key: str, value: str, directory: Path) -> str:
    """A setting's value with the files it names found beside the file that names them."""
    if key in PATHS:
        return str((directory / value).resolve())
    if key == "harness-cmd":
        return _beside(value, directory)
    return value


def _beside(command: str, directory: Path) -> str:
    """``command`` with the files it names found beside the settings file (``absolute_words``)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command  # the loader says why it cannot be parsed, in one line
    found = absolute_words(words, str(directory.resolve()))
    return shlex.join(found) if found != words else command


def absolute_words(words: Sequence[str], caller: str) -> list[str]:
    """``words`` with each relative path that exists from ``caller`` made absolute.

    The child runs in a directory of the suite's, not the caller's, so ``node adapters/x.mjs``
    must name the caller's file. A word counts as a path when it contains a slash, does not
    start with ``-``, and names something that exists relative to ``caller``; anything else
    (``-m pkg.mod``, ``--flag=rel/path``, a bare program name found on ``PATH``, a bare file
    name such as ``harness.mjs``) is left as written: a wrapper (``env -C DIR``, ``docker run
    -w``) may run the command where that name means another file. ``bare_files`` names those a
    failed start should point out.
    """
    return [
        os.path.normpath(os.path.join(caller, word))
        if "/" in word
        and not word.startswith("-")
        and not os.path.isabs(word)
        and os.path.lexists(os.path.join(caller, word))
        else word
        for word in words
    ]


def bare_files(words: Sequence[str], caller: str) -> list[str]:
    """The words after the program that name a file in ``caller`` without a slash: left as
    written by ``absolute_words``, they are what a harness that cannot start most likely meant."""
    return [
        word
        for word in words[1:]
        if word
        and "/" not in word
        and not word.startswith("-")
        and os.path.isfile(os.path.join(caller, word))
    ]


def _old_keys(found: Found, directory: Path) -> bool:
    """The ``conformance_*`` keys of the pytest configuration in ``directory`` (the first file
    pytest would read there); whether it has any."""
    for name, section in (("pytest.ini", "pytest"), ("pyproject.toml", None),
                          ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):  # fmt: skip
        path = directory / name
        if not path.is_file():
            continue
        values = _old_values(path, section)
        if values is None:
            continue
        for ini, value in values.items():
            relative = OLD_KEYS[ini] in PATHS
            found.overrides[ini] = str((path.parent / value).resolve()) if relative else value
        if values:
            found.notes.append(
                f"{path}: the conformance_* keys ({', '.join(values)}) are read for this "
                f"release only: move them to [tool.{TABLE}] in pyproject.toml "
                f"({', '.join(OLD_KEYS[k] for k in values)})"
            )
        return bool(values)
    return False


def _old_values(path: Path, section: str | None) -> dict[str, str] | None:
    """Old keys in one candidate file, or None when the file is not a pytest configuration."""
    if section is None:
        tool = _toml(path).get("tool")
        pytest_table = tool.get("pytest") if isinstance(tool, dict) else None
        options = pytest_table.get("ini_options") if isinstance(pytest_table, dict) else None
        if not isinstance(options, dict):
            return None
        return {k: _joined(v) for k, v in options.items() if k in OLD_KEYS}
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except configparser.Error as exc:
        raise SettingsError(f"{path}: cannot be read as an ini file: {exc}") from None
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path}: {_not_utf8(exc)}") from None
    if not parser.has_section(section):
        return None
    return {k: v.strip() for k, v in parser.items(section) if k in OLD_KEYS}


def _table(data: dict[str, object]) -> object:
    """``[tool.harness-conformance]`` of a TOML document, or None."""
    tool = data.get("tool")
    return tool.get(TABLE) if isinstance(tool, dict) else None


def _joined(value: object) -> str:
    return "\n".join(map(str, value)) if isinstance(value, list) else str(value)


def _toml(path: Path) -> dict[str, object]:
    try:
        with open(path, "rb") as source:
            return tomllib.load(source)
    except OSError as exc:
        raise SettingsError(f"{path}: cannot be read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path}: {_not_utf8(exc)}") from None


def _not_utf8(exc: UnicodeDecodeError) -> str:
    return f"not UTF-8 (byte {exc.start}: {exc.reason})"


def user_cache_dir() -> Path:
    """Where pytest's cache of a run lives (``--lf``, ``--ff``): never the working directory."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / TABLE
