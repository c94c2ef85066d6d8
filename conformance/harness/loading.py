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

import importlib
import os
import shlex
import sys
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Final

from conformance.harness.contract import PROTOCOL_VERSION, ContractError, Profile, parse_profile
from conformance.harness.stdio import Stdio, Trace, Validator
from conformance.harness.transport import HarnessCallError, InProcess, Transport

ENTRY_POINT_GROUP: Final = "harness_conformance.harnesses"
DEFAULT_HARNESS: Final = "reference"
# Where the default lives when the distribution's entry points are not installed (a checkout).
_BUILTIN: Final = {DEFAULT_HARNESS: "reference.adapter:ReferenceHarness"}


class HarnessLoadError(Exception):
    """The harness could not be loaded or started; one line says why."""


@dataclass(frozen=True)
class Choice:
    """Which harness to test, and how it was named."""

    kind: str  # "python" | "cmd" | "mcp" | "object"
    value: Any
    label: str
    mcp_map: str | None = None


@dataclass(frozen=True)
class Settings:
    """How to reach a harness: isolation, limits, tracing, validation, where its child runs."""

    in_process: bool = False
    timeout_s: float = 30.0
    max_answer_bytes: int = 2 * 1024 * 1024
    cwd: str | None = None
    tmpdir: str | None = None
    trace: Trace | None = None
    validator: Validator | None = None


def registered_harnesses() -> dict[str, str]:
    """Registered harness names and the ``module:attr`` each points at."""
    found = dict(_BUILTIN)
    found.update({ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)})
    return found


def load_python_harness(reference: str) -> object:
    """The object ``reference`` names (``module:attr`` or a registered name), instantiated."""
    target = reference if ":" in reference else registered_harnesses().get(reference)
    if target is None:
        known = ", ".join(sorted(registered_harnesses()))
        raise HarnessLoadError(
            f'harness "{reference}" is neither module:attr nor a registered name '
            f"(registered under {ENTRY_POINT_GROUP}: {known})"
        )
    module_name, _, attr = target.partition(":")
    try:
        found: object = importlib.import_module(module_name)
        for part in attr.split("."):
            found = getattr(found, part)
    except Exception as exc:
        raise HarnessLoadError(f'harness "{reference}" cannot be loaded: {exc}') from exc
    return instantiate(found, f'harness "{reference}"')


def instantiate(candidate: object, label: str) -> object:
    """``candidate`` itself, or what it makes when it is a class or a zero-argument factory."""
    if isinstance(candidate, type) or (
        callable(candidate) and not callable(getattr(candidate, "describe", None))
    ):
        try:
            candidate = candidate()
        except Exception as exc:
            raise HarnessLoadError(f"{label} could not be created: {exc}") from exc
    if not callable(getattr(candidate, "describe", None)):
        raise HarnessLoadError(f"{label} has no describe() method")
    return candidate


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
    elif choice.kind == "mcp":
        command = [sys.executable, "-m", "conformance.serve", "--mcp", choice.value]
        if choice.mcp_map:
            command += ["--mcp-map", os.path.abspath(choice.mcp_map)]
    else:
        command = [sys.executable, "-m", "conformance.serve", "--harness", choice.value]
    return Stdio(
        command,
        label=choice.label,
        timeout_s=settings.timeout_s,
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
            f"got {answer.get('protocol')!r}"
        )
    try:
        return parse_profile(answer, choice.label, methods_of=methods_of)
    except ContractError as exc:
        raise HarnessLoadError(str(exc)) from None


def _startup_failure(choice: Choice, failure: str) -> str:
    """One line: the serve loader's own complaint if there is one, else what happened."""
    from conformance.harness.serve import SERVE_PREFIX  # noqa: PLC0415

    for line in failure.splitlines():
        if SERVE_PREFIX in line:
            return line.split(SERVE_PREFIX, 1)[1].strip()
    first = failure.splitlines()[0] if failure else "no answer"
    return f"{choice.label} did not complete the handshake: {first}"
