"""OpenHands 1.58.2: the ``file_editor`` tool (``openhands-tools``), run as the SDK's agent runs it.

Each workspace is one ``FileEditorTool`` with its own ``FileEditorExecutor(workspace_root=root)``.
Each call goes through the SDK's own steps for a model's tool call (``agent/agent.py@1.58.2``:
``parse_tool_call_arguments`` → ``fix_malformed_tool_arguments`` → ``action_from_arguments`` → the
tool), and the answer is the observation's ``to_llm_content`` with its ``is_error``. Where the agent
turns a bad call or a ValueError of the tool into an error event, the text is the agent's own
sentence (agent.py@1.58.2:1376, 1442, 1541). The adapter only translates (``translate.py``).
"""

from __future__ import annotations

import json
from typing import Any

from openhands.sdk.agent.utils import fix_malformed_tool_arguments, parse_tool_call_arguments
from openhands.tools.file_editor.definition import (
    FileEditorAction,
    FileEditorObservation,
    FileEditorTool,
)
from openhands.tools.file_editor.impl import FileEditorExecutor
from pydantic import ValidationError

from peers.common import Sessions, log_raw
from peers.manifest import load
from peers.openhands import translate


class OpenHandsEditor(Sessions[FileEditorTool]):
    """The harness behind the contract's ``tools`` capability."""

    MANIFEST = load("openhands")

    def open_workspace(self, root: str, options: Any) -> str:
        """One editor tool whose executor works in the workspace."""
        tool = FileEditorTool(
            action_type=FileEditorAction,
            observation_type=FileEditorObservation,
            description="",
            executor=FileEditorExecutor(workspace_root=root),
        )
        return self._add_session(tool)

    def call_tool(self, session: str, name: str, arguments: Any) -> dict[str, Any]:
        """One tool call through the agent's steps; the observation as the model sees it."""
        tool = self._workspace(session)
        call_id = self._ids.next(session)
        raw = arguments if isinstance(arguments, str) else None
        if raw is not None:
            try:
                arguments = parse_tool_call_arguments(raw)
            except (ValueError, json.JSONDecodeError) as exc:
                # agent.py@1.58.2:1435-1442: unparseable arguments become this error event.
                text = f"Error validating tool '{name}': {exc}. Arguments: unparseable JSON"
                answer = {"texts": [text], "isError": True}
                log_raw(session, call_id, {"raw": raw}, answer)
                return translate.result(call_id, answer)
        tool_name, sent = translate.tool_call(name, arguments)
        answer = self._run(tool, tool_name, sent)
        log_raw(session, call_id, {"tool": tool_name, "arguments": sent}, answer)
        return translate.result(call_id, answer)

    def _run(self, tool: FileEditorTool, tool_name: str, sent: Any) -> dict[str, Any]:
        if tool_name != tool.name:
            # agent.py@1.58.2:1376: a tool the agent does not have.
            text = f"Tool '{tool_name}' not found. Available: {[tool.name]}"
            return {"texts": [text], "isError": True}
        try:
            fixed = fix_malformed_tool_arguments(sent, tool.action_type)
            action = tool.action_from_arguments(fixed)
        except (ValueError, json.JSONDecodeError, ValidationError) as exc:
            keys = list(sent.keys()) if isinstance(sent, dict) else None
            params = (
                f"Parameters provided: {keys}"
                if keys is not None
                else ("Arguments: unparseable JSON")
            )
            return {"texts": [f"Error validating tool '{tool_name}': {exc}. {params}"],
                    "isError": True}  # fmt: skip
        try:
            observation = tool(action)
        except ValueError as exc:
            # agent.py@1.58.2:1538-1541: a ValueError from the tool becomes this error event;
            # any other exception ends the agent's step, as it ends this call.
            return {"texts": [f"Error executing tool '{tool.name}': {exc}"], "isError": True}
        texts = [getattr(block, "text", "") for block in observation.to_llm_content]
        return {"texts": texts, "isError": bool(observation.is_error)}


harness = OpenHandsEditor
