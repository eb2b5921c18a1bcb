"""Session activity: the coarse live state of one session."""

from __future__ import annotations

from typing import ClassVar, Literal

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import U64, MessageId, PartId, RunId, SessionId, Str
from omniagent.protocols.yuke.messages import CompactionReason, TokenUsage
from omniagent.protocols.yuke.runs import RunConfig, RunErrorCode


class ActivityIdle(YukeModel, tag="idle"):
    """No active work."""

    type: ClassVar[Literal["idle"]] = "idle"


class ActivityBuilding(YukeModel, tag="building"):
    """First phase of a run: prompt and request assembly."""

    type: ClassVar[Literal["building"]] = "building"
    run_id: RunId
    started_at_ms: U64


class ActivityRunning(YukeModel, tag="running"):
    """A request is out or streaming."""

    type: ClassVar[Literal["running"]] = "running"
    run_id: RunId
    started_at_ms: U64


class ActivityReasoning(YukeModel, tag="reasoning"):
    """The model produces reasoning."""

    type: ClassVar[Literal["reasoning"]] = "reasoning"
    run_id: RunId
    message_id: MessageId
    part_id: PartId


class ActivityRunningTool(YukeModel, tag="running_tool"):
    """A tool executes."""

    type: ClassVar[Literal["running_tool"]] = "running_tool"
    run_id: RunId
    message_id: MessageId
    part_id: PartId
    tool_name: Str
    started_at_ms: U64


class ActivityRetrying(YukeModel, tag="retrying"):
    """The run waits before its next attempt."""

    type: ClassVar[Literal["retrying"]] = "retrying"
    run_id: RunId
    attempt: U64
    max_attempts: U64
    next_at_ms: U64
    code: RunErrorCode
    message: Str


class ActivityCompacting(YukeModel, tag="compacting"):
    """A compaction model call is active."""

    type: ClassVar[Literal["compacting"]] = "compacting"
    run_id: RunId
    reason: CompactionReason
    started_at_ms: U64


ActivityState = (
    ActivityIdle
    | ActivityBuilding
    | ActivityRunning
    | ActivityReasoning
    | ActivityRunningTool
    | ActivityRetrying
    | ActivityCompacting
)


class SessionActivity(YukeModel):
    state: ActivityState
    config: RunConfig | None = None
    queued: U64
    context_usage: TokenUsage
    pending_compaction: RunId | None = None


class SessionActivityChangedData(YukeModel):
    session_id: SessionId
    activity: SessionActivity
