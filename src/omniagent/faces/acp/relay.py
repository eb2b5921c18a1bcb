"""Engine broadcasts of the sessions open on one ACP connection → `session/update` notifications, in order.

What it is: the subscriber of each open session's `Subscription` (the engine's routing, child sessions and settled
turn end; synchronous, never blocking) that keeps the little per-session state the rendering needs (the open run,
the `spawn_agent` calls) and writes updates through the peer's single writer, so an update is on the wire in the
order the engine emitted it. Each permission ask becomes a `session/request_permission` task and each of the
model's questions an `elicitation/create` task (the engine run waits meanwhile).
What it is not: the shapes (`faces/acp/translate.py`) or the method handlers (`faces/acp/agent.py`).

v2 ordering: the prompt response `{}` must precede the turn's first update, yet the engine emits the
user message and `run.started` before `send` returns. So a v2 prompt *holds* its session's updates and releases
them with `loop.call_soon` from inside the handler: that callback runs after the peer has queued the response.

Child sessions (docs/acp.md "Child agents"): a `spawn_agent` call is shown as one tool call that stays
`in_progress` while its child works; the child's steps and newest text are that call's content, its run's end
completes (or fails) it, and the child's permission asks are asked on the open session, naming that call. A
grandchild's progress shows on its parent's call. A turn ends (v2 `idle`) on the subscription's `TurnEnded`, once the
session's tree has settled: the reports the children send start the session's next runs inside the same turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from omniagent.engine.api import (
    Branch,
    CannotAsk,
    ChildFollowed,
    Chunk,
    Committed,
    Decision,
    EngineApi,
    EngineError,
    InteractionOpened,
    Noticed,
    PendingInteraction,
    PendingQuestion,
    PlanChanged,
    QuestionOpened,
    RunEnded,
    RunStarted,
    SessionChanged,
    SessionEvent,
    Subscription,
    ToolCall,
    ToolChanged,
    ToolOpened,
    TurnEnded,
)
from omniagent.faces.acp import translate as t
from omniagent.protocols.yuke.messages import AssistantMessage, CompactionMessage, Message, TextPart, UserMessage
from omniagent.protocols.yuke.runs import RunDoneData, RunOutcomeCanceled, RunOutcomeFailed, RunOutcomeTurn
from omniagent.protocols.yuke.sessions import Session
from omniagent.protocols.yuke.tools import ToolStateCompleted
from omniagent.serving.acp import builders as b
from omniagent.serving.acp.shapes import Shapes
from omniagent.wire.errors import PeerClosed
from omniagent.wire.jsonrpc import Peer
from omniagent.wire.messages import INTERNAL_ERROR

log = logging.getLogger(__name__)

Spawn = Callable[[Coroutine[Any, Any, None]], asyncio.Task[None]]

_DECISIONS = {"allow_once": Decision.ALLOW_ONCE, "allow_always": Decision.ALLOW_ALWAYS}


@dataclass(slots=True)
class OpenSession:
    """What the relay remembers about one session open on this connection."""

    session_id: str
    root: str
    title: str
    model: str
    turn: Subscription = field(init=False)  # the engine's view of the session and its children
    run_id: int | None = None
    held: list[b.Update] | None = None
    user_message_id: str | None = None  # the ACP id of the session's newest user message (a v2 prompt answers it)
    agent_calls: dict[str, AgentCall] = field(default_factory=dict)  # tool call id → a spawn call with a child


@dataclass(slots=True)
class AgentCall:
    """A `spawn_agent` call of an open session and what its child (and the child's own children, which share the
    call but not its status) did so far."""

    session_id: str  # the open session the call belongs to
    message_id: int  # the call's tool site
    part_id: int
    name: str
    steps: list[str] = field(default_factory=list)
    text: str = ""
    status: str = "in_progress"

    @property
    def tool_call_id(self) -> str:
        return t.tool_call_id(self.message_id, self.part_id)

    def content(self) -> str:
        lines = [f"Agent {self.name}"] + [f"- {step}" for step in self.steps]
        return "\n".join(lines) + (f"\n\n{self.text}" if self.text else "")


class Relay:
    """Routes the events of the sessions open on one ACP connection to it."""

    def __init__(self, engine: EngineApi, peer: Peer, shapes: Shapes, spawn: Spawn, *, elicits: bool = False) -> None:
        self._engine = engine
        self._peer = peer
        self.shapes = shapes
        self._spawn = spawn
        self._elicits = elicits  # the client advertised elicitation forms
        self.sessions: dict[str, OpenSession] = {}
        self._notices = 0  # notices sent, for their message ids

    # Sessions and turns ---------------------------------------------------------------------------------------

    def open(self, session: Session) -> OpenSession:
        """Start relaying a session's updates (idempotent)."""
        found = self.sessions.get(session.id)
        if found is None:
            found = self.sessions[session.id] = OpenSession(session.id, session.root, session.title, session.model)
            found.turn = self._engine.subscribe(session, functools.partial(self._deliver, found))
        return found

    def close(self, session_id: str) -> None:
        open_ = self.sessions.pop(session_id, None)
        if open_ is not None:
            open_.turn.close()

    def close_all(self) -> None:
        """Stop relaying every session (the connection ends)."""
        for session_id in list(self.sessions):
            self.close(session_id)

    def hold(self, session_id: str) -> None:
        """Buffer this session's updates until `release_soon` (v2 prompt ordering; see the module doc)."""
        self.sessions[session_id].held = []

    def release_soon(self, session_id: str) -> None:
        asyncio.get_running_loop().call_soon(self._release, session_id)

    def _release(self, session_id: str) -> None:
        open_ = self.sessions.get(session_id)
        if open_ is None or open_.held is None:
            return
        held, open_.held = open_.held, None
        for update in held:
            self.send(session_id, update)

    def send(self, session_id: str, update: b.Update) -> None:
        """One `session/update` (buffered while the session is held)."""
        open_ = self.sessions.get(session_id)
        if open_ is not None and open_.held is not None:
            open_.held.append(update)
            return
        try:
            self._peer.notify("session/update", {"sessionId": session_id, "update": b.wire(update)})
        except PeerClosed:
            log.info("acp: client gone; dropped an update")

    def stop_reason(self, ended: TurnEnded) -> str:
        """How a turn ended: `cancelled` when the client canceled it, else as its last run ended."""
        return "cancelled" if ended.canceled else t.stop_reason(ended.last_run.outcome)

    def _idle(self, ended: TurnEnded) -> b.Update:
        """v2's idle `state_update` ending a turn: a failed last run (not cancelled, not out of rounds) is the
        draft's `error` stop reason carrying the failure, as v1 answers the prompt with it."""
        outcome = ended.last_run.outcome
        if not ended.canceled and isinstance(outcome, RunOutcomeFailed) and outcome.code != "max_rounds":
            return b.failed_idle(INTERNAL_ERROR, turn_failure(outcome))
        return b.state_update("idle", self.stop_reason(ended))

    # The subscriber -------------------------------------------------------------------------------------------

    def _deliver(self, open_: OpenSession, branch: Branch | None, event: SessionEvent) -> None:
        if branch is not None:
            self._child(open_, branch, event)
        elif isinstance(event, SessionChanged):
            self._summary(event.session)
        elif isinstance(event, ChildFollowed):
            call = AgentCall(open_.session_id, *event.branch.site, event.branch.name)
            open_.agent_calls[call.tool_call_id] = call
        elif isinstance(event, RunStarted):
            open_.run_id = event.data.run_id
            if self.shapes.state_updates:
                self.send(open_.session_id, b.state_update("running"))
        elif isinstance(event, RunEnded):
            self._done(open_, event.data)
        elif isinstance(event, TurnEnded):
            if self.shapes.state_updates:
                self.send(open_.session_id, self._idle(event))
        else:
            self._render(open_, event)

    def _render(self, open_: OpenSession, item: SessionEvent) -> None:
        """One event of an open session as its ACP updates."""
        sid = open_.session_id
        if isinstance(item, Chunk):
            if item.reasoning:
                self.send(sid, b.chunk("agent_thought_chunk", t.thought_id(item.message_id), item.text))
            else:
                self.send(sid, b.chunk("agent_message_chunk", t.message_id(item.message_id), item.text))
        elif isinstance(item, ToolOpened):
            self.send(sid, t.tool_opened(self.shapes, open_.root, item.call))
        elif isinstance(item, ToolChanged):
            call = open_.agent_calls.get(t.tool_call_id(item.call.message_id, item.call.part_id))
            if call is not None and isinstance(item.state, ToolStateCompleted):
                self._agent_update(call)  # the receipt: the call goes on while its child works
                return
            update = t.tool_state(self.shapes, open_.root, item.call, item.state)
            if update:
                self.send(sid, update)
        elif isinstance(item, PlanChanged):
            self.send(sid, t.plan(self.shapes, item.entries))
        elif isinstance(item, Committed):
            self._committed(open_, item.message)
        elif isinstance(item, InteractionOpened):
            self._spawn(self._ask(open_, item.interaction, item.call))
        elif isinstance(item, QuestionOpened):
            self._question(open_, item.question, item.call)
        elif isinstance(item, Noticed):
            # ACP has no diagnostic update: the user reads it as agent text of its own message (and in our log).
            self._notices += 1
            log.warning("session %s: %s", sid, item.notice.message)
            self.send(sid, b.chunk("agent_message_chunk", f"notice.{self._notices}", item.notice.message))

    def _summary(self, session: Session) -> None:
        open_ = self.sessions.get(session.id)
        if open_ is None:
            return
        open_.model = session.model
        if session.title != open_.title:
            open_.title = session.title
            self.send(session.id, b.session_info(session.title, session.updated_at_ms))

    def _done(self, open_: OpenSession, data: RunDoneData) -> None:
        if open_.run_id != data.run_id:
            return
        open_.run_id = None
        failed = data.outcome if isinstance(data.outcome, RunOutcomeFailed) else None
        if self.shapes.state_updates and failed is not None and failed.code != "max_rounds":
            # Also as agent text: an alpha.2 client does not know the `error` stop reason the turn then ends with.
            text = f"The turn failed ({failed.code}): {failed.message}"
            self.send(open_.session_id, b.chunk("agent_message_chunk", f"r{data.run_id}.error", text))

    # Child sessions ---------------------------------------------------------------------------------------------

    def _child(self, open_: OpenSession, branch: Branch, event: SessionEvent) -> None:
        """A child's (or grandchild's) event as progress of the open session's `spawn_agent` call it descends from."""
        agent = open_.agent_calls.get(t.tool_call_id(*branch.top.site))
        if agent is None:
            return
        direct = branch.parent is None
        if isinstance(event, ToolOpened):
            agent.steps.append(event.call.title)
        elif isinstance(event, Committed) and isinstance(event.message, AssistantMessage):
            text = "".join(p.text for p in event.message.content if isinstance(p, TextPart)).strip()
            agent.text = text or agent.text
        elif isinstance(event, RunStarted) and direct:
            agent.status = "in_progress"
        elif isinstance(event, RunEnded) and direct:
            agent.status = self._status(event.data)
        elif isinstance(event, InteractionOpened | QuestionOpened):
            # Asked on the open session, naming the spawn call (the client never saw the child's calls).
            call = dataclasses.replace(
                event.call,
                message_id=agent.message_id,
                part_id=agent.part_id,
                title=f"{agent.name}: {event.call.title}",
            )
            if isinstance(event, InteractionOpened):
                self._spawn(self._ask(open_, event.interaction, call))
            else:
                self._question(open_, event.question, call)
            return
        else:
            return
        self._agent_update(agent)

    def _status(self, data: RunDoneData) -> str:
        if isinstance(data.outcome, RunOutcomeTurn):
            # A turn that spawned children of its own waits for their reports: the child is not done.
            return "in_progress" if data.outcome.finish == "tool_calls" else "completed"
        if isinstance(data.outcome, RunOutcomeCanceled):
            return self.shapes.cancelled_status
        return "failed"

    def _agent_update(self, agent: AgentCall) -> None:
        self.send(agent.session_id, t.agent_call_update(self.shapes, agent.tool_call_id, agent.status, agent.content()))

    def _committed(self, open_: OpenSession, message: Message) -> None:
        if isinstance(message, UserMessage):
            open_.user_message_id = t.message_id(message.id)
        if isinstance(message, UserMessage) and self.shapes.user_message_ack:
            for update in t.user_message(self.shapes, message):
                self.send(open_.session_id, update)
        elif isinstance(message, AssistantMessage) and message.tokens is not None:
            self._usage(open_, message.tokens.input + message.tokens.output)
        elif isinstance(message, CompactionMessage):  # the context shrank: the gauge says so (docs/engine.md)
            self._usage(open_, message.tokens_after)

    def _usage(self, open_: OpenSession, used: int) -> None:
        size = self._engine.context_window(open_.model)
        if size:
            self.send(open_.session_id, b.usage(min(used, size), size))

    # Permission asks --------------------------------------------------------------------------------------------

    async def _ask(self, open_: OpenSession, interaction: PendingInteraction, call: ToolCall) -> None:
        """Ask the client; the engine's answer future or the client's reply, whichever comes first, wins."""
        params = self._ask_params(open_, interaction, call)
        request = await self._request(open_, "session/request_permission", params, interaction.answer)
        if request is not None:
            decision = _decision(request)
            self._answered(open_, lambda: self._engine.answer_permission(interaction.interaction_id, decision))

    def _ask_params(self, open_: OpenSession, interaction: PendingInteraction, call: ToolCall) -> dict[str, Any]:
        if interaction.unsandboxed:
            call = dataclasses.replace(call, title=f"{call.title} (outside the sandbox)")
        options = b.PERMISSION_OPTIONS
        if interaction.secrets:
            # Each command that gets a secret answer is approved alone: no "always" to offer.
            call = dataclasses.replace(call, title=f"{call.title} (gets your secret {', '.join(interaction.secrets)})")
            options = tuple(option for option in options if option[0] != "allow_always")
        subject = t.tool_subject(self.shapes, open_.root, call)
        title = f"Allow {interaction.tool_name}: {call.title}?"
        return b.wire(b.permission_request(self.shapes, open_.session_id, subject, title, options))

    # The model's questions -----------------------------------------------------------------------------------------

    def _question(self, open_: OpenSession, question: PendingQuestion, call: ToolCall) -> None:
        """Put the question to the user as an elicitation form, or answer at once that this client cannot."""
        reason = None
        if not self._elicits:
            reason = "this client cannot show questions (it takes no ACP elicitation forms); decide without asking"
        elif question.question.secret:
            reason = "this client cannot take a secret answer (ACP forms must not ask for secrets); let the user set it"
        if reason is None:
            self._spawn(self._elicit(open_, question, call))
            return
        with contextlib.suppress(EngineError):  # the run stopped meanwhile
            self._engine.answer_question(question.interaction_id, CannotAsk(reason))

    async def _elicit(self, open_: OpenSession, question: PendingQuestion, call: ToolCall) -> None:
        """Ask the client; the engine's reply future (a stopped run) or the client's answer, whichever comes first,
        wins."""
        params = b.wire(t.elicitation(open_.session_id, call, question.question))
        request = await self._request(open_, "elicitation/create", params, question.reply)
        if request is not None:
            failed = request.cancelled() or request.exception() is not None
            reply = t.elicited(question.question, None if failed else request.result())
            self._answered(open_, lambda: self._engine.answer_question(question.interaction_id, reply))

    # Asking the client while a run waits ----------------------------------------------------------------------------

    async def _request(
        self, open_: OpenSession, method: str, params: dict[str, Any], engine_answer: asyncio.Future[Any]
    ) -> asyncio.Future[Any] | None:
        """Send the request (v2: `requires_action` meanwhile) and wait for its reply or for the engine to answer the
        interaction itself (the run stopped): the finished request, or None when the engine was first (the request
        is then cancelled: the peer sends `$/cancel_request` for it)."""
        if self.shapes.state_updates:
            self.send(open_.session_id, b.state_update("requires_action"))
        request = asyncio.ensure_future(self._peer.request(method, params))
        await asyncio.wait({request, engine_answer}, return_when=asyncio.FIRST_COMPLETED)
        if request.done():
            return request
        request.cancel()
        await asyncio.gather(request, return_exceptions=True)
        return None

    def _answered(self, open_: OpenSession, answer: Callable[[], None]) -> None:
        """Give the client's answer to the engine, and (v2) say the turn runs again."""
        try:
            answer()
        except EngineError:
            return  # answered meanwhile (the run was cancelled)
        if self.shapes.state_updates and open_.run_id is not None:
            self.send(open_.session_id, b.state_update("running"))


def turn_failure(outcome: RunOutcomeFailed) -> str:
    """The sentence naming a failed turn's failure (the engine's message names no secret)."""
    return f"the turn failed ({outcome.code}): {outcome.message}"


def _decision(request: asyncio.Future[Any]) -> Decision:
    """The client's reply as a decision; an error, a cancel or an unknown outcome is never approval."""
    if request.cancelled() or request.exception() is not None:
        return Decision.CANCELED
    result = request.result()
    outcome = result.get("outcome") if isinstance(result, dict) else None
    if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
        return Decision.CANCELED
    return _DECISIONS.get(str(outcome.get("optionId")), Decision.REJECT)
