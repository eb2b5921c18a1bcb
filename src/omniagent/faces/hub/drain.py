"""Read a request to its end before answering it, so an early answer (a 401, a 415 given before the body was read)
never costs the client its connection.

hypercorn 0.18 drops the whole HTTP/2 connection (a KeyError in its h2 protocol: every stream of that client lost)
when a request's body arrives after the request was answered; on HTTP/1.1 it closes the connection after such an
answer without saying so, and a client reusing it sees "server disconnected". So the answer waits until the
request's body is in, whatever of it the application did not read being discarded, up to `limit` bytes (beyond it
the answer goes out anyway, and the connection may close: the client sent more than any request may hold).
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class DrainFirst:
    """ASGI middleware: no answer starts before the request's body has been received."""

    def __init__(self, app: ASGIApp, *, limit: int) -> None:
        self._app = app
        self._limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        ended = asyncio.Event()
        receiving = 0  # calls of `receive` in flight (a streaming answer listens for the disconnect meanwhile)

        async def tracked() -> Message:
            nonlocal receiving
            receiving += 1
            try:
                message = await receive()
            finally:
                receiving -= 1
            if message["type"] == "http.disconnect" or not message.get("more_body", False):
                ended.set()
            return message

        async def answering(message: Message) -> None:
            discarded = 0
            while message["type"] == "http.response.start" and not ended.is_set() and discarded <= self._limit:
                if receiving:  # another reader gets the body's end (two readers would wait on each other)
                    await ended.wait()
                else:
                    discarded += len((await tracked()).get("body", b""))
            await send(message)

        await self._app(scope, tracked, answering)
