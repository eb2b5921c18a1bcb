"""Engine broadcasts of one session → driver events: pure translation, no I/O, no turn rules.

Ids (anyagent §9.1, minted from the engine's per-session ids so they are stable): a message is `m<message id>`
(its text and its reasoning share it), a tool call `t<message id>.<part id>`, a permission request
`r<interaction id>`.

| engine broadcast | driver events |
|---|---|
| `message.part_added` text / reasoning | (remembered, so the part's deltas know their kind) |
| `message.part_added` tool (pending) | `ToolUpdated` Pending |
| `message.part_delta` | `TextDelta` / `ReasoningDelta` |
| `tool.state_changed` | `ToolUpdated` Running / Completed / Failed / Cancelled (output, diffs from the diff view) |
| `tool.output_delta` | `ToolOutputDelta` |
| `message.committed` (assistant) | `MessageEnded` (when it streamed text), `ContextUsage` (tokens, window, cost) |
| `message.committed` (compaction, manual or auto) | `ContextCompacted`, `ContextUsage` (the estimate after) |
| `interaction.requested` | `RequestOpened(Permission)` with AllowOnce, AllowAlways, DenyOnce |
| `run.done` | `TurnStopped`: Completed (Refused for a refusal), canceled → Cancelled, failed → Failed |
| `run.done` of a compaction run | `TurnStopped`: Completed (compacted or skipped), Failed, Cancelled |

`MessageEnded` carries the extension `omniagent/fork_point` = its message id: the `fork_at` that forks after it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from omniagent.engine.permissions import PendingAsk, describe
from omniagent.engine.providers.catalog import COST_DIGITS
from omniagent.protocols.sidecar.events import (
    Cancelled,
    CommandInput,
    CommandSpec,
    Completed,
    ContextCompacted,
    ContextUsage,
    Edit,
    Execute,
    Failed,
    FileDiff,
    MessageEnded,
    NoInput,
    OtherTool,
    PathInput,
    PatternInput,
    PermissionAsk,
    PermissionChoice,
    PermissionRequest,
    RawTool,
    Read,
    ReasoningDelta,
    Refused,
    RequestOpened,
    Search,
    StopReason,
    TextDelta,
    ToolInput,
    ToolKind,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
)
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.messages import (
    AssistantMessage,
    CompactionMessage,
    MessageCommittedData,
    MessagePartAddedData,
    PartDelta,
    ToolPart,
    ToolStateChangedData,
)
from omniagent.protocols.yuke.runs import (
    RunDoneData,
    RunOutcome,
    RunOutcomeCanceled,
    RunOutcomeFailed,
    RunOutcomeTurn,
)
from omniagent.protocols.yuke.tools import (
    DiffFile,
    ToolState,
    ToolStateCanceled,
    ToolStateCompleted,
    ToolStateError,
    ToolStateRunning,
    ViewDiff,
)
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.acp_translate import cap_output

# What the engine asks about: its guarded tools. Answers map to the engine's decisions in `engine.py`.
FORK_POINT = "omniagent/fork_point"
PERMISSION_OPTIONS = [PermissionChoice.ALLOW_ONCE, PermissionChoice.ALLOW_ALWAYS, PermissionChoice.DENY_ONCE]
_KINDS: Mapping[str, Callable[[], ToolKind]] = {
    "read": Read,
    "write": Edit,
    "edit": Edit,
    "exec": Execute,
    "search": Search,
}
_REFUSING_FINISH = frozenset({"refusal", "content_filter"})


def message_id(engine_message_id: int) -> str:
    return f"m{engine_message_id}"


def tool_id(engine_message_id: int, part_id: int) -> str:
    return f"t{engine_message_id}.{part_id}"


def request_id(interaction_id: int) -> str:
    return f"r{interaction_id}"


def interaction_of(request: str) -> int | None:
    """The engine interaction id behind a request id we minted, or None."""
    digits = request.removeprefix("r")
    return int(digits) if request.startswith("r") and digits.isdigit() else None


def stop_reason(outcome: RunOutcome) -> StopReason:
    """A finished run as the turn's stop reason."""
    if isinstance(outcome, RunOutcomeCanceled):
        return Cancelled()
    if isinstance(outcome, RunOutcomeFailed):
        return Failed(message=f"{outcome.message} ({outcome.code})")
    if isinstance(outcome, RunOutcomeTurn):
        if outcome.finish in _REFUSING_FINISH:
            return Refused()
        if outcome.finish == "canceled":
            return Cancelled()
    return Completed()


