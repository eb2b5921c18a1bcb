"""Run configs, outcomes, and the run start/done payloads."""

from __future__ import annotations

from typing import ClassVar, Literal

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import U64, ConfigRev, MessageId, RunId, Seq, SessionId, Str

RunKind = Literal["turn", "compaction"]
RunErrorCode = Literal[
    "interrupted",
    "provider",
    "protocol",
    "network",
    "timeout",
    "rate_limited",
    "quota_exhausted",
    "auth",
    "unknown_model",
    "unsupported_reasoning",
    "max_rounds",
    "context_overflow",
    "runtime",
    "internal",
]
StopReason = Literal["stop", "length", "content_filter", "refusal", "tool_calls", "canceled", "error", "unknown"]


class RunConfig(YukeModel):
    """The run settings saved at run start."""

    config_rev: ConfigRev
    model: Str
    reasoning: Str


class RunOutcomeTurn(YukeModel, tag="turn"):
    type: ClassVar[Literal["turn"]] = "turn"
    finish: StopReason
    rounds: U64


class RunOutcomeCompacted(YukeModel, tag="compacted"):
    type: ClassVar[Literal["compacted"]] = "compacted"
    message_id: MessageId


class RunOutcomeSkipped(YukeModel, tag="skipped"):
    type: ClassVar[Literal["skipped"]] = "skipped"
    reason: Literal["nothing_to_summarize", "too_few_messages"]


class RunOutcomeCanceled(YukeModel, tag="canceled"):
    type: ClassVar[Literal["canceled"]] = "canceled"


class RunOutcomeFailed(YukeModel, tag="failed"):
    type: ClassVar[Literal["failed"]] = "failed"
    code: RunErrorCode
    message: Str


RunOutcome = RunOutcomeTurn | RunOutcomeCompacted | RunOutcomeSkipped | RunOutcomeCanceled | RunOutcomeFailed


class RunCanceledTiming(YukeModel):
    """Start and end of a run (used for every outcome, despite the name)."""

    started_at_ms: U64 | None = None
    ended_at_ms: U64


class RunStartedData(YukeModel):
    session_id: SessionId
    seq: Seq
    run_id: RunId
    kind: RunKind
    reason: Literal["auto", "manual"] | None = None
    config_rev: ConfigRev
    started_at_ms: U64


class RunDoneData(YukeModel):
    session_id: SessionId
    seq: Seq
    run_id: RunId
    kind: RunKind
    timing: RunCanceledTiming
    outcome: RunOutcome


class ConfigChangedData(YukeModel):
    session_id: SessionId
    seq: Seq
    config: RunConfig


class TranscriptTruncatedData(YukeModel):
    session_id: SessionId
    seq: Seq
    first_removed_id: MessageId
