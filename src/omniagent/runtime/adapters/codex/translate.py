"""Codex app-server notifications → driver events, with the tool snapshots items merge into.

Pure translation: no I/O, no turn rules. `ThreadTranslator` knows which thread is the session's and which wire turn
is current; frames of an older turn (one the loop already ended) are dropped here, so a late `turn/completed` can
never end the next turn. Frames on a child thread (a subagent codex started) are attributed to the tool that
started it and never touch the parent's turn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from omniagent.protocols.sidecar.base import Diagnostic, DiagnosticLevel
from omniagent.protocols.sidecar.events import (
    Cancelled,
    Completed,
    ContextCompacted,
    ContextUsage,
    DiagnosticEvent,
    Failed,
    MessageEnded,
    PlanEntry,
    PlanStatus,
    PlanUpdated,
    PlanUsageUpdated,
    ReasoningDelta,
    StopReason,
    TextDelta,
    ToolOutputDelta,
    ToolUpdate,
    ToolUpdated,
    UserMessage,
)
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.codex.tools import ToolItems
from omniagent.runtime.plan_usage import codex_plan_usage

# Prefix of the `clientUserMessageId`s we send: a completed user message carrying another id is someone else's.
CLIENT_MESSAGE_PREFIX = "omniagent-m"
# Extension keys: the wire turn an agent message belongs to (a fork point), and a frame we could not map.
FORK_POINT = "codex/fork_point"
RAW_FRAME = "codex/raw_frame"
UNHANDLED = "unhandled Codex notification"

_PLAN_STATUSES = {
    "pending": PlanStatus.PENDING,
    "inProgress": PlanStatus.IN_PROGRESS,
    "completed": PlanStatus.COMPLETED,
}
# Items that are not tools: messages have their own events; the rest carry nothing for the caller.
_NOT_TOOLS = frozenset(
    {"userMessage", "agentMessage", "reasoning", "plan", "contextCompaction", "hookPrompt", "functionCallOutput"}
)
# Notifications that carry nothing for the caller (status echoes, our own request's receipts, bookkeeping).
SILENT = frozenset(
    {
        "thread/started",
        "thread/status/changed",
        "thread/readState/changed",
        "thread/settings/updated",
        "thread/reverted",
        "thread/compacted",
        "thread/queue/changed",
        "serverRequest/resolved",
        "item/reasoning/summaryPartAdded",
        "item/fileChange/patchUpdated",
        "item/autoApprovalReview/started",
        "item/autoApprovalReview/completed",
        "item/commandExecution/terminalInteraction",
        "item/plan/delta",
        "turn/diff/updated",
        "remoteControl/status/changed",
        "skills/changed",
        "account/updated",
        "app/list/updated",
        "hook/started",
        "hook/completed",
        "fs/changed",
    }
)
_WARNINGS = frozenset({"warning", "guardianWarning", "configWarning", "model/rerouted"})


@dataclass(slots=True)
class ThreadTranslator:
    """Maps the notifications of one session's thread (and its child threads) to driver events."""

    thread_id: str = ""
    turn_id: str | None = None  # the current wire turn, from `turn/started`
    tools: ToolItems = field(default_factory=ToolItems)
    children: dict[str, str] = field(default_factory=dict)  # child thread id → the subagent tool that runs it
    _streamed: set[str] = field(default_factory=set)  # message/reasoning item ids that had deltas
    _auth_lost: bool = False
    _parent_tool: str | None = None  # the subagent tool of the frame being translated

    # --- turns ---------------------------------------------------------------------------------------------

    def turn_started(self, params: Mapping[str, Any]) -> bool:
        """Our thread's `turn/started`: it becomes the current turn. Whether it is ours."""
        if params.get("threadId") != self.thread_id:
            return False
        turn = params.get("turn")
        self.turn_id = str(turn.get("id")) if isinstance(turn, Mapping) else None
        return True

    def turn_completed(self, params: Mapping[str, Any]) -> list[d.DriverEvent]:
        """Our current turn's `turn/completed`: active tools end Cancelled, then `TurnStopped`. Anything else
        (an older turn, a child thread's turn) ends nothing."""
        turn = params.get("turn")
        if params.get("threadId") != self.thread_id or not isinstance(turn, Mapping) or turn.get("id") != self.turn_id:
            return []
        self.turn_id = None
        events: list[d.DriverEvent] = [d.AdapterEvent(ToolUpdated(tool=tool)) for tool in self.tools.end_turn()]
        self._streamed.clear()
        events.append(d.TurnStopped(turn_stop(turn)))
        return events

    # --- everything else -----------------------------------------------------------------------------------

    def notification(self, method: str, params: Mapping[str, Any]) -> list[d.DriverEvent]:
        """The events for one notification other than `turn/started` / `turn/completed`."""
        if method in SILENT:
            return []
        parent = self._parent(params)
        if parent is False:
            return []  # a frame of an older turn, or of a thread we do not know
        handler = _HANDLERS.get(method)
        if handler is None:
            if method in _WARNINGS:
                return [_diagnostic(DiagnosticLevel.WARNING, _message(params, method))]
            if method == "deprecationNotice":
                return [_diagnostic(DiagnosticLevel.INFO, _message(params, method))]
            diagnostic = DiagnosticEvent(diagnostic=Diagnostic(level=DiagnosticLevel.INFO, message=UNHANDLED))
            return [d.AdapterEvent(diagnostic, extensions={RAW_FRAME: {"method": method, "params": dict(params)}})]
        self._parent_tool = parent if isinstance(parent, str) else None
        return [
            item if isinstance(item, d.AdapterEvent | d.AuthLost) else d.AdapterEvent(item, self._parent_tool)
            for item in handler(self, params)
        ]

    def _parent(self, params: Mapping[str, Any]) -> str | bool | None:
        """None for our thread's current turn, the subagent tool id for a child thread, False to drop."""
        thread = params.get("threadId")
        if thread is None or thread == self.thread_id:
            turn = params.get("turnId")
            return None if turn is None or turn == self.turn_id else False
        return self.children.get(str(thread), False)

    def tool(self, item_id: str) -> ToolUpdate | None:
        """The current snapshot of a tool item, if it was seen."""
        return self.tools.snapshot(item_id)

    def remember_tool(self, update: ToolUpdate) -> None:
        """A tool first seen in a request (its `item/started` not yet arrived)."""
        self.tools.remember(update)

    # --- handlers ------------------------------------------------------------------------------------------

    def _delta(self, params: Mapping[str, Any], make: Callable[[str, str], Any]) -> list[Any]:
        item_id, text = str(params.get("itemId", "")), params.get("delta")
        if not isinstance(text, str) or not text:
            return []
        self._streamed.add(item_id)
        return [make(item_id, text)]

    def _output(self, params: Mapping[str, Any]) -> list[Any]:
        item_id, text = str(params.get("itemId", "")), params.get("delta")
        if not isinstance(text, str) or not text or not self.tools.extend(item_id, text):
            return []
        return [ToolOutputDelta(tool_id=item_id, text=text)]

    def _item(self, params: Mapping[str, Any], *, completed: bool) -> list[Any]:
        item = params.get("item")
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
            return []
        kind, item_id = str(item.get("type", "")), item["id"]
        if kind == "userMessage":
            client = item.get("clientId")
            ours = isinstance(client, str) and client.startswith(CLIENT_MESSAGE_PREFIX)
            text = _user_text(item.get("content"))
            return [UserMessage(message_id=item_id, text=text)] if completed and not ours and text else []
        if kind in ("agentMessage", "reasoning"):
            return self._message(item, kind, completed=completed)
        if kind == "contextCompaction":
            return [ContextCompacted()] if completed else []
        if kind in _NOT_TOOLS:
            return []
        if kind == "subAgentActivity" and isinstance(item.get("agentThreadId"), str):
            self.children[item["agentThreadId"]] = item_id
        if kind == "collabAgentToolCall":
            for child in item.get("receiverThreadIds") or []:
                self.children[str(child)] = item_id
        return [ToolUpdated(tool=self.tools.merge(item, completed=completed))]

    def _message(self, item: Mapping[str, Any], kind: str, *, completed: bool) -> list[Any]:
        """A completed message ends it; one that never streamed deltas sends its whole text first."""
        if not completed:
            return []
        item_id = str(item["id"])
        events: list[Any] = []
        if item_id not in self._streamed:
            if kind == "agentMessage" and isinstance(item.get("text"), str) and item["text"]:
                events.append(TextDelta(message_id=item_id, text=item["text"]))
            elif kind == "reasoning":
                summary = item.get("summary")
                text = "\n".join(s for s in summary if isinstance(s, str)) if isinstance(summary, list) else ""
                if text:
                    events.append(ReasoningDelta(message_id=item_id, text=text))
            if not events:
                return []
        self._streamed.discard(item_id)
        # An answer's wire turn is where a fork of the thread can be cut (`thread/fork` `lastTurnId`).
        extensions = {FORK_POINT: self.turn_id} if kind == "agentMessage" and self.turn_id else {}
        ended = d.AdapterEvent(MessageEnded(message_id=item_id), self._parent_tool, extensions)
        return [*events, ended]

    def _plan(self, params: Mapping[str, Any]) -> list[Any]:
        steps = params.get("plan")
        entries = [
            PlanEntry(
                text=str(step.get("step", "")),
                status=_PLAN_STATUSES.get(str(step.get("status")), PlanStatus.PENDING),
            )
            for step in (steps if isinstance(steps, list) else [])
            if isinstance(step, Mapping)
        ]
        return [PlanUpdated(entries=entries)]

    def _usage(self, params: Mapping[str, Any]) -> list[Any]:
        usage = params.get("tokenUsage")
        if not isinstance(usage, Mapping):
            return []
        used = None
        for key in ("last", "total"):
            part = usage.get(key)
            if isinstance(part, Mapping) and isinstance(part.get("totalTokens"), int):
                used = part["totalTokens"]
                break
        window = usage.get("modelContextWindow")
        if used is None:
            return []
        return [ContextUsage(used_tokens=max(used, 0), window_tokens=window if isinstance(window, int) else None)]

    def _rate_limits(self, params: Mapping[str, Any]) -> list[Any]:
        """Plan usage, when the snapshot has a window: an API-key or custom-provider login reports none."""
        limits = params.get("rateLimits")
        if not isinstance(limits, Mapping):
            return []
        usage = codex_plan_usage(limits)
        return [PlanUsageUpdated(usage=usage)] if usage.windows else []

    def _error(self, params: Mapping[str, Any]) -> list[Any]:
        error = params.get("error")
        error = error if isinstance(error, Mapping) else {}
        if _unauthorized(error.get("codexErrorInfo")):
            if self._auth_lost:
                return []
            self._auth_lost = True
            return [d.AuthLost(login=[])]
        level = DiagnosticLevel.WARNING if params.get("willRetry") is True else DiagnosticLevel.ERROR
        return [DiagnosticEvent(diagnostic=Diagnostic(level=level, message=str(error.get("message") or "error")))]

    def _mcp_status(self, params: Mapping[str, Any]) -> list[Any]:
        if params.get("status") != "failed":
            return []
        name, error = params.get("name", "?"), params.get("error")
        message = f"MCP server {name} failed to start" + (f": {error}" if isinstance(error, str) and error else "")
        return [DiagnosticEvent(diagnostic=Diagnostic(level=DiagnosticLevel.WARNING, message=message))]


