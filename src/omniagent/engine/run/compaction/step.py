"""One compaction step (docs/engine.md "Compaction"): plan the cut, call the session's model for a summary under the
run loop's retry and cancel rules with activity `compacting`, check the summary, commit the `CompactionMessage`.

The step runs as a whole compaction run (`session.compact`, reason `manual`) or inside a turn before a round that
would overflow (reason `auto`). Nothing is written before the summary passed its checks, so a failed or canceled
compaction leaves the transcript as it was. It works through the run's `RunContext`; the transactions that open,
reserve and drop compaction runs are with the other run-row transactions in `engine/run/rows.py`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import msgspec

from omniagent.engine.model_access import RunModel
from omniagent.engine.providers import neutral as n
from omniagent.engine.run import conversation, orphans
from omniagent.engine.run.compaction import rules as compaction_rules
from omniagent.engine.run.context import RunContext
from omniagent.engine.store import queries as q
from omniagent.engine.store.connection import Connection
from omniagent.engine.store.journal import now_ms, record
from omniagent.engine.transcript import tokens_of
from omniagent.protocols.yuke.activity import ActivityCompacting
from omniagent.protocols.yuke.messages import (
    CompactionMessage,
    CompactionReason,
    CreatedTime,
    Message,
    MessageCommittedData,
    TokenUsage,
)
from omniagent.protocols.yuke.notices import Notice
from omniagent.protocols.yuke.runs import RunOutcome, RunOutcomeCompacted, RunOutcomeFailed, RunOutcomeSkipped
from omniagent.protocols.yuke.sessions import Session

SkipReason = str  # a CompactSkipReason: nothing_to_summarize | too_few_messages


@dataclass(slots=True)
class SummarySink:
    """Collects the summary call's answer. Nothing of it is broadcast: the summary appears once, committed."""

    chunks: list[str] = field(default_factory=list)
    stop: n.StopReason | None = None
    usage: n.Usage = field(default_factory=n.Usage)
    has_content: bool = False

    def feed(self, event: n.StreamEvent) -> None:
        if isinstance(event, n.TextDelta):
            self.chunks.append(event.text)
            self.has_content = self.has_content or bool(event.text)
        elif isinstance(event, n.ToolCallStarted):
            self.has_content = True
        elif isinstance(event, n.Usage):
            self.usage = event
        elif isinstance(event, n.StreamEnd):
            self.stop = event.stop_reason

    def reset_attempt(self) -> None:
        self.chunks.clear()
        self.stop, self.usage, self.has_content = None, n.Usage(), False

    @property
    def text(self) -> str:
        return "".join(self.chunks).strip()


def outcome_of(result: CompactionMessage | RunOutcomeFailed | SkipReason) -> RunOutcome:
    """How a manual compaction run ends: `compacted`, `failed` or `skipped`."""
    if isinstance(result, CompactionMessage):
        return RunOutcomeCompacted(message_id=result.id)
    if isinstance(result, RunOutcomeFailed):
        return result
    return RunOutcomeSkipped(reason="too_few_messages" if result == "too_few_messages" else "nothing_to_summarize")


async def auto(
    ctx: RunContext, run_model: RunModel, provider: n.Provider, transcript: list[Message]
) -> tuple[list[Message], bool]:
    """Before a turn's round: compact (reason `auto`) when the request would not fit the window. Returns the
    transcript the round sends and whether to check again before the next round.

    A compaction that is skipped or yields an unusable summary lets the round go on uncompacted (with a `notice`
    for the latter) and is not tried again in this run. Raises `RoundFailed` when the model call fails for good.
    """
    system = ctx.system_prompt
    frame = compaction_rules.estimate_request_frame(system, ctx.tools.specs())
    context = compaction_rules.context_tokens(transcript, frame)
    if not compaction_rules.needs_compaction(context, run_model.context_window, run_model.max_output_tokens):
        return transcript, True
    result = await compact(ctx, run_model, provider, transcript, "auto")
    if isinstance(result, CompactionMessage):
        return [*transcript, result], True
    if isinstance(result, RunOutcomeFailed):
        notice = Notice(level="warn", source="compaction", message=f"automatic compaction failed: {result.message}")
        ctx.emit("notice", notice)
    return transcript, False


async def compact(
    ctx: RunContext, run_model: RunModel, provider: n.Provider, transcript: list[Message], reason: CompactionReason
) -> CompactionMessage | RunOutcomeFailed | SkipReason:
    """Summarise what the plan covers and commit the checkpoint.

    Returns the committed message, a failure (the summary is unusable, or what must be summarised does not fit the
    window), or a skip reason. Raises `RoundFailed` when the model call fails for good and `Interrupted` on cancel.
    """
    sid, run = ctx.session_id, ctx.run
    record_ = await ctx.store.query(q.get_session, sid)
    assert record_ is not None
    window = run_model.context_window
    planned = compaction_rules.plan(transcript, window)
    if isinstance(planned, str):
        return planned
    tools = ctx.tools.specs()
    system = ctx.system_prompt
    needed = (
        compaction_rules.estimate_request_frame(system, tools)
        + compaction_rules.estimate_messages(planned.covered)
        + compaction_rules.SUMMARY_MAX_OUTPUT
    )
    if window is not None and needed > window:
        return RunOutcomeFailed(code="context_overflow", message="the messages to summarise do not fit the window")
    started = now_ms()
    state = ActivityCompacting(run_id=run.run_id, reason=reason, started_at_ms=started)
    ctx.set_activity(state)
    instruction = compaction_rules.instruction(planned.previous)
    request = conversation.summary_request(
        run_model, system, record_.session.root, planned.covered, instruction, tools, ctx.session_id
    )
    sink = SummarySink()
    await ctx.attempts(provider, request, sink, lambda: state)
    summary = sink.text
    if sink.stop != "stop" or not summary:
        return RunOutcomeFailed(code="provider", message="the model did not finish a summary")
    after = compaction_rules.tokens_after(summary, planned.kept)
    if after >= planned.tokens_before or (window is not None and after > window - run_model.max_output_tokens):
        return RunOutcomeFailed(code="context_overflow", message="the summary does not make the context smaller")
    message = CompactionMessage(
        id=1,  # replaced in the transaction, which owns the id counter
        run_id=run.run_id,
        reason=reason,
        summary=summary,
        first_kept_id=planned.first_kept_id,
        tokens_before=planned.tokens_before,
        tokens_after=after,
        time=CreatedTime(created_at_ms=now_ms()),
    )
    committed, session = await ctx.store.write(_commit, sid, message, sink.usage)
    ctx.note_context(TokenUsage(input=after))
    ctx.emit("message.committed", committed)
    ctx.summary_changed(session)
    assert isinstance(committed.message, CompactionMessage)
    return committed.message


def _commit(
    conn: Connection, sid: str, draft: CompactionMessage, usage: n.Usage
) -> tuple[MessageCommittedData, Session]:
    orphans.hold_run(conn, sid, draft.run_id)
    message = msgspec.structs.replace(draft, id=q.bump_counter(conn, sid, "message_id_high"))
    q.insert_message(conn, sid, message.id, "compaction", message.run_id, None, json.dumps(message.dump()))
    # The summary call counts in the session's totals; the gauge becomes what the context holds now.
    q.note_message(conn, sid, tokens_of(usage), None, message.time.created_at_ms)
    q.set_last_usage(conn, sid, TokenUsage(input=message.tokens_after))
    data = record(
        conn, sid, "message.committed", lambda seq: MessageCommittedData(session_id=sid, seq=seq, message=message)
    )
    fresh = q.get_session(conn, sid)
    assert fresh is not None
    return data, fresh.session
