"""The run-row transactions of admission, in one place: queue and cancel inputs, open a turn run or a compaction
run, reserve a compaction behind the active run, drop or recover a reserved one.

Each function runs inside one store transaction (`Store.write`) held under the session's lock by `inputs.Inputs`;
each returns the durable broadcasts it journaled, which the caller emits after the commit. Opening a run first
settles a run left open by a process that is gone (`orphans.settle_open_run`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Literal

from pydantic import TypeAdapter

from omniagent.engine import orphans
from omniagent.engine.journal import Broadcast, now_ms, record
from omniagent.engine.live import ActiveRun
from omniagent.engine.orphans import RunOwnedElsewhere
from omniagent.engine.store import queries as q
from omniagent.engine.store.ownership import Ownership
from omniagent.engine.transcript import title_of
from omniagent.protocols.yuke.content import ContentPart, ContentText, SkillRef
from omniagent.protocols.yuke.inputs import InputCanceledData, InputQueuedData, QueuedInput
from omniagent.protocols.yuke.messages import CreatedTime, MessageCommittedData, UserMessage
from omniagent.protocols.yuke.runs import (
    RunCanceledTiming,
    RunConfig,
    RunDoneData,
    RunKind,
    RunOutcomeCanceled,
    RunStartedData,
)
from omniagent.protocols.yuke.sessions import Session

MAX_QUEUED = 128  # queued inputs per session (yuke limit)

QUEUED = TypeAdapter(QueuedInput)
_SKILL_KEY = "skill"  # a queued skill input's SkillRef, in its pending row beside the QueuedInput fields

# What opening a turn answers: the broadcasts, the id of the input that opened it, the fresh summary, the run.
OpenedRun = tuple[list[Broadcast], int, Session, ActiveRun]


def queue_input(
    conn: sqlite3.Connection, session_id: str, content: list[ContentPart], skill: SkillRef | None = None
) -> InputQueuedData | str:
    """Queue one input behind the active run: its `input.queued`, or "unknown" / "full". The skill a skill input
    ran is kept beside the queued item (yuke's QueuedInput has no field for it) for its user message."""
    if q.get_session(conn, session_id) is None:
        return "unknown"
    if q.count_pending(conn, session_id) >= MAX_QUEUED:
        return "full"
    input_id = q.bump_counter(conn, session_id, "input_id_high")
    item = QueuedInput(input_id=input_id, content=content, queued_at_ms=now_ms())
    data = record(
        conn, session_id, "input.queued", lambda seq: InputQueuedData(session_id=session_id, seq=seq, input=item)
    )
    stored = item.dump() | ({_SKILL_KEY: skill.dump()} if skill is not None else {})
    q.insert_pending(conn, session_id, input_id, data.seq, json.dumps(stored))
    return data


def cancel_inputs(conn: sqlite3.Connection, session_id: str, ids: list[int] | None) -> list[InputCanceledData] | None:
    """Drop the queued inputs `ids` (all of them when None); None for an unknown session."""
    if q.get_session(conn, session_id) is None:
        return None
    if ids is None:
        ids = [QUEUED.validate_json(p).input_id for p in q.list_pending(conn, session_id)]
    out = []
    for input_id in ids:
        if q.delete_pending(conn, session_id, input_id):
            out.append(record(conn, session_id, "input.canceled", _canceled(session_id, input_id)))
    return out


def open_input_run(
    conn: sqlite3.Connection,
    ownership: Ownership,
    session_id: str,
    content: list[ContentPart] | None,
    skill: SkillRef | None = None,
) -> OpenedRun | InputQueuedData | str | None:
    """Commit the queued inputs (then `content`, from `skill` when a skill input) as user messages and open a turn
    run.

    When another live process runs the session, `content` is queued instead (as `queue_input` answers; with no
    content nothing happens and the answer is None). None for an unknown session.
    """
    if q.get_session(conn, session_id) is None:
        return None
    out: list[Broadcast] = []
    try:
        orphan_done = orphans.settle_open_run(conn, ownership, session_id)
    except RunOwnedElsewhere:
        return None if content is None else queue_input(conn, session_id, content, skill)
    if orphan_done is not None:
        out.append(("run.done", orphan_done))
    now = now_ms()
    inputs = [_pending(payload) for payload in q.list_pending(conn, session_id)]
    for input_id, _, _ in inputs:
        q.delete_pending(conn, session_id, input_id)
    if content is not None:
        inputs.append((q.bump_counter(conn, session_id, "input_id_high"), content, skill))
    for input_id, parts, ran in inputs:
        message = UserMessage(
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
    rec = q.get_session(conn, session_id)
    assert rec is not None
    run_id = q.bump_counter(conn, session_id, "run_id_high")
    q.insert_run(conn, session_id, run_id, "turn", rec.session.config_rev, now)
    started, run = _start(conn, rec.session, run_id, "turn", None, now)
    out.append(("run.started", started))
    fresh = q.get_session(conn, session_id)
    assert fresh is not None
    return out, inputs[-1][0], fresh.session, run


def _pending(payload: str) -> tuple[int, list[ContentPart], SkillRef | None]:
    item = QUEUED.validate_json(payload)
    skill = json.loads(payload).get(_SKILL_KEY)
    return item.input_id, item.content, SkillRef.model_validate(skill) if skill is not None else None


def open_compaction(
    conn: sqlite3.Connection, ownership: Ownership, sid: str, reserved: int | None
) -> tuple[RunStartedData, Session, ActiveRun] | None:
    """Open a manual compaction run (the reserved run id, when it was queued): marker, row, `run.started`.

    Raises:
        RunOwnedElsewhere: another live process runs the session (an orphan's run is ended first instead).
    """
    if q.get_session(conn, sid) is None:
        return None
    orphans.settle_open_run(conn, ownership, sid)
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


def reserve_compaction(conn: sqlite3.Connection, sid: str) -> int | None:
    """Reserve the run id of a compaction queued behind the active run (a row that has not started)."""
    rec = q.get_session(conn, sid)
    if rec is None:
        return None
    run_id = q.bump_counter(conn, sid, "run_id_high")
    q.insert_run(conn, sid, run_id, "compaction", rec.session.config_rev, None)
    return run_id


def drop_reserved(conn: sqlite3.Connection, sid: str, run_id: int) -> RunDoneData:
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


def recover_reserved(conn: sqlite3.Connection, ownership: Ownership) -> list[RunDoneData]:
    """A compaction still queued when its process stopped (its owner is gone) is canceled: it never started."""
    return [drop_reserved(conn, sid, run_id) for sid, run_id in ownership.orphaned_reserved_runs(conn)]


def _start(
    conn: sqlite3.Connection, s: Session, run_id: int, kind: RunKind, reason: Literal["auto", "manual"] | None, now: int
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


def _canceled(session_id: str, input_id: int) -> Callable[[int], InputCanceledData]:
    return lambda seq: InputCanceledData(session_id=session_id, seq=seq, input_id=input_id)


def _committed(session_id: str, message: UserMessage) -> Callable[[int], MessageCommittedData]:
    return lambda seq: MessageCommittedData(session_id=session_id, seq=seq, message=message)
