"""Engine broadcasts of the sessions open on one ACP connection → `session/update` notifications, in order.

What it is: a broadcaster subscriber (synchronous, never blocking) that keeps the little per-session state the
translation needs (a `SessionFeed` per session: the engine's one reading of its events; the open run) and writes
updates through the peer's single writer,
so an update is on the wire in the order the engine emitted it. Turn ends resolve futures the prompt handler waits
on; each permission ask becomes a `session/request_permission` task and each of the model's questions an
`elicitation/create` task (the engine run waits meanwhile).
What it is not: the shapes (`acp/translate.py`) or the method handlers (`acp/agent.py`).

v2 ordering (acp.md §5): the prompt response `{}` must precede the turn's first update, yet the engine emits the
user message and `run.started` before `send` returns. So a v2 prompt *holds* its session's updates and releases
them with `loop.call_soon` from inside the handler: that callback runs after the peer has queued the response.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from omniagent.acp import translate as t
from omniagent.acp.shapes import Shapes
from omniagent.engine.engine import Engine
from omniagent.engine.errors import EngineError
from omniagent.engine.feed import (
    Chunk,
    Committed,
    FeedItem,
    InteractionOpened,
    PlanChanged,
    QuestionOpened,
    SessionFeed,
    ToolCall,
    ToolChanged,
    ToolOpened,
)
from omniagent.engine.permissions import Decision, PendingInteraction
from omniagent.engine.questions import PendingQuestion
from omniagent.engine.tools.context import CannotAsk
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.messages import (
    AssistantMessage,
    CompactionMessage,
    Message,
    UserMessage,
)
from omniagent.protocols.yuke.runs import RunDoneData, RunOutcomeFailed, RunStartedData
from omniagent.protocols.yuke.sessions import Session, SessionSummaryChangedData
from omniagent.wire.errors import PeerClosed
from omniagent.wire.jsonrpc import Peer

log = logging.getLogger(__name__)

Spawn = Callable[[Coroutine[Any, Any, None]], asyncio.Task[None]]

# Permission options offered for every ask (ids = kinds, so any client can read them).
PERMISSION_OPTIONS = [
    {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
]
_DECISIONS = {"allow_once": Decision.ALLOW_ONCE, "allow_always": Decision.ALLOW_ALWAYS}


@dataclass(slots=True)
class OpenSession:
    """What the relay remembers about one session open on this connection."""

    session_id: str
    root: str
    title: str
    model: str
    feed: SessionFeed
    run_id: int | None = None
    held: list[dict[str, Any]] | None = None


class Relay:
    """Routes engine broadcasts to one ACP connection."""

    def __init__(self, engine: Engine, peer: Peer, shapes: Shapes, spawn: Spawn, *, elicits: bool = False) -> None:
        self._engine = engine
        self._peer = peer
        self.shapes = shapes
        self._spawn = spawn
        self._elicits = elicits  # the client advertised elicitation forms
        self.sessions: dict[str, OpenSession] = {}
        self._runs: dict[tuple[str, int], asyncio.Future[RunDoneData]] = {}

    # Sessions and turns ---------------------------------------------------------------------------------------

    def open(self, session: Session) -> OpenSession:
        """Start relaying a session's updates (idempotent)."""
        found = self.sessions.get(session.id)
        if found is None:
            feed = SessionFeed(session.id, self._engine.interactions.get)
            found = self.sessions[session.id] = OpenSession(
                session.id, session.root, session.title, session.model, feed
            )
        return found

    def close(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)

    def run_done(self, session_id: str, run_id: int) -> asyncio.Future[RunDoneData]:
        """The future a run's `run.done` resolves (made on `run.started`, or now)."""
        key = (session_id, run_id)
        future = self._runs.get(key)
        if future is None:
            future = self._runs[key] = asyncio.get_running_loop().create_future()
        return future

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

    def send(self, session_id: str, update: dict[str, Any]) -> None:
        """One `session/update` (buffered while the session is held)."""
        open_ = self.sessions.get(session_id)
        if open_ is not None and open_.held is not None:
            open_.held.append(update)
            return
        try:
            self._peer.notify("session/update", {"sessionId": session_id, "update": update})
        except PeerClosed:
            log.info("acp: client gone; dropped an update")

    # The broadcaster subscriber ------------------------------------------------------------------------------

    def __call__(self, name: str, data: YukeModel) -> None:
        try:
            self._route(name, data)
        except Exception:  # a translation bug must not break the engine's run that emitted the broadcast
            log.exception("acp: could not relay %s", name)

    def _route(self, name: str, data: YukeModel) -> None:
        session_id = getattr(data, "session_id", None)
        open_ = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if name == "session.summary_changed":
            assert isinstance(data, SessionSummaryChangedData)
            self._summary(data.session)
        elif name == "run.started":
            assert isinstance(data, RunStartedData)
            self.run_done(data.session_id, data.run_id)
            if open_ is not None:
                open_.run_id = data.run_id
                if self.shapes.state_updates:
                    self.send(open_.session_id, t.state_update("running"))
        elif name == "run.done":
            assert isinstance(data, RunDoneData)
            self._done(open_, data)
        elif open_ is not None:
            for item in open_.feed.read(name, data):
                self._render(open_, item)

    def _render(self, open_: OpenSession, item: FeedItem) -> None:
        """One feed item of an open session as its ACP updates."""
        sid = open_.session_id
        if isinstance(item, Chunk):
            if item.reasoning:
                self.send(sid, t.chunk("agent_thought_chunk", t.thought_id(item.message_id), item.text))
            else:
                self.send(sid, t.chunk("agent_message_chunk", t.message_id(item.message_id), item.text))
        elif isinstance(item, ToolOpened):
            self.send(sid, t.tool_opened(self.shapes, open_.root, item.call))
        elif isinstance(item, ToolChanged):
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

    def _summary(self, session: Session) -> None:
        open_ = self.sessions.get(session.id)
        if open_ is None:
            return
        open_.model = session.model
        if session.title != open_.title:
            open_.title = session.title
            self.send(session.id, t.session_info(session.title, session.updated_at_ms))

    def _done(self, open_: OpenSession | None, data: RunDoneData) -> None:
        if open_ is not None:
            open_.feed.read("run.done", data)  # the run's parts are final now
        if open_ is not None and open_.run_id == data.run_id:
            open_.run_id = None
            if self.shapes.state_updates:
                if isinstance(data.outcome, RunOutcomeFailed) and data.outcome.code != "max_rounds":
                    # v2 has no error stop reason in our schema: say what failed as agent text, then end the turn.
                    text = f"The turn failed ({data.outcome.code}): {data.outcome.message}"
                    self.send(open_.session_id, t.chunk("agent_message_chunk", f"r{data.run_id}.error", text))
                self.send(open_.session_id, t.state_update("idle", t.stop_reason(data.outcome)))
        future = self._runs.pop((data.session_id, data.run_id), None)
        if future is not None and not future.done():
            future.set_result(data)

    def _committed(self, open_: OpenSession, message: Message) -> None:
        if isinstance(message, UserMessage) and self.shapes.user_message_ack:
            for update in t.user_message(self.shapes, message):
                self.send(open_.session_id, update)
        elif isinstance(message, AssistantMessage) and message.tokens is not None:
            self._usage(open_, message.tokens.input + message.tokens.output)
        elif isinstance(message, CompactionMessage):  # the context shrank: the gauge says so (docs/engine.md)
            self._usage(open_, message.tokens_after)

    def _usage(self, open_: OpenSession, used: int) -> None:
        size = self._context_window(open_.model)
        if size:
            self.send(open_.session_id, t.usage(min(used, size), size))

    def _context_window(self, selector: str) -> int | None:
        found = self._engine.routes.catalog.model(selector)
        return found[1].limits.context_window if found is not None and found[1].limits else None

    # Permission asks --------------------------------------------------------------------------------------------

    async def _ask(self, open_: OpenSession, interaction: PendingInteraction, call: ToolCall) -> None:
        """Ask the client; the engine's answer future or the client's reply, whichever comes first, wins."""
        params = self._ask_params(open_, interaction, call)
        request = await self._request(open_, "session/request_permission", params, interaction.answer)
        if request is not None:
            decision = _decision(request)
            self._answered(open_, lambda: self._engine.permissions.answer(interaction.interaction_id, decision))

    def _ask_params(self, open_: OpenSession, interaction: PendingInteraction, call: ToolCall) -> dict[str, Any]:
        subject = t.tool_subject(self.shapes, open_.root, call)
        params: dict[str, Any] = {"sessionId": open_.session_id, "options": PERMISSION_OPTIONS}
        if interaction.unsandboxed:
            subject = {**subject, "title": f"{subject['title']} (outside the sandbox)"}
        if self.shapes.state_updates:
            params["title"] = f"Allow {interaction.tool_name}: {subject['title']}?"
            params["subject"] = {"type": "tool_call", "toolCall": subject}
        else:
            params["toolCall"] = subject
        return params

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
            self._engine.questions.answer(question.interaction_id, CannotAsk(reason))

    async def _elicit(self, open_: OpenSession, question: PendingQuestion, call: ToolCall) -> None:
        """Ask the client; the engine's reply future (a stopped run) or the client's answer, whichever comes first,
        wins."""
        params = t.elicitation(open_.session_id, call, question.question)
        request = await self._request(open_, "elicitation/create", params, question.reply)
        if request is not None:
            failed = request.cancelled() or request.exception() is not None
            reply = t.elicited(question.question, None if failed else request.result())
            self._answered(open_, lambda: self._engine.questions.answer(question.interaction_id, reply))

    # Asking the client while a run waits ----------------------------------------------------------------------------

    async def _request(
        self, open_: OpenSession, method: str, params: dict[str, Any], engine_answer: asyncio.Future[Any]
    ) -> asyncio.Future[Any] | None:
        """Send the request (v2: `requires_action` meanwhile) and wait for its reply or for the engine to answer the
        interaction itself (the run stopped): the finished request, or None when the engine was first (the request
        is then cancelled: the peer sends `$/cancel_request` for it)."""
        if self.shapes.state_updates:
            self.send(open_.session_id, t.state_update("requires_action"))
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
            self.send(open_.session_id, t.state_update("running"))


def _decision(request: asyncio.Future[Any]) -> Decision:
    """The client's reply as a decision; an error, a cancel or an unknown outcome is never approval."""
    if request.cancelled() or request.exception() is not None:
        return Decision.CANCELED
    result = request.result()
    outcome = result.get("outcome") if isinstance(result, dict) else None
    if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
        return Decision.CANCELED
    return _DECISIONS.get(str(outcome.get("optionId")), Decision.REJECT)
