"""A client of a hub's sidecar WebSocket (`omniagent hub`, `/sidecar`): list the hub's sessions, open one, attach to
one with a cursor, and drive it through a `RemoteSession`, which has the methods `chat` uses of the runtime's
`Session` (so `omniagent chat --attach` is the same chat).

    async with HubLink.connect("http://127.0.0.1:7777", token) as link:
        session = await link.attach("s3", after=42)     # the events after 42, then live ones
        async for event in session.events: ...
        await session.detach()                          # the session goes on in the hub

The token is the hub's bearer token: `--token`, else `OMNIAGENT_HUB_TOKEN`, else the hub's token file on this
machine (`<data dir>/hub/token`). It goes in the `Authorization` header of the WebSocket handshake only.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import msgspec
from msgspec.structs import replace
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, InvalidURI

from omniagent.protocols.sidecar import PROTOCOL_VERSION
from omniagent.protocols.sidecar.agents import ConfigValue, PlanUsage, SessionInfo
from omniagent.protocols.sidecar.base import convert
from omniagent.protocols.sidecar.commands import (
    Answer,
    Attach,
    Attached,
    AttachHistory,
    AttachRole,
    Cancel,
    Close,
    Command,
    Compact,
    Configure,
    Delivery,
    Dequeue,
    Detach,
    GetPlanUsage,
    ListSessions,
    Open,
    Rollback,
    RollbackScope,
    SendAnswer,
    SendPrompt,
    SessionList,
)
from omniagent.protocols.sidecar.events import Event, SessionUpdated, StatusChanged
from omniagent.protocols.sidecar.lines import ErrorBody, ErrorKind
from omniagent.runtime import errors
from omniagent.runtime.errors import AgentError
from omniagent.runtime.options import OpenOptions

log = logging.getLogger(__name__)

# Seconds to wait for the WebSocket handshake and the hello.
CONNECT_TIMEOUT = 15.0


def split_url(url: str) -> tuple[str, str | None]:
    """`http://host:port[/SESSION]` → (the hub's `/sidecar` WebSocket URL, the session or None). `http(s)` and
    `ws(s)` are both taken; a trailing `/sidecar` names the endpoint itself."""
    parts = urlsplit(url)
    scheme = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}.get(parts.scheme)
    if scheme is None or not parts.netloc:
        raise ValueError(f"not a hub URL (http://HOST:PORT[/SESSION]): {url}")
    segments = [segment for segment in parts.path.split("/") if segment]
    session = None
    if segments and segments[-1] != "sidecar":
        session = segments.pop()
    if segments and segments[-1] == "sidecar":
        segments.pop()
    path = "/".join([*segments, "sidecar"])
    return urlunsplit((scheme, parts.netloc, "/" + path, parts.query, "")), session


def error_from_body(body: ErrorBody) -> AgentError:
    """The runtime's error for an `ErrorBody` the hub sent (its message is rebuilt from the same fields)."""
    detail = body.detail if isinstance(body.detail, str) else body.message
    kind = body.kind
    if kind == ErrorKind.NOT_INSTALLED and isinstance(body.agent, str):
        return errors.NotInstalled(body.agent)
    if kind == ErrorKind.AUTH_REQUIRED and not isinstance(body.login, msgspec.UnsetType):
        return errors.AuthRequired(list(body.login))
    if kind == ErrorKind.HANDSHAKE_TIMEOUT:
        return errors.HandshakeTimeout()
    if kind == ErrorKind.SESSION_BUSY:
        return errors.SessionBusy()
    if kind == ErrorKind.SESSION_CLOSED:
        return errors.SessionClosed()
    if kind == ErrorKind.UNKNOWN_SESSION and isinstance(body.session, str):
        return errors.UnknownSession(body.session)
    if kind == ErrorKind.PROCESS_EXITED:
        status = body.status if isinstance(body.status, str) else "unknown"
        return errors.ProcessExited(status, body.stderr if isinstance(body.stderr, str) else "")
    with_detail: dict[str, Callable[[str], AgentError]] = {
        ErrorKind.SPAWN_FAILED: errors.SpawnFailed,
        ErrorKind.UNSUPPORTED_FEATURE: errors.UnsupportedFeature,
        ErrorKind.INVALID_CONFIGURATION: errors.InvalidConfiguration,
        ErrorKind.INVALID_REQUEST: errors.InvalidRequest,
        ErrorKind.RESUME_FAILED: errors.ResumeFailed,
    }
    return with_detail.get(kind, errors.ProtocolFailed)(detail)


def _lost() -> AgentError:
    return errors.ProtocolFailed("the connection to the hub closed")


class RemoteEvents:
    """A session's events as this client receives them, in `sequence` order (one consumer, as `EventStream`)."""

    def __init__(self) -> None:
        self._items: deque[Event] = deque()
        self._ready = asyncio.Event()
        self._ended = False
        self.error: AgentError | None = None
        """The terminal error the stream ended with (the agent's, or the lost connection), if any."""

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        async for batch in self.batches():
            for event in batch:
                yield event

    async def batches(self) -> AsyncIterator[list[Event]]:
        """The events in lists of what has arrived; raises the terminal error after the last one."""
        while True:
            if self._items:
                batch = list(self._items)
                self._items.clear()
                yield batch
                continue
            if self._ended:
                if self.error is not None:
                    raise self.error
                return
            self._ready.clear()
            await self._ready.wait()

    def _push(self, event: Event) -> None:
        self._items.append(event)
        self._ready.set()

    def _end(self, error: AgentError | None = None) -> None:
        if not self._ended:
            self._ended = True
            self.error = self.error or error
            self._ready.set()


class RemoteSession:
    """A hub session this client follows: the runtime `Session`'s methods over the wire, plus `detach`."""

    def __init__(self, link: HubLink, info: SessionInfo, *, role: AttachRole, start: int, missed: int) -> None:
        self._link = link
        self._info = info
        self.role = role
        self.missed = missed
        """Events asked for that the hub no longer kept when this client attached."""
        self.cursor = start - 1
        """The sequence of the last event received (what to attach with `after` to carry on)."""
        self.events = RemoteEvents()
        self._closed = False

    @property
    def id(self) -> str:
        return self._info.id

    @property
    def closed(self) -> bool:
        """Whether this client's stream of the session ended (the session ended, or this client detached)."""
        return self._closed

    def info(self) -> SessionInfo:
        """The latest snapshot received (the status follows the events)."""
        return self._info

    async def prompt(self, text: str, attachments: Sequence[str] = ()) -> Delivery:
        command = SendPrompt(id=0, session=self.id, text=text, attachments=list(attachments))
        return convert(await self._link.call(command), Delivery)

    async def dequeue(self, prompt_id: str) -> None:
        await self._link.call(Dequeue(id=0, session=self.id, prompt=prompt_id))

    async def answer(self, request_id: str, answer: Answer) -> None:
        await self._link.call(SendAnswer(id=0, session=self.id, request=request_id, answer=answer))

    async def configure(self, option: str, value: ConfigValue) -> None:
        await self._link.call(Configure(id=0, session=self.id, option=option, value=value))

    async def rollback(self, turns: int, scope: RollbackScope) -> None:
        await self._link.call(Rollback(id=0, session=self.id, turns=turns, scope=scope))

    async def compact(self) -> None:
        await self._link.call(Compact(id=0, session=self.id))

    async def cancel(self, clear_queue: bool = False) -> None:
        await self._link.call(Cancel(id=0, session=self.id, clear_queue=clear_queue))

    async def close(self) -> None:
        """End the session in the hub, for every client."""
        await self._link.call(Close(id=0, session=self.id))

    async def detach(self) -> None:
        """Stop following the session; it goes on in the hub. Idempotent; a lost connection is detached already."""
        if self._closed:
            return
        with suppress(AgentError):
            await self._link.call(Detach(id=0, session=self.id))

    def _receive(self, event: Event) -> None:
        kind = event.kind
        if isinstance(kind, SessionUpdated):
            self._info = kind.info
        elif isinstance(kind, StatusChanged):
            self._info = replace(self._info, status=kind.status)
        if event.sequence > self.cursor:
            self.cursor = event.sequence
        self.events._push(event)

    def _end(self, error: AgentError | None = None) -> None:
        self._closed = True
        self.events._end(error)


class HubLink:
    """One WebSocket to a hub's `/sidecar`: commands by id, and the lines of the sessions it follows."""

    def __init__(self, socket: ClientConnection) -> None:
        self._socket = socket
        self._ids = iter(range(1, 2**63))
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        # Replies that start following a session: the session is made by the reader itself, before it reads the
        # next line, which may already be one of that session's events.
        self._following: dict[int, Callable[[Any], RemoteSession]] = {}
        self._sessions: dict[str, RemoteSession] = {}
        self._reader: asyncio.Task[None] | None = None

    @classmethod
    @asynccontextmanager
    async def connect(cls, url: str, token: str | None = None) -> AsyncIterator[HubLink]:
        """Connect to the hub at `url` (`split_url`: a session in it is ignored here).
        Raises: `ConnectionError` (the message says why, never the token)."""
        endpoint, _ = split_url(url)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT):
                socket = await connect(endpoint, additional_headers=headers, max_size=None, compression=None)
                hello = json.loads(await socket.recv())
        except InvalidStatus as error:
            status = error.response.status_code
            why = "the token was refused" if status in (401, 403) else f"HTTP {status}"
            raise ConnectionError(f"the hub at {endpoint} refused the connection: {why}") from None
        except (OSError, TimeoutError, InvalidURI, ConnectionClosed, ValueError) as error:
            raise ConnectionError(f"cannot reach the hub at {endpoint}: {type(error).__name__}: {error}") from None
        if not (isinstance(hello, dict) and isinstance(hello.get("hello"), dict)):
            await socket.close()
            raise ConnectionError(f"{endpoint} did not greet with the sidecar wire's hello")
        if hello["hello"].get("protocol") != PROTOCOL_VERSION:
            await socket.close()
            raise ConnectionError(f"{endpoint} speaks sidecar protocol {hello['hello'].get('protocol')}")
        link = cls(socket)
        link._reader = asyncio.create_task(link._read(), name="hub link")
        try:
            yield link
        finally:
            await link.aclose()

    async def aclose(self) -> None:
        """Close the connection: the hub detaches this client from every session (they go on)."""
        await self._socket.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)

    async def call(self, command: Command) -> Any:
        """Send `command` (its id replaced by the next one) and return its `ok`. Raises the error it got."""
        return await self._send(command, None)

    async def sessions(self) -> SessionList:
        """The hub's sessions, this run's and earlier runs'."""
        return convert(await self.call(ListSessions(id=0)), SessionList)

    async def plan_usage(self, agent: str) -> PlanUsage:
        return convert(await self.call(GetPlanUsage(id=0, agent=agent)), PlanUsage)

    async def open(self, agent: str, directory: str, options: OpenOptions | None = None) -> RemoteSession:
        """Open a session in the hub (it owns it) and follow it as its controller."""
        options = options or OpenOptions()
        command = Open(
            id=0,
            agent=agent,
            dir=directory,
            resume=options.resume,
            fork=options.fork,
            fork_at=options.fork_at,
            permission_mode=options.permission_mode,
            mcp_servers=list(options.mcp_servers),
            configure=dict(options.configure),
        )

        def opened(result: Any) -> RemoteSession:
            info = convert(result, SessionInfo)
            return RemoteSession(self, info, role=AttachRole.CONTROLLER, start=1, missed=0)

        session: RemoteSession = await self._send(command, opened)
        return session

    async def attach(
        self,
        session_id: str,
        *,
        after: int | None = None,
        role: AttachRole = AttachRole.CONTROLLER,
        history: AttachHistory = AttachHistory.FULL,
    ) -> RemoteSession:
        """Follow a session of the hub: the events after `after`, else what `history` says, then live ones."""

        def attached(result: Any) -> RemoteSession:
            reply = convert(result, Attached)
            return RemoteSession(self, reply.info, role=reply.role, start=reply.from_, missed=reply.missed)

        command = Attach(id=0, session=session_id, after=after, role=role, history=history)
        session: RemoteSession = await self._send(command, attached)
        return session

    async def _send(self, command: Command, follows: Callable[[Any], RemoteSession] | None) -> Any:
        frame_id = next(self._ids)
        waiting = asyncio.get_running_loop().create_future()
        self._waiting[frame_id] = waiting
        if follows is not None:
            self._following[frame_id] = follows
        try:
            await self._socket.send(replace(command, id=frame_id).encode().decode("utf-8"))
        except ConnectionClosed:
            self._waiting.pop(frame_id, None)
            self._following.pop(frame_id, None)
            raise _lost() from None
        return await waiting

    async def _read(self) -> None:
        try:
            async for message in self._socket:
                for line in message.splitlines():  # a frame holds one or more lines
                    try:
                        self._take(json.loads(line))
                    except (ValueError, msgspec.ValidationError) as error:
                        log.warning("the hub sent a line this client does not understand: %s", error)
        except ConnectionClosed:
            pass
        finally:
            for waiting in self._waiting.values():
                if not waiting.done():
                    waiting.set_exception(_lost())
            self._waiting.clear()
            for session in self._sessions.values():
                session._end(_lost())
            self._sessions.clear()

    def _take(self, line: Any) -> None:
        if not isinstance(line, dict):
            raise ValueError("not a JSON object")
        if "id" in line:
            self._reply(line)
        elif "event" in line:
            event = convert(line["event"], Event)
            session = self._sessions.get(event.session_id)
            if session is not None:
                session._receive(event)
        elif "closed" in line:
            session = self._sessions.pop(line["closed"], None)
            if session is not None:
                session._end()
        elif "session" in line and "error" in line:
            session = self._sessions.get(line["session"])
            if session is not None:
                session.events.error = error_from_body(convert(line["error"], ErrorBody))

    def _reply(self, line: dict[str, Any]) -> None:
        frame_id = line["id"]
        if frame_id is None:
            log.warning("the hub refused a line: %s", line.get("error", {}).get("message"))
            return
        waiting = self._waiting.pop(frame_id, None)
        follows = self._following.pop(frame_id, None)
        if waiting is None or waiting.done():
            return
        if "error" in line:
            waiting.set_exception(error_from_body(convert(line["error"], ErrorBody)))
            return
        result = line.get("ok")
        if follows is not None:
            session = follows(result)
            self._sessions[session.id] = session
            result = session
        waiting.set_result(result)
