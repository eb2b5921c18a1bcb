"""The run-row transactions of admission, in one place: queue and cancel inputs, open a turn run or a compaction
run, reserve a compaction behind the active run, drop or recover a reserved one.

Each function runs inside one store transaction (`Store.write`) held under the session's lock by `inputs.Inputs`;
each returns the durable broadcasts it journaled, which the caller emits after the commit. Opening a run first
settles a run left open by a process that is gone (`orphans.settle_open_run`). A child session's turn opens only
while its tree has fewer than `limit` active children (docs/engine.md "Child sessions"); else its input waits.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from omniagent.engine.live import ActiveRun
from omniagent.engine.run import orphans, queue, reports
from omniagent.engine.run.orphans import RunOwnedElsewhere
from omniagent.engine.run.queue import queued_input
from omniagent.engine.store import queries as q
from omniagent.engine.store import trees
from omniagent.engine.store.connection import Connection
from omniagent.engine.store.journal import Broadcast, now_ms, record
from omniagent.engine.store.ownership import Ownership
from omniagent.engine.transcript import title_of
from omniagent.protocols.yuke.content import ContentPart, ContentText, SkillRef
from omniagent.protocols.yuke.inputs import InputCanceledData, InputQueuedData, InputSource
from omniagent.protocols.yuke.messages import CreatedTime, MessageCommittedData, UserMessage
from omniagent.protocols.yuke.runs import (
    RunCanceledTiming,
    RunConfig,
    RunDoneData,
    RunKind,
    RunOutcomeCanceled,
    RunStartedData,
)
from omniagent.protocols.yuke.sessions import ChildCapacity, OriginChild, Session

__all__ = ["NewInput", "Opened", "Queued", "queued_input"]

# One input a client or the engine sends: its content, its source when the engine sends it, the skill it runs.
NewInput = tuple[list[ContentPart], InputSource | None, SkillRef | None]


@dataclass(frozen=True, slots=True)
class Queued:
    """An input queued behind a run: its `input.queued`, why it waits, the tree's capacity (for a child), and
    what settling an orphan's run journaled first."""

    data: InputQueuedData
    reason: Literal["session_busy", "concurrency_limit"]
    capacity: ChildCapacity | None = None
    before: list[Broadcast] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Opened:
    """A turn that opened: its broadcasts, the id of the input that opened it, the fresh summary, the run, and
    the tree's capacity with this run counted (for a child)."""

    broadcasts: list[Broadcast]
    input_id: int
    session: Session
    run: ActiveRun
    capacity: ChildCapacity | None = None


def queue_input(conn: Connection, session_id: str, new: NewInput, limit: int) -> Queued | Literal["unknown", "full"]:
    """Queue one input behind the active run (`session_busy`), or say why not."""
    rec = q.get_session(conn, session_id)
    if rec is None:
        return "unknown"
    return _queue(conn, rec.session, new, "session_busy", limit, [])


def cancel_inputs(
    conn: Connection, session_id: str, ids: list[int] | None
) -> tuple[list[InputCanceledData], list[Broadcast]] | Literal["protected"] | None:
    """Drop the queued inputs `ids` (all that may be canceled when None): their `input.canceled`, then the notice
    queued into the parent when some were its instructions. None for an unknown session; "protected" when an
    id names a report or notice the engine queued (those cannot be canceled)."""
    if q.get_session(conn, session_id) is None:
        return None
    waiting = {item.input_id: item for item, _ in queue.queued(conn, session_id)}
    if ids is None:
        ids = [i for i, item in waiting.items() if not _protected(item.source)]
    elif any(i in waiting and _protected(waiting[i].source) for i in ids):
        return "protected"
    out, dropped = [], []
    for input_id in ids:
        if q.delete_pending(conn, session_id, input_id):
            out.append(record(conn, session_id, "input.canceled", _canceled(session_id, input_id)))
            dropped.append(waiting[input_id])
    notice = reports.instructions_canceled(conn, session_id, dropped)
    return out, [] if notice is None else [notice]


def open_input_run(
    conn: Connection, ownership: Ownership, session_id: str, new: NewInput | None, limit: int
) -> Opened | Queued | Literal["full"] | None:
    """Commit the queued inputs (then `new`) as user messages and open a turn run.

    `new` is queued instead when another live process runs the session (`session_busy`) or when the session is
    a child whose tree already has `limit` active children (`concurrency_limit`). With no `new`, nothing happens
    then, nor when nothing is queued: the answer is None, as for an unknown session.
    """
    rec = q.get_session(conn, session_id)
    if rec is None:
        return None
    try:
        out: list[Broadcast] = orphans.settle_open_run(conn, ownership, session_id)
    except RunOwnedElsewhere:
        return None if new is None else _queue(conn, rec.session, new, "session_busy", limit, [])
    capacity = _capacity(conn, rec.session, limit)
    if capacity is not None and capacity.active >= capacity.limit:
        return None if new is None else _queue(conn, rec.session, new, "concurrency_limit", limit, out)
    now = now_ms()
    inputs = [(item.input_id, item.content, item.source, ran) for item, ran in queue.queued(conn, session_id)]
    if new is None and not inputs:
        return None
    for input_id, _, _, _ in inputs:
        q.delete_pending(conn, session_id, input_id)
    if new is not None:
        inputs.append((q.bump_counter(conn, session_id, "input_id_high"), *new))
    for input_id, parts, source, ran in inputs:
        message = UserMessage(
            source=source,
            id=q.bump_counter(conn, session_id, "message_id_high"),
            content=parts,
            input_id=input_id,
            skill=ran,
            time=CreatedTime(created_at_ms=now),
        )
        q.insert_message(conn, session_id, message.id, "user", None, None, json.dumps(message.dump()))
        text = next((p.text for p in parts if isinstance(p, ContentText)), "")
        q.note_message(conn, session_id, None, title_of(text) or None, now)
        committed = record(conn, session_id, "message.committed", _committed(session_id, message))
        out.append(("message.committed", committed))
    fresh = q.get_session(conn, session_id)
    assert fresh is not None
    run_id = q.bump_counter(conn, session_id, "run_id_high")
    q.insert_run(conn, session_id, run_id, "turn", fresh.session.config_rev, now)
    started, run = _start(conn, fresh.session, run_id, "turn", None, now)
    out.append(("run.started", started))
    fresh = q.get_session(conn, session_id)
    assert fresh is not None
    return Opened(out, inputs[-1][0], fresh.session, run, _capacity(conn, fresh.session, limit))


