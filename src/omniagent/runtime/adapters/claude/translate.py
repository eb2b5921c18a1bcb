"""Claude Code stream-json frames → driver events (docs/agents.md "Claude Code (native)"); the tool snapshots
live in `tools.py`.

Pure translation: no I/O, no turn rules. Observed with claude 2.1.197 and `--include-partial-messages`:
- text and thinking stream as `stream_event` deltas, and the same text comes again in an `assistant` frame (one
  per finished content block, often before that block's `content_block_stop`). The assistant frame only adds what
  the stream did not already carry, so the caller sees each text once. The fake LLM reuses one message id for
  every answer, so message ids are made unique per session here.
- a `tool_use` block opens in the stream (→ Pending) and arrives whole in the `assistant` frame (→ Running); its
  `tool_result` comes in a `user` frame whose `tool_use_result` holds Bash's stdout/stderr or an edit's strings.
- an API 401 shows as `system/api_retry` with `error:"authentication_failed"` (the CLI then retries for minutes),
  a missing login as an `assistant` frame with the same `error`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from omniagent.protocols.sidecar.agents import LoginMethod
from omniagent.protocols.sidecar.base import Diagnostic, DiagnosticLevel
from omniagent.protocols.sidecar.events import (
    Cancelled,
    Completed,
    ContextCompacted,
    ContextUsage,
    DiagnosticEvent,
    Failed,
    MessageEnded,
    PermissionAsk,
    PermissionRequest,
    PlanEntry,
    PlanStatus,
    PlanUpdated,
    QuestionAsk,
    QuestionRequest,
    ReasoningDelta,
    RequestOpened,
    StopLimit,
    StopReason,
    TextDelta,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdated,
    UserMessage,
)
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.claude.control import choices_for
from omniagent.runtime.adapters.claude.info import ClaudeState
from omniagent.runtime.adapters.claude.tools import Tool, diffs, questions, result_output, text_of

# Extension key holding a frame we could not map, on the Info diagnostic that carries it.
RAW_FRAME = "claude/raw_frame"
# Extension key on `MessageEnded`: the message's last `assistant` uuid, the `fork_at` that keeps it.
FORK_POINT = "claude/fork_point"
ASK_TOOL = "AskUserQuestion"
PLAN_TOOL = "TodoWrite"
AUTH_FAILED = "authentication_failed"
# Frames that carry nothing for the caller: the CLI's echo of our prompt and answers, rate-limit pushes (plan usage
# is read separately), and its own bookkeeping.
_IGNORED = frozenset(
    {"control_response", "rate_limit_event", "control_cancel_request", "command_lifecycle", "keep_alive"}
)
_IGNORED_SYSTEM = frozenset(
    {"hook_started", "hook_response", "api_retry", "task_started", "task_progress", "thinking_tokens"}
)
_DRIVER_EVENTS = (d.AdapterEvent, d.InfoChanged, d.AuthLost)
_PLAN_STATUSES = {
    "pending": PlanStatus.PENDING,
    "in_progress": PlanStatus.IN_PROGRESS,
    "completed": PlanStatus.COMPLETED,
}


@dataclass(slots=True)
class _Message:
    """One streamed assistant message of one transcript (the main one, or a subagent's)."""

    id: str
    blocks: dict[int, list[str]] = field(default_factory=dict)  # index → [type, streamed text]
    claimed: set[int] = field(default_factory=set)  # blocks an `assistant` frame already accounted for
    ended: bool = False
    fork_point: str | None = None  # the uuid of its last `assistant` frame: where `fork_at` can cut


class FrameMapper:
    """Maps each stdout frame of one session to driver events, keeping messages, tools and the context size."""

    def __init__(self, state: ClaudeState, logins: Callable[[], list[LoginMethod]]) -> None:
        self.state = state
        self._logins = logins
        self._streams: dict[str | None, _Message] = {}  # per parent tool id: the message being streamed
        self._tools: dict[str, Tool] = {}
        self._message_ids: set[str] = set()
        self._context_used: int | None = None
        self._auth_lost = False
        # Why the CLI refused to compact; its `result` still says success, so the driver reads this to fail the turn.
        self.compact_error: str | None = None

    def map(self, frame: Mapping[str, Any]) -> list[d.DriverEvent]:
        """The events for one frame (anything but `result` and control frames, which the driver handles)."""
        kind = frame.get("type")
        parent = frame.get("parent_tool_use_id")
        parent = parent if isinstance(parent, str) else None
        if kind == "stream_event":
            return self._wrap(self._stream(frame.get("event") or {}, parent), parent)
        if kind == "assistant":
            return self._assistant(frame, parent)
        if kind == "user":
            return self._wrap(self._user(frame, parent), parent)
        if kind == "system":
            return self._system(frame)
        if kind in _IGNORED:
            return []
        return [_unhandled(frame)]

    # --- streamed messages ---------------------------------------------------------------------------------

    def _stream(self, event: Mapping[str, Any], parent: str | None) -> list[Any]:
        kind = event.get("type")
        if kind == "message_start":
            previous = self._streams.get(parent)
            message = event.get("message")
            wire_id = message.get("id") if isinstance(message, Mapping) else None
            self._streams[parent] = _Message(self._mint(wire_id if isinstance(wire_id, str) else None))
            return [_ended(previous, parent)] if previous is not None and not previous.ended else []
        message = self._streams.get(parent)
        if message is None:
            message = self._streams[parent] = _Message(self._mint(None))
        raw_index = event.get("index")
        index = raw_index if isinstance(raw_index, int) else -1
        if kind == "content_block_start":
            return self._block_start(message, index, event.get("content_block") or {})
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            block = message.blocks.get(index)
            if delta.get("type") == "text_delta" and block is not None:
                return self._delta(message, block, str(delta.get("text") or ""), TextDelta)
            if delta.get("type") == "thinking_delta" and block is not None:
                return self._delta(message, block, str(delta.get("thinking") or ""), ReasoningDelta)
            return []
        if kind == "message_stop" and not message.ended:
            message.ended = True
            return [_ended(message, parent)]
        return []

    def _block_start(self, message: _Message, index: int, block: Mapping[str, Any]) -> list[Any]:
        kind = block.get("type")
        if kind in ("text", "thinking"):
            message.blocks[index] = [str(kind), ""]
            return []
        if kind == "tool_use" and block.get("name") not in (ASK_TOOL, PLAN_TOOL):
            tool = self._tool(str(block.get("id", "")), str(block.get("name", "")))
            return [ToolUpdated(tool=tool.snapshot())]
        return []

    @staticmethod
    def _delta(message: _Message, block: list[str], text: str, make: Callable[..., Any]) -> list[Any]:
        block[1] += text
        return [make(message_id=message.id, text=text)] if text else []

    def _mint(self, wire_id: str | None) -> str:
        """The wire's message id while it is new in this session, else made unique with a counter."""
        base = wire_id or "m"
        candidate, number = base, 1
        while candidate in self._message_ids:
            number += 1
            candidate = f"{base}-{number}"
        self._message_ids.add(candidate)
        return candidate

    # --- whole frames --------------------------------------------------------------------------------------

    def _assistant(self, frame: Mapping[str, Any], parent: str | None) -> list[d.DriverEvent]:
        if frame.get("error") == AUTH_FAILED:
            return self._lose_auth()
        message = frame.get("message") if isinstance(frame.get("message"), Mapping) else {}
        assert isinstance(message, Mapping)
        if message.get("model") != "<synthetic>":  # the CLI's own notes carry zero usage
            self._remember_usage(message.get("usage"))
        stream = self._streams.get(parent)
        if stream is not None and not stream.ended and _uuid(frame):
            stream.fork_point = _uuid(frame)
        items: list[Any] = []
        whole: _Message | None = None  # a message that never streamed (synthetic ones, a missing login)
        for block in message.get("content") or []:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if kind in ("text", "thinking"):
                text = str(block.get(kind) or "")
                new = _unstreamed(stream, str(kind), text) if stream is not None else None
                target = stream
                if new is None and (stream is None or stream.ended):
                    if whole is None:
                        wire_id = message.get("id")
                        whole = _Message(self._mint(wire_id if isinstance(wire_id, str) else None))
                    target = whole
                if target is not None and (new := text if new is None else new):
                    make = TextDelta if kind == "text" else ReasoningDelta
                    items.append(make(message_id=target.id, text=new))
            elif kind == "tool_use":
                items += self._tool_use(block)
        if whole is not None:
            whole.fork_point = _uuid(frame)
            items.append(_ended(whole, parent))
        return self._wrap(items, parent)

    def _tool_use(self, block: Mapping[str, Any]) -> list[Any]:
        name = str(block.get("name", ""))
        tool_input = block.get("input") if isinstance(block.get("input"), Mapping) else {}
        assert isinstance(tool_input, Mapping)
        if name == ASK_TOOL:
            return []  # it reaches us as a `can_use_tool` request
        if name == PLAN_TOOL:
            todos = tool_input.get("todos")
            entries = [_plan_entry(t) for t in todos if isinstance(t, Mapping)] if isinstance(todos, list) else []
            return [PlanUpdated(entries=entries)]
        tool = self._tool(str(block.get("id", "")), name)
        tool.input = tool_input
        tool.status = ToolStatus.RUNNING
        return [ToolUpdated(tool=tool.snapshot())]

    def _user(self, frame: Mapping[str, Any], parent: str | None) -> list[Any]:
        message = frame.get("message") if isinstance(frame.get("message"), Mapping) else {}
        assert isinstance(message, Mapping)
        content = message.get("content")
        results = (
            [b for b in content if isinstance(b, Mapping) and b.get("type") == "tool_result"]
            if isinstance(content, list)
            else []
        )
        if results:
            detail = frame.get("tool_use_result") if len(results) == 1 else None
            return [item for block in results for item in self._tool_result(block, detail)]
        if parent is None:
            return []  # our own prompt replayed, or the CLI's note about an interrupt or a local command
        text = text_of(content)
        return [UserMessage(message_id=str(frame.get("uuid") or self._mint(None)), text=text)] if text else []

    def _tool_result(self, block: Mapping[str, Any], detail: Any) -> list[Any]:
        tool = self._tool(str(block.get("tool_use_id", "")), "")
        output = result_output(block, detail)
        if isinstance(detail, Mapping) and detail.get("backgroundTaskId"):
            tool.status = ToolStatus.RUNNING
        else:
            tool.status = ToolStatus.FAILED if block.get("is_error") is True else ToolStatus.COMPLETED
        tool.output = output
        tool.diffs = diffs(detail)
        delta = [ToolOutputDelta(tool_id=tool.id, text=output)] if output else []
        return [*delta, ToolUpdated(tool=tool.snapshot())]

    def _system(self, frame: Mapping[str, Any]) -> list[d.DriverEvent]:
        subtype = frame.get("subtype")
        if subtype == "init":
            return [d.InfoChanged(self.state.info())] if self.state.apply_init(frame) else []
        if subtype == "status":
            events: list[d.DriverEvent] = []
            mode = frame.get("permissionMode")
            if isinstance(mode, str) and self.state.apply_value("mode", mode):
                events.append(d.InfoChanged(self.state.info()))
            if frame.get("compact_result") == "success":
                events.append(d.AdapterEvent(ContextCompacted()))
            elif frame.get("compact_result") == "failed":
                self.compact_error = str(frame.get("compact_error") or "compaction failed")
            return events
        if subtype == "compact_boundary":
            return [d.AdapterEvent(ContextCompacted())]
        if subtype == "api_retry" and frame.get("error") == AUTH_FAILED:
            return self._lose_auth()
        if subtype == "task_notification":
            return self._wrap(self._task_done(frame), None)
        if subtype in _IGNORED_SYSTEM:
            return []
        return [_unhandled(frame)]

    def _task_done(self, frame: Mapping[str, Any]) -> list[Any]:
        tool_id = frame.get("tool_use_id")
        tool = self._tools.get(tool_id) if isinstance(tool_id, str) else None
        if tool is None or not tool.status.active:
            return []
        tool.status = ToolStatus.FAILED if frame.get("status") == "failed" else ToolStatus.COMPLETED
        return [ToolUpdated(tool=tool.snapshot())]

    # --- results and requests ------------------------------------------------------------------------------

    def usage(self, result: Mapping[str, Any]) -> ContextUsage | None:
        """The context usage a `result` reports: tokens of the last model call, the largest window, the cost."""
        windows = [
            m["contextWindow"]
            for m in (result.get("modelUsage") or {}).values()
            if isinstance(m, Mapping) and isinstance(m.get("contextWindow"), int)
        ]
        cost = result.get("total_cost_usd")
        if self._context_used is None and not windows:
            return None
        return ContextUsage(
            used_tokens=self._context_used or 0,
            window_tokens=max(windows) if windows else None,
            cost_usd=float(cost) if isinstance(cost, int | float) else None,
        )

    def permission(self, request_id: str, request: Mapping[str, Any]) -> RequestOpened:
        """A `can_use_tool` request: a Question for `AskUserQuestion`, else a Permission on the tool's snapshot."""
        tool_input = request.get("input") if isinstance(request.get("input"), Mapping) else {}
        assert isinstance(tool_input, Mapping)
        if request.get("tool_name") == ASK_TOOL:
            return RequestOpened(
                request=QuestionAsk(request=QuestionRequest(id=request_id, questions=questions(tool_input)))
            )
        tool_id = str(request.get("tool_use_id") or request_id)
        tool = self._tools.get(tool_id)
        if tool is None:
            tool = self._tool(tool_id, str(request.get("tool_name", "")))
            tool.input = tool_input
        detail = request.get("description") or request.get("decision_reason")
        ask = PermissionRequest(
            id=request_id,
            tool=tool.snapshot(ToolStatus.PENDING),
            options=choices_for(request),
            detail=detail if isinstance(detail, str) else None,
        )
        return RequestOpened(request=PermissionAsk(request=ask))

    # --- plumbing ------------------------------------------------------------------------------------------

    def _tool(self, tool_id: str, name: str) -> Tool:
        tool = self._tools.get(tool_id)
        if tool is None:
            tool = self._tools[tool_id] = Tool(tool_id, name)
        elif name and not tool.name:
            tool.name = name
        return tool

    def _remember_usage(self, usage: Any) -> None:
        if not isinstance(usage, Mapping):
            return
        keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
        self._context_used = sum(int(usage.get(key) or 0) for key in keys)

    def _lose_auth(self) -> list[d.DriverEvent]:
        if self._auth_lost:
            return []
        self._auth_lost = True
        return [d.AuthLost(self._logins())]

    @staticmethod
    def _wrap(items: Sequence[Any], parent: str | None) -> list[d.DriverEvent]:
        """Event kinds as adapter events of the transcript `parent`; driver events as they are."""
        return [
            item if isinstance(item, _DRIVER_EVENTS) else d.AdapterEvent(item, parent_tool_id=parent) for item in items
        ]


def result_stop(result: Mapping[str, Any], *, interrupted: bool, compact_error: str | None = None) -> StopReason:
    """How a `result` ends the turn. After our interrupt it is a cancel (the CLI then reports
    `error_during_execution`, or success when the turn finished first); otherwise `is_error` is the verdict (an API
    error still says subtype success), and a stream the CLI aborted is a cancel too. A refused compaction ends with
    a success result whose text is the reason; it fails the turn. `error_max_turns` (the CLI's max turns; it says
    `is_error` too) completes the turn at that limit. A reply cut at the model's output limit has no such mark:
    2.1.197 asks the model to go on a few times, then ends with an `is_error` result whose text is an "API Error"
    (its `stop_reason` is not `max_tokens`), so it fails the turn with that text."""
    if interrupted or result.get("terminal_reason") == "aborted_streaming":
        return Cancelled()
    if compact_error is not None:
        return Failed(message=compact_error)
    if result.get("subtype") == "error_max_turns":
        return Completed(limit=StopLimit.MAX_TURN_REQUESTS)
    if result.get("is_error") is not True and result.get("subtype") == "success":
        return Completed()
    errors = result.get("errors")
    text = result.get("result")
    if not isinstance(text, str) or not text:
        text = "; ".join(str(e) for e in errors) if isinstance(errors, list) and errors else str(result.get("subtype"))
    return Failed(message=text)


def _unstreamed(message: _Message, kind: str, text: str) -> str | None:
    """What of an `assistant` frame's block the stream did not carry: the first unclaimed streamed block of the same
    kind that the text extends is claimed, and only the rest is new. None: no streamed block matches."""
    for index, (block_kind, streamed) in sorted(message.blocks.items()):
        if index in message.claimed or block_kind != kind or not text.startswith(streamed):
            continue
        message.claimed.add(index)
        return text[len(streamed) :]
    return None


def _plan_entry(raw: Mapping[str, Any]) -> PlanEntry:
    return PlanEntry(
        text=str(raw.get("content", "")), status=_PLAN_STATUSES.get(str(raw.get("status")), PlanStatus.PENDING)
    )


def _ended(message: _Message, parent: str | None) -> d.AdapterEvent:
    """`MessageEnded`, carrying the point a fork can keep the conversation up to (`fork_at`)."""
    extensions = {FORK_POINT: message.fork_point} if message.fork_point else {}
    return d.AdapterEvent(MessageEnded(message_id=message.id), parent_tool_id=parent, extensions=extensions)


def _uuid(frame: Mapping[str, Any]) -> str | None:
    value = frame.get("uuid")
    return value if isinstance(value, str) else None


def _unhandled(frame: Mapping[str, Any]) -> d.DriverEvent:
    diagnostic = Diagnostic(level=DiagnosticLevel.INFO, message=f"unhandled Claude Code frame {frame.get('type')!r}")
    return d.AdapterEvent(DiagnosticEvent(diagnostic=diagnostic), extensions={RAW_FRAME: dict(frame)})
