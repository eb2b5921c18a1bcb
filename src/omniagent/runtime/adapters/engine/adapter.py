"""The adapter for `omniagent`, our own engine, driven in process (docs/architecture.md, "The engine as an agent").

`connect` leases the event loop's one Engine (`host.py`), opens an engine session (`launch.py`: new,
resumed by id, or forked when the engine can), subscribes to the engine's broadcasts, and yields a driver that
turns commands into Engine calls and this session's broadcasts into driver events (`translate.py`). Session
facts and options are `info.py`'s. Turn rules are the session loop's: this module never decides when a turn
starts or ends.

The session's events come from the engine's `Subscription` (routing, child sessions, the turn's acknowledgement
and its settled end are the engine's, shared with `omniagent acp`). They are delivered synchronously and must never
block the engine, so the subscriber only appends to an outbox; a pump task carries it into the bounded `EventSink`
(the engine cannot be slowed down, as with `omniagent rpc`, whose writer queues too).

Subagents (the `Subagents` capability): the session's `spawn_agent` calls are `Subagent` tools, and each child
session (a `Branch`) is translated by a `Translator` of its own, its events nested under the call that spawned it
(`parent_tool_id`); the child's report settles that call. `TurnEnded` (the session's tree has settled) becomes
`TurnStopped`. Cancel stops the whole tree.

History (the open option `history`, on a resumed or forked session): the stored conversation is read before the
session is subscribed to and sent as the driver's `History` from `connect` (translate.py `Translator.history`), so
it comes before any live event. A session resumed while a run of it is still going (in this process) may miss or
repeat what that run commits meanwhile; a session the hub resumes from its index has none.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, suppress

from omniagent.engine.api import (
    Branch,
    ChildFollowed,
    Committed,
    Decision,
    EngineApi,
    EngineError,
    RunEnded,
    SessionChanged,
    SessionEvent,
    SkillCatalog,
    Subscription,
    TurnEnded,
    TurnStarted,
)
from omniagent.protocols.sidecar.agents import AgentDetails, AgentInstallation, ConfigValue
from omniagent.protocols.sidecar.base import Diagnostic, DiagnosticLevel
from omniagent.protocols.sidecar.commands import PermissionAnswer, QuestionsAnswer, RollbackScope
from omniagent.protocols.sidecar.events import (
    Cancelled,
    ContextCompacted,
    ContextUsage,
    DiagnosticEvent,
    Failed,
    PermissionChoice,
)
from omniagent.protocols.yuke.content import ContentText, Input, InputContent, InputSkill
from omniagent.protocols.yuke.inputs import ChildReport
from omniagent.protocols.yuke.messages import AssistantMessage, Message, UserMessage
from omniagent.protocols.yuke.runs import RunOutcomeFailed
from omniagent.protocols.yuke.sessions import OriginChild, SendInputQueued, Session
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.acp.prompt import prompt_text
from omniagent.runtime.adapters.engine import info, launch
from omniagent.runtime.adapters.engine.host import engine_host
from omniagent.runtime.adapters.engine.translate import (
    Report,
    Translator,
    interaction_of,
    message_id,
    reply_of,
    stop_reason,
    tool_id,
)
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
        servers = launch.mcp_servers(request)
        async with AsyncExitStack() as stack:
            try:
                engine, ended = await stack.enter_async_context(engine_host().lease())
            except Exception as exc:  # the store could not be opened: nothing else can fail here
                raise SpawnFailed(f"the engine could not start: {exc}") from exc
            driver = _EngineDriver(engine, request, events)
            session = await driver.open_session()
            if request.history and (request.resume is not None or request.fork is not None):
                await events.send(d.History(await driver.history()))
            # The session's MCP servers start with its first turn and stop when it closes here (before the close
            # returns: `run`; here too for a driver that never ran).
            await engine.attach_mcp(session.id, servers)
            stack.push_async_callback(engine.detach_mcp, session.id)
            stack.callback(driver.subscribe(session).close)
            group = await stack.enter_async_context(asyncio.TaskGroup())
            driver.group = group
            group.create_task(driver.run(ended))
            try:
                yield driver
            finally:
                driver.stop()


# What a child's events must not change for the session that shows them: its context gauge is the session's own.
_SESSION_ONLY = (ContextUsage, ContextCompacted)


class _EngineDriver:
    def __init__(self, engine: EngineApi, request: d.ConnectRequest, events: d.EventSink) -> None:
        self._engine = engine
        self._request = request
        self._events = events
        self.group: asyncio.TaskGroup | None = None
        self._commands: asyncio.Queue[d.DriverCommand | None] = asyncio.Queue()
        self._outbox: deque[d.DriverEvent] = deque()
        self._wake = asyncio.Event()
        self._session: Session | None = None
        self._subscription: Subscription | None = None
        self._translator = Translator("", "")
        self._children: dict[str, Translator] = {}  # child session → its translator (ids prefixed by its path)
        self._info: d.DriverInfo | None = None
        self._skills = SkillCatalog([])
        self._queued_input: int | None = None  # the input of a StartTurn the engine queued (not started yet)
        self._compaction_after: int | None = None  # a Compact the engine queued: the run id it reserved
        self._closing = False
        self._prompted: str | None = None  # the id of the last message a person's prompt committed
        self._forget = False  # the close deletes the engine session and its children

    @property
    def _turn(self) -> Subscription:
        assert self._subscription is not None, "the session is not subscribed"
        return self._subscription

    @property
    def info(self) -> d.DriverInfo:
        assert self._info is not None, "the session is not open"
        return self._info

    def send(self, command: d.DriverCommand) -> None:
        self._commands.put_nowait(command)

    def stop(self) -> None:
        self._commands.put_nowait(None)

    async def open_session(self) -> Session:
        """Open the engine session (`launch.py`) and return it. Raises what `connect` may raise."""

        def describe(session: Session) -> AgentDetails:
            return info.session_info(self._engine, session, SkillCatalog([])).details

        session = await launch.open_session(self._engine, self._request, describe)
        self._skills = await self._engine.skills(session)  # its slash commands, in the info built next
        self._set_session(session)
        return session

    async def history(self) -> list[d.AdapterEvent]:
        """The session's stored conversation as the events its live turns showed (translate.py); a warning instead
        when the engine cannot read it (the session is open all the same)."""
        try:
            messages = await self._engine.conversation(self._session_id)
        except EngineError as exc:
            problem = f"the engine could not read the session's conversation: {exc.message}"
            return [
                d.AdapterEvent(DiagnosticEvent(diagnostic=Diagnostic(level=DiagnosticLevel.WARNING, message=problem)))
            ]
        return self._translator.history(messages, await self._reports(messages))

    async def _reports(self, messages: list[Message]) -> dict[tuple[int, int], Report]:
        """The reports the conversation holds, by the `spawn_agent` call whose child sent each (the child session's
        origin names the call; a fork keeps its source's message ids, so its calls are found too)."""
        reports: dict[tuple[int, int], Report] = {}
        for message in messages:
            if not isinstance(message, UserMessage) or not isinstance(source := message.source, ChildReport):
                continue
            try:
                child = await self._engine.session(source.session_id)
            except EngineError:
                continue  # the child is gone: its call shows as it was stored
            if isinstance(child.origin, OriginChild):
                text = "".join(p.text for p in message.content if isinstance(p, ContentText))
                reports[(child.origin.parent_message_id, child.origin.parent_part_id)] = (source.outcome, text)
        return reports

    def subscribe(self, session: Session) -> Subscription:
        """Follow the session's events from now on."""
        self._subscription = self._engine.subscribe(session, self.on_event)
        return self._subscription

    # --- commands ------------------------------------------------------------------------------------------

    async def run(self, ended: asyncio.Event) -> None:
        assert self.group is not None
        pump = self.group.create_task(self._pump())
        watcher = self.group.create_task(self._watch(ended))
        try:
            while (command := await self._commands.get()) is not None:
                if isinstance(command, d.Close):
                    self._forget = command.forget
                    break
                await self._handle(command)
        finally:
            self._closing = True
            watcher.cancel()
            if self._subscription is not None:
                self._subscription.close()
            if not ended.is_set():
                await self._cancel_run()  # nobody will read this session's run any more
                await self._engine.detach_mcp(self._session_id)  # its servers stop before the close returns
                await (self._remove() if self._forget else self._forget_if_unused())
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
        # TurnAck goes out on the subscription's `TurnStarted`, which comes before `start_turn` returns: in order
        # with the run's own events, after any left from an older run.
        self._queued_input = None
        text = prompt_text(prompt)
        skill = self._skills.command(text)  # a slash command runs its skill
        content: Input = InputSkill(skill=skill) if skill else InputContent(content=[ContentText(text=text)])
        try:
            result = await self._turn.start_turn(content)
        except EngineError as exc:
            self._push(d.TurnAck())
            self._push(d.TurnStopped(Failed(message=exc.message)))
            return
        if isinstance(result, SendInputQueued) and self._turn.awaiting_start:
            self._queued_input = result.input_id  # a run is still ending: ours starts right after it

    async def _compact(self) -> None:
        """`session.compact`, when the engine serves it (Compact is advertised only then); the loop already opened
        the agent-originated turn, which the compaction run's end ends. Its checkpoint's commit reports
        `ContextCompacted`; a skipped compaction (nothing old enough to summarise) just completes."""
        problem = "compaction is not supported by the engine yet"
        if self._engine.serves("session.compact"):
            try:
                result = await self._engine.compact(self._session_id)
            except EngineError as exc:
                problem = exc.message
            else:
                if result.status == "queued":
                    self._compaction_after = result.run_id  # a run is still ending: its end is not ours
                return
        self._warn(problem)
        self._push(d.TurnStopped(Failed(message=problem)))

    async def _rollback(self, turns: int, scope: RollbackScope) -> None:
        """`session.rewind` before the `turns`-th last prompt: it and everything after leave the conversation, and
        with `ConversationAndFiles` the files the engine's tools changed since come back as they were."""
        try:
            before = _prompt_ids_back(await self._engine.conversation(self._session_id), turns)
        except EngineError as exc:
            self._warn(f"the engine refused the rollback: {exc.message}")
            return
        if len(before) < turns:
            self._warn(f"cannot roll back {turns} turn(s): the session has {len(before)}")
            return
        files = scope is RollbackScope.CONVERSATION_AND_FILES
        try:
            await self._engine.rewind(self._session_id, before[-1], restore_files=files)
        except EngineError as exc:
            self._warn(f"the engine refused the rollback: {exc.message}")

    def _answer(self, request_id: str, answer: object) -> None:
        interaction = interaction_of(request_id)
        if interaction is None:
            return
        with suppress(EngineError):  # answered meanwhile: the run was cancelled
            if isinstance(answer, PermissionAnswer):
                self._engine.answer_permission(interaction, _DECISIONS.get(answer.choice, Decision.REJECT))
            elif isinstance(answer, QuestionsAnswer) and (pending := self._engine.pending_question(interaction)):
                self._engine.answer_question(interaction, reply_of(pending.question, answer))

    async def _cancel(self) -> None:
        if self._turn.awaiting_start and self._queued_input is not None:
            # Our input waits behind another run: withdraw it; the turn never started in the engine.
            with suppress(EngineError):
                await self._engine.cancel_input(self._session_id, self._queued_input)
            self._turn.withdraw_start()
            self._queued_input = None
            self._push(d.TurnAck())
            self._push(d.TurnStopped(Cancelled()))
            return
        await self._cancel_run()

    async def _remove(self) -> None:
        """Delete the session and its children from the engine (a deleted session), once their runs stopped."""
        with suppress(EngineError):
            await self._engine.stop_tree(self._session_id)
            await self._engine.remove_session(self._session_id, with_children=True)

    async def _forget_if_unused(self) -> None:
        """Remove a session this open created and nobody prompted (a `probe`, an open then close): it holds
        nothing to resume, and would only clutter the engine's session list."""
        if self._session is None or self._request.resume is not None or self._request.fork is not None:
            return
        with suppress(ResumeFailed, EngineError):
            if (await launch.existing(self._engine, self._session_id)).message_count == 0:
                await self._engine.remove_session(self._session_id)

    async def _cancel_run(self) -> None:
        """Stop the session's run and its children's; the turn then ends Cancelled."""
        if self._subscription is not None:
            with suppress(EngineError):  # the runs ended meanwhile; their ends say how
                await self._subscription.cancel()

    async def _configure(self, option: str, value: ConfigValue) -> None:
        assert self._session is not None
        self._session, problem = await launch.set_option(self._engine, self._session, option, value)
        if problem is not None:
            self._warn(f"agent rejected configure `{option}`: {problem}")
        self._refresh(announce=True)

    # --- from the engine -----------------------------------------------------------------------------------

    def on_event(self, branch: Branch | None, event: SessionEvent) -> None:
        """The subscriber: synchronous, never blocking (the subscription logs what raises)."""
        if self._closing:
            return
        if branch is not None:
            self._child(branch, event)
        elif isinstance(event, SessionChanged):
            self._session = event.session
            self._refresh(announce=True)
        elif isinstance(event, TurnStarted):
            self._queued_input = None
            # The prompt's message was committed before its run started: its id is the one the history tells.
            prompted, self._prompted = self._prompted, None
            self._push(d.TurnAck(message_id=prompted))
        elif isinstance(event, TurnEnded):
            self._turn_ended(event)
        else:
            self._own(event)

    def _own(self, event: SessionEvent) -> None:
        if isinstance(event, ChildFollowed):
            self._follow(event.branch)
            return
        if isinstance(event, Committed) and isinstance(event.message, UserMessage) and event.message.source is None:
            self._prompted = message_id(event.message.id)
        for out in self._translator.map(event):
            self._push(out)
        failed = event.data.outcome if isinstance(event, RunEnded) else None
        if isinstance(failed, RunOutcomeFailed) and failed.code == "auth":
            # The provider refused the key: the session needs a login again.
            provider = self._session_model.partition("/")[0]
            catalog = self._engine.catalog
            rejected = info.refused_credential(catalog, provider)
            self._push(d.AuthLost(info.login_methods(catalog, refused=provider), rejected=rejected))

    def _turn_ended(self, ended: TurnEnded) -> None:
        if self._compaction_after is not None:
            if ended.last_run.run_id < self._compaction_after:
                return  # the run our compaction waited behind ended: the compact turn goes on
            self._compaction_after = None
        usage = self._translator.unreported_usage()
        if usage is not None:
            self._push(usage)
        self._push(d.TurnStopped(Cancelled() if ended.canceled else stop_reason(ended.last_run.outcome)))

    # --- child sessions ------------------------------------------------------------------------------------

    def _follow(self, branch: Branch) -> None:
        root = self._request.workdir or branch.root  # a child works in its parent's workspace, seen where it is
        self._children[branch.session_id] = Translator(branch.session_id, root, prefix=branch.path)

    def _child(self, branch: Branch, event: SessionEvent) -> None:
        """A child's events, nested under the call that spawned it; a report it received settles its own child's
        call."""
        if isinstance(event, ChildFollowed):
            self._follow(event.branch)
            return
        translator = self._children.get(branch.session_id)
        if translator is None:
            return
        parent_tool_id = (branch.parent.path if branch.parent is not None else "") + tool_id(*branch.site)
        for out in translator.map(event):
            if isinstance(out, d.AdapterEvent) and not isinstance(out.kind, _SESSION_ONLY):
                self._push(d.AdapterEvent(out.kind, parent_tool_id=parent_tool_id, extensions=out.extensions))
        # The child's context is its own (never reported as the session's), but what its replies cost is the session's.
        if isinstance(event, Committed) and isinstance(event.message, AssistantMessage) and event.message.cost:
            self._translator.spend(event.message.cost)

    def _set_session(self, session: Session) -> None:
        self._session = session
        # Paths in events as the model sees them: under a workdir (runtime/view.py), the workspace is there.
        self._translator = Translator(session.id, self._request.workdir or session.root)
        self._refresh(announce=False)

    def _refresh(self, *, announce: bool) -> None:
        """Rebuild the info from the session; tell the loop when it changed."""
        assert self._session is not None
        fresh = info.session_info(self._engine, self._session, self._skills)
        self._translator.window_tokens = self._engine.context_window(self._session.model)
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
