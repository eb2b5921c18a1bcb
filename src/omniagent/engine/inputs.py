"""Admission: send input (start a run or queue it), compact, cancel input, list the queue, cancel a run; run start
and end.

A session has at most one open run. Input sent meanwhile is durably queued; when the run ends the whole queue
drains into one new turn (its user messages committed consecutively). A compaction asked for meanwhile is reserved
(`pending_compaction`) and runs first when the run ends. Admission and run transitions of one
session hold that session's lock, so a run ending never races a request on the same session.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3

from omniagent.engine import orphans, runrows, runs, skillprompt
from omniagent.engine.errors import EngineError
from omniagent.engine.live import ActiveRun, LiveSession, LiveSessions
from omniagent.engine.runcontext import RunDeps
from omniagent.engine.store import Store
from omniagent.engine.store import queries as q
from omniagent.protocols.yuke.activity import ActivityIdle
from omniagent.protocols.yuke.content import ContentPart, ContentText, Input, InputContent, SkillRef
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.inputs import InputCanceledData, InputQueuedData
from omniagent.protocols.yuke.runs import RunOutcome, RunOutcomeFailed
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

MAX_MESSAGE_BYTES = 1_048_576  # bytes of one message string (yuke limit)


class Inputs:
    """The input and run admission of every session of one engine.

    Built with the store, the live sessions (state, locks, broadcasts), the task group runs live in, and what
    each run loop needs (`RunDeps`).
    """

    def __init__(self, store: Store, sessions: LiveSessions, tasks: asyncio.TaskGroup, deps: RunDeps) -> None:
        self._store = store
        self._sessions = sessions
        self._tasks = tasks
        self._deps = deps

    def _lock(self, session_id: str) -> asyncio.Lock:
        return self._sessions.lock(session_id)

    async def prepare(
        self, session_id: str, input_: Input, root: str | None = None
    ) -> tuple[list[ContentPart], SkillRef | None]:
        """What an input commits: its own content (text only), or for a skill input the skill's instructions with
        its arguments and the skill it ran (one of the session's skills, else unknown_skill). `root` is the
        session's workspace when the caller knows it (else it is read from the store)."""
        if isinstance(input_, InputContent):
            return self.check_input(input_), None
        ref = input_.skill
        if len(ref.arguments.encode()) > MAX_MESSAGE_BYTES:
            raise EngineError.bad_request("the skill arguments exceed the message size limit")
        if root is None:
            record_ = await self._store.read(q.get_session, session_id)
            if record_ is None:
                raise EngineError.unknown_session()
            root = record_.session.root
        skill = (await self._deps.skills.catalog(session_id, root)).require(ref.name)
        return [ContentText(text=skillprompt.invocation(skill, ref.arguments))], ref

    def check_input(self, input_: InputContent) -> list[ContentPart]:
        """The content of an acceptable content input; media is refused."""
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
        content, skill = await self.prepare(session_id, input_)
        async with self._lock(session_id):
            live = self._sessions.get(session_id)
            queued: InputQueuedData | str
            if live.run is None:
                started = await self._open_input_run(live, content, skill)
                if started is None:
                    raise EngineError.unknown_session()
                if not isinstance(started, InputQueuedData | str):
                    input_id, run, session = started
                    return SendInputStarted(input_id=input_id, run_id=run.run_id), session
                queued = started  # another process runs the session: queued behind its run, which drains it
            else:
                queued = await self._store.write(runrows.queue_input, session_id, content, skill)
            if isinstance(queued, str):
                raise (
                    EngineError(ErrorCode.QUEUE_FULL, "the input queue is full")
                    if queued == "full"
                    else EngineError.unknown_session()
                )
            self._sessions.emit("input.queued", queued)
            live.queued += 1
            self._sessions.activity_changed(live)
            return SendInputQueued(input_id=queued.input.input_id, reason="session_busy"), None

    async def compact(self, params: SessionCompactParams) -> SessionCompactResult:
        """session.compact: start a compaction run on an idle session, or reserve one that starts when the active
        run ends (answered `queued`; asking again while it waits answers the same run)."""
        sid = params.session_id
        async with self._lock(sid):
            if await self._store.read(q.get_session, sid) is None:
                raise EngineError.unknown_session()
            live = self._sessions.get(sid)
            if live.run is None:
                run = await self._open_compaction(live, None)
                return SessionCompactResult(status="started", run_id=run.run_id)
            if live.pending_compaction is None:
                reserved = await self._store.write(runrows.reserve_compaction, sid)
                if reserved is None:
                    raise EngineError.unknown_session()
                live.pending_compaction = reserved
                self._sessions.activity_changed(live)
            return SessionCompactResult(status="queued", run_id=live.pending_compaction)

    async def cancel_input(self, params: SessionCancelInputParams) -> SessionCancelInputResult:
        """session.cancel_input: drop one queued input."""
        async with self._lock(params.session_id):
            data = await self._store.write(runrows.cancel_inputs, params.session_id, [params.input_id])
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

        payloads = await self._store.read(txn)
        if payloads is None:
            raise EngineError.unknown_session()
        return SessionQueueResult(items=[runrows.QUEUED.validate_json(p) for p in payloads])

    async def cancel_run(self, params: SessionCancelRunParams) -> SessionCancelRunResult:
        """session.cancel_run: cancel the active run (its run.done follows), optionally clearing the queue."""
        async with self._lock(params.session_id):
            exists = await self._store.read(q.get_session, params.session_id)
            if exists is None:
                raise EngineError.unknown_session()
            live = self._sessions.get(params.session_id)
            run = live.run
            if params.run_id is not None and (run is None or run.run_id != params.run_id):
                raise EngineError(ErrorCode.RUN_MISMATCH, "the run is not the active run")
            cleared: list[int] = []
            compaction = live.pending_compaction if params.clear_queue else None
            if compaction is not None:
                dropped = await self._store.write(runrows.drop_reserved, params.session_id, compaction)
                self._sessions.emit("run.done", dropped)
                live.pending_compaction = None
                self._sessions.activity_changed(live)
            if params.clear_queue:
                data = await self._store.write(runrows.cancel_inputs, params.session_id, None)
                if data:
                    self._emit_canceled(params.session_id, data)
                    cleared = [d.input_id for d in data]
            if run is not None:
                self.interrupt(run, "canceled")
        return SessionCancelRunResult(
            canceled_run=run.run_id if run else None, cleared_inputs=cleared, cleared_compaction=compaction
        )

    def _emit_canceled(self, session_id: str, data: list[InputCanceledData]) -> None:
        live = self._sessions.get(session_id)
        for d in data:
            self._sessions.emit("input.canceled", d)
        live.queued = max(0, live.queued - len(data))
        self._sessions.activity_changed(live)

    # Run lifecycle ------------------------------------------------------------------------------------------------

    def interrupt(self, run: ActiveRun, reason: str) -> None:
        """Ask a run to stop: the loop sees `cancel_reason` between steps; the current step is cancelled now."""
        if run.cancel_reason is None:
            run.cancel_reason = reason
        if run.step is not None:
            run.step.cancel()

    async def _open_input_run(
        self, live: LiveSession, content: list[ContentPart] | None, skill: SkillRef | None = None
    ) -> tuple[int, ActiveRun, Session] | InputQueuedData | str | None:
        """Commit the queued inputs (then `content`) as user messages and open a turn run (`runrows.open_input_run`).
        Caller holds the lock."""
        opened = await self._store.write(runrows.open_input_run, self._store.ownership, live.session_id, content, skill)
        if opened is None or isinstance(opened, InputQueuedData | str):
            return opened
        broadcasts, input_id, session, run = opened
        for name, data in broadcasts:
            if name == "run.started":
                self._sessions.summary_changed(session)
            self._sessions.emit(name, data)
        live.run = run
        live.queued = 0
        # The task's first step runs after the caller's response is queued: no await follows this line.
        run.task = self._tasks.create_task(self._drive(live, run, session), name=f"run-{run.run_id}")
        return input_id, run, session

    async def _open_compaction(self, live: LiveSession, reserved: int | None) -> ActiveRun:
        """Open a manual compaction run (the reserved one, when it was queued). Caller holds the lock."""
        opened = await self._store.write(runrows.open_compaction, self._store.ownership, live.session_id, reserved)
        if opened is None:
            raise EngineError.unknown_session()
        started, session, run = opened
        self._sessions.emit("run.started", started)
        live.run, live.pending_compaction = run, None
        run.task = self._tasks.create_task(self._drive(live, run, session), name=f"run-{run.run_id}")
        return run

    async def _drive(self, live: LiveSession, run: ActiveRun, session: Session) -> None:
        try:
            outcome = await runs.RunExecutor(self._deps, live, run, session).execute()
        except Exception as exc:  # a bug in the loop: the run still ends, recorded as internal
            log.error("run failed: %s: %s", type(exc).__name__, exc, exc_info=log.isEnabledFor(logging.DEBUG))
            outcome = RunOutcomeFailed(code="internal", message="the engine failed while running the turn")
        await self._close_run(live, run, outcome)

    async def _close_run(self, live: LiveSession, run: ActiveRun, outcome: RunOutcome) -> None:
        async with self._lock(live.session_id):
            done = await self._store.write(orphans.end_own_run, live.session_id, run, outcome)
            if done is not None:  # else another process already ended it (and journaled its run.done)
                self._sessions.emit("run.done", done)
            live.run = None
            live.state = ActivityIdle()
            queued: int = await self._store.read(q.count_pending, live.session_id)
            if run.cancel_reason == "interrupted":  # the engine stops: a reserved compaction is recovered at start
                self._sessions.activity_changed(live)
            elif live.pending_compaction is not None:
                await self._open_compaction(live, live.pending_compaction)
            elif queued:
                await self._open_input_run(live, None)
            else:
                self._sessions.activity_changed(live)

    async def recover(self) -> None:
        """End runs whose owner is gone (a crashed process, or one whose lease lapsed): failed `interrupted`, each
        with its run.done; another live process's runs are left alone (see `orphans.py`)."""
        store = self._store
        for done in await store.write(orphans.end_orphans, store.ownership):
            self._sessions.emit("run.done", done)
        for done in await store.write(runrows.recover_reserved, store.ownership):
            self._sessions.emit("run.done", done)
