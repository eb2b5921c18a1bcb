"""ACP over WebSocket on `/acp` (GET with `Upgrade: websocket`, the RFD's second profile): the upgrade answers 101
with `Acp-Connection-Id`; each text frame is one JSON-RPC message (or a batch: its answers come as one array in one
frame, none for notifications) and each message we send is one text frame; binary frames are ignored; the first
message must be `initialize`. Closing the socket ends the connection, not its sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from starlette.websockets import WebSocket

from omniagent.faces.hub.connection import BindAcp
from omniagent.faces.hub.frames import Refused, read_frame
from omniagent.faces.hub.registry import Registry, TooManyClients
from omniagent.faces.hub.streamable import refusal
from omniagent.wire.dialects import STRICT
from omniagent.wire.messages import INVALID_REQUEST, error_line

log = logging.getLogger(__name__)


class WebSocketSink:
    """The connection peer's sink: each line one text frame, sent in order (the peer's writer and the transport's
    own error replies share it)."""

    def __init__(self, websocket: WebSocket) -> None:
        self._websocket = websocket
        self._pending: list[bytes] = []
        self._lock = asyncio.Lock()

    def write(self, data: bytes) -> None:
        self._pending.extend(line for line in data.split(b"\n") if line)

    async def drain(self) -> None:
        async with self._lock:
            lines, self._pending = self._pending, []
            for line in lines:
                await self._send(line)

    async def send_line(self, line: bytes) -> None:
        """Send one line of the transport's own (an error reply), after what the peer sent before it."""
        self.write(line + b"\n")
        await self.drain()

    async def _send(self, line: bytes) -> None:
        try:
            await self._websocket.send_text(line.decode())
        except Exception as exc:  # a socket gone: the peer's writer stops (it knows ConnectionError)
            raise ConnectionError("the WebSocket closed") from exc


async def serve_acp_websocket(websocket: WebSocket, registry: Registry, bind: BindAcp) -> None:
    """One ACP connection over `websocket`, until either side closes it."""
    sink = WebSocketSink(websocket)
    ended = asyncio.Event()
    try:
        connection = await registry.open(sink, bind, transport="websocket", on_end=ended.set)
    except TooManyClients:
        await websocket.send_denial_response(refusal(503, "the hub has as many clients as it takes; try again later"))
        return
    try:
        await websocket.accept(headers=[(b"acp-connection-id", connection.id.encode())])
        await _until_closed(websocket, sink, connection.feed, ended)
    finally:
        await connection.aclose()


async def _until_closed(
    websocket: WebSocket, sink: WebSocketSink, feed: Callable[[bytes], None], ended: asyncio.Event
) -> None:
    initialized = False
    receiving = asyncio.ensure_future(websocket.receive())
    closing = asyncio.ensure_future(ended.wait())
    try:
        while True:
            await asyncio.wait((receiving, closing), return_when=asyncio.FIRST_COMPLETED)
            if closing.done():  # the hub is stopping, or the connection failed
                with contextlib.suppress(Exception):
                    await websocket.close(1001)
                return
            message = receiving.result()
            if message["type"] == "websocket.disconnect":
                return
            receiving = asyncio.ensure_future(websocket.receive())
            text = message.get("text")
            if text is None:
                continue  # a binary frame: ignored, as the RFD says
            frame = read_frame(text.encode())
            if isinstance(frame, Refused):
                await sink.send_line(frame.line)
                continue
            if not initialized and not frame.is_initialize:
                answer = error_line(STRICT, frame.request_id, INVALID_REQUEST, "the first message must be initialize")
                await sink.send_line(answer)
                continue
            initialized = True
            feed(frame.line)
    except ConnectionError:
        return
    finally:
        receiving.cancel()
        closing.cancel()
