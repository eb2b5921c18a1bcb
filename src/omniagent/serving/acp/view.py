"""The runtime's normalized events (sidecar `Event`s) → ACP `session/update` payloads, for v1 or v2.

What it is: `SessionView`, what one connection has told its client about one session (the tool calls it created,
their streamed output, the title and the config options it last sent), turning each event into the updates that
say it in the negotiated version. The v1/v2 differences are `Shapes` fields (`serving/acp/shapes.py`), never a version
test; the shared builders are `serving/acp/builders.py`. Requests (permissions, questions) are
`serving/acp/asks.py`'s; turn ends also answer prompts (`serving/acp/follow.py`).

Ids: a message keeps the agent's message id, a tool call the agent's tool id, so a replay repeats them.

Replay (v2): the hub keeps a message as the chunks it streamed, and v2's whole-message updates are upserts that
chunks append to, so a replay from the start (`priming`) says each message whole and empty before its first chunk:
the draft asks that a replayed chunk follow the whole-message update of its `messageId` (`session-setup`, replay).
"""

from __future__ import annotations

import difflib
import os
import time
from typing import Any

from msgspec import UNSET

from omniagent.protocols.acp import v2
from omniagent.protocols.sidecar.agents import BooleanKind, ConfigOption, SelectKind, SessionInfo
from omniagent.protocols.sidecar.base import DiagnosticLevel
from omniagent.protocols.sidecar.events import (
    Cancelled,
    Completed,
    ContextUsage,
    Delete,
    DiagnosticEvent,
    Edit,
    Event,
    Execute,
    Failed,
    Fetch,
    FileDiff,
    MessageEnded,
    Move,
    PlanEntry,
    PlanStatus,
    PlanUpdated,
    Read,
    ReasoningDelta,
    Refused,
    RequestClosed,
    RequestOpened,
    Search,
    SessionUpdated,
    StopLimit,
    StopReason,
    Subagent,
    TextDelta,
    Think,
    ToolKind,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
    TurnEnded,
    TurnStarted,
    UserMessage,
)
from omniagent.serving.acp import builders as b
from omniagent.serving.acp.shapes import Shapes
from omniagent.wire.messages import INTERNAL_ERROR

Update = b.Update

_KINDS: dict[type, str] = {
    Read: "read",
    Edit: "edit",
    Delete: "delete",
    Move: "move",
    Search: "search",
    Execute: "execute",
    Fetch: "fetch",
    Think: "think",
}
_STATUSES = {
    ToolStatus.PENDING: "pending",
    ToolStatus.RUNNING: "in_progress",
    ToolStatus.COMPLETED: "completed",
    ToolStatus.FAILED: "failed",
}
_PLAN_STATUSES = {
    PlanStatus.PENDING: "pending",
    PlanStatus.IN_PROGRESS: "in_progress",
    PlanStatus.COMPLETED: "completed",
}
# A turn that completed at a limit, as ACP says it (the one mapping of `Completed.limit` out to ACP).
_LIMITS = {StopLimit.MAX_TOKENS: "max_tokens", StopLimit.MAX_TURN_REQUESTS: "max_turn_requests"}
_CATEGORIES = frozenset({"mode", "model", "model_config", "thought_level", "other"})
MODE_OPTION = "mode"


def stop_reason(stop: StopReason) -> str:
    """The ACP stop reason of a turn's end (a failure is `end_turn`: the failure itself is told apart, `failure`)."""
    if isinstance(stop, Cancelled):
        return "cancelled"
    if isinstance(stop, Refused):
        return "refusal"
    if isinstance(stop, Completed) and stop.limit is not None:
        return _LIMITS[stop.limit]
    return "end_turn"


def failure(stop: StopReason) -> str | None:
    """The sentence of a turn that failed, else None."""
    return stop.message if isinstance(stop, Failed) else None


# --- config options ------------------------------------------------------------------------------------------------


