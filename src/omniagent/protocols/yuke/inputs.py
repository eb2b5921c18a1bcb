"""Input sources, the durable input queue, and their broadcasts."""

from __future__ import annotations

from typing import ClassVar, Literal

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.content import ContentPart
from omniagent.protocols.yuke.ids import U64, Bool, InputId, MessageId, PartId, RunId, Seq, SessionId, Str
from omniagent.protocols.yuke.runs import RunKind, RunOutcome


class ParentInstruction(YukeModel, tag="parent_instruction"):
    type: ClassVar[Literal["parent_instruction"]] = "parent_instruction"
    session_id: SessionId
    message_id: MessageId
    part_id: PartId


class ChildReport(YukeModel, tag="child_report"):
    type: ClassVar[Literal["child_report"]] = "child_report"
    session_id: SessionId
    run_id: RunId
    path: Str
    outcome: RunOutcome
    partial: Bool
    truncated: Bool


class ChildInputCanceled(YukeModel, tag="child_input_canceled"):
    type: ClassVar[Literal["child_input_canceled"]] = "child_input_canceled"
    session_id: SessionId
    path: Str
    input_ids: list[InputId]


class EngineInterruption(YukeModel, tag="engine_interruption"):
    type: ClassVar[Literal["engine_interruption"]] = "engine_interruption"
    run_id: RunId
    kind: RunKind


InputSource = ParentInstruction | ChildReport | ChildInputCanceled | EngineInterruption


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
