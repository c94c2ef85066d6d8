"""The agent loop: prompt → model → tools → model … until a final answer or a failed step.

Every failure inside a step (the provider raised, or *returned* a failure value) goes through
``to_error`` and ends the turn: an ``error`` event, then ``turn/end`` with ``kind: "error"``.
Secrets never leave the provider boundary: an ``LlmError`` is redacted before it is raised
into the loop, and every failure the loop records — whatever was raised or returned — is
redacted again before it becomes an event (SPEC §1.4).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from reference.errors import LlmError, redactor, secret_values, to_error
from reference.model import ModelProvider, ModelResponse
from reference.session import (
    AssistantMessage,
    ContentBlock,
    ErrorEvent,
    SessionLog,
    ToolCall,
    ToolResult,
    ToolUseBlock,
    TurnEnd,
    UserMessage,
    derive_messages,
)
from reference.tools.registry import UNPRINTABLE, TextBlock
from reference.workspace import Workspace


class AgentLoop:
    """Runs turns of one session against one model, appending to one log."""

    def __init__(
        self,
        workspace: Workspace,
        model: ModelProvider,
        *,
        log: SessionLog | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.workspace = workspace
        self.model = model
        self.log = log if log is not None else SessionLog(cwd=workspace.root)
        self._environ = environ
        if model.api_key:  # the provider's key is a secret of every failure text (SPEC §1.4)
            workspace.protect([model.api_key])
        self._turn = 0

    def run_turn(self, prompt: str) -> None:
        """Run one user turn to its ``turn/end``."""
        self._turn += 1
        turn = self._turn
        self.log.append(UserMessage(turn, (TextBlock(prompt),)))
        step = 0
        while True:
            step += 1
            try:
                response = self._respond()
            except Exception as exc:
                self._fail(turn, step, exc)
                return
            if not isinstance(response, ModelResponse):
                self._fail(turn, step, response)
                return
            calls = [(self.workspace.next_call_id(), call) for call in response.tool_calls]
            content: list[ContentBlock] = [TextBlock(response.text)] if response.text else []
            content += [ToolUseBlock(cid, c.name, _parsed(c.arguments)) for cid, c in calls]
            self.log.append(AssistantMessage(turn, step, tuple(content)))
            if not calls:
                self.log.append(TurnEnd(turn))
                return
            for cid, call in calls:
                self.log.append(ToolCall(turn, step, cid, call.name, call.arguments))
            for cid, call in calls:
                result = self.workspace.execute(cid, call.name, call.arguments)
                self.log.append(ToolResult(turn, step, result))

    def _respond(self) -> object:
        messages = derive_messages(self.log.events)
        try:
            return self.model.respond(messages, self.workspace.tool_specs())
        except LlmError as err:
            clean = err.redacted(self._secrets())
            if clean is err:
                raise
            # ``from None``: the original carries the secret; do not chain or show it.
            raise clean from None

    def _secrets(self) -> tuple[str, ...]:
        environ = os.environ if self._environ is None else self._environ
        return secret_values(environ, api_key=self.model.api_key)

    def _fail(self, turn: int, step: int, failure: object) -> None:
        """Record a failed step; its text is redacted whatever it was (SPEC §1.4)."""
        err = to_error(failure)
        scrub = redactor(self._secrets())
        try:
            message = scrub(str(err))
        except Exception:
            message = UNPRINTABLE
        code_attr = getattr(err, "code", None)
        code = scrub(str(code_attr)) if isinstance(code_attr, str) else None
        self.log.append(ErrorEvent(turn, step, message, code))
        self.log.append(TurnEnd(turn, message, code))


def _parsed(arguments: str) -> object:
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments
