"""Finding and connecting the harness under test.

The ways to name one, first match wins (``conformance.plugin`` decides which applies):

* ``--harness-cmd 'node adapter.mjs'`` — any language, a child process over the stdio protocol;
* ``--harness-mcp 'CMD …'`` — the file tools of an MCP server, through the bridge (in a child);
* ``--harness module:attr`` or a name registered in the entry-point group
  ``harness_conformance.harnesses`` — a Python object, run by default in a child process
  (``python -m conformance.serve``) so it cannot take the suite down;
* a ``pytest_conformance_harness`` hook, which hands over an object: in process by nature;
* the ini keys ``conformance_harness_cmd`` / ``conformance_harness``;
* the reference harness, registered as ``reference``.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from dataclasses import dataclass
from typing import Any

from conformance.harness.contract import PROTOCOL_VERSION, ContractError, Profile, parse_profile
from conformance.harness.objects import (
    DEFAULT_HARNESS,
    ENTRY_POINT_GROUP,
    HarnessLoadError,
    instantiate,
    load_python_harness,
    registered_harnesses,
)
from conformance.harness.serve import SERVE_PREFIX
from conformance.harness.stdio import (
    DEFAULT_HANDSHAKE_TIMEOUT_S,
    DEFAULT_MAX_ANSWER_BYTES,
    DEFAULT_TIMEOUT_S,
    Stdio,
    Trace,
    Validator,
)
from conformance.harness.transport import HarnessCallError, InProcess, Transport
from conformance.settings import absolute_words, bare_files

__all__ = [
    "DEFAULT_HARNESS",
    "ENTRY_POINT_GROUP",
    "Choice",
    "HarnessLoadError",
    "Settings",
    "absolute_words",
    "handshake",
    "instantiate",
    "load_python_harness",
    "registered_harnesses",
    "transport_for",
]


@dataclass(frozen=True)
class Choice:
    """Which harness to test, and how it was named."""

    kind: str  # "python" | "cmd" | "mcp" | "object"
    value: Any
    label: str
    mcp_map: str | None = None
    mcp_wording: str | None = None
    """The run's wording table: the bridge's own refusals are said in it too."""


@dataclass(frozen=True)
class Settings:
    """How to reach a harness: isolation, limits, tracing, validation, where its child runs."""

    in_process: bool = False
    timeout_s: float = DEFAULT_TIMEOUT_S
    handshake_timeout_s: float = DEFAULT_HANDSHAKE_TIMEOUT_S
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES
    cwd: str | None = None
    tmpdir: str | None = None
    trace: Trace | None = None
    validator: Validator | None = None


def transport_for(choice: Choice, settings: Settings) -> Transport:
    """The transport that reaches ``choice``."""
    if choice.kind == "object":
        return InProcess(choice.value, choice.label)
    if choice.kind == "python" and settings.in_process:
        return InProcess(load_python_harness(choice.value), choice.label)
    if choice.kind == "cmd":
        try:
            command = shlex.split(choice.value)
        except ValueError as exc:
            raise HarnessLoadError(f"{choice.label}: the command cannot be parsed: {exc}") from None
        if not command:
            raise HarnessLoadError(f"{choice.label}: the command is empty")
        command = absolute_words(command, os.getcwd())
    elif choice.kind == "mcp":
        server = choice.value  # a command that does not parse: the bridge says so, in one line
        with contextlib.suppress(ValueError):
            words = shlex.split(choice.value)
            found = absolute_words(words, os.getcwd())
            if found != words:
                server = shlex.join(found)
        command = [sys.executable, "-m", "conformance.serve", "--mcp", server]
        if choice.mcp_map:
            command += ["--mcp-map", os.path.abspath(choice.mcp_map)]
        if choice.mcp_wording:
            command += ["--wording", os.path.abspath(choice.mcp_wording)]
    else:
        command = [sys.executable, "-m", "conformance.serve", "--harness", choice.value]
    return Stdio(
        command,
        label=choice.label,
        timeout_s=settings.timeout_s,
        handshake_timeout_s=settings.handshake_timeout_s,
        max_answer_bytes=settings.max_answer_bytes,
        cwd=settings.cwd,
        env=_child_env(settings),
        trace=settings.trace,
        validator=settings.validator,
    )


def _child_env(settings: Settings) -> dict[str, str]:
    env = dict(os.environ)
    # A Python harness named module:attr is importable from where the suite was started, as
    # with ``python -m``; the child itself runs in a scratch directory the suite watches.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.getcwd(), env.get("PYTHONPATH", "")) if p)
    if settings.tmpdir is not None:
        env["TMPDIR"] = settings.tmpdir
    return env


def handshake(transport: Transport, choice: Choice) -> Profile:
    """Ask the harness to describe itself; raise ``HarnessLoadError`` with one line if it cannot."""
    try:
        answer = transport.call("describe", {})
    except HarnessCallError as exc:
        raise HarnessLoadError(_startup_failure(choice, str(exc))) from None
    methods_of = transport.harness if isinstance(transport, InProcess) else None
    if (
        methods_of is None
        and isinstance(answer, dict)
        and answer.get("protocol") != PROTOCOL_VERSION
    ):
        raise HarnessLoadError(
            f"{choice.label}: the handshake must answer protocol {PROTOCOL_VERSION}, "
            + (f"got {answer['protocol']!r}" if "protocol" in answer else "got no protocol field")
        )
    try:
        return parse_profile(answer, choice.label, methods_of=methods_of)
    except ContractError as exc:
        raise HarnessLoadError(str(exc)) from None


def _startup_failure(choice: Choice, failure: str) -> str:
    """The serve loader's own one-line complaint if there is one, else what happened.

    What happened is one line, followed by the last lines the child wrote to stderr (indented),
    which are what an author needs to see why it did not start.
    """
    for line in failure.splitlines():
        if SERVE_PREFIX in line:
            return line.split(SERVE_PREFIX, 1)[1].strip()
    return f"{choice.label} did not complete the handshake{_hint(choice)}: {failure or 'no answer'}"


def _hint(choice: Choice) -> str:
    """Where a command names a file of the caller's without a slash: how to name it."""
    if choice.kind not in ("cmd", "mcp"):
        return ""
    try:
        bare = bare_files(shlex.split(choice.value), os.getcwd())
    except ValueError:
        return ""
    if not bare:
        return ""
    return (
        f" (the harness runs in a directory of its own, and {bare[0]!r} is a file where you "
        f"started: write ./{bare[0]} to name it)"
    )
