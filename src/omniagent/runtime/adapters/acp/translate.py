"""ACP `session/update`s and permission requests → driver events (docs/agents.md "ACP agents"), with the cumulative
tool-call snapshots they merge into.

Pure translation: no I/O, no turn rules. Input is the raw JSON of an update the client already checked against the
negotiated version's schema (one mapping serves v1 and v2; a v1 `tool_call` and a v2 `tool_call_update` for an
unseen id both create a call). Config-like updates change the `SessionState` and yield an `InfoChanged`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from omniagent.protocols.sidecar.agents import Capability
from omniagent.protocols.sidecar.base import Diagnostic, DiagnosticLevel
from omniagent.protocols.sidecar.events import (
    Cancelled,
    CommandInput,
    CommandSpec,
    Completed,
    ContextUsage,
    Delete,
    DiagnosticEvent,
    Edit,
    Execute,
    Failed,
    Fetch,
    FileDiff,
    Move,
    NoInput,
    OtherTool,
    PathInput,
    PatternInput,
    PermissionAsk,
    PermissionChoice,
    PermissionRequest,
    PlanEntry,
    PlanStatus,
    PlanUpdated,
    QueryInput,
    RawTool,
    Read,
    ReasoningDelta,
    Refused,
    RequestOpened,
    Search,
    StopLimit,
    StopReason,
    TextDelta,
    Think,
    ToolInput,
    ToolKind,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
    UrlInput,
    UserMessage,
)
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.acp.info import SessionState

# Bytes of tool output one snapshot carries; longer output is cut on a character boundary.
TOOL_OUTPUT_CAP = 16 * 1024
# The message id when the wire gives none (v1 chunks have no `messageId`).
DEFAULT_MESSAGE_ID = "m0"
# Extension key holding an update we could not map, and the diagnostic that carries it.
RAW_UPDATE = "acp/raw_update"
UNHANDLED = "unhandled ACP update kind"

_KINDS: Mapping[str, Callable[[], ToolKind]] = {
    "read": Read,
    "edit": Edit,
    "delete": Delete,
    "move": Move,
    "search": Search,
    "execute": Execute,
    "think": Think,
    "fetch": Fetch,
}
_STATUSES = {
    "pending": ToolStatus.PENDING,
    "in_progress": ToolStatus.RUNNING,
    "completed": ToolStatus.COMPLETED,
    "failed": ToolStatus.FAILED,
    "cancelled": ToolStatus.CANCELLED,  # v2
}
# Our plan has three states; a cancelled entry is settled, so it reads as completed.
_PLAN_STATUSES = {
    "pending": PlanStatus.PENDING,
    "in_progress": PlanStatus.IN_PROGRESS,
    "completed": PlanStatus.COMPLETED,
    "cancelled": PlanStatus.COMPLETED,
}
_CHOICES = {
    "allow_once": PermissionChoice.ALLOW_ONCE,
    "allow_always": PermissionChoice.ALLOW_ALWAYS,
    "reject_once": PermissionChoice.DENY_ONCE,
    "reject_always": PermissionChoice.DENY_ALWAYS,
}
_ALLOWING = (PermissionChoice.ALLOW_ONCE, PermissionChoice.ALLOW_ALWAYS)
# Updates that carry nothing for the caller: v2 turn states (the client ends turns on idle) and v2's echo of our
# own prompt (anyagent: UserMessage is never a replay of the caller's prompt). A load's replay of the conversation is
# history, whose user messages are the earlier prompts (`UpdateMapper.replaying`).
_SILENT = frozenset({"state_update", "user_message"})
_SILENT_IN_REPLAY = _SILENT - {"user_message"}
_INPUT_KEYS: tuple[tuple[str, Callable[[str], ToolInput]], ...] = (
    ("url", lambda v: UrlInput(url=v)),
    ("pattern", lambda v: PatternInput(pattern=v)),
    ("query", lambda v: QueryInput(query=v)),
)


# ACP's stop reasons for a turn that ended at a limit: completed, short of what the agent would have done.
_LIMITS = {"max_tokens": StopLimit.MAX_TOKENS, "max_turn_requests": StopLimit.MAX_TURN_REQUESTS}


def stop_reason(reason: str | None) -> StopReason:
    """An ACP `stopReason` as ours; a turn that ended without a reason completed. A reason no version names fails
    the turn, naming it."""
    if reason in (None, "end_turn"):
        return Completed()
    if reason == "cancelled":
        return Cancelled()
    if reason == "refusal":
        return Refused()
    limit = _LIMITS.get(reason)
    if limit is not None:
        return Completed(limit=limit)
    return Failed(message=f"turn stopped: {reason}")


# --- tool snapshots ----------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Tool:
    id: str
    title: str = ""
    kind: str | None = None
    status: ToolStatus = ToolStatus.PENDING
    output: str = ""
    diffs: list[FileDiff] = field(default_factory=list)
    locations: list[str] = field(default_factory=list)
    raw: RawTool | None = None

    def snapshot(self) -> ToolUpdate:
        factory = _KINDS.get(self.kind or "", OtherTool)
        return ToolUpdate(
            id=self.id,
            kind=factory(),
            title=self.title,
            status=self.status,
            input=_tool_input(self.kind, self.raw, self.locations),
            output=cap_output(self.output) if self.output else None,
            diffs=list(self.diffs),
            locations=list(self.locations),
            raw=self.raw,
        )


class ToolSnapshots:
    """Every tool call of a session by id; each ACP patch merges into its call's cumulative snapshot."""

    def __init__(self) -> None:
        self._tools: dict[str, _Tool] = {}

    def merge(self, patch: Mapping[str, Any], *, fresh: bool = False) -> tuple[ToolUpdate, str]:
        """Apply a `tool_call` (fresh) or `tool_call_update` patch; returns the snapshot and the newly appended
        output text. `content` replaces the call's content (ACP), so new text is what extends the old."""
        tool_id = str(patch.get("toolCallId", ""))
        tool = self._tools.get(tool_id)
        if fresh or tool is None:
            tool = self._tools[tool_id] = _Tool(tool_id)
        if isinstance(patch.get("title"), str):
            tool.title = patch["title"]
        if isinstance(patch.get("kind"), str):
            tool.kind = patch["kind"]
        tool.status = _STATUSES.get(patch.get("status") or "", tool.status)
        appended = ""
        content = patch.get("content")
        if isinstance(content, list):
            text = "\n".join(t for t in (_content_text(item) for item in content) if t)
            appended = text[len(tool.output) :] if text.startswith(tool.output) else text
            tool.output = text
            tool.diffs = [diff for item in content for diff in _diffs(item)]
        if isinstance(patch.get("locations"), list):
            tool.locations = [
                str(loc["path"]) for loc in patch["locations"] if isinstance(loc, Mapping) and "path" in loc
            ]
        if "rawInput" in patch or "name" in patch:
            name = patch.get("name")
            previous = tool.raw.input if tool.raw is not None else None
            tool.raw = RawTool(
                name=name if isinstance(name, str) else (tool.raw.name if tool.raw else ""),
                input=patch.get("rawInput", previous),
            )
        return tool.snapshot(), appended

    def append(self, tool_id: str, item: Mapping[str, Any]) -> tuple[ToolUpdate, str]:
        """Add one content item (v2 `tool_call_content_chunk`); returns the snapshot and its text."""
        tool = self._tools.get(tool_id)
        if tool is None:
            tool = self._tools[tool_id] = _Tool(tool_id)
        text = _content_text(item)
        tool.output += text
        tool.diffs.extend(_diffs(item))
        return tool.snapshot(), text


