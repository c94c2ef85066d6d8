"""Keeping secrets out of snapshots (SPEC §5): the run's secret values, planted canaries, and
well-known credential shapes. A finding names the kind of secret, never the secret itself.
"""

from __future__ import annotations

import json
import os
import re
import secrets as _random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

SECRET_NAME_MARKERS: Final = ("KEY", "TOKEN", "SECRET", "PASSWORD")
MIN_SECRET_LENGTH: Final = 8
_MARKED: Final = re.compile("|".join(SECRET_NAME_MARKERS))
"""A name holding any marker (one scan: the suite looks on every report it writes)."""
CANARY_VARIABLE: Final = "HARNESS_CONFORMANCE_CANARY_TOKEN"
REDACTED: Final = "[REDACTED]"
SHAPES: Final = (
    ("a private key block", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")),
    ("an API key shaped like sk-…", re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-]{20,}")),
    ("an AWS access key id (AKIA…)", re.compile(r"(?<![A-Z0-9])AKIA[0-9A-Z]{16}(?![A-Z0-9])")),
    ("a GitHub token (ghp_…)", re.compile(r"(?<![A-Za-z0-9])ghp_[A-Za-z0-9]{36}")),
    ("a Slack token (xox?-…)", re.compile(r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}")),
)

_planted: set[str] = set()
_Text = TypeVar("_Text", str, bytes)
_known: tuple[int, dict[Any, Any], list[str]] | None = None
_PYTEST_CURRENT: Final = os.environ.encodekey("PYTEST_CURRENT_TEST")


@dataclass(frozen=True)
class RunSecrets:
    """Secrets the suite plants in the environment it starts the harness with (SPEC §1.4).

    A harness in its own process only sees the environment it was started with, so every
    secret a case needs is planted before the harness starts, fresh for each run.
    """

    canary: str
    short: str
    lower: str
    upper: str
    seven: str
    eight: str

    def environment(self) -> dict[str, str]:
        """Variable name → value; each name says why it is (or is not) a secret."""
        return {
            CANARY_VARIABLE: self.canary,
            "HARNESS_CONFORMANCE_SERVICE_TOKEN": self.short,
            "HARNESS_CONFORMANCE_SERVICE_TOKEN_ROTATED": f"{self.short}-rotated",
            "harness_conformance_api_key": self.lower,
            "HARNESS_CONFORMANCE_DB_PASSWORD": self.upper,
            "HARNESS_CONFORMANCE_SHORT_TOKEN": self.seven,
            "HARNESS_CONFORMANCE_SECRET_EIGHT": self.eight,
        }


def plant_run_secrets() -> RunSecrets:
    """Make this run's secrets and put them in ``os.environ`` (undo with ``unplant``)."""
    token = _random.token_hex
    planted = RunSecrets(
        canary=plant_canary(),
        short=f"hc-short-{token(6)}",
        lower=f"lowercase-{token(6)}",
        upper=f"UPPER-{token(6).upper()}",
        seven=token(4)[:7],
        eight=token(4),
    )
    for name, value in planted.environment().items():
        os.environ[name] = value
        if len(value) >= MIN_SECRET_LENGTH:
            _planted.add(value)
    return planted


def unplant(planted: RunSecrets) -> None:
    """Take a run's secrets out of ``os.environ`` again."""
    for name in planted.environment():
        os.environ.pop(name, None)


class SecretInSnapshot(AssertionError):
    """A snapshot would have held a secret; the message names where and what kind."""


def plant_canary() -> str:
    """A fresh canary value, remembered so every later scan looks for it."""
    canary = f"hc-canary-{_random.token_hex(12)}"
    _planted.add(canary)
    return canary


def secret_values(environ: Mapping[str, str] | None = None) -> set[str]:
    """Values of credential-like environment variables (SPEC §1.4's rule)."""
    env = os.environ if environ is None else environ
    return {
        value
        for name, value in env.items()
        if len(value) >= MIN_SECRET_LENGTH and _MARKED.search(name.upper())
    }


def forms(value: str) -> set[str]:
    """``value`` as text may hold it: raw, and inside a JSON string (non-ASCII kept or escaped).

    A verdict shows a harness's strings as JSON, a report is JSON, and a harness that logs its
    configuration often writes JSON: a secret with a quote, a backslash or a non-ASCII
    character in it is spelled differently in each, and each spelling is the secret.
    """
    return {value, json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(value)[1:-1]}


def _all_forms(values: Iterable[str]) -> list[str]:
    """Every spelling of ``values``, longest first (a secret inside another leaves nothing)."""
    return sorted({form for value in values if value for form in forms(value)}, key=len,
                  reverse=True)  # fmt: skip


def run_secrets() -> list[str]:
    """Every spelling of the run's planted canaries and secret values, longest first.

    Asked for every string the suite prints or records: made again only when the environment
    has changed.
    """
    global _known  # noqa: PLW0603 - one cache for the process, as ``_planted`` is
    # os.environ's own undecoded mapping: comparing it is one C-level dict comparison, where
    # its items() decodes every name and value (70 µs a call beside a CI runner's 150 variables).
    raw = getattr(os.environ, "_data", None)
    environment: dict[Any, Any] = raw if isinstance(raw, dict) else dict(os.environ)
    if _known is not None and _known[0] == len(_planted):
        kept = _known[1]
        # pytest names the running test and phase in the environment, anew at every phase: a
        # variable whose name marks no secret, so the kept copy simply follows it.
        kept.pop(_PYTEST_CURRENT, None)
        if _PYTEST_CURRENT in environment:
            kept[_PYTEST_CURRENT] = environment[_PYTEST_CURRENT]
        if kept == environment:
            return _known[2]
    _known = (len(_planted), dict(environment), _all_forms({*_planted, *secret_values()}))
    return _known[2]


def find_secret(
    text: str, *, secrets: Iterable[str] = (), canaries: Iterable[str] | None = None
) -> str | None:
    """The kind of the first secret in ``text``, or ``None``."""
    if any(c in text for c in _all_forms(_planted if canaries is None else canaries)):
        return "a planted canary"
    if any(s in text for s in _all_forms(secrets)):
        return "the value of a secret environment variable"
    for kind, pattern in SHAPES:
        if pattern.search(text):
            return kind
    return None


def scrub(text: str, secrets: list[str] | None = None) -> str:
    """``text`` with every planted canary and secret value of this run as ``[REDACTED]``.

    The suite's own output (verdicts, failure sections, JUnit, the JSON report) goes through
    this, so a secret the suite planted or found is never printed (longest first, SPEC §1.4).
    ``secrets`` is ``run_secrets()``, when the caller has it already.
    """
    for value in run_secrets() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def scrub_data(value: object, secrets: list[str] | None = None) -> object:
    """``value`` (JSON-like: dicts, lists, strings) with ``scrub`` applied to every string in
    it, keys too: scrubbing its JSON text instead would miss a secret that JSON escapes."""
    if secrets is None:
        secrets = run_secrets()
    if isinstance(value, str):
        return scrub(value, secrets)
    if isinstance(value, dict):
        return {scrub_data(k, secrets): scrub_data(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_data(v, secrets) for v in value]
    return value


def clean_cut(text: str, limit: int) -> str:
    """``text[:limit]``, cut earlier where the cut would split a secret of the run in two: what
    is later scrubbed finds whole secrets only, and the start of one is no less a leak."""
    return text[: _cut_at(text, limit, run_secrets())]


def clean_cut_bytes(data: bytes, limit: int, whole: Sequence[str] = ()) -> bytes:
    """``data[:limit]``, cut earlier where the cut would split a secret (as UTF-8) in two, or
    one of ``whole`` (names a text was given, which a cut must not leave half of)."""
    keep = [value.encode("utf-8", errors="surrogatepass") for value in [*run_secrets(), *whole]]
    return data[: _cut_at(data, limit, keep)]


def _cut_at(text: _Text, limit: int, secrets: list[_Text]) -> int:
    """Where to cut ``text`` at ``limit`` or before, splitting none of ``secrets``."""
    end, moved = limit, len(text) > limit
    while moved:  # an earlier cut may split another secret in turn
        moved = False
        for value in secrets:
            start = text.find(value, max(0, end - len(value) + 1), end + len(value) - 1)
            if start != -1 and start < end:
                end, moved = start, True
    return min(end, len(text))


def check_snapshot(text: str, where: str) -> None:
    """Raise ``SecretInSnapshot`` if ``text`` holds a secret of this run."""
    __tracebackhide__ = True  # a traceback would print ``text``, secret and all
    kind = find_secret(text, secrets=secret_values())
    if kind is not None:
        raise SecretInSnapshot(
            f"snapshot {where} holds a secret: {kind} (refusing to compare or write it)"
        ) from None
