"""Keeping secrets out of snapshots (SPEC §5): the run's secret values, planted canaries, and
well-known credential shapes. A finding names the kind of secret, never the secret itself.
"""

from __future__ import annotations

import os
import re
import secrets as _random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

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
    """Values of credential-like environment variables (SPEC §1.3's rule)."""
    env = os.environ if environ is None else environ
    return {
        value
        for name, value in env.items()
        if len(value) >= MIN_SECRET_LENGTH and _MARKED.search(name.upper())
    }


def find_secret(
    text: str, *, secrets: Iterable[str] = (), canaries: Iterable[str] | None = None
) -> str | None:
    """The kind of the first secret in ``text``, or ``None``."""
    if any(c in text for c in (_planted if canaries is None else canaries)):
        return "a planted canary"
    if any(s and s in text for s in secrets):
        return "the value of a secret environment variable"
    for kind, pattern in SHAPES:
        if pattern.search(text):
            return kind
    return None


def scrub(text: str) -> str:
    """``text`` with every planted canary and secret value of this run as ``[REDACTED]``.

    The suite's own output (verdicts, failure sections, JUnit, the JSON report) goes through
    this, so a secret the suite planted or found is never printed (longest first, SPEC §1.4).
    """
    values = sorted({*_planted, *secret_values()}, key=len, reverse=True)
    for value in values:
        if value and value in text:
            text = text.replace(value, REDACTED)
    return text


def check_snapshot(text: str, where: str) -> None:
    """Raise ``SecretInSnapshot`` if ``text`` holds a secret of this run."""
    __tracebackhide__ = True  # a traceback would print ``text``, secret and all
    kind = find_secret(text, secrets=secret_values())
    if kind is not None:
        raise SecretInSnapshot(
            f"snapshot {where} holds a secret: {kind} (refusing to compare or write it)"
        ) from None
