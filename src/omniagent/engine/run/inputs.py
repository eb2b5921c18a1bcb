"""Admission: send input (start a run or queue it), compact, cancel input, list the queue, cancel a run; run start
and end.

A session has at most one open run. Input sent meanwhile is durably queued; when the run ends the whole queue
drains into one new turn (its user messages committed consecutively). A compaction asked for meanwhile is reserved
(`pending_compaction`) and runs first when the run ends. Admission and run transitions of one
session hold that session's lock, so a run ending never races a request on the same session.

Child sessions add two rules (docs/engine.md "Child sessions"): a child's turn opens only while its tree has
fewer than `ChildLimits.max_concurrent` active children (else its input waits, `concurrency_limit`), and after a
run of a tree ends the tree's waiting sessions are started (`RunTree.run_closed`, the child machinery attached
after both exist).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from omniagent.engine.errors import EngineError
from omniagent.engine.live import ActiveRun, LiveSession, LiveSessions
from omniagent.engine.run import executor, orphans
from omniagent.engine.run import rows as run_rows
from omniagent.engine.run.context import RunDeps
from omniagent.engine.skills import prompt as skill_prompt
from omniagent.engine.store import Store
from omniagent.engine.store import queries as q
from omniagent.engine.store.connection import Connection
from omniagent.engine.store.journal import Broadcast
from omniagent.engine.tools import AgentControl
from omniagent.protocols.yuke.activity import ActivityIdle
from omniagent.protocols.yuke.content import ContentPart, ContentText, Input, InputContent, SkillRef
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.inputs import InputCanceledData, InputQueuedData, InputSource
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


class RunTree(Protocol):
    """What admission needs of the child-session machinery (`children.tree.Children`)."""

    def control(self, session_id: str, message_id: int, part_id: int) -> AgentControl:
        """The agent tools' capability at one tool site of the session."""
        ...

    def run_closing(self, session_id: str) -> None:
        """A run of the session is about to end (its tree is not settled until `run_closed`)."""

    async def run_closed(self, session_id: str, *, wake: bool) -> None:
        """The run's end is recorded; with `wake` (not an engine shutdown), start what waits in its tree."""


