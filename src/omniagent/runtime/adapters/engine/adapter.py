"""The adapter for `omniagent`, our own engine, driven in process (docs/architecture.md, "The engine as an agent").

`connect` leases the event loop's one Engine (`engine_host`), opens an engine session (`engine_open`: new,
resumed by id, or forked when the engine can), subscribes to the engine's broadcasts, and yields a driver that
turns commands into Engine calls and this session's broadcasts into driver events (`engine_translate`). Session
facts and options are `engine_info`'s. Turn rules are the session loop's: this module never decides when a turn
starts or ends.

Broadcasts are delivered synchronously and must never block the engine, so the subscriber only appends to an
outbox; a pump task carries it into the bounded `EventSink` (the engine cannot be slowed down, as with `omniagent
rpc`, whose writer queues too).

Subagents (the `Subagents` capability): the session's `spawn_agent` calls are `Subagent` tools, and each child
session (and its children) is translated by a `Translator` of its own, its events nested under the call that
spawned it (`parent_tool_id`); the child's report settles that call. A turn ends (`TurnStopped`) once the
session's tree has settled: the reports start the session's next runs inside the same turn. Cancel stops the
whole tree.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass

from omniagent.engine.engine import Engine
from omniagent.engine.errors import EngineError
from omniagent.engine.interactions.permissions import Decision
from omniagent.protocols.sidecar.agents import AgentInstallation, ConfigValue
from omniagent.protocols.sidecar.base import Diagnostic, DiagnosticLevel
from omniagent.protocols.sidecar.commands import PermissionAnswer, QuestionsAnswer, RollbackScope
from omniagent.protocols.sidecar.events import (
    Cancelled,
    Completed,
    ContextCompacted,
    ContextUsage,
    DiagnosticEvent,
    Failed,
    PermissionChoice,
    StopReason,
)
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.content import ContentText, Input, InputContent, InputSkill
from omniagent.protocols.yuke.inputs import ChildReport, InputQueuedData
from omniagent.protocols.yuke.messages import Message, UserMessage
from omniagent.protocols.yuke.runs import RunDoneData, RunOutcomeFailed
from omniagent.protocols.yuke.sessions import (
    OriginChild,
    SendInputQueued,
    Session,
    SessionCancelInputParams,
    SessionCompactParams,
    SessionCompactResult,
    SessionRemoveParams,
    SessionRewindParams,
    SessionSummaryChangedData,
)
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.acp.prompt import prompt_text
from omniagent.runtime.adapters.engine import info
from omniagent.runtime.adapters.engine import launch as engine_open
from omniagent.runtime.adapters.engine.host import engine_host
from omniagent.runtime.adapters.engine.translate import Translator, interaction_of, reply_of, tool_id
from omniagent.runtime.errors import ResumeFailed, SpawnFailed

log = logging.getLogger(__name__)

# How the session ends when the engine stops under it (a store failure; never a normal close).
ENGINE_STOPPED = "engine stopped"
_DECISIONS = {
    PermissionChoice.ALLOW_ONCE: Decision.ALLOW_ONCE,
    PermissionChoice.ALLOW_ALWAYS: Decision.ALLOW_ALWAYS,
}


class EngineAdapter:
    """Drives the in-process engine, one engine session per runtime session."""

    buffer = d.ADAPTER_EVENT_BUFFER

    def __init__(self, installation: AgentInstallation) -> None:
        self.installation = installation

    @asynccontextmanager
    async def connect(self, request: d.ConnectRequest, events: d.EventSink) -> AsyncIterator[d.Driver]:
        servers = engine_open.mcp_servers(request)
        async with AsyncExitStack() as stack:
            try:
                engine, ended = await stack.enter_async_context(engine_host().lease())
            except Exception as exc:  # the store could not be opened: nothing else can fail here
                raise SpawnFailed(f"the engine could not start: {exc}") from exc
            driver = _EngineDriver(engine, request, events)
            session = await driver.open_session()
            # The session's MCP servers start with its first turn and stop when it closes here.
            await engine.mcp.attach(session.id, servers)
            stack.push_async_callback(engine.mcp.detach, session.id)
            stack.callback(engine.broadcaster.subscribe(driver.on_broadcast))
            group = await stack.enter_async_context(asyncio.TaskGroup())
            driver.group = group
            group.create_task(driver.run(ended))
            try:
                yield driver
            finally:
                driver.stop()


@dataclass(slots=True)
class _Child:
    """A child session below this driver's session: its translator, and the `spawn_agent` call it nests under
    (a call of `parent`'s session, or of this driver's own session when `parent` is None)."""

    translator: Translator
    parent: _Child | None
    site: tuple[int, int]  # the call's message and part
    parent_tool_id: str


# What a child's events must not change for the session that shows them: its context gauge is the session's own.
_SESSION_ONLY = (ContextUsage, ContextCompacted)


class _EngineDriver:
    def __init__(self, engine: Engine, request: d.ConnectRequest, events: d.EventSink) -> None:
        self._engine = engine
        self._request = request
        self._events = events
        self.group: asyncio.TaskGroup | None = None
        self._commands: asyncio.Queue[d.DriverCommand | None] = asyncio.Queue()
        self._outbox: deque[d.DriverEvent] = deque()
        self._wake = asyncio.Event()
        self._session: Session | None = None
        self._translator = Translator("", "", engine.interactions.get)
        self._info: d.DriverInfo | None = None
        self._awaiting_ack = False  # a StartTurn was sent; its run has not started yet
        self._queued_input: int | None = None  # the input of that StartTurn, when the engine queued it
        self._compaction_after: int | None = None  # a Compact the engine queued: the run id it reserved
        self._closing = False
        self._children: dict[str, _Child] = {}
        self._last_stop: StopReason = Completed()
        self._canceled = False  # Cancel asked: the turn ends Cancelled once the tree settles
        self._settling: asyncio.Task[None] | None = None  # waits for the tree before ending the turn

    @property
    def info(self) -> d.DriverInfo:
        assert self._info is not None, "the session is not open"
        return self._info

    def send(self, command: d.DriverCommand) -> None:
        self._commands.put_nowait(command)

    def stop(self) -> None:
        self._commands.put_nowait(None)

    async def open_session(self) -> Session:
        """Open the engine session (`engine_open`) and return it. Raises what `connect` may raise."""
        describe = lambda session: info.session_info(self._engine, session).details  # noqa: E731
        session = await engine_open.open_session(self._engine, self._request, describe)
        await self._engine.skills.catalog(session.id, session.root)  # its slash commands, in the info built next
        self._set_session(session)
        return session

    # --- commands ------------------------------------------------------------------------------------------

    async def run(self, ended: asyncio.Event) -> None:
        assert self.group is not None
        pump = self.group.create_task(self._pump())
        watcher = self.group.create_task(self._watch(ended))
        try:
            while (command := await self._commands.get()) is not None:
                if isinstance(command, d.Close):
                    break
                await self._handle(command)
        finally:
            self._closing = True
            watcher.cancel()
            if self._settling is not None:
                self._settling.cancel()
            if not ended.is_set():
                await self._cancel_run()  # nobody will read this session's run any more
                await self._forget_if_unused()
            self._wake.set()
            await pump
            self._events.close()

    async def _handle(self, command: d.DriverCommand) -> None:
        if isinstance(command, d.StartTurn):
            await self._start(command.input)
        elif isinstance(command, d.AnswerRequest):
            self._answer(command.request_id, command.answer)
        elif isinstance(command, d.Cancel):
            await self._cancel()
        elif isinstance(command, d.Configure):
            await self._configure(command.option, command.value)
        elif isinstance(command, d.Steer):
            self._push(d.SteerResult(accepted=False))
        elif isinstance(command, d.Rollback):
            await self._rollback(command.turns, command.scope)
        elif isinstance(command, d.Compact):
            await self._compact()

    async def _start(self, prompt: d.PromptInput) -> None:
        # TurnAck goes out on this session's `run.started` (see on_broadcast), which the engine emits before
        # `send` returns: in order with the run's own broadcasts, after any left from an older run.
        self._awaiting_ack, self._queued_input = True, None
        text = prompt_text(prompt)
        skill = self._engine.skills.known(self._session_id).command(text)  # a slash command runs its skill
        content: Input = InputSkill(skill=skill) if skill else InputContent(content=[ContentText(text=text)])
        try:
            result = await self._engine.inputs.send(self._session_id, content)
        except EngineError as exc:
            self._awaiting_ack = False
            self._push(d.TurnAck())
            self._push(d.TurnStopped(Failed(message=exc.message)))
            return
        if isinstance(result, SendInputQueued) and self._awaiting_ack:
            self._queued_input = result.input_id  # a run is still ending: ours starts right after it

    async def _compact(self) -> None:
        """`session.compact`, when the engine serves it (Compact is advertised only then); the loop already opened
        the agent-originated turn, which the compaction run's `run.done` ends. Its checkpoint's commit reports
        `ContextCompacted`; a skipped compaction (nothing old enough to summarise) just completes."""
        problem = "compaction is not supported by the engine yet"
        if self._engine.serves("session.compact"):
            try:
                result = await self._engine.handle("session.compact", SessionCompactParams(session_id=self._session_id))
            except EngineError as exc:
                problem = exc.message
            else:
                if isinstance(result, SessionCompactResult) and result.status == "queued":
                    self._compaction_after = result.run_id  # a run is still ending: its run.done is not ours
                return
        self._warn(problem)
        self._push(d.TurnStopped(Failed(message=problem)))

    async def _rollback(self, turns: int, scope: RollbackScope) -> None:
        """`session.rewind` before the `turns`-th last prompt: it and everything after leave the conversation, and
        with `ConversationAndFiles` the files the engine's tools changed since come back as they were."""
        try:
            before = _prompt_ids_back(await self._engine.sessions.conversation(self._session_id), turns)
        except EngineError as exc:
            self._warn(f"the engine refused the rollback: {exc.message}")
            return
        if len(before) < turns:
            self._warn(f"cannot roll back {turns} turn(s): the session has {len(before)}")
            return
        files = scope is RollbackScope.CONVERSATION_AND_FILES
        params = SessionRewindParams(session_id=self._session_id, before_message_id=before[-1], restore_files=files)
        try:
            await self._engine.sessions.rewind(params)
        except EngineError as exc:
            self._warn(f"the engine refused the rollback: {exc.message}")

    def _answer(self, request_id: str, answer: object) -> None:
        interaction = interaction_of(request_id)
        if interaction is None:
            return
        with suppress(EngineError):  # answered meanwhile: the run was cancelled
            if isinstance(answer, PermissionAnswer):
                self._engine.permissions.answer(interaction, _DECISIONS.get(answer.choice, Decision.REJECT))
            elif isinstance(answer, QuestionsAnswer) and (pending := self._engine.questions.pending(interaction)):
                self._engine.questions.answer(interaction, reply_of(pending.question, answer))

    async def _cancel(self) -> None:
        if self._awaiting_ack and self._queued_input is not None:
            # Our input waits behind another run: withdraw it; the turn never started in the engine.
            params = SessionCancelInputParams(session_id=self._session_id, input_id=self._queued_input)
            with suppress(EngineError):
                await self._engine.inputs.cancel_input(params)
            self._awaiting_ack, self._queued_input = False, None
            self._push(d.TurnAck())
            self._push(d.TurnStopped(Cancelled()))
            return
        await self._cancel_run()

    async def _forget_if_unused(self) -> None:
        """Remove a session this open created and nobody prompted (a `probe`, an open then close): it holds
        nothing to resume, and would only clutter the engine's session list."""
        if self._session is None or self._request.resume is not None or self._request.fork is not None:
            return
        with suppress(ResumeFailed, EngineError):
            if (await engine_open.existing(self._engine, self._session_id)).message_count == 0:
                await self._engine.sessions.remove(SessionRemoveParams(session_id=self._session_id))

    async def _cancel_run(self) -> None:
        """Stop the session's run and its children's; the turn then ends Cancelled."""
        if self._session is not None and not await self._engine.children.settled(self._session_id):
            self._canceled = True
            with suppress(EngineError):  # the runs ended meanwhile; their run.done say how
                await self._engine.children.stop_tree(self._session_id)

    async def _configure(self, option: str, value: ConfigValue) -> None:
        assert self._session is not None
        self._session, problem = await engine_open.set_option(self._engine, self._session, option, value)
        if problem is not None:
            self._warn(f"agent rejected configure `{option}`: {problem}")
        self._refresh(announce=True)

    # --- from the engine -----------------------------------------------------------------------------------

    def on_broadcast(self, name: str, data: YukeModel) -> None:
        """The broadcaster subscriber: synchronous, never blocking, never raising into the engine."""
        try:
            self._route(name, data)
        except Exception:
            log.exception("engine adapter: could not translate %s", name)

    def _route(self, name: str, data: YukeModel) -> None:
        if self._closing:
            return
        if isinstance(data, SessionSummaryChangedData):
            if data.session.id == self._session_id:
                self._session = data.session
                self._refresh(announce=True)
            else:
                self._adopt(data.session)
            return
        sid = getattr(data, "session_id", None)
        if isinstance(sid, str) and sid in self._children:
            if name == "session.removed":
                del self._children[sid]
            else:
                self._child(self._children[sid], name, data)
            return
        if sid != self._session_id:
            return
        self._reported(None, data)
        if isinstance(data, RunDoneData) and self._compaction_after is not None:
            if data.run_id < self._compaction_after:
                return  # the run our compaction waited behind: the compact turn goes on
            self._compaction_after = None
        if name == "run.started" and self._awaiting_ack:
            self._awaiting_ack, self._queued_input = False, None
            self._push(d.TurnAck())
        else:
            for event in self._translator.map(name, data):
                if isinstance(event, d.TurnStopped):
                    self._stop_when_settled(event.stop)
                else:
                    self._push(event)
            failed = data.outcome if isinstance(data, RunDoneData) else None
            if isinstance(failed, RunOutcomeFailed) and failed.code == "auth":
                # The provider refused the key: the session needs a login again.
                provider = self._session_model.partition("/")[0]
                catalog = self._engine.routes.catalog
                rejected = info.refused_credential(catalog, provider)
                self._push(d.AuthLost(info.login_methods(catalog, refused=provider), rejected=rejected))

    # --- child sessions ------------------------------------------------------------------------------------

    def _adopt(self, session: Session) -> None:
        """Follow a new child of this session (or of a followed child)."""
        origin = session.origin
        if session.id in self._children or not isinstance(origin, OriginChild) or self._session is None:
            return
        parent = self._children.get(origin.parent_id)
        if parent is None and origin.parent_id != self._session_id:
            return
        above = parent.translator if parent is not None else self._translator
        site = (origin.parent_message_id, origin.parent_part_id)
        translator = Translator(
            session.id, session.root, self._engine.interactions.get, prefix=f"{above.prefix}{session.name}/"
        )
        self._children[session.id] = _Child(translator, parent, site, above.prefix + tool_id(*site))

    def _child(self, child: _Child, name: str, data: YukeModel) -> None:
        self._nested(child, child.translator.map(name, data))
        self._reported(child, data)

    def _reported(self, owner: _Child | None, data: YukeModel) -> None:
        """A report queued into `owner`'s session (None: this session) settles the call that spawned its child."""
        if not isinstance(data, InputQueuedData) or not isinstance(data.input.source, ChildReport):
            return
        source = data.input.source
        child = self._children.get(source.session_id)
        if child is None or child.parent is not owner:
            return
        text = "".join(p.text for p in data.input.content if isinstance(p, ContentText))
        translator = owner.translator if owner is not None else self._translator
        self._nested(owner, translator.agent_done(*child.site, source.outcome, text))

    def _nested(self, child: _Child | None, events: list[d.DriverEvent]) -> None:
        """Push a child's events under its call (this session's own events go through `_route`)."""
        for event in events:
            if child is None:
                self._push(event)
            elif isinstance(event, d.AdapterEvent) and not isinstance(event.kind, _SESSION_ONLY):
                self._push(d.AdapterEvent(event.kind, parent_tool_id=child.parent_tool_id, extensions=event.extensions))

    def _stop_when_settled(self, stop: StopReason) -> None:
        """End the turn with `stop` once the session's tree has settled (a newer run's end replaces it)."""
        self._last_stop = stop
        if self._settling is not None:
            self._settling.cancel()
        assert self.group is not None
        self._settling = self.group.create_task(self._settle())

    async def _settle(self) -> None:
        await self._engine.children.wait_settled(self._session_id)
        if not self._engine.live.is_busy(self._session_id):
            self._settling = None
            stop, self._canceled = (Cancelled() if self._canceled else self._last_stop), False
            self._push(d.TurnStopped(stop))

    def _set_session(self, session: Session) -> None:
        self._session = session
        self._translator = Translator(session.id, session.root, self._engine.interactions.get)
        self._refresh(announce=False)

    def _refresh(self, *, announce: bool) -> None:
        """Rebuild the info from the session; tell the loop when it changed."""
        assert self._session is not None
        fresh = info.session_info(self._engine, self._session)
        self._translator.window_tokens = info.context_window(self._engine, self._session.model)
        changed, self._info = fresh != self._info, fresh
        if announce and changed:
            self._push(d.InfoChanged(fresh))

    # --- plumbing ------------------------------------------------------------------------------------------

    @property
    def _session_model(self) -> str:
        assert self._session is not None
        return self._session.model

    @property
    def _session_id(self) -> str:
        assert self._session is not None
        return self._session.id

    def _push(self, event: d.DriverEvent) -> None:
        self._outbox.append(event)
        self._wake.set()

    def _warn(self, message: str) -> None:
        diagnostic = Diagnostic(level=DiagnosticLevel.WARNING, message=message)
        self._push(d.AdapterEvent(DiagnosticEvent(diagnostic=diagnostic)))

    async def _pump(self) -> None:
        """Carry the outbox into the event sink, in order; ends once closing and drained."""
        while True:
            while self._outbox:
                await self._events.send(self._outbox.popleft())
            if self._closing:
                return
            self._wake.clear()
            await self._wake.wait()

    async def _watch(self, ended: asyncio.Event) -> None:
        await ended.wait()
        if not self._closing:
            self._push(d.Exited(ENGINE_STOPPED, "the in-process engine stopped"))
            self.stop()


def _prompt_ids_back(messages: list[Message], count: int) -> list[int]:
    """The ids of the last `count` prompts (user messages a person sent), newest first; fewer when there are fewer."""
    return [m.id for m in reversed(messages) if isinstance(m, UserMessage) and m.source is None][:count]
