"""The hub's live ACP connections: created under the client limit, found by `Acp-Connection-Id`, closed when
deleted, when idle too long (streamable HTTP with no stream open), and all at once when the hub stops."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable, Iterator

from omniagent.errors import OmniagentError
from omniagent.faces.hub.connection import AcpConnection, BindAcp
from omniagent.faces.hub.settings import Limits
from omniagent.hub.hub import Hub
from omniagent.hub.session import ClientInfo
from omniagent.wire.jsonl import ByteSink

log = logging.getLogger(__name__)


class TooManyClients(OmniagentError):
    """The hub holds `Limits.max_clients` connections already."""


class Registry:
    """Every ACP connection of the hub, by id."""

    def __init__(self, hub: Hub, limits: Limits) -> None:
        self.hub = hub
        self.limits = limits
        self._connections: dict[str, AcpConnection] = {}
        self._idle: dict[str, asyncio.TimerHandle] = {}
        self._streams: dict[str, int] = {}  # streams open per connection: an idle timer runs only at zero
        self._closing: set[asyncio.Task[None]] = set()
        self._others = 0  # connections of other wires (the sidecar's), counted against the same limit

    def __len__(self) -> int:
        return len(self._connections) + self._others

    @contextlib.contextmanager
    def admitted(self) -> Iterator[None]:
        """Count a connection of another wire (`/sidecar`) while it lasts. Raises `TooManyClients`."""
        if len(self) >= self.limits.max_clients:
            raise TooManyClients
        self._others += 1
        try:
            yield
        finally:
            self._others -= 1

    async def open(self, sink: ByteSink, bind: BindAcp, *, transport: str, on_end: Callable[[], None]) -> AcpConnection:
        """A new, started connection. Raises `TooManyClients`."""
        if len(self) >= self.limits.max_clients:
            raise TooManyClients
        connection_id = uuid.uuid4().hex
        client = self.hub.client(ClientInfo(f"acp-{connection_id[:8]}", transport=transport))
        connection = AcpConnection(connection_id, sink, bind, client, max_bytes=self.limits.max_body_bytes)
        self._connections[connection_id] = connection
        try:
            await connection.start()
        except BaseException:
            self._connections.pop(connection_id, None)
            raise
        task = asyncio.ensure_future(self._forget_when_ended(connection, on_end))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)
        return connection

    def get(self, connection_id: str) -> AcpConnection | None:
        return self._connections.get(connection_id)

    def touched(self, connection_id: str) -> None:
        """The client did something on the connection: restart its idle timer (when no stream is open)."""
        timer = self._idle.pop(connection_id, None)
        if timer is not None:
            timer.cancel()
        if self._streams.get(connection_id, 0) == 0 and connection_id in self._connections:
            loop = asyncio.get_running_loop()
            self._idle[connection_id] = loop.call_later(self.limits.idle_seconds, self._expire, connection_id)

    def stream_opened(self, connection_id: str) -> None:
        self._streams[connection_id] = self._streams.get(connection_id, 0) + 1
        self.touched(connection_id)

    def stream_closed(self, connection_id: str) -> None:
        count = self._streams.pop(connection_id, 1) - 1
        if count > 0:
            self._streams[connection_id] = count
        self.touched(connection_id)

    async def close(self, connection_id: str) -> None:
        connection = self._connections.get(connection_id)
        if connection is not None:
            await connection.aclose()

    async def aclose(self) -> None:
        """Close every connection (the hub is stopping)."""
        await asyncio.gather(*(connection.aclose() for connection in list(self._connections.values())))
        await asyncio.gather(*self._closing, return_exceptions=True)

    def _expire(self, connection_id: str) -> None:
        self._idle.pop(connection_id, None)
        connection = self._connections.get(connection_id)
        if connection is not None:
            log.info("closing ACP connection %s: idle for %gs", connection_id, self.limits.idle_seconds)
            task = asyncio.ensure_future(connection.aclose())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    async def _forget_when_ended(self, connection: AcpConnection, on_end: Callable[[], None]) -> None:
        await connection.ended.wait()
        self._connections.pop(connection.id, None)
        self._streams.pop(connection.id, None)
        timer = self._idle.pop(connection.id, None)
        if timer is not None:
            timer.cancel()
        on_end()
