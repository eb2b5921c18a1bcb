"""The assistant draft of one model round: neutral stream events in, yuke streaming broadcasts out.

The draft opens (`message.started`) at the first content event, so an attempt that fails before any content
leaves nothing to discard. Part ids are the positions of the parts in the message. Text and reasoning stream as
`message.part_delta` with `offset` = UTF-8 bytes already sent for that part; a tool part is added once its
arguments are complete (docs/engine.md "Decisions on the protocol's open points" #9), in state `pending`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from omniagent.engine.providers import neutral as n
from omniagent.engine.run.context import RunContext
from omniagent.engine.store.journal import now_ms
from omniagent.protocols.yuke.activity import ActivityReasoning, ActivityRunning
from omniagent.protocols.yuke.messages import (
    AssistantPart,
    MessagePartAddedData,
    MessagePartFinalizedData,
    MessageStartedData,
    PartDelta,
    ReasoningFinal,
    ReasoningPart,
    RedactedReasoningFinal,
    RedactedReasoningPart,
    TextPart,
    ToolPart,
)
from omniagent.protocols.yuke.tools import ToolState, ToolStatePending


@dataclass(slots=True)
class PartBuffer:
    """One part being built."""

    kind: str  # "text" | "reasoning" | "redacted_reasoning" | "tool"
    id: int
    chunks: list[str] = field(default_factory=list)
    sent_bytes: int = 0
    signature: str = ""
    data: str = ""
    call_id: str = ""
    name: str = ""
    state: ToolState = field(default_factory=ToolStatePending)
    added: bool = False  # part_added was broadcast

    @property
    def text(self) -> str:
        return "".join(self.chunks)


class Draft:
    """One assistant message under construction."""

    def __init__(self, ctx: RunContext, message_id: int, agent: str) -> None:
        self._ctx = ctx
        self._run = ctx.run
        self.message_id = message_id
        self._agent = agent
        self.opened = False
        self.created_at_ms = now_ms()
        self.parts: list[PartBuffer] = []
        self._by_index: dict[int, int] = {}
        self.usage = n.Usage()
        self.stop: n.StopReason | None = None

    @property
    def has_content(self) -> bool:
        return any(p.added for p in self.parts)

    def feed(self, event: n.StreamEvent) -> None:
        """Apply one stream event, broadcasting what it changes."""
        if isinstance(event, n.TextDelta):
            self._delta(self._part(event.index, "text"), event.text)
        elif isinstance(event, n.ReasoningDelta):
            self._delta(self._part(event.index, "reasoning"), event.text)
        elif isinstance(event, n.ReasoningSignature):
            self._part(event.index, "reasoning").signature = event.signature
        elif isinstance(event, n.RedactedReasoning):
            self._part(event.index, "redacted_reasoning").data = event.data
        elif isinstance(event, n.ToolCallStarted):
            buf = self._part(event.index, "tool")
            buf.call_id, buf.name = event.call_id, event.name
        elif isinstance(event, n.ToolCallArgumentsDelta):
            self._part(event.index, "tool").chunks.append(event.delta)
        elif isinstance(event, n.BlockEnded):
            self._block_ended(event.index)
        elif isinstance(event, n.Usage):
            self.usage = event
        elif isinstance(event, n.StreamEnd):
            self.stop = event.stop_reason

    def reset_attempt(self) -> None:
        """Forget an attempt that failed before content (no broadcast happened for it)."""
        assert not self.has_content
        self.parts.clear()
        self._by_index.clear()

    def _part(self, index: int, kind: str) -> PartBuffer:
        pos = self._by_index.get(index)
        if pos is not None:
            return self.parts[pos]
        self._open()
        buf = PartBuffer(kind, len(self.parts))
        self._by_index[index] = buf.id
        self.parts.append(buf)
        if kind in ("text", "reasoning", "redacted_reasoning"):
            self._add(len(self.parts) - 1)
        if kind == "reasoning":
            self._set_activity(
                ActivityReasoning(run_id=self._run.run_id, message_id=self.message_id, part_id=len(self.parts) - 1)
            )
        return buf

    def _open(self) -> None:
        if self.opened:
            return
        self.opened = True
        self._ctx.emit(
            "message.started",
            MessageStartedData(
                session_id=self._ctx.session_id,
                message_id=self.message_id,
                run_id=self._run.run_id,
                config_rev=self._run.config.config_rev,
                agent=self._agent,
                created_at_ms=self.created_at_ms,
            ),
        )

    def _add(self, part_id: int) -> None:
        self.parts[part_id].added = True
        self._ctx.emit(
            "message.part_added",
            MessagePartAddedData(
                session_id=self._ctx.session_id, message_id=self.message_id, part=self.wire_part(part_id)
            ),
        )

    def _delta(self, buf: PartBuffer, text: str) -> None:
        if not text:
            return
        part_id = buf.id
        self._ctx.emit(
            "message.part_delta",
            PartDelta(
                session_id=self._ctx.session_id,
                message_id=self.message_id,
                part_id=part_id,
                delta=text,
                offset=buf.sent_bytes,
            ),
        )
        buf.chunks.append(text)
        buf.sent_bytes += len(text.encode())

    def _block_ended(self, index: int) -> None:
        pos = self._by_index.get(index)
        if pos is None:
            return
        buf = self.parts[pos]
        sid = self._ctx.session_id
        if buf.kind == "reasoning":
            self._ctx.emit(
                "message.part_finalized",
                MessagePartFinalizedData(
                    session_id=sid,
                    message_id=self.message_id,
                    part_id=pos,
                    final=ReasoningFinal(signature=buf.signature),
                ),
            )
            self._set_activity(ActivityRunning(run_id=self._run.run_id, started_at_ms=self._run.started_at_ms))
        elif buf.kind == "redacted_reasoning":
            self._ctx.emit(
                "message.part_finalized",
                MessagePartFinalizedData(
                    session_id=sid, message_id=self.message_id, part_id=pos, final=RedactedReasoningFinal(data=buf.data)
                ),
            )
        elif buf.kind == "tool":
            self._add(pos)

    def _set_activity(self, state: ActivityReasoning | ActivityRunning) -> None:
        self._ctx.set_activity(state)

    def wire_part(self, part_id: int) -> AssistantPart:
        """The wire form of one part as it stands."""
        buf = self.parts[part_id]
        if buf.kind == "text":
            return TextPart(id=part_id, text=buf.text)
        if buf.kind == "reasoning":
            return ReasoningPart(id=part_id, text=buf.text, signature=buf.signature)
        if buf.kind == "redacted_reasoning":
            return RedactedReasoningPart(id=part_id, data=buf.data)
        return ToolPart(id=part_id, call_id=buf.call_id or None, name=buf.name, arguments=buf.text, state=buf.state)

    def tool_parts(self) -> list[int]:
        return [i for i, p in enumerate(self.parts) if p.kind == "tool" and p.added]