def open_compaction(
    conn: Connection, ownership: Ownership, sid: str, reserved: int | None
) -> tuple[RunStartedData, Session, ActiveRun] | None:
    """Open a manual compaction run (the reserved run id, when it was queued): marker, row, `run.started`.

    Raises:
        RunOwnedElsewhere: another live process runs the session (an orphan's run is ended first instead).
    """
    if q.get_session(conn, sid) is None:
        return None
    orphans.settle_open_run(conn, ownership, sid)  # journaled; a client reads it in the log
    rec = q.get_session(conn, sid)
    if rec is None:
        return None
    s, now = rec.session, now_ms()
    if reserved is None:
        run_id = q.bump_counter(conn, sid, "run_id_high")
        q.insert_run(conn, sid, run_id, "compaction", s.config_rev, now)
    else:
        run_id = reserved
        q.start_run(conn, sid, run_id, s.config_rev, now)
    started, run = _start(conn, s, run_id, "compaction", "manual", now)
    return started, s, run


def reserve_compaction(conn: Connection, sid: str) -> int | None:
    """Reserve the run id of a compaction queued behind the active run (a row that has not started)."""
    rec = q.get_session(conn, sid)
    if rec is None:
        return None
    run_id = q.bump_counter(conn, sid, "run_id_high")
    q.insert_run(conn, sid, run_id, "compaction", rec.session.config_rev, None)
    return run_id


def drop_reserved(conn: Connection, sid: str, run_id: int) -> RunDoneData:
    """End a queued compaction that never started: `run.done{canceled}` with no start time."""
    now = now_ms()
    outcome = RunOutcomeCanceled()
    q.end_run(conn, sid, run_id, now, json.dumps(outcome.dump()))
    return record(
        conn,
        sid,
        "run.done",
        lambda seq: RunDoneData(
            session_id=sid,
            seq=seq,
            run_id=run_id,
            kind="compaction",
            timing=RunCanceledTiming(ended_at_ms=now),
            outcome=outcome,
        ),
    )


def recover_reserved(conn: Connection, ownership: Ownership) -> list[RunDoneData]:
    """A compaction still queued when its process stopped (its owner is gone) is canceled: it never started."""
    return [drop_reserved(conn, sid, run_id) for sid, run_id in ownership.orphaned_reserved_runs(conn)]


def _start(
    conn: Connection, s: Session, run_id: int, kind: RunKind, reason: Literal["auto", "manual"] | None, now: int
) -> tuple[RunStartedData, ActiveRun]:
    """Mark `run_id` as the session's open run and journal its `run.started`; the run's live record."""
    q.set_open_run(conn, s.id, run_id, kind, now)
    extra = {"reason": reason} if reason is not None else {}
    started = record(
        conn,
        s.id,
        "run.started",
        lambda seq: RunStartedData(
            session_id=s.id, seq=seq, run_id=run_id, kind=kind, config_rev=s.config_rev, started_at_ms=now, **extra
        ),
    )
    config = RunConfig(config_rev=s.config_rev, model=s.model, reasoning=s.reasoning)
    return started, ActiveRun(run_id=run_id, kind=kind, config=config, started_at_ms=now)


def _queue(
    conn: Connection,
    s: Session,
    new: NewInput,
    reason: Literal["session_busy", "concurrency_limit"],
    limit: int,
    before: list[Broadcast],
) -> Queued | Literal["full"]:
    data = queue.enqueue(conn, s.id, *new)
    if data is None:
        return "full"
    return Queued(data, reason, _capacity(conn, s, limit), before)


def _capacity(conn: Connection, s: Session, limit: int) -> ChildCapacity | None:
    """The tree's active children against its limit, for a child session (None for a root or a fork)."""
    if not isinstance(s.origin, OriginChild):
        return None
    return ChildCapacity(active=trees.active_below(conn, trees.tree_root(conn, s.id)), limit=limit)


def _protected(source: InputSource | None) -> bool:
    return source is not None and source.type in queue.PROTECTED_SOURCES


def _canceled(session_id: str, input_id: int) -> Callable[[int], InputCanceledData]:
    return lambda seq: InputCanceledData(session_id=session_id, seq=seq, input_id=input_id)


def _committed(session_id: str, message: UserMessage) -> Callable[[int], MessageCommittedData]:
    return lambda seq: MessageCommittedData(session_id=session_id, seq=seq, message=message)
