"""One session's tool runtime over a workspace directory: ``open_workspace``."""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from reference.errors import redactor, secret_values
from reference.fs import LocalFs, SandboxFs
from reference.policy import ObservationPolicy
from reference.tools import FsTools, Tool, ToolExecutionResult, ToolRegistry, probe_tools

MUTATIONS: Final = frozenset({"write", "edit"})
"""The tools whose call an armed pause is for (SPEC §6.4)."""


class Workspace:
    """A session over ``root``: ``read``/``write``/``edit`` registered, calls numbered per session.

    ``call_tool`` is thread-safe; the provider locks a file's directory for every mutation, so
    two sessions (or two processes) writing one file serialize.
    """

    def __init__(
        self,
        root: str,
        *,
        policy: bool = True,
        sandbox: str = "danger-full-access",
        max_read_bytes: int | None = None,
        probe: bool = False,
        writable_roots: Sequence[str] = (),
        environ: Mapping[str, str] | None = None,
    ) -> None:
        if not isinstance(root, str | os.PathLike):
            raise TypeError(f"workspace root must be a path, not {type(root).__name__}")
        self.root = os.path.abspath(os.fspath(root))
        if not os.path.isdir(self.root):
            raise NotADirectoryError(f"workspace root is not a directory: {self.root}")
        if not isinstance(policy, bool) or not isinstance(probe, bool):
            raise TypeError("policy and probe must be booleans")
        self.sandbox = sandbox
        self.policy = ObservationPolicy() if policy else None
        # Failure text never carries a secret of this environment (SPEC §1.4): not in a tool
        # result, nor in a line the provider logs.
        self._secrets = secret_values(os.environ if environ is None else environ)
        self._local = LocalFs(max_read_bytes=max_read_bytes, redact=self.redact)
        provider = SandboxFs(self._local, sandbox, (self.root, *writable_roots))
        self._registry = ToolRegistry(self.redact)
        fs_tools = FsTools(provider, cwd=self.root, policy=self.policy, sandbox_mode=sandbox)
        for tool in fs_tools.tools():
            self._registry.register(tool)
        if probe:
            for tool in probe_tools():
                self._registry.register(tool)
        self._ids = itertools.count(1)
        self._ids_lock = threading.Lock()

    def redact(self, text: str) -> str:
        """``text`` with every secret this session knows replaced by ``[REDACTED]``."""
        return redactor(self._secrets)(text)

    def protect(self, secrets: Sequence[str]) -> None:
        """Also keep these values (a model provider's API key) out of failure text."""
        # ``redactor`` drops empty values and replaces the longest first.
        self._secrets = (*self._secrets, *secrets)

    def register(self, tool: Tool) -> None:
        """Add a tool to this session."""
        self._registry.register(tool)

    def tool_specs(self) -> list[dict[str, object]]:
        """What the model is told about the registered tools."""
        return self._registry.specs()

    def next_call_id(self) -> str:
        """The next id of this session: ``call_1``, ``call_2``, …"""
        with self._ids_lock:
            return f"call_{next(self._ids)}"

    def call_tool(self, name: str, arguments: object) -> ToolExecutionResult:
        """Call a tool under the next call id; ``arguments`` is raw JSON text or a parsed value."""
        return self.execute(self.next_call_id(), name, arguments)

    def execute(self, call_id: str, name: str, arguments: object) -> ToolExecutionResult:
        """Call a tool under an id the caller allocated (the agent loop records it first)."""
        if name not in MUTATIONS:
            return self._registry.execute(call_id, name, arguments)
        try:
            return self._registry.execute(call_id, name, arguments)
        finally:
            # A pause is for the next mutation only (SPEC {pause.point}): one refused before
            # it reached the provider (bad arguments, the fence, the policy) disarms it too.
            self._local.disarm()

    def failure(self, call_id: str) -> Exception | None:
        """The error behind a recent failed result of this session, if still kept."""
        return self._registry.failure(call_id)

    def arm_pause(self, point: str, on_pause: Callable[[], None]) -> None:
        """Call ``on_pause`` when this session's next mutation reaches ``point`` (SPEC §6.4)."""
        self._local.arm(point, on_pause)


def open_workspace(
    root: str | os.PathLike[str],
    *,
    policy: bool = True,
    sandbox: str = "danger-full-access",
    max_read_bytes: int | None = None,
    probe: bool = False,
    writable_roots: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> Workspace:
    """Open one session's tool runtime over ``root`` (see ``Workspace``)."""
    return Workspace(
        os.fspath(root),
        policy=policy,
        sandbox=sandbox,
        max_read_bytes=max_read_bytes,
        probe=probe,
        writable_roots=writable_roots,
        environ=environ,
    )
