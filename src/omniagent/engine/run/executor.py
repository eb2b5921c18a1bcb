"""One run: rounds of model call → tool calls → commit, until the model stops, fails, or the run is canceled.

The run rules live here only: the retry loop over `providers.retry.next_delay` (5 attempts, 0.5 s → 8 s,
retry-after as a floor, never once content has streamed, `retrying` activity while waiting), `max_rounds`,
cancel (commit the partial draft with `finish: canceled`, or discard an empty one), usage and cost per message,
and when to compact: a compaction run does one compaction step; a turn compacts (reason `auto`) before a round whose
projected context would not fit the model's window (`compaction.rules.needs_compaction`). A round in which a child was
spawned is the turn's last (finish `tool_calls`: it ends on its tool round): the child's report starts the next.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from typing import TypeVar

from omniagent.engine.interactions.permissions import Permissions
from omniagent.engine.interactions.secrets import Scrubber
from omniagent.engine.live import ActiveRun, LiveSession
from omniagent.engine.model_access import RunModel
from omniagent.engine.providers import neutral as n
from omniagent.engine.providers.resolve import ResolveError
from omniagent.engine.providers.retry import MAX_ATTEMPTS, next_delay
from omniagent.engine.run import conversation, instructions, orphans, tool_calls
from omniagent.engine.run.compaction import step as compaction_step
from omniagent.engine.run.context import AgentControls, RunDeps, Sink
from omniagent.engine.run.draft import Draft
from omniagent.engine.skills import prompt as skill_prompt
from omniagent.engine.store import Store, checkpoints, trees
from omniagent.engine.store import queries as q
from omniagent.engine.store.connection import Connection
from omniagent.engine.store.journal import now_ms, record
from omniagent.engine.tools import AGENT_TOOL_NAMES, ToolContext, ToolRegistry
from omniagent.engine.tools.context import Answer, FileImage, Question
from omniagent.engine.transcript import ROOT_AGENT, parse_message, tokens_of
from omniagent.errors import OmniagentError
from omniagent.protocols.yuke.activity import ActivityBuilding, ActivityRetrying, ActivityRunning, ActivityState
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.messages import (
    AssistantMessage,
    Message,
    MessageCommittedData,
    MessageDiscardedData,
    MessageError,
    MessageTime,
    TokenUsage,
    TurnProvenance,
)
from omniagent.protocols.yuke.runs import (
    RunOutcome,
    RunOutcomeCanceled,
    RunOutcomeFailed,
    RunOutcomeTurn,
    StopReason,
)
from omniagent.protocols.yuke.sessions import Session

T = TypeVar("T")


class Interrupted(OmniagentError):
    """The run was asked to stop (cancel_run or shutdown); raised out of the current step."""


class RoundFailed(OmniagentError):
    """The model call failed for good (after the retry policy)."""

    def __init__(self, error: n.ProviderError) -> None:
        super().__init__(error.message)
        self.error = error


class RunExecutor:
    """Executes one run of one session; the `RunContext` its draft, tool calls and compaction work through."""

    def __init__(
        self,
        deps: RunDeps,
        live: LiveSession,
        run: ActiveRun,
        session: Session,
        agents: AgentControls | None = None,
    ) -> None:
        self._deps = deps
        self._live = live
        self._run = run
        self._session = session
        self._agents = agents
        self._agent = session.agent or ROOT_AGENT
        self._rounds = 0
        self._auto_compact = True  # off once an automatic compaction could not help in this run
        self._system = ""  # the system prompt and tools of this run's requests, set when it starts
        self._tools = deps.tools

    async def execute(self) -> RunOutcome:
        """Run to a terminal outcome; never raises except CancelledError."""
        self._set(ActivityBuilding(run_id=self._run.run_id, started_at_ms=self._run.started_at_ms))
        try:
            run_model, provider = self._deps.model_access.open_provider(
                self._run.config.model, self._run.config.reasoning
            )
        except ResolveError as exc:
            return RunOutcomeFailed(code=exc.code.value, message=exc.message)
        try:
            await self._frame()
            if self._run.kind == "compaction":
                return await self._compaction(run_model, provider)
            return await self._rounds_loop(run_model, provider)
        except Interrupted:
            return self._interrupted_outcome()

    async def _frame(self) -> None:
        """The system prompt and tools every request of this run carries: the session's prompt with the project
        instructions (read now, so an edited AGENTS.md counts from the next run on), and its skills (and the agent
        tools unless the session is at the depth limit); for a turn, the session's MCP servers started (their tools
        join while they run). A compaction run starts no server just to list its tools."""
        sid = self._live.session_id
        record_ = await self._deps.store.query(q.get_session, sid)
        assert record_ is not None
        root = record_.session.root
        catalog = await self._deps.skills.catalog(record_.session.id, root)
        section = await self.step(asyncio.to_thread(self._deps.instructions.section, root))
        workdir = self._deps.sandboxes.settings(sid).workdir  # where the model sees its workspace, when elsewhere
        shown = str(workdir) if workdir is not None else root
        base = instructions.compose(conversation.system_prompt_of(record_.system_prompt, shown), section)
        self._system = skill_prompt.system_prompt(base, catalog)
        self._tools = skill_prompt.tools_for(self._deps.tools, catalog)
        depth = await self._deps.store.read(trees.depth, record_.session.id)
        if self._agents is None or depth >= self._deps.child_limits.max_depth:
            self._tools = self._tools.without(AGENT_TOOL_NAMES)
        if self._run.kind != "compaction" and self._deps.mcp is not None:
            await self.step(self._deps.mcp.ready(sid, root))

    async def _rounds_loop(self, run_model: RunModel, provider: n.Provider) -> RunOutcome:
        store, sid = self._deps.store, self._live.session_id
        record_ = await store.query(q.get_session, sid)
        assert record_ is not None
        transcript = [parse_message(p) for p in await store.query(q.all_messages, sid)]
        max_rounds = record_.session.max_rounds
        while True:
            self._check()
            self._rounds += 1
            try:
                if self._auto_compact:
                    transcript, self._auto_compact = await compaction_step.auto(self, run_model, provider, transcript)
            except RoundFailed as failed:
                return RunOutcomeFailed(code=failed.error.code.value, message=failed.error.message)
            request = conversation.build_request(
                run_model,
                self._run.config.reasoning,
                self._system,
                transcript,
                self.tools.specs(),
                record_.session.root,
                cache_key=sid,
            )
            message_id = await store.write(q.bump_counter, sid, "message_id_high")
            draft = Draft(self, message_id, self._agent)
            self._set(self._running())
            try:
                await self.attempts(provider, request, draft, self._running)
            except Interrupted:
                await self._finish_draft(draft, run_model, "canceled", None)
                raise
            except RoundFailed as failed:
                await self._finish_draft(draft, run_model, "error", failed.error)
                return RunOutcomeFailed(code=failed.error.code.value, message=failed.error.message)
            tools = draft.tool_parts()
            spawned = False
            if tools:
                try:
                    spawned = await tool_calls.run_tools(self, draft, record_.session.root, tools)
                except Interrupted:
                    await self._finish_draft(draft, run_model, "canceled", None)
                    raise
            finish: StopReason = draft.stop or "unknown"
            message = await self._finish_draft(draft, run_model, finish, None)
            if message is not None:
                transcript.append(message)
            if spawned:
                return RunOutcomeTurn(finish="tool_calls", rounds=self._rounds)
            if not (finish == "tool_calls" and tools):
                return RunOutcomeTurn(finish=finish, rounds=self._rounds)
            if max_rounds is not None and self._rounds >= max_rounds:
                return RunOutcomeFailed(code="max_rounds", message="the run reached its maximum number of rounds")

    async def _compaction(self, run_model: RunModel, provider: n.Provider) -> RunOutcome:
        """A `session.compact` run: one compaction step over the whole transcript."""
        sid = self._live.session_id
        transcript = [parse_message(p) for p in await self._deps.store.query(q.all_messages, sid)]
        try:
            result = await compaction_step.compact(self, run_model, provider, transcript, "manual")
        except RoundFailed as failed:
            return RunOutcomeFailed(code=failed.error.code.value, message=failed.error.message)
        return compaction_step.outcome_of(result)

    async def attempts(
        self, provider: n.Provider, request: n.ModelRequest, draft: Sink, active: Callable[[], ActivityState]
    ) -> None:
        """One model call under the retry policy; `active` is the activity to show again after a retry wait.

        Raises `RoundFailed` when the call fails for good and `Interrupted` when the run is canceled.
        """
        attempt = 1
        while True:
            error = await self._attempt(provider, request, draft)
            if error is None:
                return
            delay = next_delay(attempt, error, jitter=random.random())
            if delay is None or draft.has_content:
                raise RoundFailed(error)
            draft.reset_attempt()
            wait = delay * self._deps.retry_scale
            if error.retry_after is not None:
                wait = max(wait, error.retry_after)  # the server's retry-after stays a floor, even scaled
            self._set(
                ActivityRetrying(
                    run_id=self._run.run_id,
                    attempt=attempt,
                    max_attempts=MAX_ATTEMPTS,
                    next_at_ms=now_ms() + int(wait * 1000),
                    code=error.code.value,
                    message=error.message,
                )
            )
            await self.step(asyncio.sleep(wait))
            attempt += 1
            self._set(active())

    async def _attempt(self, provider: n.Provider, request: n.ModelRequest, draft: Sink) -> n.ProviderError | None:
        try:
            await self.step(self._stream(provider, request, draft))
        except n.ProviderError as error:
            return error
        return None

    async def _stream(self, provider: n.Provider, request: n.ModelRequest, draft: Sink) -> None:
        async with aclosing(provider.stream(request)) as events:
            streaming = False
            async for event in events:
                draft.feed(event)
                if not streaming and isinstance(event, n.TextDelta | n.ReasoningDelta) and event.text:
                    # The answer's first delta goes out now, before the rest of what arrived in the same read:
                    # the line writer runs when this task yields, and it would yield only once that is all done.
                    streaming = True
                    await asyncio.sleep(0)

    async def step(self, work: Awaitable[T]) -> T:
        """Run one interruptible step: cancel_run cancels it and the loop sees `Interrupted`."""
        self._check()
        task = asyncio.ensure_future(work)
        self._run.step = task
        try:
            return await task
        except asyncio.CancelledError:
            if self._run.cancel_reason is not None and task.cancelled():
                raise Interrupted from None
            raise
        finally:
            self._run.step = None

    def _running(self) -> ActivityRunning:
        return ActivityRunning(run_id=self._run.run_id, started_at_ms=now_ms())

    def _check(self) -> None:
        if self._run.cancel_reason is not None:
            raise Interrupted

    def _interrupted_outcome(self) -> RunOutcome:
        if self._run.cancel_reason == "interrupted":
            return RunOutcomeFailed(code="interrupted", message="the engine stopped during the run")
        return RunOutcomeCanceled()

    def _set(self, state: ActivityState) -> None:
        self._live.state = state
        self._deps.sessions.activity_changed(self._live)

    # The RunContext of this run ------------------------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self._live.session_id

    @property
    def run(self) -> ActiveRun:
        return self._run

    @property
    def store(self) -> Store:
        return self._deps.store

    @property
    def tools(self) -> ToolRegistry:
        mcp = self._deps.mcp
        return self._tools if mcp is None else mcp.registry(self._live.session_id, self._tools)

    @property
    def system_prompt(self) -> str:
        return self._system

    @property
    def permissions(self) -> Permissions:
        return self._deps.permissions

    def emit(self, name: str, data: YukeModel) -> None:
        self._deps.sessions.emit(name, data)

    def set_activity(self, state: ActivityState) -> None:
        self._set(state)

    def summary_changed(self, session: Session) -> None:
        self._deps.sessions.summary_changed(session)

    def note_context(self, usage: TokenUsage) -> None:
        self._live.context_usage = usage

    def exec_needs_confirm(self) -> bool:
        return self._deps.sandboxes.exec_needs_confirm(self._live.session_id)

    def secrets_named(self, command: str) -> tuple[str, ...]:
        return self._deps.questions.secrets.named_in(self._live.session_id, command)

    def tool_context(
        self, root: str, on_output: Callable[[str], None], message_id: int, part_id: int, secrets: tuple[str, ...] = ()
    ) -> ToolContext:
        deps, sid = self._deps, self._live.session_id
        sandbox = deps.sandboxes.policy(sid, deps.model_access.catalog)
        sandbox = dataclasses.replace(sandbox, extra_env=deps.questions.secrets.env(sid, secrets))

        async def before_change(rel: str, image: FileImage) -> None:
            # A before-image that holds a secret answer is withheld: secrets never reach the store.
            kept = image.content is None or not self.scrubber().holds(image.content)
            content = image.content if kept else None
            await deps.store.write(checkpoints.insert, sid, message_id, rel, content, image.mode, kept)

        async def ask(question: Question) -> Answer:
            return await deps.questions.ask(sid, message_id, part_id, question)

        return ToolContext.for_workspace(
            root,
            on_output=on_output,
            limits=deps.tool_limits,
            sandbox=sandbox,
            before_change=before_change,
            ask=ask,
            private_network=deps.sandboxes.settings(sid).fetch_private,
            agents=self._agents(sid, message_id, part_id) if self._agents is not None else None,
        )

    def scrubber(self) -> Scrubber:
        return self._deps.questions.secrets.scrubber(self._live.session_id)

    async def _finish_draft(
        self, draft: Draft, run_model: RunModel, finish: StopReason, error: n.ProviderError | None
    ) -> Message | None:
        """Commit a draft with content (canceled tool parts closed), or discard an opened empty one."""
        sid = self._live.session_id
        if not draft.has_content:
            if draft.opened:
                self.emit("message.discarded", MessageDiscardedData(session_id=sid, message_id=draft.message_id))
            return None
        tool_calls.cancel_open_tools(self, draft)
        tokens = tokens_of(draft.usage)
        message = AssistantMessage(
            id=draft.message_id,
            run_id=self._run.run_id,
            config_rev=self._run.config.config_rev,
            agent=self._agent,
            content=[draft.wire_part(i) for i in range(len(draft.parts)) if draft.parts[i].added],
            finish=finish,
            tokens=tokens,
            cost=run_model.cost_of(tokens),
            time=MessageTime(created_at_ms=draft.created_at_ms, completed_at_ms=now_ms()),
            error=MessageError(type=error.code.value, message=error.message) if error is not None else None,
            provenance=TurnProvenance(protocol=run_model.protocol, model=run_model.upstream_id),
        )

        def txn(conn: Connection) -> tuple[MessageCommittedData, Session]:
            orphans.hold_run(conn, sid, self._run.run_id)
            q.insert_message(
                conn, sid, message.id, "assistant", self._run.run_id, message.config_rev, json.dumps(message.dump())
            )
            for part in message.content:
                q.insert_part(conn, sid, message.id, part.id, part.type, json.dumps(part.dump()))
            q.note_message(conn, sid, tokens, None, now_ms())
            data = record(
                conn,
                sid,
                "message.committed",
                lambda seq: MessageCommittedData(session_id=sid, seq=seq, message=message),
            )
            fresh = q.get_session(conn, sid)
            assert fresh is not None
            return data, fresh.session

        committed, session = await self._deps.store.write(txn)
        self._live.context_usage = tokens
        self.emit("message.committed", committed)
        self.summary_changed(session)
        return message