@dataclass(slots=True)
class _Tool:
    """One tool call as the engine has described it so far."""

    id: str
    name: str
    arguments: str
    status: ToolStatus = ToolStatus.PENDING
    output: str = ""
    diffs: list[FileDiff] = field(default_factory=list)


class Translator:
    """Maps one engine session's broadcasts to driver events, keeping what the mapping needs between them."""

    def __init__(self, session_id: str, root: str) -> None:
        self.session_id = session_id
        self.root = root
        self.window_tokens: int | None = None  # the current model's context window, kept current by the driver
        self._kinds: dict[tuple[int, int], str] = {}  # (message, part) → text / reasoning / tool
        self._tools: dict[tuple[int, int], _Tool] = {}
        self._streamed: set[int] = set()  # messages that sent text or reasoning
        self._cost: float | None = None  # USD of this session's replies since it was opened here

    def map(self, name: str, data: YukeModel) -> list[d.DriverEvent]:
        """The events for one broadcast of this session (the caller filters by session)."""
        if isinstance(data, MessagePartAddedData):
            return self._part_added(data)
        if isinstance(data, PartDelta):
            return self._tool_output(data) if name == "tool.output_delta" else self._delta(data)
        if isinstance(data, ToolStateChangedData):
            tool = self._tools.get((data.message_id, data.part_id))
            return [d.AdapterEvent(ToolUpdated(tool=self._apply(tool, data.state)))] if tool else []
        if isinstance(data, MessageCommittedData) and isinstance(data.message, AssistantMessage):
            return self._committed(data.message)
        if isinstance(data, MessageCommittedData) and isinstance(data.message, CompactionMessage):
            return [d.AdapterEvent(ContextCompacted()), self._usage(data.message.tokens_after)]
        if isinstance(data, RunDoneData):
            self._kinds.clear()  # the run's parts are final
            self._tools.clear()
            return [d.TurnStopped(stop_reason(data.outcome))]
        return []

    def permission(self, ask: PendingAsk) -> d.AdapterEvent:
        """An engine ask as a permission request naming the tool call it guards."""
        tool = self._tools.get((ask.message_id, ask.part_id)) or _Tool(
            tool_id(ask.message_id, ask.part_id), ask.tool_name, ask.arguments
        )
        _, detail = describe(ask.tool_name, ask.arguments)
        options = list(PERMISSION_OPTIONS)
        request = PermissionRequest(
            id=request_id(ask.interaction_id), tool=self._snapshot(tool), options=options, detail=detail
        )
        return d.AdapterEvent(RequestOpened(request=PermissionAsk(request=request)))

    # --- broadcasts ----------------------------------------------------------------------------------------

    def _part_added(self, data: MessagePartAddedData) -> list[d.DriverEvent]:
        part, key = data.part, (data.message_id, data.part.id)
        self._kinds[key] = part.type
        if not isinstance(part, ToolPart):
            return []
        tool = self._tools[key] = _Tool(tool_id(*key), part.name, part.arguments)
        return [d.AdapterEvent(ToolUpdated(tool=self._apply(tool, part.state)))]

    def _delta(self, data: PartDelta) -> list[d.DriverEvent]:
        kind = self._kinds.get((data.message_id, data.part_id))
        if kind not in ("text", "reasoning") or not data.delta:
            return []
        self._streamed.add(data.message_id)
        mid = message_id(data.message_id)
        if kind == "text":
            return [d.AdapterEvent(TextDelta(message_id=mid, text=data.delta))]
        return [d.AdapterEvent(ReasoningDelta(message_id=mid, text=data.delta))]

    def _tool_output(self, data: PartDelta) -> list[d.DriverEvent]:
        tool = self._tools.get((data.message_id, data.part_id))
        if tool is None or not data.delta:
            return []
        tool.output += data.delta
        return [d.AdapterEvent(ToolOutputDelta(tool_id=tool.id, text=data.delta))]

    def _committed(self, message: AssistantMessage) -> list[d.DriverEvent]:
        events: list[d.DriverEvent] = []
        if message.id in self._streamed:
            self._streamed.discard(message.id)
            mid = message_id(message.id)
            # The cut point to pass as `fork_at`, named as the other adapters name theirs (`claude/fork_point`).
            events.append(d.AdapterEvent(MessageEnded(message_id=mid), extensions={FORK_POINT: mid}))
        if message.cost is not None:
            self._cost = round((self._cost or 0.0) + message.cost, COST_DIGITS)
        if message.tokens is not None:
            # What the next model call will carry: this call's prompt plus its answer.
            events.append(self._usage(message.tokens.input + message.tokens.output))
        return events

    def _usage(self, used: int) -> d.AdapterEvent:
        window = self.window_tokens
        used = min(used, window) if window else used
        return d.AdapterEvent(ContextUsage(used_tokens=used, window_tokens=window, cost_usd=self._cost))

    # --- tool snapshots ------------------------------------------------------------------------------------

    def _apply(self, tool: _Tool, state: ToolState) -> ToolUpdate:
        if isinstance(state, ToolStateRunning):
            tool.status = ToolStatus.RUNNING
            tool.output = state.output or tool.output
        elif isinstance(state, ToolStateCompleted):
            tool.status, tool.output = ToolStatus.COMPLETED, state.output
            tool.diffs = [diff for view in state.view or [] if isinstance(view, ViewDiff) for diff in self._diffs(view)]
        elif isinstance(state, ToolStateError):
            tool.status, tool.output = ToolStatus.FAILED, state.error
        elif isinstance(state, ToolStateCanceled):
            tool.status = ToolStatus.CANCELLED
        return self._snapshot(tool)

    def _snapshot(self, tool: _Tool) -> ToolUpdate:
        args = _args(tool.arguments)
        path = args.get("path")
        located = self._abs(path) if isinstance(path, str) and tool.name in ("read", "write", "edit") else None
        return ToolUpdate(
            id=tool.id,
            kind=_KINDS.get(tool.name, OtherTool)(),
            title=tool_title(tool.name, args),
            status=tool.status,
            input=self._input(tool.name, args, located),
            output=cap_output(tool.output) if tool.output else None,
            diffs=list(tool.diffs),
            locations=[located] if located else [],
            raw=RawTool(name=tool.name, input=args),
        )

    def _input(self, name: str, args: Mapping[str, Any], located: str | None) -> ToolInput:
        if located is not None:
            return PathInput(path=located)
        if name == "exec" and isinstance(args.get("command"), str):
            return CommandInput(spec=CommandSpec(command=args["command"], cwd=self.root))
        pattern = args.get("regex") or args.get("glob")
        if name == "search" and isinstance(pattern, str):
            return PatternInput(pattern=pattern)
        return NoInput()

    def _diffs(self, view: ViewDiff) -> list[FileDiff]:
        """One `FileDiff` per hunk: the hunk's old side (None for a new file) and new side, context included."""
        out: list[FileDiff] = []
        for file in view.files:
            created = _created(file)
            for hunk in file.hunks:
                old = [line[1:] for line in hunk.lines if line[:1] in (" ", "-")]
                new = [line[1:] for line in hunk.lines if line[:1] in (" ", "+")]
                text = "\n".join(old) + "\n" if old else ""
                out.append(
                    FileDiff(
                        path=self._abs(file.path),
                        old_text=None if created else text,
                        new_text="\n".join(new) + "\n" if new else "",
                    )
                )
        return out

    def _abs(self, path: str) -> str:
        return os.path.normpath(os.path.join(self.root, path))


def tool_title(name: str, args: Mapping[str, Any]) -> str:
    """A short title: the command, the verb and the path, or the search pattern."""
    if name == "exec" and isinstance(args.get("command"), str):
        return str(args["command"])
    if isinstance(args.get("path"), str) and name in ("read", "write", "edit"):
        return f"{name.capitalize()} {args['path']}"
    pattern = args.get("regex") or args.get("glob")
    if name == "search" and isinstance(pattern, str):
        return f"Search {pattern}"
    return name


def _created(file: DiffFile) -> bool:
    return bool(file.hunks) and all(h.old_start == 0 and h.old_lines == 0 for h in file.hunks)


def _args(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
