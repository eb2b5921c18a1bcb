"""Session activity: the coarse live state of one session."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import U64, MessageId, PartId, RunId, SessionId, Str
from omniagent.protocols.yuke.messages import CompactionReason, TokenUsage
from omniagent.protocols.yuke.runs import RunConfig, RunErrorCode


class ActivityIdle(YukeModel):
    """No active work."""

    type: Literal["idle"] = "idle"


class ActivityBuilding(YukeModel):
    """First phase of a run: prompt and request assembly."""

    type: Literal["building"] = "building"
    run_id: RunId
    started_at_ms: U64


class ActivityRunning(YukeModel):
    """A request is out or streaming."""

    type: Literal["running"] = "running"
    run_id: RunId
    started_at_ms: U64


class ActivityReasoning(YukeModel):
    """The model produces reasoning."""

    type: Literal["reasoning"] = "reasoning"
    run_id: RunId
    message_id: MessageId
    part_id: PartId


class ActivityRunningTool(YukeModel):
    """A tool executes."""

    type: Literal["running_tool"] = "running_tool"
    run_id: RunId
    message_id: MessageId
    part_id: PartId
    tool_name: Str
    started_at_ms: U64


class ActivityRetrying(YukeModel):
    """The run waits before its next attempt."""

    type: Literal["retrying"] = "retrying"
    run_id: RunId
    attempt: U64
    max_attempts: U64
    next_at_ms: U64
    code: RunErrorCode
    message: Str


class ActivityCompacting(YukeModel):
    """A compaction model call is active."""

    type: Literal["compacting"] = "compacting"
    run_id: RunId
    reason: CompactionReason
    started_at_ms: U64


ActivityState = Annotated[
    ActivityIdle
    | ActivityBuilding
    | ActivityRunning
    | ActivityReasoning
    | ActivityRunningTool
    | ActivityRetrying
    | ActivityCompacting,
    Field(discriminator="type"),
]


class SessionActivity(YukeModel):
    state: ActivityState
    config: RunConfig | None = None
    queued: U64
    context_usage: TokenUsage
    pending_compaction: RunId | None = None


class SessionActivityChangedData(YukeModel):
    session_id: SessionId
    activity: SessionActivity
