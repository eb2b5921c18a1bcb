"""`/sidecar`: the anyagent sidecar wire over a WebSocket, on the hub's sessions.

The same lines as `omniagent serve` (docs/sidecar.md) over WebSocket text frames: one command per frame in; out, the
hello first, then replies and events, each frame holding one or more whole lines separated by newlines; plus the
hub's `attach`, `detach` and `list`. The sessions are the hub's (`serving/sidecar/hub_host.py`): a closed connection
detaches from them and they go on. A frame that is not a command (binary, too large, not JSON) is answered with the
wire's `BadFrame` line and the connection goes on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from starlette.websockets import WebSocket, WebSocketState

from omniagent.hub.hub import Hub
from omniagent.hub.session import ClientInfo
from omniagent.serving.sidecar.commands import Sidecar
from omniagent.serving.sidecar.hello import HELLO
from omniagent.serving.sidecar.hub_host import HubHost
from omniagent.wire.errors import LineTooLarge, WireError
from omniagent.wire.jsonl import MAX_LINE_BYTES, LineWriter

log = logging.getLogger("omniagent.hub.sidecar")


async def sidecar_endpoint(websocket: WebSocket, hub: Hub, client: ClientInfo) -> None:
    """Serve one WebSocket (accepted here if the caller has not) until it closes; detach from every session then."""
    if websocket.application_state is WebSocketState.CONNECTING:
        await websocket.accept()
    broken = asyncio.Event()
    async with LineWriter(_Frames(websocket), on_error=lambda _: broken.set()) as writer:
        writer.send_nowait(HELLO)
        hub_client = hub.client(client)
        try:
            await Sidecar(HubHost(hub_client), writer, broken).serve(_lines(websocket))
        finally:
            await hub_client.aclose()
    if websocket.application_state is WebSocketState.CONNECTED:
        try:
            await websocket.close()
        except Exception:  # the peer is gone already: nothing left to tell it
            log.debug("closing the sidecar socket failed", exc_info=True)


# Bytes of lines one frame gathers before the next starts (a line is never split): under the 1 MiB message limit
# WebSocket clients default to, and large enough that a burst of events costs a frame per few thousand of them.
FRAME_BYTES = 256 * 1024


class _Frames:
    """The `LineWriter`'s sink: the lines of one write go out together, newline-separated, in as few text frames as
    `FRAME_BYTES` allows (a quiet session's line is a frame of its own). One frame per line would cost the hub a
    WebSocket message per event: a seventh of what the stdio sidecar streams (docs/performance.md)."""

    def __init__(self, websocket: WebSocket) -> None:
        self._websocket = websocket
        self._pending = bytearray()

    def write(self, data: bytes) -> None:
        self._pending += data

    async def drain(self) -> None:
        data, self._pending = bytes(self._pending), bytearray()
        try:
            for frame in _frames(data):
                await self._websocket.send_text(frame.decode("utf-8"))
        except Exception as exc:  # the socket is closed or failing: the writer stops and the wire leaves
            raise ConnectionError(f"the sidecar socket failed ({type(exc).__name__})") from exc


def _frames(data: bytes) -> list[bytes]:
    """Newline-terminated lines (compact JSON: a newline inside a string is escaped, so each one ends a line) as
    frames of whole lines, joined by newlines, without the last one's."""
    frames: list[bytes] = []
    start = 0
    while start < len(data):
        end = data.rfind(b"\n", start, start + FRAME_BYTES)
        if end <= start:  # one line longer than a frame's budget: a frame of its own
            end = data.index(b"\n", start)
        frames.append(data[start:end])
        start = end + 1
    return frames


async def _lines(websocket: WebSocket) -> AsyncIterator[bytes | WireError]:
    """Each text frame as one line, until the client disconnects."""
    while True:
        try:
            message = await websocket.receive()
        except Exception:  # a transport failure is the end of the input, as EOF is on stdin
            log.debug("reading the sidecar socket failed", exc_info=True)
            return
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if text is None:
            yield WireError("a binary frame; send each command as one text frame")
            continue
        line = text.encode("utf-8")
        yield LineTooLarge(MAX_LINE_BYTES) if len(line) > MAX_LINE_BYTES else line
