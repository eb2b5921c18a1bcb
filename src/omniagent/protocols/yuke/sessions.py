"""Sessions: summary, origin, population, and the session.* params and results."""

from __future__ import annotations

from typing import ClassVar, Literal

import msgspec

from omniagent.protocols.yuke.activity import SessionActivity
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.content import Input
from omniagent.protocols.yuke.ids import (
    U64,
    Bool,
    ConfigRev,
    InputId,
    MessageId,
    PartId,
    RunId,
    SessionId,
    SessionRevision,
    Str,
)
from omniagent.protocols.yuke.inputs import QueuedInput
from omniagent.protocols.yuke.messages import Message, TokenUsage
from omniagent.protocols.yuke.runs import RunConfig


class Client(YukeModel):
    name: Str
    version: Str


class OriginRoot(YukeModel, tag="root"):
    type: ClassVar[Literal["root"]] = "root"


class OriginChild(YukeModel, tag="child"):
    type: ClassVar[Literal["child"]] = "child"
    parent_id: SessionId
    parent_message_id: MessageId
    parent_part_id: PartId


class OriginFork(YukeModel, tag="fork"):
    type: ClassVar[Literal["fork"]] = "fork"
    source_id: SessionId


SessionOrigin = OriginRoot | OriginChild | OriginFork


class Session(YukeModel):
    """The engine-owned session summary."""

    id: SessionId
    root: Str
    profile: Str
    model: Str
    reasoning: Str
    config_rev: ConfigRev
    max_rounds: U64 | None = None
    title: Str
    message_count: U64
    usage_total: TokenUsage
    created_at_ms: U64
    updated_at_ms: U64
    created_by: Client | None = None
    origin: SessionOrigin
    agent: Str | None = None
    name: Str | None = None


class ChildSession(YukeModel):
    parent_id: SessionId
    parent_message_id: MessageId
    parent_part_id: PartId
    name: Str


class ChildCapacity(YukeModel):
    active: U64
    limit: U64


class CreateSession(YukeModel):
    workspace_path: Str
    profile: Str | None = None
    model: Str | None = None
    reasoning: Str | None = None
    system_prompt: Str | None = None
    max_rounds: U64 | None = None
    initial_input: Input | None = None
    child: ChildSession | None = None


class SendInputStarted(YukeModel, tag="started"):
    type: ClassVar[Literal["started"]] = "started"
    input_id: InputId
    run_id: RunId
    capacity: ChildCapacity | None = None


class SendInputQueued(YukeModel, tag="queued"):
    type: ClassVar[Literal["queued"]] = "queued"
    input_id: InputId
    reason: Literal["session_busy", "concurrency_limit"]
    capacity: ChildCapacity | None = None


SessionSendInputResult = SendInputStarted | SendInputQueued


class SessionResult(YukeModel):
    session: Session
    input: SessionSendInputResult | None = None


class PopulationTopLevel(YukeModel, tag="top_level"):
    type: ClassVar[Literal["top_level"]] = "top_level"


class PopulationChildren(YukeModel, tag="children"):
    type: ClassVar[Literal["children"]] = "children"
    parent_id: SessionId


class PopulationAll(YukeModel, tag="all"):
    type: ClassVar[Literal["all"]] = "all"


SessionPopulation = PopulationTopLevel | PopulationChildren | PopulationAll
SessionView = Literal["active", "recent", "active_recent"]


class SessionListParams(YukeModel):
    population: SessionPopulation = msgspec.field(default_factory=PopulationTopLevel)
    view: SessionView = "active_recent"
    limit: U64 | None = None
    cursor: Str | None = None


class SessionListItem(YukeModel):
    session: Session
    activity: SessionActivity


class SessionListResult(YukeModel):
    revision: SessionRevision
    items: list[SessionListItem]
    next_cursor: Str | None = None
    total: U64


class SessionGetParams(YukeModel):
    session_id: SessionId


class SessionPatch(YukeModel):
    model: Str | None = None
    reasoning: Str | None = None
    max_rounds: U64 | None = None


class SessionPatchParams(YukeModel):
    session_id: SessionId
    patch: SessionPatch


class SessionRemoveParams(YukeModel, omit_defaults=False):
    session_id: SessionId
    cascade_children: Bool = False


class SessionForkParams(YukeModel):
    session_id: SessionId
    before_message_id: MessageId | None = None


class SessionCompactParams(YukeModel):
    session_id: SessionId


class SessionCompactResult(YukeModel):
    status: Literal["started", "queued"]
    run_id: RunId


class SessionRewindParams(YukeModel):
    session_id: SessionId
    before_message_id: MessageId
    # Engine extension (not in the yuke spec): also put back the files the engine's tools changed since then.
    restore_files: Bool = False


class SessionSendInputParams(YukeModel):
    session_id: SessionId
    input: Input


class SessionCancelInputParams(YukeModel):
    session_id: SessionId
    input_id: InputId


class SessionCancelInputResult(YukeModel):
    canceled_input: InputId


class SessionQueueParams(YukeModel):
    session_id: SessionId


class SessionQueueResult(YukeModel):
    items: list[QueuedInput]


class SessionCancelRunParams(YukeModel):
    session_id: SessionId
    run_id: RunId | None = None
    clear_queue: Bool | None = None


class SessionCancelRunResult(YukeModel):
    canceled_run: RunId | None = None
    cleared_inputs: list[InputId]
    cleared_compaction: RunId | None = None


class SessionHistoryParams(YukeModel):
    session_id: SessionId
    before_message_id: MessageId
    limit: U64 | None = None


class SessionHistoryResult(YukeModel):
    session_id: SessionId
    messages: list[Message]
    configs: list[RunConfig]
    has_more: Bool


class SessionConfigParams(YukeModel):
    session_id: SessionId
    config_rev: ConfigRev | None = None


class SessionConfigResult(YukeModel):
    config: RunConfig
    system_prompt: Str | None = None


class SessionSummaryChangedData(YukeModel):
    revision: SessionRevision
    session: Session


class SessionRemovedData(YukeModel):
    revision: SessionRevision
    session_id: SessionId
