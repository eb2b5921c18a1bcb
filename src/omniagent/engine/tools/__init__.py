"""Engine tools: the seam between the run loop and the things a model can do in a workspace.

This layer runs one tool call at a time and reports what happened as a `ToolResult` (text for the model, an error
flag, view hints). It is not the run loop: it never emits yuke broadcasts, never decides tool states, never asks
for permission. Above it sits `engine/run/executor.py`, which maps a result to `ToolState` (`completed` or `error`, with
`views` as the state's `view` list) and `on_output` deltas to `tool.output_delta`. Below it are the file system
and `/bin/sh`: every path a file tool opens is walked from the workspace's fd (`files/beneath.py`), and every command
runs in the session's sandbox policy (the sandbox layer, `omniagent.sandbox`; docs/security.md).

Usage from the run loop::

    registry = default_tools()
    request_tools = registry.specs()                      # into ModelRequest.tools
    ctx = ToolContext.for_workspace(session_root, on_output=send_delta)
    result = await registry.run_json(call.name, call.arguments_json, ctx)
    state = terminal_state(result, duration_ms)           # tools.wire: the yuke `completed` / `error` state

`run`/`run_json` never raise for bad input, unknown tools or failed I/O (those are error results the model
reads); `asyncio.CancelledError` propagates after the tool has stopped its work.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Protocol, runtime_checkable

from omniagent.engine.providers.neutral import ToolSpec
from omniagent.engine.tools.agents import AGENT_TOOL_NAMES, agent_tools
from omniagent.engine.tools.ask import AskUserTool
from omniagent.engine.tools.context import AgentControl, OutputSink, ToolContext, ToolError, ToolLimits, ToolResult
from omniagent.engine.tools.files.edit import EditTool
from omniagent.engine.tools.files.read import ReadTool
from omniagent.engine.tools.files.search import SearchTool
from omniagent.engine.tools.files.workspace import resolve_in_workspace
from omniagent.engine.tools.files.write import WriteTool
from omniagent.engine.tools.plan import PlanTool
from omniagent.engine.tools.shell.exec import ExecTool
from omniagent.engine.tools.views import (
    DiffFile,
    DiffHunk,
    DiffView,
    ImageView,
    JsonView,
    MarkdownView,
    MediaBlob,
    TextView,
    View,
)
from omniagent.engine.tools.web.fetch import FetchTool

__all__ = [
    "AGENT_TOOL_NAMES",
    "AgentControl",
    "AskUserTool",
    "DiffFile",
    "DiffHunk",
    "DiffView",
    "EditTool",
    "ExecTool",
    "FetchTool",
    "ImageView",
    "JsonView",
    "MarkdownView",
    "MediaBlob",
    "OutputSink",
    "PlanTool",
    "ReadTool",
    "SearchTool",
    "TextView",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolLimits",
    "ToolRegistry",
    "ToolResult",
    "View",
    "WriteTool",
    "agent_tools",
    "default_tools",
    "resolve_in_workspace",
]


@runtime_checkable
class Tool(Protocol):
    """One thing a model can call. `input_schema` is the JSON Schema (an object schema) of its arguments.

    `run` returns an error `ToolResult` for bad arguments or failures the model can react to, and raises only
    `asyncio.CancelledError` (after stopping its work).
    """

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> Mapping[str, object]: ...

    async def run(self, args: Mapping[str, object], ctx: ToolContext) -> ToolResult: ...


class ToolRegistry:
    """An ordered set of tools with unique names: lookup, specs for the model, and dispatch by name."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        """Register `tools` in order.

        Raises:
            ValueError: two tools share a name.
        """
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def without(self, names: frozenset[str]) -> ToolRegistry:
        """The same tools but those named in `names` (a session that may not use them)."""
        return ToolRegistry(t for t in self if t.name not in names)

    def get(self, name: str) -> Tool | None:
        """The tool called `name`, or None."""
        return self._tools.get(name)

    def specs(self) -> tuple[ToolSpec, ...]:
        """Name, description and argument schema of every tool, in registration order, for `ModelRequest.tools`."""
        return tuple(ToolSpec(name=t.name, description=t.description, input_schema=dict(t.input_schema)) for t in self)

    async def run(self, name: str, args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        """Run tool `name` with decoded arguments; an unknown name is an error result naming the known tools."""
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools)
            return ToolResult.error(f"there is no tool named {name!r}; the tools are: {known}")
        return await tool.run(args, ctx)

    async def run_json(self, name: str, arguments_json: str, ctx: ToolContext) -> ToolResult:
        """Run tool `name` with its raw JSON arguments as the model streamed them (`""` means `{}`)."""
        if not arguments_json.strip():
            return await self.run(name, {}, ctx)
        try:
            args = json.loads(arguments_json)
        except json.JSONDecodeError as exc:
            return ToolResult.error(f"the arguments are not valid JSON ({exc.msg} at position {exc.pos})")
        if not isinstance(args, dict):
            return ToolResult.error("the arguments must be a JSON object")
        return await self.run(name, args, ctx)


def default_tools() -> ToolRegistry:
    """The built-in tools: read, write, edit, exec, search, fetch, plan, ask_user."""
    return ToolRegistry(
        [ReadTool(), WriteTool(), EditTool(), ExecTool(), SearchTool(), FetchTool(), PlanTool(), AskUserTool()]
    )
