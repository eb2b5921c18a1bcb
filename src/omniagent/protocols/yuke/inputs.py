"""Input sources, the durable input queue, and their broadcasts."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.content import ContentPart
from omniagent.protocols.yuke.ids import U64, Bool, InputId, MessageId, PartId, RunId, Seq, SessionId, Str
from omniagent.protocols.yuke.runs import RunKind, RunOutcome


class ParentInstruction(YukeModel):
    type: Literal["parent_instruction"] = "parent_instruction"
    session_id: SessionId
    message_id: MessageId
    part_id: PartId


class ChildReport(YukeModel):
    type: Literal["child_report"] = "child_report"
    session_id: SessionId
    run_id: RunId
    path: Str
    outcome: RunOutcome
    partial: Bool
    truncated: Bool


class ChildInputCanceled(YukeModel):
    type: Literal["child_input_canceled"] = "child_input_canceled"
    session_id: SessionId
    path: Str
    input_ids: list[InputId]


class EngineInterruption(YukeModel):
    type: Literal["engine_interruption"] = "engine_interruption"
    run_id: RunId
    kind: RunKind


InputSource = Annotated[
    ParentInstruction | ChildReport | ChildInputCanceled | EngineInterruption, Field(discriminator="type")
]


class QueuedInput(YukeModel):
    source: InputSource | None = None
    input_id: InputId
    content: list[ContentPart]
    queued_at_ms: U64


class InputQueuedData(YukeModel):
    session_id: SessionId
    seq: Seq
    input: QueuedInput


class InputCanceledData(YukeModel):
    session_id: SessionId
    seq: Seq
    input_id: InputId