def config_options(shapes: Shapes, info: SessionInfo) -> list[Update]:
    """The session's config options (the agent's models, modes, efforts, …) in the version's shape, with the values
    the session has now. Only the ones a running session can change: ACP has no read-only option, and
    `session/set_config_option` of a creation-only one would fail."""
    m = shapes.models
    out: list[Update] = []
    for option in _live(info):
        current = info.configuration.options.get(option.id, option.current)
        common: dict[str, Any] = {shapes.config_id_field: option.id, "name": option.name}
        if option.category in _CATEGORIES:
            common["category"] = option.category
        if isinstance(option.kind, SelectKind):
            choices = [
                m.SessionConfigSelectOption(value=c.value, name=c.label, description=c.description or UNSET)
                for c in option.kind.choices
            ]
            value = current if isinstance(current, str) else (option.kind.choices[0].value if choices else "")
            if not choices:
                continue  # a select with nothing to choose cannot be shown
            out.append(m.SessionConfigOptionSelect(**common, current_value=value, options=choices))
        elif isinstance(option.kind, BooleanKind):
            out.append(m.SessionConfigOptionBoolean(**common, current_value=bool(current)))
    return out


def mode_option(info: SessionInfo) -> ConfigOption | None:
    """The agent's mode option (id `mode`, or the select of category `mode`), which v1 also shows as session modes;
    None when it has none a running session can change."""
    options = _live(info)
    found = next((o for o in options if o.id == MODE_OPTION), None) or next(
        (o for o in options if o.category == "mode"), None
    )
    return found if found is not None and isinstance(found.kind, SelectKind) else None


def v1_modes(info: SessionInfo) -> Any:
    """The v1 `modes` object (the mode option as session modes), or None when the agent has no mode option."""
    from omniagent.protocols.acp import v1

    option = mode_option(info)
    if option is None or not isinstance(option.kind, SelectKind) or not option.kind.choices:
        return None
    current = info.configuration.options.get(option.id, option.current)
    choices = option.kind.choices
    return v1.SessionModeState(
        current_mode_id=current if isinstance(current, str) else choices[0].value,
        available_modes=[v1.SessionMode(id=c.value, name=c.label, description=c.description or UNSET) for c in choices],
    )


def _live(info: SessionInfo) -> list[ConfigOption]:
    return [option for option in info.details.config_options if option.live]


def _options_key(info: SessionInfo) -> Any:
    return ([(o.id, o.name, o.kind) for o in info.details.config_options], sorted(info.configuration.options.items()))


# --- tool calls ----------------------------------------------------------------------------------------------------


def tool_kind(kind: ToolKind) -> str:
    return _KINDS.get(type(kind), "other")


def _abs(root: str, path: str) -> str:
    return os.path.normpath(os.path.join(root, path))


def _patch(root: str, diff: FileDiff) -> str:
    """One file of a git-style patch from the old and new text (paths absolute, as v2 asks)."""
    path = _abs(root, diff.path)
    old = (diff.old_text or "").splitlines(keepends=True)
    new = diff.new_text.splitlines(keepends=True)
    source = "/dev/null" if diff.old_text is None else f"a{path}"
    lines = difflib.unified_diff(old, new, source, f"b{path}")
    return f"diff --git a{path} b{path}\n" + "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _diffs(shapes: Shapes, root: str, diffs: list[FileDiff]) -> list[Update]:
    m = shapes.models
    if not diffs:
        return []
    if shapes.structured_diffs:
        changes = [
            (m.DiffChangeAdd if d.old_text is None else m.DiffChangeModify)(path=_abs(root, d.path)) for d in diffs
        ]
        patch = m.DiffPatch(format="git_patch", text="".join(_patch(root, d) for d in diffs))
        return [m.ToolCallContentDiff(changes=changes, patch=patch)]
    return [m.ToolCallContentDiff(path=_abs(root, d.path), old_text=d.old_text, new_text=d.new_text) for d in diffs]