def cap_output(text: str) -> str:
    """At most TOOL_OUTPUT_CAP bytes of UTF-8, never splitting a character."""
    encoded = text.encode()
    if len(encoded) <= TOOL_OUTPUT_CAP:
        return text
    return encoded[:TOOL_OUTPUT_CAP].decode(errors="ignore")


# --- updates -----------------------------------------------------------------------------------------------


class UpdateMapper:
    """Maps each `session/update` of one session to driver events, keeping tool snapshots and session state."""

    def __init__(self, state: SessionState, *, version: int) -> None:
        self.state = state
        self.tools = ToolSnapshots()
        # v2 agents acknowledge each prompt by echoing it as user message chunks: not the caller's news.
        self._echoes_prompt = version >= 2
        # Mapping a load's replay of the conversation (the session's history): its user messages are shown.
        self.replaying = False
        self._messages: dict[str, str] = {}  # v2 whole-message upserts: the text already sent, per message id

    def map(self, raw: Mapping[str, Any], *, parsed: bool) -> list[d.DriverEvent]:
        """The events for one update; `parsed` is False when the update did not fit the schema."""
        tag = raw.get("sessionUpdate")
        if self.replaying:
            if tag in _SILENT_IN_REPLAY:
                return []
        elif tag in _SILENT or (tag == "user_message_chunk" and self._echoes_prompt):
            return []
        handler = _HANDLERS.get(tag) if (parsed or tag in _RAW_READ) and isinstance(tag, str) else None
        items = handler(self, raw) if handler is not None else None
        if items is None:
            # Unknown kinds and updates off the schema alike: the raw update rides along for whoever knows more.
            diagnostic = DiagnosticEvent(diagnostic=Diagnostic(level=DiagnosticLevel.INFO, message=UNHANDLED))
            return [d.AdapterEvent(diagnostic, extensions={RAW_UPDATE: dict(raw)})]
        meta = raw.get("_meta")
        extensions = dict(meta) if isinstance(meta, Mapping) else {}
        return [
            item if isinstance(item, d.InfoChanged) else d.AdapterEvent(item, extensions=extensions) for item in items
        ]

    def info_if(self, changed: bool) -> list[Any]:
        return [d.InfoChanged(self.state.info())] if changed else []

    def _text(self, raw: Mapping[str, Any], make: Callable[[str, str], Any]) -> list[Any]:
        text = _content_text({"type": "content", "content": raw.get("content")})
        message_id = raw.get("messageId")
        return [make(message_id if isinstance(message_id, str) else DEFAULT_MESSAGE_ID, text)] if text else []

    def _whole(self, raw: Mapping[str, Any], make: Callable[[str, str], Any]) -> list[Any]:
        """v2 `agent_message` / `agent_thought` replace a message's content: send what extends the sent text."""
        message_id = str(raw.get("messageId") or DEFAULT_MESSAGE_ID)
        content = raw.get("content")
        blocks = content if isinstance(content, list) else []
        text = "".join(_content_text({"type": "content", "content": block}) for block in blocks)
        sent = self._messages.get(message_id, "")
        self._messages[message_id] = text
        new = text[len(sent) :] if text.startswith(sent) else text
        return [make(message_id, new)] if new else []

    def _tool(self, raw: Mapping[str, Any], *, fresh: bool) -> list[Any]:
        snapshot, appended = self.tools.merge(raw, fresh=fresh)
        delta = [ToolOutputDelta(tool_id=snapshot.id, text=appended)] if appended and not fresh else []
        return [*delta, ToolUpdated(tool=snapshot)]

    def _tool_chunk(self, raw: Mapping[str, Any]) -> list[Any]:
        content = raw.get("content")
        snapshot, text = self.tools.append(
            str(raw.get("toolCallId", "")), content if isinstance(content, Mapping) else {}
        )
        delta = [ToolOutputDelta(tool_id=snapshot.id, text=text)] if text else []
        return [*delta, ToolUpdated(tool=snapshot)]

    def _plan(self, entries: Any) -> list[Any]:
        return [PlanUpdated(entries=[_plan_entry(e) for e in entries if isinstance(e, Mapping)])]

    def _plan_update(self, raw: Mapping[str, Any]) -> list[Any] | None:
        """v2 plans: `items` replace the entries; file and markdown plans have no entries to show."""
        plan = raw.get("plan")
        if isinstance(plan, Mapping) and plan.get("type") == "items":
            return self._plan(plan.get("entries") or [])
        return None

    def _usage(self, raw: Mapping[str, Any]) -> list[Any]:
        cost = raw.get("cost")
        amount = cost.get("amount") if isinstance(cost, Mapping) else None
        usage = ContextUsage(
            used_tokens=max(int(raw.get("used", 0)), 0),
            window_tokens=max(int(raw["size"]), 0) if isinstance(raw.get("size"), int) else None,
            cost_usd=float(amount) if isinstance(amount, int | float) else None,
        )
        return [*self.info_if(self.state.see(Capability.CONTEXT_USAGE)), usage]

    # --- permission requests -------------------------------------------------------------------------------

    def permission(self, request_id: str, params: Mapping[str, Any]) -> RequestOpened:
        """`session/request_permission` as a request: the tool is the call's merged snapshot (v1 `toolCall`, v2
        `subject`); option kinds map to choices, an unknown kind to DenyOnce."""
        snapshot = self._permission_tool(request_id, params)
        choices: list[PermissionChoice] = []
        for option in params.get("options") or []:
            choice = _choice(option)
            if choice not in choices:
                choices.append(choice)
        request = PermissionRequest(id=request_id, tool=snapshot, options=choices, detail=None)
        return RequestOpened(request=PermissionAsk(request=request))

    def _permission_tool(self, request_id: str, params: Mapping[str, Any]) -> ToolUpdate:
        subject = params.get("subject")
        patch = params.get("toolCall")
        if isinstance(subject, Mapping) and subject.get("type") == "tool_call":
            patch = subject.get("toolCall")
        if isinstance(patch, Mapping) and "toolCallId" in patch:
            return self.tools.merge(patch)[0]
        title = str(params.get("title") or "permission")
        if isinstance(subject, Mapping) and subject.get("type") == "command":
            spec = CommandSpec(command=str(subject.get("command", "")), cwd=subject.get("cwd"))
            tool_id = str(subject.get("toolCallId") or request_id)
            return ToolUpdate(
                id=tool_id, kind=Execute(), title=title, status=ToolStatus.PENDING, input=CommandInput(spec=spec)
            )
        return ToolUpdate(id=request_id, kind=OtherTool(), title=title, status=ToolStatus.PENDING)


