"""Admission: send input (start a run or queue it), compact, cancel input, list the queue, cancel a run; run start
and end.

A session has at most one open run. Input sent meanwhile is durably queued; when the run ends the whole queue
drains into one new turn (its user messages committed consecutively). A compaction asked for meanwhile is reserved
(`pending_compaction`) and runs first when the run ends. Admission and run transitions of one
session hold that session's lock, so a run ending never races a request on the same session.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import TypeAdapter

from omniagent.engine import compactrun, orphans, runs
from omniagent.engine.errors import EngineError
from omniagent.engine.journal import Broadcast, now_ms, record
from omniagent.engine.live import ActiveRun, LiveSession
from omniagent.engine.orphans import RunOwnedElsewhere
from omniagent.engine.sessions import title_of
from omniagent.engine.store import queries as q
from omniagent.engine.store.ownership import Ownership
from omniagent.protocols.yuke.activity import ActivityIdle
from omniagent.protocols.yuke.content import ContentPart, ContentText, Input, InputContent
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.inputs import InputCanceledData, InputQueuedData, QueuedInput
from omniagent.protocols.yuke.messages import CreatedTime, MessageCommittedData, UserMessage
from omniagent.protocols.yuke.runs import (
    RunConfig,
    RunOutcome,
    RunOutcomeFailed,
    RunStartedData,
)
from omniagent.protocols.yuke.sessions import (
    SendInputQueued,
    SendInputStarted,
    Session,
    SessionCancelInputParams,
    SessionCancelInputResult,
    SessionCancelRunParams,
    SessionCancelRunResult,
    SessionCompactParams,
    SessionCompactResult,
    SessionQueueParams,
    SessionQueueResult,
    SessionSendInputParams,
)

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from omniagent.engine.engine import Engine

MAX_QUEUED = 128  # queued inputs per session (yuke limit)
MAX_MESSAGE_BYTES = 1_048_576  # bytes of one message string (yuke limit)

_QUEUED = TypeAdapter(QueuedInput)


class Inputs:
    """The input and run admission of every session of one engine."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._locks: dict[str, asyncio.Lock] = {}

    def _lock(self, session_id: str) -> asyncio.Lock:
        return self._locks.setdefault(session_id, asyncio.Lock())

    def check_input(self, input_: Input) -> list[ContentPart]:
        """The content of an acceptable input; skills and media are refused."""
        if not isinstance(input_, InputContent):
            raise EngineError(ErrorCode.UNKNOWN_SKILL, "skills are not supported")
        if not input_.content:
            raise EngineError.bad_request("the input has no content")
        for part in input_.content:
            if not isinstance(part, ContentText):
                raise EngineError.bad_request("media content is refused: no blob store exists yet")
            if len(part.text.encode()) > MAX_MESSAGE_BYTES:
                raise EngineError.bad_request("the text exceeds the message size limit")
        return list(input_.content)

    # Methods --------------------------------------------------------------------------------------------------------

    async def send_input(self, params: SessionSendInputParams) -> SendInputStarted | SendInputQueued:
        """session.send_input."""
        return await self.send(params.session_id, params.input)

    async def send(self, session_id: str, input_: Input) -> SendInputStarted | SendInputQueued:
        """Start a turn with `input_` on an idle session, or queue it behind the active run."""
        return (await self.send_with_summary(session_id, input_))[0]

    async def send_with_summary(
        self, session_id: str, input_: Input
    ) -> tuple[SendInputStarted | SendInputQueued, Session | None]:
        """`send`, plus the session summary right after a turn opened (None when queued)."""
        content = self.check_input(input_)
        engine = self._engine
        async with self._lock(session_id):
            live = engine.live_session(session_id)
            queued: InputQueuedData | str
            if live.run is None:
                started = await self._open_turn(live, content)
                if started is None:
                    raise EngineError.unknown_session()
                if not isinstance(started, InputQueuedData | str):
                    input_id, run, session = started
                    return SendInputStarted(input_id=input_id, run_id=run.run_id), session
                queued = started  # another process runs the session: queued behind its run, which drains it
            else:
                queued = await engine.store.write(_queue_input, session_id, content)
            if isinstance(queued, str):
                raise (
                    EngineError(ErrorCode.QUEUE_FULL, "the input queue is full")
                    if queued == "full"
                    else EngineError.unknown_session()
                )
            engine.broadcaster.emit("input.queued", queued)
            live.queued += 1
            engine.activity_changed(live)
            return SendInputQueued(input_id=queued.input.input_id, reason="session_busy"), None

    async def compact(self, params: SessionCompactParams) -> SessionCompactResult:
        """session.compact: start a compaction run on an idle session, or reserve one that starts when the active
        run ends (answered `queued`; asking again while it waits answers the same run)."""
        engine, sid = self._engine, params.session_id
        async with self._lock(sid):
            if await engine.store.read(q.get_session, sid) is None:
                raise EngineError.unknown_session()
            live = engine.live_session(sid)
            if live.run is None:
                run = await self._open_compaction(live, None)
                return SessionCompactResult(status="started", run_id=run.run_id)
            if live.pending_compaction is None:
                reserved = await engine.store.write(compactrun.reserve, sid)
                if reserved is None:
                    raise EngineError.unknown_session()
                live.pending_compaction = reserved
                engine.activity_changed(live)
            return SessionCompactResult(status="queued", run_id=live.pending_compaction)

    async def cancel_input(self, params: SessionCancelInputParams) -> SessionCancelInputResult:
        """session.cancel_input: drop one queued input."""
        engine = self._engine
        async with self._lock(params.session_id):
            data = await engine.store.write(_cancel_inputs, params.session_id, [params.input_id])
            if data is None:
                raise EngineError.unknown_session()
            if not data:
                raise EngineError(ErrorCode.UNKNOWN_INPUT, "unknown input")
            self._emit_canceled(params.session_id, data)
        return SessionCancelInputResult(canceled_input=params.input_id)

    async def queue(self, params: SessionQueueParams) -> SessionQueueResult:
        """session.queue: the durable queue, oldest first."""

        def txn(conn: sqlite3.Connection) -> list[str] | None:
            if q.get_session(conn, params.session_id) is None:
                return None
            return q.list_pending(conn, params.session_id)

        payloads = await self._engine.store.read(txn)
        if payloads is None:
            raise EngineError.unknown_session()
        return SessionQueueResult(items=[_QUEUED.validate_json(p) for p in payloads])

    async def cancel_run(self, params: SessionCancelRunParams) -> SessionCancelRunResult:
        """session.cancel_run: cancel the active run (its run.done follows), optionally clearing the queue."""
        engine = self._engine
        async with self._lock(params.session_id):
            exists = await engine.store.read(q.get_session, params.session_id)
            if exists is None:
                raise EngineError.unknown_session()
            live = engine.live_session(params.session_id)
            run = live.run
            if params.run_id is not None and (run is None or run.run_id != params.run_id):
                raise EngineError(ErrorCode.RUN_MISMATCH, "the run is not the active run")
            cleared: list[int] = []
            compaction = live.pending_compaction if params.clear_queue else None
            if compaction is not None:
                dropped = await engine.store.write(compactrun.drop_reserved, params.session_id, compaction)
                engine.broadcaster.emit("run.done", dropped)
                live.pending_compaction = None
                engine.activity_changed(live)
            if params.clear_queue:
                data = await engine.store.write(_cancel_inputs, params.session_id, None)
                if data:
                    self._emit_canceled(params.session_id, data)
                    cleared = [d.input_id for d in data]
            if run is not None:
                self.interrupt(run, "canceled")
        return SessionCancelRunResult(
            canceled_run=run.run_id if run else None, cleared_inputs=cleared, cleared_compaction=compaction
        )

    def _emit_canceled(self, session_id: str, data: list[InputCanceledData]) -> None:
        live = self._engine.live_session(session_id)
        for d in data:
            self._engine.broadcaster.emit("input.canceled", d)
        live.queued = max(0, live.queued - len(data))
        self._engine.activity_changed(live)

    # Run lifecycle ------------------------------------------------------------------------------------------------

    def interrupt(self, run: ActiveRun, reason: str) -> None:
        """Ask a run to stop: the loop sees `cancel_reason` between steps; the current step is cancelled now."""
        if run.cancel_reason is None:
            run.cancel_reason = reason
        if run.step is not None:
            run.step.cancel()

    async def _open_turn(
        self, live: LiveSession, content: list[ContentPart] | None
    ) -> tuple[int, ActiveRun, Session] | InputQueuedData | str | None:
        """Commit the queued inputs (then `content`) as user messages and open a turn run. Caller holds the lock.

        When another live process runs the session, `content` is queued instead (as `_queue_input` answers; with
        no content nothing happens and the answer is None)."""
        engine = self._engine
        opened = await engine.store.write(_open_turn, engine.store.ownership, live.session_id, content)
        if opened is None or isinstance(opened, InputQueuedData | str):
            return opened
        broadcasts, input_id, session, run = opened
        for name, data in broadcasts:
            if name == "run.started":
                engine.summary_changed(session)
            engine.broadcaster.emit(name, data)
        live.run = run
        live.queued = 0
        # The task's first step runs after the caller's response is queued: no await follows this line.
        run.task = engine.tasks.create_task(self._drive(live, run, session), name=f"run-{run.run_id}")
        return input_id, run, session

    async def _open_compaction(self, live: LiveSession, reserved: int | None) -> ActiveRun:
        """Open a manual compaction run (the reserved one, when it was queued). Caller holds the lock."""
        engine = self._engine
        opened = await engine.store.write(compactrun.open_run, engine.store.ownership, live.session_id, reserved)
        if opened is None:
            raise EngineError.unknown_session()
        started, session, run = opened
        engine.broadcaster.emit("run.started", started)
        live.run, live.pending_compaction = run, None
        run.task = engine.tasks.create_task(self._drive(live, run, session), name=f"run-{run.run_id}")
        return run

    async def _drive(self, live: LiveSession, run: ActiveRun, session: Session) -> None:
        try:
            outcome = await runs.RunLoop(self._engine, live, run, session).execute()
        except Exception as exc:  # a bug in the loop: the run still ends, recorded as internal
            log.error("run failed: %s: %s", type(exc).__name__, exc, exc_info=log.isEnabledFor(logging.DEBUG))
            outcome = RunOutcomeFailed(code="internal", message="the engine failed while running the turn")
        await self._close_run(live, run, outcome)

    async def _close_run(self, live: LiveSession, run: ActiveRun, outcome: RunOutcome) -> None:
        engine = self._engine
        async with self._lock(live.session_id):
            done = await engine.store.write(orphans.end_own_run, live.session_id, run, outcome)
            if done is not None:  # else another process already ended it (and journaled its run.done)
                engine.broadcaster.emit("run.done", done)
            live.run = None
            live.state = ActivityIdle()
            queued: int = await engine.store.read(q.count_pending, live.session_id)
            if run.cancel_reason == "interrupted":  # the engine stops: a reserved compaction is recovered at start
                engine.activity_changed(live)
            elif live.pending_compaction is not None:
                await self._open_compaction(live, live.pending_compaction)
            elif queued:
                await self._open_turn(live, None)
            else:
                engine.activity_changed(live)

    async def recover(self) -> None:
        """End runs whose owner is gone (a crashed process, or one whose lease lapsed): failed `interrupted`, each
        with its run.done; another live process's runs are left alone (see `orphans.py`)."""
        store = self._engine.store
        for done in await store.write(orphans.end_orphans, store.ownership):
            self._engine.broadcaster.emit("run.done", done)
        for done in await store.write(compactrun.recover_reserved, store.ownership):
            self._engine.broadcaster.emit("run.done", done)