def tool_fields(shapes: Shapes, root: str, tool: ToolUpdate, output: str | None = None) -> dict[str, Any]:
    """Everything a tool snapshot says, as the fields of a tool call (the whole call: an update replaces it)."""
    m = shapes.models
    text = output if output is not None else tool.output
    content: list[Any] = [m.ToolCallContentContent(content=m.ContentBlockText(text=text))] if text else []
    content += _diffs(shapes, root, tool.diffs)
    status = shapes.cancelled_status if tool.status is ToolStatus.CANCELLED else _STATUSES[tool.status]
    return {
        "tool_call_id": tool.id,
        "title": tool.title,
        "kind": tool_kind(tool.kind),
        "status": status,
        "content": content or UNSET,
        "locations": [m.ToolCallLocation(path=_abs(root, p)) for p in tool.locations] or UNSET,
        "raw_input": tool.raw.input if tool.raw is not None else UNSET,
    }


def tool_subject(shapes: Shapes, root: str, tool: ToolUpdate) -> Update:
    """The ToolCallUpdate a permission request names."""
    return shapes.models.ToolCallUpdate(**tool_fields(shapes, root, tool))


# --- the view ------------------------------------------------------------------------------------------------------


class _AgentCall:
    """A subagent tool call (`Subagent`) and what its child did so far: the titles of the child's tool calls and the
    text of its newest message. ACP has no nested calls, so the child shows as the call's content."""

    def __init__(self, tool: ToolUpdate) -> None:
        self.tool = tool
        self.steps: list[str] = []
        self.text = ""
        self.drafts: dict[str, str] = {}  # message id → its text so far

    def content(self) -> str:
        lines = [self.tool.title] + [f"- {step}" for step in self.steps]
        return "\n".join(lines) + (f"\n\n{self.text}" if self.text else "")


