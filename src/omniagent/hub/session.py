"""One session the hub owns, and the clients attached to it.

A `HubSession` wraps the runtime's `Session`: one task (the pump) reads its events into an `EventLog`, so the session
goes on with no client attached, and every client reads the log at its own pace. A client reaches a session through
an `Attachment`, which has the `Session` methods and a role: a controller prompts, answers, cancels and configures; an
observer only reads. Two controllers' prompts reach the session loop as one client's would (queue or steer by the same
turn rules), and an answer to a request is the loop's: the first one resolves it, a later one is refused
(`InvalidRequest`), and every client sees `RequestClosed`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from omniagent.hub.log import DEFAULT_RETENTION, EventLog
from omniagent.protocols.sidecar.agents import ConfigValue, SessionInfo, SessionStatus
from omniagent.protocols.sidecar.commands import Answer, Delivery, RollbackScope
from omniagent.protocols.sidecar.events import (
    ContextUsage,
    Event,
    RequestClosed,
    RequestOpened,
    SessionUpdated,
    StatusChanged,
)
from omniagent.runtime.errors import AgentError, InvalidRequest, SessionClosed
from omniagent.runtime.session import Session

log = logging.getLogger(__name__)

# The event kinds that change what a list of sessions shows (activity, title, usage): a batch holding one of them is
# a change the hub tells its watchers of (`Hub.changes`).
_LISTED = (StatusChanged, RequestOpened, RequestClosed, SessionUpdated, ContextUsage)


class Role(StrEnum):
    """What an attached client may do."""

    CONTROLLER = "controller"  # prompt, answer, cancel, configure, close
    OBSERVER = "observer"  # read only


class History(StrEnum):
    """What a client attaching without a cursor is replayed first (the names of ACP's multi-client attach draft)."""

    FULL = "full"  # every kept event
    PENDING_ONLY = "pending_only"  # only the requests still waiting for an answer
    NONE = "none"  # nothing: live events only


class Activity(StrEnum):
    """A session's state as a list of sessions shows it."""

    WORKING = "working"
    NEEDS_INPUT = "needs_input"
    IDLE = "idle"
    ENDED = "ended"


@dataclass(frozen=True, slots=True)
class ClientInfo:
    """Who a client says it is (shown to other clients; not an identity: the token is)."""

    name: str
    version: str | None = None
    transport: str = "unknown"  # "websocket", "sse", "stdio", …


@dataclass(frozen=True, slots=True)
class Said:
    """A prompt's text, and the number of the attachment that sent it."""

    text: str
    by: int


_attachment_ids = itertools.count(1)


class HubSession:
    """A session of any agent, kept by the hub until a client closes it or its agent ends it."""

    def __init__(
        self,
        session: Session,
        *,
        agent: str,
        directory: str,
        retention: int = DEFAULT_RETENTION,
        on_change: Callable[[HubSession], None] | None = None,
        created_at: float | None = None,
    ) -> None:
        self._session = session
        self.agent = agent
        self.directory = directory
        # A resumed session keeps the time it was first opened (a later process resumes it).
        self.created_at = created_at if created_at is not None else time.time()
        self.log = EventLog(retention)
        self._attachments: dict[int, Attachment] = {}
        self._open_requests: dict[str, Event] = {}  # request id → its RequestOpened event, while it waits
        # What each prompt said, and which attachment sent it: the runtime's events name a turn's prompt by id only
        # (`TurnStarted` from `FromPrompt`), and a client attaching later is shown what was asked.
        self._prompts: dict[str, Said] = {}
        self._said_waiters: dict[str, asyncio.Future[Said]] = {}
        self._on_change = on_change
        self.usage: ContextUsage | None = None  # the latest usage the agent reported (context, cost)
        # What the session told before it was kept (a resumed session's history) is in the log at once: a client
        # attaching right away replays it, and an ACP load answers after it.
        self._record(session.events.take_ready())
        self._pump = asyncio.ensure_future(self._read_events())

    @property
    def id(self) -> str:
        return self._session.id

    @property
    def closed(self) -> bool:
        """Whether the session has ended (its events may still be read from the log)."""
        return self.log.ended

    def info(self) -> SessionInfo:
        """The latest snapshot of the session (status included)."""
        return self._session.info()

    @property
    def activity(self) -> Activity:
        if self.log.ended:
            return Activity.ENDED
        if self._open_requests:
            return Activity.NEEDS_INPUT
        status = self._session.info().status
        if status is SessionStatus.NEEDS_INPUT:
            return Activity.NEEDS_INPUT
        return Activity.WORKING if status is SessionStatus.WORKING else Activity.IDLE

    @property
    def clients(self) -> list[Attachment]:
        """The clients attached now."""
        return list(self._attachments.values())

    def attach(
        self,
        client: ClientInfo,
        role: Role = Role.CONTROLLER,
        *,
        after: int | None = None,
        history: History = History.FULL,
    ) -> Attachment:
        """Attach a client: it reads the events after `after` (a sequence it already has), else what `history`
        says, then every new event, in order, none twice. A cursor ahead of the log reads it from its start."""
        replay: list[Event] = []
        if after is not None and after > self.log.last:
            # No client can hold a sequence this life of the session has not reached: the cursor is from an earlier
            # life (the session resumed by a later hub, which numbers its events from 1 again). Waiting for the log
            # to pass it would hide every event until then; this life's log is what the client has not seen.
            after = 0
        if after is None:
            if history is History.FULL:
                after = 0
            else:
                after = self.log.last
                if history is History.PENDING_ONLY:
                    replay = list(self._open_requests.values())
        attachment = Attachment(self, client, role, after, replay)
        self._attachments[attachment.number] = attachment
        self._changed()
        return attachment

    async def taken(self, prompt_id: str) -> str | None:
        """`Session.taken`: the agent's id of a prompt's message once it took it (None: it names none)."""
        try:
            return await self._session.taken(prompt_id)
        except SessionClosed:
            return None

    async def said(self, prompt_id: str, within: float = 2.0) -> Said | None:
        """What prompt `prompt_id` said, waiting up to `within` seconds for its `prompt` call to return (its turn
        may start first); None for a prompt this hub did not send, or one forgotten (the last `retention` kept)."""
        found = self._prompts.get(prompt_id)
        if found is not None or self.log.ended:
            return found
        waiter = self._said_waiters.get(prompt_id)
        if waiter is None:
            waiter = self._said_waiters[prompt_id] = asyncio.get_running_loop().create_future()
        try:
            async with asyncio.timeout(within):
                return await asyncio.shield(waiter)
        except TimeoutError:
            return None

    def _remember(self, prompt_id: str, said: Said) -> None:
        self._prompts[prompt_id] = said
        if len(self._prompts) > self.log.retention:
            del self._prompts[next(iter(self._prompts))]
        waiter = self._said_waiters.pop(prompt_id, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(said)

    async def wait_closed(self) -> None:
        """Wait until the session has ended and every event is in the log."""
        await asyncio.shield(self._pump)

    async def close(self, *, forget: bool = False) -> None:
        """End the session for every client (`forget`: the agent's own record of it goes too)."""
        if not self._session.closed:
            with contextlib.suppress(SessionClosed):
                await self._session.close(forget=forget)
        await self.wait_closed()

    def _detach(self, attachment: Attachment) -> None:
        if self._attachments.pop(attachment.number, None) is not None:
            self._changed()

    async def _read_events(self) -> None:
        error: AgentError | None = None
        try:
            async for batch in self._session.events.batches():
                self._record(batch)
        except AgentError as exc:
            error = exc
        except Exception:
            log.exception("session %s: reading its events failed", self.id)
        self._open_requests.clear()
        self.log.end(error)
        self._changed()

    def _record(self, batch: list[Event]) -> None:
        """Log a batch of the session's events, noting its open requests and usage; tell the watchers of a change
        a list shows."""
        listed = False
        for event in batch:
            kind = event.kind
            if isinstance(kind, RequestOpened):
                self._open_requests[kind.request.request.id] = event
            elif isinstance(kind, RequestClosed):
                self._open_requests.pop(kind.request_id, None)
            elif isinstance(kind, ContextUsage):
                self.usage = kind
            listed = listed or isinstance(kind, _LISTED)
        self.log.extend(batch)
        if listed:
            self._changed()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self)


class Attachment:
    """One client on one session: its reading position, its role, and the session's methods (checked against the
    role). Detaching leaves the session running."""

    def __init__(self, session: HubSession, client: ClientInfo, role: Role, after: int, replay: list[Event]) -> None:
        self.session = session
        self.client = client
        self.role = role
        self.number = next(_attachment_ids)
        self._replay = replay
        self._detached = asyncio.Event()
        # Events the client asked for that were no longer kept: it starts after them.
        self.missed = session.log.since(after).missed
        self._cursor = after + self.missed

    @property
    def id(self) -> str:
        return self.session.id

    @property
    def cursor(self) -> int:
        """The sequence of the last event this client was given."""
        return self._cursor

    @property
    def detached(self) -> bool:
        return self._detached.is_set()

    def info(self) -> SessionInfo:
        return self.session.info()

    def detach(self) -> None:
        """Stop reading; the session goes on. Idempotent."""
        if not self._detached.is_set():
            self._detached.set()
            self.session._detach(self)
            self.session.log.wake()  # a reader waiting for more sees the detach (its peers just read again)

    async def batches(self) -> AsyncIterator[list[Event]]:
        """The events after the cursor, in lists of what is ready (replay first), until the session ends or the
        client detaches. Raises the agent's error (`ProcessExited`, `AuthRequired`) after the last event when the
        session ended with one. A reader that falls behind the log's retention skips what is gone (`missed` grows)."""
        if self._replay:
            replay, self._replay = self._replay, []
            yield replay
        log_ = self.session.log
        while not self._detached.is_set():
            changed = log_.pending()
            got = log_.since(self._cursor)
            if got.missed:
                self.missed += got.missed
                self._cursor += got.missed
            if got.events:
                self._cursor = got.events[-1].sequence
                yield got.events
                continue
            if log_.ended:
                if log_.error is not None:
                    raise log_.error
                return
            await changed.wait()  # an append, the end, or a detach (which wakes the log's readers)

    # --- the session's methods, for controllers -----------------------------------------------------------------

    def _control(self, verb: str) -> Session:
        if self.role is not Role.CONTROLLER:
            raise InvalidRequest(f"this client is attached as an observer and cannot {verb}")
        if self._detached.is_set():
            raise InvalidRequest("this client has detached from the session")
        return self.session._session

    async def prompt(self, text: str, attachments: Sequence[str] = ()) -> Delivery:
        delivery = await self._control("prompt").prompt(text, attachments)
        self.session._remember(delivery.prompt_id, Said(text, self.number))
        return delivery

    async def dequeue(self, prompt_id: str) -> None:
        await self._control("dequeue").dequeue(prompt_id)

    async def answer(self, request_id: str, answer: Answer) -> None:
        await self._control("answer").answer(request_id, answer)

    async def configure(self, option: str, value: ConfigValue) -> None:
        await self._control("configure").configure(option, value)

    async def rollback(self, turns: int, scope: RollbackScope) -> None:
        await self._control("roll back").rollback(turns, scope)

    async def compact(self) -> None:
        await self._control("compact").compact()

    async def cancel(self, clear_queue: bool = False) -> None:
        await self._control("cancel").cancel(clear_queue)

    async def close(self) -> None:
        """End the session for every client."""
        self._control("close")
        await self.session.close()
