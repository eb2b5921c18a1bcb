"""The agent tools: hand a task to a child session (`spawn_agent`), send it a follow-up (`send_agent_input`), stop
it (`stop_agent`). docs/engine.md "Child sessions".

This layer only reads the arguments and calls the context's `AgentControl`, the capability the run loop binds to
the parent session and the call's tool site (the engine's `children.tree.Children` implements it). A context without
one (a child at the depth limit never sees these tools; a bare `ToolContext` in a unit test) gets an error result.
A spawn that admitted its child ends the parent's turn after the round (`ToolResult.ends_turn`): the child's
report arrives later as a new input and starts the next turn, so the model never waits by polling.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from omniagent.engine.tools.args import optional_str, required_str
from omniagent.engine.tools.context import AgentControl, AgentSlot, ToolContext, ToolError, ToolResult

__all__ = ["AGENT_TOOL_NAMES", "AgentControl", "SendAgentInputTool", "SpawnAgentTool", "StopAgentTool", "agent_tools"]

# A child's name: what the parent's tools address it by (unique among the parent's children; `root` is reserved).
CHILD_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
RESERVED_NAME = "root"
AGENT_TOOL_NAMES = frozenset({"spawn_agent", "send_agent_input", "stop_agent"})
_NAME_SCHEMA = {
    "type": "string",
    "pattern": CHILD_NAME.pattern,
    "description": "The child's name: lowercase letters, digits, - and _, starting with a letter.",
}


def child_name(args: Mapping[str, object]) -> str:
    """The `name` argument, checked.

    Raises:
        ToolError: it is missing or not a valid child name.
    """
    name = required_str(args, "name")
    if not CHILD_NAME.match(name) or name == RESERVED_NAME:
        raise ToolError(f"{name!r} is not a valid child name: use lowercase letters, digits, - and _ (not 'root')")
    return name


def _slot(value: str | None) -> AgentSlot | None:
    if value is None:
        return None
    if value == "small":
        return "small"
    if value == "medium":
        return "medium"
    raise ToolError("the argument 'model' must be 'small' or 'medium'")


def _control(ctx: ToolContext) -> AgentControl:
    if ctx.agents is None:
        raise ToolError("child agents are not available in this session")
    return ctx.agents


class SpawnAgentTool:
    """Start a child agent on a self-contained task; its report comes back later as a new message."""

    name = "spawn_agent"
    description = (
        "Start a child agent on one self-contained task, in the same workspace. The child works on its own and "
        "its report comes back to you later as a new message; this turn ends after the tool calls of this round, "
        "so start every child you need in the same round, and do not do the delegated work yourself. `model` "
        "picks the `small` or `medium` model configured for agents (default: your own model)."
    )
    input_schema: Mapping[str, object] = {
        "type": "object",
        "properties": {
            "name": _NAME_SCHEMA,
            "task": {"type": "string", "description": "Complete instructions: the child sees nothing else."},
            "model": {"type": "string", "enum": ["small", "medium"], "description": "The agents' model slot."},
        },
        "required": ["name", "task"],
        "additionalProperties": False,
    }

    async def run(self, args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        try:
            name, task = child_name(args), required_str(args, "task")
            slot = _slot(optional_str(args, "model"))
            control = _control(ctx)
        except ToolError as exc:
            return ToolResult.error(str(exc))
        return await control.spawn(name, task, slot)


class SendAgentInputTool:
    """Send a follow-up instruction to one of this session's child agents."""

    name = "send_agent_input"
    description = (
        "Send a follow-up instruction to a child agent you started. It runs after the child's current work; the "
        "child's report comes back to you as a new message."
    )
    input_schema: Mapping[str, object] = {
        "type": "object",
        "properties": {"name": _NAME_SCHEMA, "message": {"type": "string", "description": "The instruction."}},
        "required": ["name", "message"],
        "additionalProperties": False,
    }

    async def run(self, args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        try:
            name, message = child_name(args), required_str(args, "message")
            control = _control(ctx)
        except ToolError as exc:
            return ToolResult.error(str(exc))
        return await control.send(name, message)


class StopAgentTool:
    """Stop one of this session's child agents."""

    name = "stop_agent"
    description = (
        "Stop a child agent you started: cancel its current work and the instructions still waiting for it. Its "
        "report (what it had done) comes back to you as a new message."
    )
    input_schema: Mapping[str, object] = {
        "type": "object",
        "properties": {"name": _NAME_SCHEMA},
        "required": ["name"],
        "additionalProperties": False,
    }

    async def run(self, args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        try:
            name = child_name(args)
            control = _control(ctx)
        except ToolError as exc:
            return ToolResult.error(str(exc))
        return await control.stop(name)


def agent_tools() -> list[SpawnAgentTool | SendAgentInputTool | StopAgentTool]:
    """The three agent tools, in the order a model sees them."""
    return [SpawnAgentTool(), SendAgentInputTool(), StopAgentTool()]