# Transactions ---------------------------------------------------------------------------------------------------


def _queue_input(conn: sqlite3.Connection, session_id: str, content: list[ContentPart]) -> InputQueuedData | str:
    if q.get_session(conn, session_id) is None:
        return "unknown"
    if q.count_pending(conn, session_id) >= MAX_QUEUED:
        return "full"
    input_id = q.bump_counter(conn, session_id, "input_id_high")
    item = QueuedInput(input_id=input_id, content=content, queued_at_ms=now_ms())
    data = record(
        conn, session_id, "input.queued", lambda seq: InputQueuedData(session_id=session_id, seq=seq, input=item)
    )
    q.insert_pending(conn, session_id, input_id, data.seq, json.dumps(item.dump()))
    return data


def _cancel_inputs(conn: sqlite3.Connection, session_id: str, ids: list[int] | None) -> list[InputCanceledData] | None:
    if q.get_session(conn, session_id) is None:
        return None
    if ids is None:
        ids = [_QUEUED.validate_json(p).input_id for p in q.list_pending(conn, session_id)]
    out = []
    for input_id in ids:
        if q.delete_pending(conn, session_id, input_id):
            out.append(record(conn, session_id, "input.canceled", _canceled(session_id, input_id)))
    return out


def _canceled(session_id: str, input_id: int) -> Callable[[int], InputCanceledData]:
    return lambda seq: InputCanceledData(session_id=session_id, seq=seq, input_id=input_id)


