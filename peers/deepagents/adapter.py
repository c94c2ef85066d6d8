"""deepagents 0.7.32: ``FilesystemMiddleware`` tools over ``FilesystemBackend``, run with no model.

Each workspace is a ``FilesystemBackend(root_dir=root)`` (its default ``virtual_mode=True``: paths
are anchored to the root) under a ``FilesystemMiddleware``; each call is one tool call of an
``AIMessage`` through langgraph's ``ToolNode`` in a one-node graph, with the middleware's
``wrap_tool_call`` around it, as ``create_agent``'s tool step runs it.
The adapter only translates (``translate.py``); every check, refusal and word is deepagents'.
"""

from __future__ import annotations

from typing import Any

from deepagents.backends import FilesystemBackend
from deepagents.middleware.filesystem import FilesystemMiddleware
from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.output_parsers.openai_tools import parse_tool_call
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode

from peers.common import Sessions, log_raw, wire
from peers.deepagents import translate
from peers.manifest import load


class DeepAgents(Sessions[Any]):
    """The harness behind the contract's ``tools`` capability."""

    MANIFEST = load("deepagents")

    def open_workspace(self, root: str, options: Any) -> str:
        """One middleware over one backend rooted at the workspace."""
        middleware = FilesystemMiddleware(backend=FilesystemBackend(root_dir=root))
        graph = StateGraph(middleware.state_schema)
        # As create_agent wires it (langchain/agents/factory.py@1.5.2:1105-1111, 1144-1148): the
        # middleware's own wrap_tool_call runs around every call (its same-message mutation check,
        # the eviction of oversized results into the backend).
        node = ToolNode(middleware.tools, wrap_tool_call=middleware.wrap_tool_call)
        graph.add_node("tools", node)
        graph.add_edge(START, "tools")
        graph.add_edge("tools", END)
        return self._add_session(graph.compile())

    def call_tool(self, session: str, name: str, arguments: Any) -> dict[str, Any]:
        """One tool call, as the model would make it; the answer as the model would see it."""
        graph = self._workspace(session)
        call_id = self._ids.next(session)
        if isinstance(arguments, str):
            # Raw text from the model is parsed as langchain parses a model's tool call.
            try:
                arguments = parse_tool_call(
                    {"function": {"name": name, "arguments": arguments}, "id": call_id}
                )["args"]
            except OutputParserException as exc:
                log_raw(session, call_id, {"raw": arguments}, {"parseError": str(exc)})
                return wire(call_id, str(exc), True)
        call = translate.tool_call(name, arguments, call_id)
        out = graph.invoke({"messages": [AIMessage(content="", tool_calls=[call])]})
        answer = next(m for m in out["messages"] if isinstance(m, ToolMessage))
        message = translate.message_of(answer.content, answer.status)
        log_raw(session, call_id, call, message)
        return translate.result(call_id, message)


harness = DeepAgents