class SessionView:
    """What one connection has told its client about one session; `updates(event)` says the next event."""

    def __init__(self, shapes: Shapes, session_id: str, root: str, info: SessionInfo | None = None) -> None:
        self.shapes = shapes
        self.session_id = session_id
        self.root = root
        self._tools: dict[str, ToolUpdate] = {}
        self._outputs: dict[str, str] = {}  # tool id → output streamed since its last snapshot
        self._agents: dict[str, _AgentCall] = {}  # a subagent call's tool id → its child's progress
        self._within: dict[str, str] = {}  # a child's tool id → the top-level subagent call it works under
        self._title = info.title if info is not None else None
        self._options = _options_key(info) if info is not None else None
        self._mode = self._mode_of(info) if info is not None else None
        self._commands: Any = None  # the slash commands last told (None: none told yet)
        self._waiting: set[str] = set()  # the requests open now
        self.in_turn = False
        self.replaying = False  # set by the follower while it replays kept events
        # True while replaying a session's history from its start (v2): see the module docstring.
        self.priming = False
        self._primed: set[str] = set()

    def updates(self, event: Event) -> list[Update]:
        """The updates that tell `event` (none for what ACP cannot say: statuses, plan quota)."""
        kind = event.kind
        shapes = self.shapes
        parent = event.turn_info.parent_tool_id if event.turn_info is not None else None
        if parent is not None:
            return self._child(parent, event)
        if isinstance(kind, DiagnosticEvent):
            # ACP has no diagnostic update: a warning or an error is agent text of its own message, so the user
            # reads it (an MCP server that stopped, say).
            if kind.diagnostic.level in (DiagnosticLevel.WARNING, DiagnosticLevel.ERROR):
                return [b.chunk("agent_message_chunk", f"notice.{event.sequence}", kind.diagnostic.message)]
            return []
        if isinstance(kind, TextDelta):
            return self._chunk("agent_message_chunk", kind.message_id, kind.text)
        if isinstance(kind, ReasoningDelta):
            return self._chunk("agent_thought_chunk", kind.message_id, kind.text)
        if isinstance(kind, UserMessage):
            m = shapes.models
            if shapes.whole_messages:
                said = [m.ContentBlockText(text=kind.text)]
                return [m.SessionUpdateUserMessage(message_id=kind.message_id, content=said)]
            return self._chunk("user_message_chunk", kind.message_id, kind.text)
        if isinstance(kind, ToolUpdated):
            return [self._tool(kind.tool)]
        if isinstance(kind, ToolOutputDelta):
            return self._output(kind)
        if isinstance(kind, PlanUpdated):
            return [plan(shapes, kind.entries)]
        if isinstance(kind, SessionUpdated):
            return self._session(kind.info)
        if isinstance(kind, ContextUsage):
            if not kind.window_tokens:
                return []
            used = min(kind.used_tokens, kind.window_tokens)
            cost = v2.Cost(amount=kind.cost_usd, currency="USD") if kind.cost_usd is not None else UNSET
            return [v2.SessionUpdateUsageUpdate(used=used, size=kind.window_tokens, cost=cost)]
        return self._turn(event) if shapes.state_updates else self._turn_v1(event)

    def _turn_v1(self, event: Event) -> list[Update]:
        if isinstance(event.kind, TurnStarted):
            self.in_turn = True
        elif isinstance(event.kind, TurnEnded):
            self.in_turn = False
        return []

    def _turn(self, event: Event) -> list[Update]:
        """v2's `state_update`s: running at a turn's start and after a request closed, requires_action while a
        request waits, idle with the stop reason at its end (a failure: `error`, first said as agent text). A replay
        tells the conversation, not the states it went through: `state()` says the state it ends in."""
        kind = event.kind
        states: list[Update] = []
        if isinstance(kind, TurnStarted):
            self.in_turn = True
            states = [b.state_update("running")]
        elif isinstance(kind, RequestOpened):
            self._waiting.add(kind.request.request.id)
            states = [b.state_update("requires_action")]
        elif isinstance(kind, RequestClosed):
            self._waiting.discard(kind.request_id)
            states = [b.state_update("running")] if self.in_turn else []
        elif isinstance(kind, TurnEnded):
            self.in_turn = False
            self._waiting.clear()
            said = failure(kind.stop)
            if said is None:
                states = [b.state_update("idle", stop_reason(kind.stop))]
            else:
                # The draft's `error` stop reason carries the failure; said as agent text too, for an alpha.2
                # client, which does not know that stop reason.
                turn = event.turn_info.id if event.turn_info is not None else str(event.sequence)
                told = self._chunk("agent_message_chunk", f"{turn}.failure", f"The turn failed: {said}")
                return told if self.replaying else [*told, b.failed_idle(INTERNAL_ERROR, f"the turn failed: {said}")]
        return [] if self.replaying else states

    def state(self) -> list[Update]:
        """v2: the session's state now, after a replay (none when idle, the state a client starts from)."""
        if not self.shapes.state_updates or not self.in_turn:
            return []
        return [b.state_update("requires_action" if self._waiting else "running")]

    # --- subagents -------------------------------------------------------------------------------------------------

    def _child(self, parent: str, event: Event) -> list[Update]:
        """A child's event (one nested under a subagent call, at any depth) as progress of the top-level call."""
        top = parent if parent in self._agents else self._within.get(parent)
        agent = self._agents.get(top) if top is not None else None
        kind = event.kind
        if agent is None or top is None:
            return []
        if isinstance(kind, ToolUpdated):
            if kind.tool.id in self._within:
                return []  # a step already shown
            self._within[kind.tool.id] = top
            agent.steps.append(kind.tool.title)
        elif isinstance(kind, TextDelta):
            agent.drafts[kind.message_id] = agent.drafts.get(kind.message_id, "") + kind.text
            return []
        elif isinstance(kind, MessageEnded) and kind.message_id in agent.drafts:
            agent.text = agent.drafts.pop(kind.message_id).strip() or agent.text
        else:
            return []
        return [self._agent_update(agent)]

    def _agent_update(self, agent: _AgentCall) -> Update:
        m = self.shapes.models
        fields = tool_fields(self.shapes, self.root, agent.tool, agent.content())
        return m.SessionUpdateToolCallUpdate(**fields)

    # --- slash commands --------------------------------------------------------------------------------------------

    def commands(self, info: SessionInfo) -> list[Update]:
        """The `available_commands_update` of the session's slash commands, when they differ from what was told."""
        commands = info.details.commands
        if commands == self._commands or (self._commands is None and not commands):
            return []
        self._commands = commands
        m = self.shapes.models
        typed = self.shapes.typed_command_input
        hinted = m.AvailableCommandInputText if typed else m.UnstructuredCommandInput
        command = m.AvailableCommandCommand if typed else m.AvailableCommand
        listed = [
            command(name=c.name, description=c.description, input=hinted(hint=c.input_hint) if c.input_hint else UNSET)
            for c in commands
        ]
        return [m.SessionUpdateAvailableCommandsUpdate(available_commands=listed)]

    def _chunk(self, kind: str, message_id: str, text: str) -> list[Update]:
        """A message chunk; while `priming`, a message's first chunk comes after the message itself, empty."""
        update = b.chunk(kind, message_id, text)
        if not (self.priming and self.shapes.whole_messages) or message_id in self._primed:
            return [update]
        self._primed.add(message_id)
        m = self.shapes.models
        whole = {
            "agent_message_chunk": m.SessionUpdateAgentMessage,
            "agent_thought_chunk": m.SessionUpdateAgentThought,
            "user_message_chunk": m.SessionUpdateUserMessage,
        }[kind]
        return [whole(message_id=message_id, content=[]), update]

    def _tool(self, tool: ToolUpdate) -> Update:
        m = self.shapes.models
        fresh = tool.id not in self._tools
        self._tools[tool.id] = tool
        self._outputs.pop(tool.id, None)  # the snapshot holds the output so far
        agent = self._agents.get(tool.id)
        if isinstance(tool.kind, Subagent):
            agent = self._agents.setdefault(tool.id, _AgentCall(tool))
            agent.tool = tool
        # A subagent call's content is what its child did so far; its own output is only its receipt.
        fields = tool_fields(self.shapes, self.root, tool, agent.content() if agent is not None else None)
        if fresh and self.shapes.tool_create == "tool_call":
            return m.SessionUpdateToolCall(**fields)
        return m.SessionUpdateToolCallUpdate(**fields)

    def _output(self, delta: ToolOutputDelta) -> list[Update]:
        tool = self._tools.get(delta.tool_id)
        if tool is None:
            return []  # output of a call never shown: the client could not place it
        m = self.shapes.models
        if self.shapes.state_updates:  # v2 streams tool content as chunks the client appends
            block = m.ToolCallContentContent(content=m.ContentBlockText(text=delta.text))
            return [m.SessionUpdateToolCallContentChunk(tool_call_id=delta.tool_id, content=block)]
        # v1 has no chunk: the call's content is replaced by all the output so far
        streamed = self._outputs[delta.tool_id] = self._outputs.get(delta.tool_id, "") + delta.text
        output = (tool.output or "") + streamed
        return [m.SessionUpdateToolCallUpdate(**tool_fields(self.shapes, self.root, tool, output))]

    def _session(self, info: SessionInfo) -> list[Update]:
        out: list[Update] = self.commands(info)
        if info.title != self._title:
            self._title = info.title
            out.append(v2.SessionUpdateSessionInfoUpdate(title=info.title, updated_at=now_iso()))
        key = _options_key(info)
        if key != self._options:
            self._options = key
            m = self.shapes.models
            out.append(m.SessionUpdateConfigOptionUpdate(config_options=config_options(self.shapes, info)))
            mode = self._mode_of(info)
            if not self.shapes.state_updates and mode is not None and mode != self._mode:
                out.append(m.SessionUpdateCurrentModeUpdate(current_mode_id=mode))
            self._mode = mode
        return out

    @staticmethod
    def _mode_of(info: SessionInfo) -> str | None:
        option = mode_option(info)
        value = info.configuration.options.get(option.id, option.current) if option is not None else None
        return value if isinstance(value, str) else None


def plan(shapes: Shapes, entries: list[PlanEntry]) -> Update:
    """The whole plan: v1 `plan{entries}`, v2 `plan_update{plan: items}` (one plan per session)."""
    m = shapes.models
    listed = [m.PlanEntry(content=e.text, priority="medium", status=_PLAN_STATUSES[e.status]) for e in entries]
    if shapes.plan_items:
        return m.SessionUpdatePlanUpdate(plan=m.PlanUpdateContentItems(plan_id=b.PLAN_ID, entries=listed))
    return m.SessionUpdatePlan(entries=listed)


def now_iso() -> str:
    return b.iso_time(int(time.time() * 1000))