class Inputs:
    """The input and run admission of every session of one engine.

    Built with the store, the live sessions (state, locks, broadcasts), the task group runs live in, and what
    each run loop needs (`RunDeps`); the child machinery is attached afterwards (`attach`).
    """

    def __init__(self, store: Store, sessions: LiveSessions, tasks: asyncio.TaskGroup, deps: RunDeps) -> None:
        self._store = store
        self._sessions = sessions
        self._tasks = tasks
        self._deps = deps
        self._limit = deps.child_limits.max_concurrent
        self._tree: RunTree | None = None

    def attach(self, tree: RunTree) -> None:
        """Give runs the agent tools and wake trees after runs end (the engine attaches its `Children`)."""
        self._tree = tree

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
            record_ = await self._store.query(q.get_session, session_id)
            if record_ is None:
                raise EngineError.unknown_session()
            root = record_.session.root
        skill = (await self._deps.skills.catalog(session_id, root)).require(ref.name)
        return [ContentText(text=skill_prompt.invocation(skill, ref.arguments))], ref

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

    async def send(
        self, session_id: str, input_: Input, source: InputSource | None = None
    ) -> SendInputStarted | SendInputQueued:
        """Start a turn with `input_` on an idle session, or queue it behind the active run (or, for a child,
        until its tree has room). `source` is set by the engine only (a parent's instruction)."""
        return (await self.send_with_summary(session_id, input_, source))[0]

    async def send_with_summary(
        self, session_id: str, input_: Input, source: InputSource | None = None
    ) -> tuple[SendInputStarted | SendInputQueued, Session | None]:
        """`send`, plus the session summary right after a turn opened (None when queued)."""
        content, skill = await self.prepare(session_id, input_)
        new = (content, source, skill)
        async with self._lock(session_id):
            live = self._sessions.get(session_id)
            result: run_rows.Opened | run_rows.Queued | str | None
            if live.run is None:
                result = await self._open_input_run(live, new)
            else:
                result = await self._store.write(run_rows.queue_input, session_id, new, self._limit)
            if isinstance(result, run_rows.Opened):
                run_id, capacity = result.run.run_id, result.capacity
                return SendInputStarted(input_id=result.input_id, run_id=run_id, capacity=capacity), result.session
            if result is None or result == "unknown":
                raise EngineError.unknown_session()
            if not isinstance(result, run_rows.Queued):
                raise EngineError(ErrorCode.QUEUE_FULL, "the input queue is full")
            self._emit_all(result.before)
            self._emit_queued(result.data)
            input_id = result.data.input.input_id
            return SendInputQueued(input_id=input_id, reason=result.reason, capacity=result.capacity), None

    async def drain(self, session_id: str) -> bool:
        """Start a turn with the session's queued inputs, when it is idle here and may run (a child waits while
        its tree is full); whether one started."""
        async with self._lock(session_id):
            live = self._sessions.get(session_id)
            if live.run is not None:
                return False
            return isinstance(await self._open_input_run(live, None), run_rows.Opened)

    async def compact(self, params: SessionCompactParams) -> SessionCompactResult:
        """session.compact: start a compaction run on an idle session, or reserve one that starts when the active
        run ends (answered `queued`; asking again while it waits answers the same run)."""
        sid = params.session_id
        async with self._lock(sid):
            if await self._store.query(q.get_session, sid) is None:
                raise EngineError.unknown_session()
            live = self._sessions.get(sid)
            if live.run is None:
                run = await self._open_compaction(live, None)
                return SessionCompactResult(status="started", run_id=run.run_id)
            if live.pending_compaction is None:
                reserved = await self._store.write(run_rows.reserve_compaction, sid)
                if reserved is None:
                    raise EngineError.unknown_session()
                live.pending_compaction = reserved
                self._sessions.activity_changed(live)
            return SessionCompactResult(status="queued", run_id=live.pending_compaction)

    async def cancel_input(self, params: SessionCancelInputParams) -> SessionCancelInputResult:
        """session.cancel_input: drop one queued input (never a report or notice the engine queued)."""
        async with self._lock(params.session_id):
            data = await self._store.write(run_rows.cancel_inputs, params.session_id, [params.input_id])
            if data is None:
                raise EngineError.unknown_session()
            if data == "protected":
                raise EngineError.bad_request("engine reports and notices cannot be canceled")
            if not data[0]:
                raise EngineError(ErrorCode.UNKNOWN_INPUT, "unknown input")
            self._emit_canceled(params.session_id, data)
        await self._wake(params.session_id, data[1])
        return SessionCancelInputResult(canceled_input=params.input_id)

    async def queue(self, params: SessionQueueParams) -> SessionQueueResult:
        """session.queue: the durable queue, oldest first."""

        def txn(conn: Connection) -> list[str] | None:
            if q.get_session(conn, params.session_id) is None:
                return None
            return q.list_pending(conn, params.session_id)

        payloads = await self._store.read(txn)
        if payloads is None:
            raise EngineError.unknown_session()
        return SessionQueueResult(items=[run_rows.queued_input(p) for p in payloads])

    async def cancel_run(self, params: SessionCancelRunParams) -> SessionCancelRunResult:
        """session.cancel_run: cancel the active run (its run.done follows), optionally clearing the queue (but
        for the reports and notices the engine queued, which stay)."""
        notices: list[Broadcast] = []
        async with self._lock(params.session_id):
            exists = await self._store.query(q.get_session, params.session_id)
            if exists is None:
                raise EngineError.unknown_session()
            live = self._sessions.get(params.session_id)
            run = live.run
            if params.run_id is not None and (run is None or run.run_id != params.run_id):
                raise EngineError(ErrorCode.RUN_MISMATCH, "the run is not the active run")
            cleared: list[int] = []
            compaction = live.pending_compaction if params.clear_queue else None
            if compaction is not None:
                dropped = await self._store.write(run_rows.drop_reserved, params.session_id, compaction)
                self._sessions.emit("run.done", dropped)
                live.pending_compaction = None
                self._sessions.activity_changed(live)
            if params.clear_queue:
                data = await self._store.write(run_rows.cancel_inputs, params.session_id, None)
                if isinstance(data, tuple) and data[0]:
                    self._emit_canceled(params.session_id, data)
                    cleared, notices = [d.input_id for d in data[0]], data[1]
            if run is not None:
                self.interrupt(run, "canceled")
        if run is None:  # with a run, the notice waits for the run's end like any input
            await self._wake(params.session_id, notices)
        return SessionCancelRunResult(
            canceled_run=run.run_id if run else None, cleared_inputs=cleared, cleared_compaction=compaction
        )

    def _emit_canceled(self, session_id: str, data: tuple[list[InputCanceledData], list[Broadcast]]) -> None:
        live = self._sessions.get(session_id)
        canceled, notices = data
        for d in canceled:
            self._sessions.emit("input.canceled", d)
        live.queued = max(0, live.queued - len(canceled))
        self._sessions.activity_changed(live)
        self._emit_all(notices)

    def _emit_all(self, broadcasts: list[Broadcast]) -> None:
        """Emit what a transaction journaled; an input queued into another session (a child's report, say)
        counts in that session's live queue."""
        for name, data in broadcasts:
            if isinstance(data, InputQueuedData):
                self._emit_queued(data)
            else:
                self._sessions.emit(name, data)

    def _emit_queued(self, data: InputQueuedData) -> None:
        self._sessions.emit("input.queued", data)
        live = self._sessions.find(data.session_id)
        if live is not None:
            live.queued += 1
            self._sessions.activity_changed(live)

    async def _wake(self, session_id: str, notices: list[Broadcast]) -> None:
        """After a notice was queued into a parent outside any run's end: start what waits in the tree."""
        if notices and self._tree is not None:
            self._tree.run_closing(session_id)
            await self._tree.run_closed(session_id, wake=True)

    # Run lifecycle ------------------------------------------------------------------------------------------------

    def interrupt(self, run: ActiveRun, reason: str) -> None:
        """Ask a run to stop: the loop sees `cancel_reason` between steps; the current step is cancelled now."""
        if run.cancel_reason is None:
            run.cancel_reason = reason
        if run.step is not None:
            run.step.cancel()

    async def _open_input_run(
        self, live: LiveSession, new: run_rows.NewInput | None
    ) -> run_rows.Opened | run_rows.Queued | str | None:
        """Commit the queued inputs (then `new`) as user messages and open a turn run (`rows.open_input_run`).
        Caller holds the lock."""
        opened = await self._store.write(
            run_rows.open_input_run, self._store.ownership, live.session_id, new, self._limit
        )
        if not isinstance(opened, run_rows.Opened):
            return opened
        for broadcast in opened.broadcasts:
            if broadcast[0] == "run.started":
                self._sessions.summary_changed(opened.session)
            self._emit_all([broadcast])
        run = opened.run
        live.run = run
        live.queued = 0
        # The task's first step runs after the caller's response is queued: no await follows this line.
        run.task = self._tasks.create_task(self._drive(live, run, opened.session), name=f"run-{run.run_id}")
        return opened

    async def _open_compaction(self, live: LiveSession, reserved: int | None) -> ActiveRun:
        """Open a manual compaction run (the reserved one, when it was queued). Caller holds the lock."""
        opened = await self._store.write(run_rows.open_compaction, self._store.ownership, live.session_id, reserved)
        if opened is None:
            raise EngineError.unknown_session()
        started, session, run = opened
        self._sessions.emit("run.started", started)
        live.run, live.pending_compaction = run, None
        run.task = self._tasks.create_task(self._drive(live, run, session), name=f"run-{run.run_id}")
        return run

    async def _drive(self, live: LiveSession, run: ActiveRun, session: Session) -> None:
        agents = self._tree.control if self._tree is not None else None
        try:
            outcome = await executor.RunExecutor(self._deps, live, run, session, agents).execute()
        except orphans.RunLost:  # `_close_run` then writes nothing: the run.done is the other process's
            log.warning(
                "another process ended run %d of session %s while this one was away", run.run_id, live.session_id
            )
            outcome = RunOutcomeFailed(code="interrupted", message=orphans.ORPHAN_MESSAGE)
        except Exception as exc:  # a bug in the loop: the run still ends, recorded as internal
            log.error("run failed: %s: %s", type(exc).__name__, exc, exc_info=log.isEnabledFor(logging.DEBUG))
            outcome = RunOutcomeFailed(code="internal", message="the engine failed while running the turn")
        if self._tree is None:
            await self._close_run(live, run, outcome)
            return
        self._tree.run_closing(live.session_id)
        try:
            await self._close_run(live, run, outcome)
        finally:
            await self._tree.run_closed(live.session_id, wake=run.cancel_reason != "interrupted")

    async def _close_run(self, live: LiveSession, run: ActiveRun, outcome: RunOutcome) -> None:
        async with self._lock(live.session_id):
            # Nothing when another process already ended it (and journaled its run.done).
            self._emit_all(await self._store.write(orphans.end_own_run, live.session_id, run, outcome))
            live.run = None
            live.state = ActivityIdle()
            queued: int = await self._store.query(q.count_pending, live.session_id)
            # The engine stops (a reserved compaction is recovered at start), or the session is being removed
            # (`Children.retiring`): nothing of it starts now.
            if run.cancel_reason in ("interrupted", "removed"):
                self._sessions.activity_changed(live)
            elif live.pending_compaction is not None:
                await self._open_compaction(live, live.pending_compaction)
            elif not queued or not isinstance(await self._open_input_run(live, None), run_rows.Opened):
                self._sessions.activity_changed(live)

    async def recover(self) -> None:
        """End runs whose owner is gone (a crashed process, or one whose lease lapsed): failed `interrupted`, each
        with its run.done (and a child's report queued into its parent, which starts nothing by itself); another
        live process's runs are left alone (see `orphans.py`)."""
        store = self._store
        self._emit_all(await store.write(orphans.end_orphans, store.ownership))
        for done in await store.write(run_rows.recover_reserved, store.ownership):
            self._sessions.emit("run.done", done)