def _committed(session_id: str, message: UserMessage) -> Callable[[int], MessageCommittedData]:
    return lambda seq: MessageCommittedData(session_id=session_id, seq=seq, message=message)


def _open_turn(
    conn: sqlite3.Connection, ownership: Ownership, session_id: str, content: list[ContentPart] | None
) -> tuple[list[Broadcast], int, Session, ActiveRun] | InputQueuedData | str | None:
    if q.get_session(conn, session_id) is None:
        return None
    out: list[Broadcast] = []
    try:
        orphan_done = orphans.settle_open_run(conn, ownership, session_id)
    except RunOwnedElsewhere:
        return None if content is None else _queue_input(conn, session_id, content)
    if orphan_done is not None:
        out.append(("run.done", orphan_done))
    rec = q.get_session(conn, session_id)
    assert rec is not None
    now = now_ms()
    inputs = [(item.input_id, item.content) for item in map(_QUEUED.validate_json, q.list_pending(conn, session_id))]
    for input_id, _ in inputs:
        q.delete_pending(conn, session_id, input_id)
    if content is not None:
        inputs.append((q.bump_counter(conn, session_id, "input_id_high"), content))
    for input_id, parts in inputs:
        message = UserMessage(
            id=q.bump_counter(conn, session_id, "message_id_high"),
            content=parts,
            input_id=input_id,
            time=CreatedTime(created_at_ms=now),
        )
        q.insert_message(conn, session_id, message.id, "user", None, None, json.dumps(message.dump()))
        text = next((p.text for p in parts if isinstance(p, ContentText)), "")
        q.note_message(conn, session_id, None, title_of(text) or None, now)
        committed = record(conn, session_id, "message.committed", _committed(session_id, message))
        out.append(("message.committed", committed))
    s = rec.session
    run_id = q.bump_counter(conn, session_id, "run_id_high")
    q.insert_run(conn, session_id, run_id, "turn", s.config_rev, now)
    q.set_open_run(conn, session_id, run_id, "turn", now)
    out.append(
        (
            "run.started",
            record(
                conn,
                session_id,
                "run.started",
                lambda seq: RunStartedData(
                    session_id=session_id,
                    seq=seq,
                    run_id=run_id,
                    kind="turn",
                    config_rev=s.config_rev,
                    started_at_ms=now,
                ),
            ),
        )
    )
    fresh = q.get_session(conn, session_id)
    assert fresh is not None
    config = RunConfig(config_rev=s.config_rev, model=s.model, reasoning=s.reasoning)
    return out, inputs[-1][0], fresh.session, ActiveRun(run_id=run_id, kind="turn", config=config, started_at_ms=now)
