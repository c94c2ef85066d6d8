"""The tool registry: validates arguments, runs a tool, and turns every failure into a result.

Whatever a tool raises reaches the model as one text block, ``Error: <message>`` (the class
name when the message is empty). The result's structured ``error`` ({name, code}) is filled
only for a ``HarnessError``: a plain exception has no code to route on. ``BaseException``s
that are not ``Exception``s (interrupts, exits, cancellation) are never swallowed into results.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from reference.errors import ToolNotFoundError, is_harness_error
from reference.tools.schema import check_schema, parse_arguments, validate_arguments

UNPRINTABLE: Final = "<unprintable thrown value>"
KEPT_FAILURES: Final = 256

ToolExecute = Callable[[dict[str, object]], str]


@dataclass(frozen=True)
class TextBlock:
    """One block of text content."""

    text: str

    def to_wire(self) -> dict[str, object]:
        """``{"type": "text", "text": …}``."""
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class ToolErrorInfo:
    """The structured failure of a tool call: the error's name and code."""

    name: str
    code: str

    def to_wire(self) -> dict[str, object]:
        """``{"name": …, "code": …}`` (plain strings, even when the code is an enum member)."""
        return {"name": str(self.name), "code": str(self.code)}


@dataclass(frozen=True)
class ToolExecutionResult:
    """What one tool call produced: text for the model, and the structured error if any."""

    call_id: str
    content: tuple[TextBlock, ...]
    is_error: bool
    error: ToolErrorInfo | None = None

    def to_wire(self) -> dict[str, object]:
        """The JSON form of SPEC §2.1; ``error`` is omitted when there is none."""
        wire: dict[str, object] = {
            "callId": self.call_id,
            "content": [block.to_wire() for block in self.content],
            "isError": self.is_error,
        }
        if self.error is not None:
            wire["error"] = self.error.to_wire()
        return wire


@dataclass(frozen=True)
class Tool:
    """A named tool: its JSON schema and the function that runs it."""

    name: str
    description: str
    parameters: Mapping[str, object]
    execute: ToolExecute

    def spec(self) -> dict[str, object]:
        """What the model is told about the tool."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


def define_tool(
    *, name: str, description: str, parameters: Mapping[str, object], execute: ToolExecute
) -> Tool:
    """Define a tool; the schema must stay within the supported subset (see ``schema``)."""
    if not isinstance(name, str) or not name:
        raise ValueError("tool name must be a non-empty string")
    if not isinstance(description, str):
        raise TypeError("tool description must be a string")
    check_schema(parameters, f"{name}.parameters")
    if parameters.get("type") != "object":
        raise ValueError(f'{name}.parameters must have "type": "object"')
    if not callable(execute):
        raise TypeError("execute must be callable")
    return Tool(name, description, parameters, execute)


class ToolRegistry:
    """Tools by name; ``execute`` never raises an ``Exception``, it returns a result.

    ``redact`` is applied to every failure text before it becomes a result (SPEC §1.4); the
    last failures are kept by call id, so the error behind a result can still be inspected.
    """

    def __init__(self, redact: Callable[[str], str] = str) -> None:
        self._lock = threading.Lock()
        self._tools: dict[str, Tool] = {}
        self._redact = redact
        self._failures: OrderedDict[str, Exception] = OrderedDict()

    def register(self, tool: Tool) -> None:
        """Add ``tool``; a second tool with the same name is refused."""
        with self._lock:
            if tool.name in self._tools:
                raise ValueError(f'a tool named "{tool.name}" is already registered')
            self._tools[tool.name] = tool

    def specs(self) -> list[dict[str, object]]:
        """Every tool's spec, in registration order."""
        with self._lock:
            return [tool.spec() for tool in self._tools.values()]

    def execute(self, call_id: str, name: str, arguments: object) -> ToolExecutionResult:
        """Run tool ``name``; ``arguments`` is raw JSON text (a str) or an already parsed value."""
        try:
            with self._lock:
                tool = self._tools.get(name)
            if tool is None:
                raise ToolNotFoundError(name)
            args = validate_arguments(tool.parameters, parse_arguments(arguments))
            text = tool.execute(args)
            if not isinstance(text, str):
                raise TypeError(f'tool "{name}" returned {type(text).__name__}, not str')
        except Exception as exc:
            with self._lock:
                self._failures[call_id] = exc
                while len(self._failures) > KEPT_FAILURES:
                    self._failures.popitem(last=False)
            return failure_result(call_id, exc, self._redact)
        return ToolExecutionResult(call_id, (TextBlock(text),), is_error=False)

    def failure(self, call_id: str) -> Exception | None:
        """The error behind a recent failed result, if it is still kept."""
        with self._lock:
            return self._failures.get(call_id)


def failure_result(
    call_id: str, exc: Exception, redact: Callable[[str], str] = str
) -> ToolExecutionResult:
    """The result for a call that raised ``exc``; ``redact`` scrubs its text of secrets."""
    try:
        # An empty message (``MemoryError()``) would leave a bare "Error: ": the class name
        # stands in for it, as it does in a chain ({chain.empty}).
        message = str(exc) or type(exc).__name__
    except Exception:
        message = UNPRINTABLE
    error = ToolErrorInfo(exc.name, exc.code) if is_harness_error(exc) else None
    return ToolExecutionResult(call_id, (TextBlock(redact(f"Error: {message}")),), True, error)
