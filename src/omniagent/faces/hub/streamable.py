"""ACP's streamable HTTP transport on `/acp` (the agent-client-protocol RFD "Streamable HTTP & WebSocket Transport"):
POST a message, GET an SSE stream, DELETE the connection.

- POST `initialize` without `Acp-Connection-Id` opens a connection: 200, its answer as the body (with
  `connectionId` added to the result) and the `Acp-Connection-Id` header. Every other POST names its connection
  (400 without, 404 unknown) and, when it is about a session (`params.sessionId`), the session in `Acp-Session-Id`
  (400 without or different); it is answered 202 and its answer comes on a stream. Bodies must be
  `application/json` (415), at most `Limits.max_body_bytes` (413), one JSON-RPC message or a non-empty batch of
  them (its answers: one array on the connection stream, none for notifications; `[]`: 400 with -32600; not JSON:
  400 with the JSON-RPC parse error).
- GET with `Accept: text/event-stream` (406) and `Acp-Connection-Id`: the connection stream; with `Acp-Session-Id`
  too, that session's stream. `Last-Event-ID` resumes either (`streams.py` says how).
- DELETE with `Acp-Connection-Id`: the connection ends (202); its sessions go on in the hub.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgspec
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse

from omniagent.faces.hub.connection import AcpConnection, BindAcp
from omniagent.faces.hub.frames import Frame, Refused, read_frame
from omniagent.faces.hub.registry import Registry, TooManyClients
from omniagent.faces.hub.streams import MARK_METHOD, StreamRouter, connection_events, session_events
from omniagent.wire.dialects import STRICT, RequestId
from omniagent.wire.encode import dumps
from omniagent.wire.messages import INTERNAL_ERROR, INVALID_REQUEST, error_line

log = logging.getLogger(__name__)

JSON = "application/json"
SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


def refusal(status: int, message: str, request_id: RequestId | None = None, *, code: int = INVALID_REQUEST) -> Response:
    """An HTTP answer whose body is the JSON-RPC error saying what was wrong."""
    return Response(error_line(STRICT, request_id, code, message), status, media_type=JSON)


class StreamableHttp:
    """The POST, GET and DELETE handlers of `/acp`, over the hub's connections."""

    def __init__(self, registry: Registry, bind_for: Callable[[str | None, str | None], BindAcp]) -> None:
        self._registry = registry
        self._limits = registry.limits
        self._bind_for = bind_for
        self._routers: dict[str, StreamRouter] = {}

    async def handle(self, request: Request) -> Response:
        """One request to `/acp` (or `/acp/{agent}`)."""
        if request.method == "POST":
            return await self._post(request)
        if request.method == "DELETE":
            return await self._delete(request)
        return await self._get(request)

    def _find(self, request: Request) -> tuple[AcpConnection, StreamRouter] | Response:
        connection_id = request.headers.get("acp-connection-id")
        if connection_id is None:
            return refusal(400, "the Acp-Connection-Id header is required (POST initialize opens a connection)")
        connection, router = self._registry.get(connection_id), self._routers.get(connection_id)
        if connection is None or router is None:
            return refusal(404, "unknown Acp-Connection-Id (the connection ended, or never was)")
        return connection, router

    async def _post(self, request: Request) -> Response:
        if request.headers.get("content-type", "").partition(";")[0].strip().lower() != JSON:
            return refusal(415, "a POST body must be application/json")
        body = await self._body(request)
        if isinstance(body, Response):
            return body
        frame = read_frame(body)
        if isinstance(frame, Refused):
            return Response(frame.line, frame.status, media_type=JSON)
        if "acp-connection-id" not in request.headers and frame.is_initialize:
            attach = request.query_params.get("attach")  # `omniagent acp --hub URL --session S`: join S
            return await self._initialize(frame, request.path_params.get("agent"), attach)
        found = self._find(request)
        if isinstance(found, Response):
            return found
        connection, router = found
        if frame.session_id is not None:
            named = request.headers.get("acp-session-id")
            if named is None:
                return refusal(400, "a message about a session needs the Acp-Session-Id header", frame.request_id)
            if named != frame.session_id:
                return refusal(400, "Acp-Session-Id differs from the message's sessionId", frame.request_id)
            if frame.request_id is not None:
                router.note_request(frame.request_id, frame.session_id)
        self._registry.touched(connection.id)
        connection.feed(frame.line)
        return Response(status_code=202)

    async def _body(self, request: Request) -> bytes | Response:
        limit = self._limits.max_body_bytes
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            return refusal(413, f"the body is over {limit} bytes")
        body = bytearray()
        try:
            async for chunk in request.stream():
                body += chunk
                if len(body) > limit:
                    return refusal(413, f"the body is over {limit} bytes")
        except ClientDisconnect:
            return Response(status_code=400)  # nobody reads it
        return bytes(body)

    async def _initialize(self, frame: Frame, agent: str | None, attach: str | None) -> Response:
        router = StreamRouter(
            replay_messages=self._limits.replay_messages, session_backlog=self._limits.session_backlog
        )
        opened: list[str] = []

        def ended() -> None:
            for connection_id in opened:
                gone = self._routers.pop(connection_id, None)
                if gone is not None:
                    gone.close()

        try:
            connection = await self._registry.open(router, self._bind_for(agent, attach), transport="sse", on_end=ended)
        except TooManyClients:
            return refusal(503, "the hub has as many clients as it takes; try again later", frame.request_id)
        opened.append(connection.id)
        self._routers[connection.id] = router
        assert frame.request_id is not None
        answer = router.answer_of(frame.request_id)
        connection.feed(frame.line)
        try:
            async with asyncio.timeout(self._limits.initialize_seconds):
                line = await answer
        except (TimeoutError, ConnectionError):
            router.forget(frame.request_id)
            await self._registry.close(connection.id)
            return refusal(504, "initialize was not answered", frame.request_id, code=INTERNAL_ERROR)
        body, accepted = _with_connection_id(line, connection.id)
        if not accepted:  # the agent side refused: no connection to keep
            await self._registry.close(connection.id)
            return Response(body, 200, media_type=JSON)
        self._registry.touched(connection.id)
        return Response(body, 200, media_type=JSON, headers={"Acp-Connection-Id": connection.id})

    async def _get(self, request: Request) -> Response:
        if "text/event-stream" not in request.headers.get("accept", "").lower():
            return refusal(406, "GET /acp opens an SSE stream: Accept must include text/event-stream")
        found = self._find(request)
        if isinstance(found, Response):
            return found
        connection, router = found
        last = request.headers.get("last-event-id")
        after = int(last) if last is not None and last.isascii() and last.isdigit() and len(last) < 20 else None
        if last is not None and after is None:
            return refusal(400, "Last-Event-ID must be a number this hub gave")
        session_id = request.headers.get("acp-session-id")
        keepalive = self._limits.keepalive_seconds
        if session_id is None:
            stream = self._counted(connection.id, connection_events(router.outbox, after, keepalive))
            return StreamingResponse(stream, media_type="text/event-stream", headers=SSE_HEADERS)
        view = router.open_view(session_id, after)
        if after is not None:
            try:
                await connection.reattach(session_id, after, (MARK_METHOD, {"view": view.number}))
            except Exception as exc:
                router.close_view(view)
                log.info("no replay of session %s: %s", session_id, type(exc).__name__)
                return refusal(404, "unknown session, or one this connection cannot read")
        stream = self._counted(connection.id, session_events(view, keepalive), lambda: router.close_view(view))
        return StreamingResponse(stream, media_type="text/event-stream", headers=SSE_HEADERS)

    async def _counted(
        self, connection_id: str, events: AsyncIterator[bytes], done: Callable[[], None] | None = None
    ) -> AsyncIterator[bytes]:
        """The stream, counted open (no idle timeout) while it runs; `done` when it ends, however it ends."""
        self._registry.stream_opened(connection_id)
        try:
            async with contextlib.aclosing(events):  # type: ignore[type-var]
                async for chunk in events:
                    yield chunk
        finally:
            self._registry.stream_closed(connection_id)
            if done is not None:
                done()

    async def _delete(self, request: Request) -> Response:
        found = self._find(request)
        if isinstance(found, Response):
            return found
        await self._registry.close(found[0].id)
        return Response(status_code=202)


def _with_connection_id(line: bytes, connection_id: str) -> tuple[bytes, bool]:
    """`initialize`'s answer with `connectionId` in its result (the RFD's body), and whether it is a result."""
    try:
        message: Any = msgspec.json.decode(line)
    except msgspec.DecodeError:
        return line, False
    if not isinstance(message, dict) or not isinstance(message.get("result"), dict):
        return line, False
    message["result"]["connectionId"] = connection_id
    return dumps(message), True
