"""Test support for the hub's ACP face at the class level: one in-process hub (the mock agent), each ACP connection a
`AcpAgent` on a real TCP socket on 127.0.0.1, and a raw client that reads and writes the wire lines."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from omniagent.hub.hub import Hub
from omniagent.hub.session import ClientInfo
from omniagent.serving.acp.connection import AcpAgent
from omniagent.serving.acp.handshake import AgentFacts, Handshake
from omniagent.wire.dialects import STRICT
from omniagent.wire.jsonrpc import Peer

WAIT = 10.0  # seconds: bound on every wait; a healthy exchange takes milliseconds


class RawClient:
    """An ACP client speaking raw lines: every message it reads is kept, in order."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self.seen: list[dict[str, Any]] = []
        self._next = 0

    def send(self, message: dict[str, Any]) -> None:
        self._writer.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def request(self, request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request and read until its answer (what comes before it is kept in `seen`)."""
        self.send({"id": request_id, "method": method, "params": params})
        return await self.until(lambda m: m.get("id") == request_id and "method" not in m)

    async def until(self, match: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first message not yet looked at that `match` accepts (reading more as needed)."""
        async with asyncio.timeout(WAIT):
            while True:
                while self._next < len(self.seen):
                    message = self.seen[self._next]
                    self._next += 1
                    if match(message):
                        return message
                line = await self._reader.readline()
                assert line, "the connection closed"
                self.seen.append(json.loads(line))

    def close(self) -> None:
        self._writer.close()


@asynccontextmanager
async def acp_server(hub: Hub, default_agent: str = "mock") -> AsyncIterator[Callable[[], Any]]:
    """A TCP server on 127.0.0.1 whose every connection is a `AcpAgent` of its own hub client; yields a
    function that connects a new `RawClient`."""
    served: list[asyncio.Task[None]] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = Peer(reader, writer, dialect=STRICT, name="acp-agent")
        client = hub.client(ClientInfo("test", transport="tcp"))
        connection = AcpAgent(peer, client, handshake=Handshake(AgentFacts(default_agent)))
        try:
            async with peer:
                await peer.wait_closed()
        finally:
            await connection.aclose()
            writer.close()

    def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.append(asyncio.ensure_future(serve(reader, writer)))

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    clients: list[RawClient] = []

    async def connect() -> RawClient:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        client = RawClient(reader, writer)
        clients.append(client)
        return client

    try:
        yield connect
    finally:
        for client in clients:
            client.close()
        server.close()
        await server.wait_closed()
        await asyncio.gather(*served, return_exceptions=True)


def updates_of(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `session/update` params among `messages`, in order."""
    return [m["params"] for m in messages if m.get("method") == "session/update"]


def sequences(messages: list[dict[str, Any]]) -> list[int]:
    """The event sequences the updates among `messages` carry, in order."""
    return [p["_meta"]["omniagent"]["sequence"] for p in updates_of(messages) if "_meta" in p]