def turn_stop(turn: Mapping[str, Any]) -> StopReason:
    """A completed turn's `status` as a stop reason."""
    status = turn.get("status")
    if status == "completed":
        return Completed()
    if status == "interrupted":
        return Cancelled()
    error = turn.get("error")
    message = error.get("message") if isinstance(error, Mapping) else None
    return Failed(message=str(message) if message else f"turn {status or 'failed'}")


def _unauthorized(info: Any) -> bool:
    if info == "unauthorized":
        return True
    if isinstance(info, Mapping):
        for value in info.values():
            if isinstance(value, Mapping) and value.get("httpStatusCode") == 401:
                return True
    return False


def _diagnostic(level: DiagnosticLevel, message: str) -> d.AdapterEvent:
    return d.AdapterEvent(DiagnosticEvent(diagnostic=Diagnostic(level=level, message=message)))


def _message(params: Mapping[str, Any], method: str) -> str:
    for key in ("message", "summary", "reason"):
        if isinstance(params.get(key), str) and params[key]:
            text = str(params[key])
            details = params.get("details")
            return f"{text}: {details}" if isinstance(details, str) and details else text
    return method


def _user_text(content: Any) -> str:
    parts = content if isinstance(content, list) else []
    return "".join(str(p.get("text", "")) for p in parts if isinstance(p, Mapping) and p.get("type") == "text")


_Handler = Callable[[ThreadTranslator, Mapping[str, Any]], list[Any]]
_HANDLERS: Mapping[str, _Handler] = {
    "item/agentMessage/delta": lambda t, p: t._delta(p, lambda i, x: TextDelta(message_id=i, text=x)),
    "item/reasoning/summaryTextDelta": lambda t, p: t._delta(p, lambda i, x: ReasoningDelta(message_id=i, text=x)),
    "item/reasoning/textDelta": lambda t, p: t._delta(p, lambda i, x: ReasoningDelta(message_id=i, text=x)),
    "item/commandExecution/outputDelta": lambda t, p: t._output(p),
    "item/fileChange/outputDelta": lambda t, p: t._output(p),
    "item/started": lambda t, p: t._item(p, completed=False),
    "item/updated": lambda t, p: t._item(p, completed=False),
    "item/completed": lambda t, p: t._item(p, completed=True),
    "turn/plan/updated": lambda t, p: t._plan(p),
    "thread/tokenUsage/updated": lambda t, p: t._usage(p),
    "account/rateLimits/updated": lambda t, p: t._rate_limits(p),
    "error": lambda t, p: t._error(p),
    "mcpServer/startupStatus/updated": lambda t, p: t._mcp_status(p),
}