def pick_option(options: Sequence[Mapping[str, Any]], choice: PermissionChoice) -> str | None:
    """The option answering `choice`: the exact kind, else the first of the same allow/deny family, else None
    (the request is then answered cancelled)."""
    kinds = [(_choice(option), option) for option in options]
    for kind, option in kinds:
        if kind is choice:
            return str(option.get("optionId"))
    allowing = choice in _ALLOWING
    for kind, option in kinds:
        if (kind in _ALLOWING) == allowing:
            return str(option.get("optionId"))
    return None


def _choice(option: Any) -> PermissionChoice:
    kind = option.get("kind") if isinstance(option, Mapping) else None
    return _CHOICES.get(kind, PermissionChoice.DENY_ONCE) if isinstance(kind, str) else PermissionChoice.DENY_ONCE


def _content_text(item: Any) -> str:
    """The text of a `{type:"content", content:{type:"text", text}}` item; anything else has none."""
    if not isinstance(item, Mapping) or item.get("type") != "content":
        return ""
    block = item.get("content")
    if isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str):
        return str(block["text"])
    return ""


def _diffs(item: Any) -> list[FileDiff]:
    """v1 `{type:"diff", path, oldText, newText}` as is; v2 `{changes, patch}` as one entry per changed path,
    carrying the patch text (v2 sends no whole-file texts)."""
    if not isinstance(item, Mapping) or item.get("type") != "diff":
        return []
    if isinstance(item.get("path"), str):
        old = item.get("oldText")
        return [
            FileDiff(
                path=item["path"],
                old_text=old if isinstance(old, str) else None,
                new_text=str(item.get("newText") or ""),
            )
        ]
    patch = item.get("patch")
    text = str(patch.get("text") or "") if isinstance(patch, Mapping) else ""
    listed = item.get("changes")
    changes = listed if isinstance(listed, list) else []
    return [FileDiff(path=str(c["path"]), new_text=text) for c in changes if isinstance(c, Mapping) and "path" in c]


