"""One ACP connection over the network: a `Peer` fed one message at a time (a POST body, a WebSocket frame), its
output going to whatever sink the transport gives it, and the ACP agent side bound on it.

The agent side is the seam to `serving/acp` (`AcpAgent`): built by a `BindAcp` over the peer and the
connection's own `HubClient`, closed when the connection ends. The client does not own its sessions: they outlive the
connection (the hub's rule), so a client that comes back reattaches.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Protocol

from omniagent.hub.hub import HubClient
from omniagent.wire.dialects import STRICT
from omniagent.wire.jsonl import ByteSink
from omniagent.wire.jsonrpc import Peer

log = logging.getLogger(__name__)


class AcpSide(Protocol):
    """The ACP agent side of one connection, its handlers registered on the peer it was built over."""

    async def aclose(self) -> None:
        """The connection is gone: detach from its sessions (they go on)."""

    async def reattach(self, session_id: str, after: int) -> None:
        """Send the session's events after sequence `after` again (session/update notifications carrying
        `_meta.omniagent.sequence`), then continue live: each event once, in order."""


# Builds the agent side over a connection's peer and its hub client.
BindAcp = Callable[[Peer, HubClient], AcpSide]


class AcpConnection:
    """A `Peer` over messages handed in by a transport; `start()` it, `feed()` it, `aclose()` it."""

    def __init__(self, connection_id: str, sink: ByteSink, bind: BindAcp, client: HubClient, *, max_bytes: int):
        self.id = connection_id
        self.client = client
        self._sink = sink
        self._bind = bind
        self._max_bytes = max_bytes
        self._reader = asyncio.StreamReader()
        self._side: asyncio.Future[AcpSide] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[None] | None = None
        self._peer: Peer | None = None
        self.ended = asyncio.Event()

    async def start(self) -> None:
        """Start the peer and bind the agent side; returns once messages can be fed."""
        self._task = asyncio.ensure_future(self._run())
        await asyncio.shield(self._side)

    def feed(self, line: bytes) -> None:
        """Hand the peer one message (a single line, no newline)."""
        if not self.ended.is_set():
            self._reader.feed_data(line + b"\n")

    async def reattach(self, session_id: str, after: int, mark: tuple[str, dict[str, int]]) -> None:
        """Ask the agent side to send the session's events after `after` again, and write `mark` (a notification:
        method, params) through the peer right after: before the replay's first line, after every line the agent
        side wrote before (the side starts its replay in a task of its own, which runs only once we wait)."""
        side = await asyncio.shield(self._side)
        await side.reattach(session_id, after)
        if self._peer is not None:
            self._peer.notify(*mark)

    async def aclose(self) -> None:
        """End the connection: the peer stops (its requests still running are cancelled), the agent side detaches."""
        if not self._reader.at_eof():
            self._reader.feed_eof()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._task)

    async def _run(self) -> None:
        try:
            peer = Peer(self._reader, self._sink, dialect=STRICT, name="acp-hub", max_line_bytes=self._max_bytes)
            self._peer = peer
            async with peer:
                try:
                    side = self._bind(peer, self.client)
                except BaseException as exc:
                    self._side.set_exception(exc)
                    raise
                self._side.set_result(side)
                try:
                    await peer.wait_closed()
                finally:
                    await side.aclose()
        except Exception:
            log.exception("ACP connection %s failed", self.id)
        finally:
            with contextlib.suppress(Exception):
                await self.client.aclose()
            if not self._side.done():
                self._side.set_exception(ConnectionError("the connection ended"))
                self._side.exception()  # retrieved: nobody may be waiting for it
            self.ended.set()
