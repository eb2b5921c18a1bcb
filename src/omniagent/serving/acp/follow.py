"""One connection following one hub session: its events (replay, then live) as `session/update`s and requests to
the client, in order, and the turn ends its prompts wait for.

What it is: `Follower`, one task reading the `Attachment`'s batches. Each event becomes the updates `SessionView`
says, each `session/update` carrying the event's sequence in `_meta.omniagent.sequence` (a client reattaches
`after` the last one it has). A request the agent opens is asked of a controller's client (a task per request, the
session goes on meanwhile); the first answer from any client wins. A request resolved elsewhere (another client
answered, a cancel, the agent withdrew it) while ours is still out is withdrawn: the peer sends `$/cancel_request`
for our JSON-RPC request, and the client gets `_omniagent/request_resolved` naming the agent's request id (the id
our request carried in `_meta.omniagent.requestId`).

Ordering: a handler whose answer must precede the next updates (a v2 prompt's `{}`, a load's or attach's answer
after the replay) `hold`s the follower and `release_soon`s it from inside the handler: `loop.call_soon` runs after
the peer has queued the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from omniagent.errors import OmniagentError
from omniagent.hub.session import Attachment, HubSession, Role
from omniagent.protocols.sidecar.agents import SessionInfo
from omniagent.protocols.sidecar.commands import DECLINED, Answer, Delivery, Queued
from omniagent.protocols.sidecar.events import (
    Event,
    FromPrompt,
    PermissionAsk,
    QuestionAsk,
    RequestClosed,
    RequestOpened,
    StopReason,
    TurnEnded,
    TurnStarted,
)
from omniagent.runtime.errors import AgentError, InvalidRequest
from omniagent.serving.acp import asks
from omniagent.serving.acp import builders as b
from omniagent.serving.acp.shapes import Shapes
from omniagent.serving.acp.view import SessionView
from omniagent.wire.errors import PeerClosed
from omniagent.wire.jsonrpc import Peer
from omniagent.wire.messages import RpcError

log = logging.getLogger(__name__)

RESOLVED = "_omniagent/request_resolved"
# Turn ends and prompt starts kept for prompts that ask after the follower passed them (a quick turn).
_KEPT = 256


class SessionEnded(OmniagentError):
    """The session ended before the turn a prompt waits for did; `args[0]` says why."""


class Follower:
    """Reads one attachment for one connection until the session ends or the connection lets go."""

    def __init__(
        self,
        peer: Peer,
        shapes: Shapes,
        attachment: Attachment,
        *,
        elicits: bool,
        alone: bool = False,
        catch_up: bool,
        primes: bool = False,
        seen: SessionInfo | None = None,
        on_end: Callable[[Follower], None] | None = None,
    ) -> None:
        self.peer = peer
        self.shapes = shapes
        self.attachment = attachment
        session = attachment.session
        self.view = SessionView(shapes, attachment.id, session.directory, seen)
        # The catch-up is a replay (states are summed up at its end); `primes`: one from the history's start (the
        # view primes each message it streams).
        self.view.replaying = catch_up
        self.view.priming = primes and catch_up
        self._elicits = elicits
        self._alone = alone  # no other client can answer: a question this one cannot show is declined
        self._on_end = on_end
        self._holds = 0
        self._open = asyncio.Event()
        self._open.set()
        self._asks: dict[str, asyncio.Task[None]] = {}
        self._prompt_turns: dict[str, str] = {}  # prompt id → the turn it started
        self._turn_ends: dict[str, StopReason] = {}
        self._waiters: list[tuple[Callable[[], bool], asyncio.Future[None]]] = []
        self._ended: str | None = None
        self._caught_up: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if not catch_up:
            self._caught_up.set_result(None)
        self._target = session.log.last
        self._early = False
        self._task: asyncio.Task[None] | None = None

    @property
    def session_id(self) -> str:
        return self.attachment.id

    def start(self) -> None:
        """Start reading (the caller has answered, or holds the follower until it has)."""
        self._task = asyncio.ensure_future(self._run())

    async def caught_up(self) -> None:
        """Wait until every event the session had when this follower was made is sent; the follower then holds
        until `after_replay_soon` (a load or attach answers after its replay, before what follows)."""
        await asyncio.shield(self._caught_up)

    # --- holding ---------------------------------------------------------------------------------------------------

    def hold(self) -> None:
        """Send nothing until the matching `release_soon`."""
        self._holds += 1
        self._open.clear()

    def release_soon(self) -> None:
        """Undo one `hold` once the peer has queued the answer being returned."""
        asyncio.get_running_loop().call_soon(self._release)

    def after_replay_soon(self) -> None:
        """What a handler that awaited `caught_up` calls as it returns (or gives up): the follower goes on once
        the peer has queued the answer."""
        if self._caught_up.done():
            self.release_soon()
        else:
            self._early = True  # given up before the replay was sent: its end holds for nobody

    def _release(self) -> None:
        self._holds = max(0, self._holds - 1)
        if self._holds == 0:
            self._open.set()

    def tell_commands_soon(self) -> None:
        """After a `session/new` answer: the session's slash commands, which an ACP client learns only from an
        update (later changes come with the session's info)."""
        for update in self.view.commands(self.attachment.info()):
            asyncio.get_running_loop().call_soon(self.send, update)

    # --- turns -----------------------------------------------------------------------------------------------------

    async def turn_end(self, delivery: Delivery) -> StopReason:
        """How the turn `delivery`'s prompt started, steered or was queued into ended. Raises: SessionEnded."""
        if isinstance(delivery.kind, Queued):
            prompt_id = delivery.prompt_id
            await self._until(lambda: prompt_id in self._prompt_turns)
            turn_id = self._prompt_turns[prompt_id]
        else:
            turn_id = delivery.kind.turn_id
        await self._until(lambda: turn_id in self._turn_ends)
        return self._turn_ends[turn_id]

    async def _until(self, done: Callable[[], bool]) -> None:
        while not done():
            if self._ended is not None:
                raise SessionEnded(self._ended)
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append((done, future))
            await future

    def _wake(self) -> None:
        waiting, self._waiters = self._waiters, []
        for done, future in waiting:
            if self._ended is not None or done():
                if not future.done():
                    future.set_result(None)
            else:
                self._waiters.append((done, future))

    # --- reading ---------------------------------------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            if not self._caught_up.done() and self.attachment.cursor >= self._target:
                self._arrive()
            async for batch in self.attachment.batches():
                await self._open.wait()
                # A request opened and closed within one batch (a replay's) is history: shown, never asked.
                settled = {e.kind.request_id for e in batch if isinstance(e.kind, RequestClosed)}
                for event in batch:
                    await self._tell_prompt(event)
                    self._handle(event, settled)
                if not self._caught_up.done() and self.attachment.cursor >= self._target:
                    self._arrive()
                self._wake()
            self._ended = "the session ended"
        except AgentError as exc:
            self._ended = str(exc)
        except PeerClosed:
            self._ended = "the client is gone"
        except asyncio.CancelledError:
            self._ended = "the client let go of the session"
            raise
        finally:
            if not self._caught_up.done():
                self._caught_up.set_result(None)
            self._wake()
            for task in list(self._asks.values()):
                task.cancel()
            if self._on_end is not None:
                self._on_end(self)

    async def _tell_prompt(self, event: Event) -> None:
        """A turn started by a prompt another attachment sent (another client's, or this client's before it came
        back): the prompt's text as a user message, with the id the sender's v2 echo gave it."""
        kind = event.kind
        if not (isinstance(kind, TurnStarted) and isinstance(kind.origin, FromPrompt)):
            return
        said = await self.attachment.session.said(kind.origin.prompt_id)
        if said is None or said.by == self.attachment.number:
            return  # the prompting connection answers (v1) or echoes (v2) its own
        message_id = await prompt_message_id(self.attachment.session, kind.origin.prompt_id)
        if self.shapes.whole_messages:
            m = self.shapes.models
            update: b.Update = m.SessionUpdateUserMessage(
                message_id=message_id, content=[m.ContentBlockText(text=said.text)]
            )
        else:
            update = b.chunk("user_message_chunk", message_id, said.text)
        self.send(update, event.sequence)

    def _arrive(self) -> None:
        self.view.replaying = False
        for update in self.view.state():
            self.send(update)
        if not self._early:
            self.hold()
        self.view.priming = False  # what follows is live: chunks stream as the agent sends them
        self._caught_up.set_result(None)

    def _handle(self, event: Event, settled: set[str]) -> None:
        kind = event.kind
        if isinstance(kind, TurnStarted) and isinstance(kind.origin, FromPrompt) and event.turn_info is not None:
            _keep(self._prompt_turns, kind.origin.prompt_id, event.turn_info.id)
        elif isinstance(kind, TurnEnded) and event.turn_info is not None:
            _keep(self._turn_ends, event.turn_info.id, kind.stop)
        for update in self.view.updates(event):
            self.send(update, event.sequence)
        if isinstance(kind, RequestOpened) and _request_id(kind) not in settled:
            self._opened(kind, event.sequence)
        elif isinstance(kind, RequestClosed):
            self._closed(kind.request_id, event.sequence)

    def send(self, update: b.Update, sequence: int | None = None) -> None:
        """One `session/update` for this session (with the event's sequence when it tells one)."""
        params: dict[str, Any] = {"sessionId": self.session_id, "update": b.wire(update)}
        if sequence is not None:
            params["_meta"] = {"omniagent": {"sequence": sequence}}
        self.peer.notify("session/update", params)

    # --- requests --------------------------------------------------------------------------------------------------

    def _opened(self, opened: RequestOpened, sequence: int) -> None:
        if self.attachment.role is not Role.CONTROLLER or self.attachment.detached:
            return  # an observer is shown the call, never asked
        request = opened.request
        if isinstance(request, PermissionAsk):
            permission = request.request
            params = asks.permission_params(self.shapes, self.session_id, self.view.root, permission, sequence)
            self._ask(permission.id, "session/request_permission", params, partial(asks.permission_answer, permission))
        elif isinstance(request, QuestionAsk) and self._elicits and asks.askable(request.request):
            questions = request.request
            params = asks.question_params(self.session_id, questions, sequence)
            self._ask(questions.id, "elicitation/create", params, partial(asks.question_answer, questions))
        elif isinstance(request, QuestionAsk) and self._alone:
            self._ask(request.request.id, "", {}, lambda _: DECLINED)
        # Else a question this client cannot show stays open for another client (or a cancel).

    def _ask(self, request_id: str, method: str, params: dict[str, Any], read: Callable[[Any], Answer | None]) -> None:
        task = asyncio.ensure_future(self._asking(request_id, method, params, read))
        self._asks[request_id] = task

        def forget(_: asyncio.Task[None]) -> None:
            if self._asks.get(request_id) is task:
                del self._asks[request_id]

        task.add_done_callback(forget)

    async def _asking(
        self, request_id: str, method: str, params: dict[str, Any], read: Callable[[Any], Answer | None]
    ) -> None:
        try:
            result = await self.peer.request(method, params) if method else None
        except (RpcError, PeerClosed) as exc:
            log.info("session %s: the client did not answer request %s: %s", self.session_id, request_id, exc)
            return  # left open for another client, or a cancel
        answer = read(result)
        if answer is None:
            return  # not chosen (a cancelled turn's ask): the client's cancel (or another client) settles it
        try:
            await self.attachment.answer(request_id, answer)
        except InvalidRequest:
            self._resolved(request_id, None)  # another client's answer came first (or the request closed)
        except AgentError as exc:
            log.info("session %s: answering %s failed: %s", self.session_id, request_id, exc)

    def _closed(self, request_id: str, sequence: int) -> None:
        task = self._asks.pop(request_id, None)
        if task is not None and not task.done():
            task.cancel()  # the peer sends `$/cancel_request` for our request
            self._resolved(request_id, sequence)

    def _resolved(self, request_id: str, sequence: int | None) -> None:
        params: dict[str, Any] = {"sessionId": self.session_id, "requestId": request_id}
        if sequence is not None:
            params["_meta"] = {"omniagent": {"sequence": sequence}}
        with contextlib.suppress(PeerClosed):
            self.peer.notify(RESOLVED, params)

    # --- the end ---------------------------------------------------------------------------------------------------

    async def stop(self) -> None:
        """Stop following (the attachment is the caller's to detach)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        for task in list(self._asks.values()):
            task.cancel()
        await asyncio.gather(*self._asks.values(), return_exceptions=True)

    @property
    def ended(self) -> bool:
        return self._ended is not None


def _keep(kept: dict[str, Any], key: str, value: Any) -> None:
    kept[key] = value
    if len(kept) > _KEPT:
        del kept[next(iter(kept))]


def _request_id(opened: RequestOpened) -> str:
    return opened.request.request.id


async def prompt_message_id(session: HubSession, prompt: Delivery | str) -> str:
    """The id ACP names a prompt's user message by (a v2 receipt, its echo, another client's view of it): the agent's
    own where it names one (our engine: the id its history replays the message under, so a later process names it as
    the receipt did), else `prompt.<prompt id>`. A prompt queued behind a turn is named at once, before the agent
    has it."""
    if isinstance(prompt, str):
        prompt_id, queued = prompt, False
    else:
        prompt_id, queued = prompt.prompt_id, isinstance(prompt.kind, Queued)
    taken = None if queued else await session.taken(prompt_id)
    return taken or f"prompt.{prompt_id}"
