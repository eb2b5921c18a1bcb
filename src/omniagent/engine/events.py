"""One engine session's broadcasts, read once for every face: text chunks, tool calls, commits, run ends, interactions.

What it is: the single reading of engine events, for the runtime's engine adapter (`runtime/adapters/engine/
adapter.py`), which subscribes to the broadcaster, passes each broadcast of a session through that session's
`SessionFeed`, and renders the items it returns in the session language. The feed keeps
what the reading needs between broadcasts (each part's kind, the tool calls so far), and `ToolCall` is the one
reading of a call's arguments: so a tool call has the same title, kind, path, command and pattern everywhere.
What it is not: a wire shape (each face has its own), or a turn rule.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from omniagent.engine.interactions.permissions import PendingInteraction
from omniagent.engine.interactions.questions import PendingQuestion
from omniagent.engine.interactions.registry import OpenInteraction
from omniagent.engine.mcp import names as mcp_names
from omniagent.engine.tools.context import PlanEntry
from omniagent.engine.tools.plan import PLAN_TOOL, PlanUpdatedData
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.interactions import InteractionRequestedData
from omniagent.protocols.yuke.messages import (
    Message,
    MessageCommittedData,
    MessagePartAddedData,
    PartDelta,
    ToolPart,
    ToolStateChangedData,
)
from omniagent.protocols.yuke.notices import Notice
from omniagent.protocols.yuke.runs import RunDoneData, RunStartedData
from omniagent.protocols.yuke.tools import ToolState

ToolKind = Literal["read", "edit", "execute", "search", "fetch", "other"]
_KINDS: dict[str, ToolKind] = {
    "read": "read",
    "write": "edit",
    "edit": "edit",
    "exec": "execute",
    "search": "search",
    "fetch": "fetch",
}
_FILE_TOOLS = frozenset({"read", "write", "edit"})
SPAWN_TOOL = "spawn_agent"  # the agent tool whose call starts a child session (engine/tools/agents.py)
_AGENT_TITLES = {SPAWN_TOOL: "Agent", "send_agent_input": "Message agent", "stop_agent": "Stop agent"}


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One engine tool call and the one reading of its arguments every face shows.

    `path` is the file a read, write or edit works on (as the model gave it, relative to the workspace);
    `command` is an exec's command; `pattern` is a search's regex (else its glob); `url` is what a fetch gets;
    `mcp` is the (server, tool) of an MCP server's tool (kind `other`, titled `server: tool`).
    """

    message_id: int
    part_id: int
    name: str
    arguments: str  # the raw JSON the model sent
    args: dict[str, Any] = field(default_factory=dict)
    title: str = ""
    kind: ToolKind = "other"
    path: str | None = None
    command: str | None = None
    pattern: str | None = None
    url: str | None = None
    mcp: tuple[str, str] | None = None


def read_tool_call(message_id: int, part_id: int, name: str, arguments: str) -> ToolCall:
    """Read a call's arguments once: its title, kind, file path, command, search pattern and URL."""
    args = _args(arguments)
    path = args.get("path") if name in _FILE_TOOLS and isinstance(args.get("path"), str) else None
    command = args.get("command") if name == "exec" and isinstance(args.get("command"), str) else None
    found = args.get("regex") or args.get("glob")
    pattern = found if name == "search" and isinstance(found, str) else None
    url = args.get("url") if name == "fetch" and isinstance(args.get("url"), str) else None
    mcp = mcp_names.split(name)
    question = args.get("question") if name == "ask_user" else None
    child = args.get("name") if name in _AGENT_TITLES and isinstance(args.get("name"), str) else None
    if mcp is not None:
        title = f"{mcp[0]}: {mcp[1]}"
    elif isinstance(question, str) and question:
        title = question
    elif child is not None:
        title = f"{_AGENT_TITLES[name]} {child}"
    elif command is not None:
        title = command
    elif path is not None:
        title = f"{name.capitalize()} {path}"
    elif pattern is not None:
        title = f"Search {pattern}"
    elif url is not None:
        title = f"Fetch {url}"
    else:
        title = name
    return ToolCall(
        message_id, part_id, name, arguments, args, title, _KINDS.get(name, "other"), path, command, pattern, url, mcp
    )


def message_ref(message_id: int) -> str:
    """The id every face shows for a message (its text and its reasoning share it): `m<message id>`, stable across
    replays because it is the engine's own per-session id."""
    return f"m{message_id}"


def tool_call_ref(message_id: int, part_id: int) -> str:
    """The id every face shows for a tool call: `t<message id>.<part id>`."""
    return f"t{message_id}.{part_id}"


# Feed items ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Chunk:
    """Streamed text of an assistant message: its answer, or its reasoning."""

    message_id: int
    text: str
    reasoning: bool


