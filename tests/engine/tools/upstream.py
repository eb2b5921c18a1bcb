"""A plain HTTP server on 127.0.0.1 that stands in for an allowed host in the network allowlist tests: the proxy's
hosts pin a test name (`allowed.test`) to it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


class Upstream:
    """Answers every request with the head it read (so a test sees what the proxy forwarded); `/hold` answers
    `holding` and keeps the connection open until the other side closes it (counted in `released`)."""

    def __init__(self) -> None:
        self.port = 0
        self.heads: list[str] = []
        self.released = 0
        self._changed = asyncio.Condition()

    @property
    def request_lines(self) -> list[str]:
        """The first line of every request that reached the server."""
        return [head.split("\r\n", 1)[0] for head in self.heads]

    async def wait_released(self, count: int, within: float) -> bool:
        """Wait (bounded) until `count` held connections were closed by the other side; says whether they were."""
        try:
            async with asyncio.timeout(within), self._changed:
                await self._changed.wait_for(lambda: self.released >= count)
        except TimeoutError:
            return False
        return True

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        self.heads.append(head)
        try:
            if " /hold " in head.split("\r\n", 1)[0]:
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nholding\n")
                await writer.drain()
                while await reader.read(4096):
                    pass
                async with self._changed:
                    self.released += 1
                    self._changed.notify_all()
            else:
                body = f"upstream saw:\n{head}".encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()


@contextlib.asynccontextmanager
async def running_upstream() -> AsyncIterator[Upstream]:
    """An `Upstream` listening on 127.0.0.1 for the block."""
    upstream = Upstream()
    server = await asyncio.start_server(upstream.serve, "127.0.0.1", 0)
    upstream.port = server.sockets[0].getsockname()[1]
    async with server:
        yield upstream
