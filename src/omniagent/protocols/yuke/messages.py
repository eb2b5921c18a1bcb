"""Transcript messages, assistant parts, and the streaming payloads that build a draft."""

from __future__ import annotations

from typing import ClassVar, Literal

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.content import ContentPart, SkillRef
from omniagent.protocols.yuke.ids import F64, U64, ConfigRev, InputId, MessageId, PartId, RunId, Seq, SessionId, Str
from omniagent.protocols.yuke.inputs import InputSource
from omniagent.protocols.yuke.runs import StopReason
from omniagent.protocols.yuke.tools import ToolState, View

# `gemini` is an engine extension (docs/engine.md): the spec names the first three.
ProviderProtocol = Literal["anthropic_messages", "openai_chat", "openai_responses", "gemini"]
CompactionReason = Literal["auto", "manual"]


class TokenUsage(YukeModel, omit_defaults=False):
    """Token counts for one message; `input` includes the cache subsets."""

    input: U64 = 0
    output: U64 = 0
    reasoning: U64 = 0
    cache_read: U64 = 0
    cache_write: U64 = 0


class CreatedTime(YukeModel):
    created_at_ms: U64


class MessageTime(YukeModel):
    created_at_ms: U64
    completed_at_ms: U64 | None = None


class MessageError(YukeModel):
    type: Str
    message: Str


class TurnProvenance(YukeModel):
    protocol: ProviderProtocol
    model: Str


class TextPart(YukeModel, tag="text"):
    type: ClassVar[Literal["text"]] = "text"
    id: PartId
    text: Str


class ReasoningPart(YukeModel, tag="reasoning"):
    type: ClassVar[Literal["reasoning"]] = "reasoning"
    id: PartId
    text: Str
    signature: Str


class RedactedReasoningPart(YukeModel, tag="redacted_reasoning"):
    type: ClassVar[Literal["redacted_reasoning"]] = "redacted_reasoning"
    id: PartId
    data: Str


class ToolPart(YukeModel, tag="tool"):
    type: ClassVar[Literal["tool"]] = "tool"
    id: PartId
    call_id: Str | None = None
    name: Str
    arguments: Str
    input_view: list[View] | None = None
    state: ToolState


AssistantPart = TextPart | ReasoningPart | RedactedReasoningPart | ToolPart


class ReasoningFinal(YukeModel, tag="reasoning"):
    type: ClassVar[Literal["reasoning"]] = "reasoning"
    signature: Str


class RedactedReasoningFinal(YukeModel, tag="redacted_reasoning"):
    type: ClassVar[Literal["redacted_reasoning"]] = "redacted_reasoning"
    data: Str


PartFinal = ReasoningFinal | RedactedReasoningFinal


class UserMessage(YukeModel, tag="user"):
    type: ClassVar[Literal["user"]] = "user"
    source: InputSource | None = None
    id: MessageId
    content: list[ContentPart]
    input_id: InputId
    skill: SkillRef | None = None
    time: CreatedTime


class AssistantMessage(YukeModel, tag="assistant"):
    type: ClassVar[Literal["assistant"]] = "assistant"
    id: MessageId
    run_id: RunId
    config_rev: ConfigRev
    agent: Str
    content: list[AssistantPart]
    finish: StopReason | None = None
    tokens: TokenUsage | None = None
    cost: F64 | None = None
    time: MessageTime
    error: MessageError | None = None
    provenance: TurnProvenance | None = None


class CompactionMessage(YukeModel, tag="compaction"):
    type: ClassVar[Literal["compaction"]] = "compaction"
    id: MessageId
    run_id: RunId
    reason: CompactionReason
    summary: Str
    first_kept_id: MessageId | None = None
    tokens_before: U64
    tokens_after: U64
    time: CreatedTime


Message = UserMessage | AssistantMessage | CompactionMessage


class AssistantDraft(YukeModel):
    """Referenced by no field of the protocol; never sent."""

    message: AssistantMessage


class MessageStartedData(YukeModel):
    session_id: SessionId
    message_id: MessageId
    run_id: RunId
    config_rev: ConfigRev
    agent: Str
    created_at_ms: U64


class MessagePartAddedData(YukeModel):
    session_id: SessionId
    message_id: MessageId
    part: AssistantPart


class PartDelta(YukeModel):
    """More text, reasoning or tool output bytes; `offset` counts UTF-8 bytes already sent for that part."""

    session_id: SessionId
    message_id: MessageId
    part_id: PartId
    delta: Str
    offset: U64


class MessagePartFinalizedData(YukeModel):
    session_id: SessionId
    message_id: MessageId
    part_id: PartId
    final: PartFinal


class MessageDiscardedData(YukeModel):
    session_id: SessionId
    message_id: MessageId


class MessageCommittedData(YukeModel):
    session_id: SessionId
    seq: Seq
    message: Message


class ToolStateChangedData(YukeModel):
    session_id: SessionId
    message_id: MessageId
    part_id: PartId
    state: ToolState