@dataclass(frozen=True, slots=True)
class ToolOpened:
    """A tool call the model asked for (complete arguments), in its first state."""

    call: ToolCall
    state: ToolState


@dataclass(frozen=True, slots=True)
class ToolChanged:
    """A tool call moved to a new state."""

    call: ToolCall
    state: ToolState


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """Live output of a running tool call."""

    call: ToolCall
    text: str


@dataclass(frozen=True, slots=True)
class PlanChanged:
    """The session's plan is now `entries` (the `plan` tool replaced it; its call is not shown as a tool call)."""

    entries: tuple[PlanEntry, ...]


@dataclass(frozen=True, slots=True)
class Committed:
    """A message became durable (user, assistant or compaction)."""

    message: Message


@dataclass(frozen=True, slots=True)
class RunStarted:
    data: RunStartedData


@dataclass(frozen=True, slots=True)
class RunEnded:
    data: RunDoneData


@dataclass(frozen=True, slots=True)
class InteractionOpened:
    """The run waits for a permission answer about `call`."""

    interaction: PendingInteraction
    call: ToolCall


@dataclass(frozen=True, slots=True)
class QuestionOpened:
    """The run waits for the user's answer to the model's question (its `ask_user` call is `call`)."""

    question: PendingQuestion
    call: ToolCall


@dataclass(frozen=True, slots=True)
class Noticed:
    """A diagnostic about the session (an MCP server that did not start or stopped): the face shows it."""

    notice: Notice


FeedItem = (
    Chunk
    | ToolOpened
    | ToolChanged
    | ToolOutput
    | PlanChanged
    | Committed
    | RunStarted
    | RunEnded
    | InteractionOpened
    | QuestionOpened
    | Noticed
)


class SessionFeed:
    """Reads one session's broadcasts (the caller filters by session) into feed items; `interactions` finds the
    open interaction behind an `interaction.requested` (the engine's `interactions.get`)."""

    def __init__(self, session_id: str, interactions: Callable[[int], OpenInteraction | None]) -> None:
        self.session_id = session_id
        self._interactions = interactions
        self._kinds: dict[tuple[int, int], str] = {}  # (message, part) → text / reasoning / tool / …
        self._calls: dict[tuple[int, int], ToolCall] = {}

    def call(self, message_id: int, part_id: int) -> ToolCall | None:
        """A tool call of the open run, as read when it was added."""
        return self._calls.get((message_id, part_id))

    def read(self, name: str, data: YukeModel) -> list[FeedItem]:
        """The items for one broadcast of this session."""
        if isinstance(data, MessagePartAddedData):
            part, key = data.part, (data.message_id, data.part.id)
            self._kinds[key] = part.type
            if not isinstance(part, ToolPart) or part.name == PLAN_TOOL:
                return []  # a plan call shows as the plan it sets (`plan.updated`), not as a tool call
            call = self._calls[key] = read_tool_call(data.message_id, part.id, part.name, part.arguments)
            return [ToolOpened(call, part.state)]
        if isinstance(data, PartDelta):
            key = (data.message_id, data.part_id)
            if not data.delta:
                return []
            if name == "tool.output_delta":
                found = self._calls.get(key)
                return [ToolOutput(found, data.delta)] if found is not None else []
            kind = self._kinds.get(key)
            if kind not in ("text", "reasoning"):
                return []
            return [Chunk(data.message_id, data.delta, reasoning=kind == "reasoning")]
        if isinstance(data, ToolStateChangedData):
            found = self._calls.get((data.message_id, data.part_id))
            return [ToolChanged(found, data.state)] if found is not None else []
        if isinstance(data, PlanUpdatedData):
            return [PlanChanged(tuple(PlanEntry(e.content, e.status, e.priority) for e in data.entries))]
        if isinstance(data, MessageCommittedData):
            return [Committed(data.message)]
        if isinstance(data, RunStartedData):
            return [RunStarted(data)]
        if isinstance(data, RunDoneData):
            self._kinds.clear()  # the run's parts are final
            self._calls.clear()
            return [RunEnded(data)]
        if isinstance(data, Notice):
            return [Noticed(data)]
        if isinstance(data, InteractionRequestedData):
            interaction = self._interactions(data.interaction_id)
            if isinstance(interaction, PendingInteraction):
                key = (interaction.message_id, interaction.part_id)
                call = self._calls.get(key) or read_tool_call(*key, interaction.tool_name, interaction.arguments)
                return [InteractionOpened(interaction, call)]
            if isinstance(interaction, PendingQuestion):
                key = (interaction.message_id, interaction.part_id)
                return [QuestionOpened(interaction, self._calls.get(key) or read_tool_call(*key, "ask_user", "{}"))]
        return []


def _args(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