def _tool_input(kind: str | None, raw: RawTool | None, locations: Sequence[str]) -> ToolInput:
    """A best reading of what the tool works on: a command, URL, pattern or query from `rawInput`, else a path."""
    args = raw.input if raw is not None and isinstance(raw.input, Mapping) else {}
    command = args.get("command")
    if kind == "execute" and isinstance(command, str):
        cwd = args.get("cwd")
        return CommandInput(spec=CommandSpec(command=command, cwd=cwd if isinstance(cwd, str) else None))
    for key, make in _INPUT_KEYS:
        if isinstance(args.get(key), str):
            return make(args[key])
    return PathInput(path=locations[0]) if locations else NoInput()


def _plan_entry(raw: Mapping[str, Any]) -> PlanEntry:
    return PlanEntry(
        text=str(raw.get("content", "")), status=_PLAN_STATUSES.get(raw.get("status") or "", PlanStatus.PENDING)
    )


_Handler = Callable[[UpdateMapper, Mapping[str, Any]], list[Any] | None]
# Kinds whose handler checks the raw update itself, so it reads one the schema refuses: v2 agents built on the
# 2.0.0-alpha.2 draft send untagged commands, which the current draft tags `type: "command"`.
_RAW_READ = frozenset({"available_commands_update"})
_HANDLERS: Mapping[str, _Handler] = {
    "agent_message_chunk": lambda m, r: m._text(r, lambda i, t: TextDelta(message_id=i, text=t)),
    "agent_thought_chunk": lambda m, r: m._text(r, lambda i, t: ReasoningDelta(message_id=i, text=t)),
    "agent_message": lambda m, r: m._whole(r, lambda i, t: TextDelta(message_id=i, text=t)),
    "agent_thought": lambda m, r: m._whole(r, lambda i, t: ReasoningDelta(message_id=i, text=t)),
    "user_message_chunk": lambda m, r: m._text(r, lambda i, t: UserMessage(message_id=i, text=t)),
    "user_message": lambda m, r: m._whole(r, lambda i, t: UserMessage(message_id=i, text=t)),  # in a replay only
    "tool_call": lambda m, r: m._tool(r, fresh=True),
    "tool_call_update": lambda m, r: m._tool(r, fresh=False),
    "tool_call_content_chunk": lambda m, r: m._tool_chunk(r),
    "plan": lambda m, r: m._plan(r.get("entries") or []),
    "plan_update": lambda m, r: m._plan_update(r),
    "usage_update": lambda m, r: m._usage(r),
    "available_commands_update": lambda m, r: m.info_if(m.state.apply_commands(r.get("availableCommands") or [])),
    "current_mode_update": lambda m, r: m.info_if(m.state.apply_mode(str(r.get("currentModeId", "")))),
    "config_option_update": lambda m, r: m.info_if(m.state.apply_config_options(r.get("configOptions") or [])),
    "session_info_update": lambda m, r: m.info_if(m.state.apply_title(r.get("title"))),
}
