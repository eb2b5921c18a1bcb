"""JSON-RPC peer over a pair of asyncio streams: calls both ways, id correlation, dispatch, the one error boundary.

What it is: newline-delimited JSON-RPC (framing by `wire/jsonl.py`, envelope rules by `wire/dialects.py`). One `Peer`
sends requests and notifications and answers the other side's, concurrently. It knows no protocol's methods: the layer
above (`runtime/adapters/acp/client.py`, the engine's RPC server) passes handler tables of raw JSON params.

Ordering: incoming notifications and responses are handled in the reading task, in arrival order (so a
`session/update` stream stays ordered, and a slow notification handler slows reading: that is the backpressure).
Each incoming request runs in its own task in the peer's TaskGroup and may await anything, including our own
outgoing requests.

Errors: a handler raises `RpcError(code, message, data)` to answer with that error. Any other exception is logged to
stderr and answered with -32603 and a fixed sentence: no exception text and no traceback reach the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from types import TracebackType
from typing import Any, TypeVar

from omniagent.wire.decode import MAX_INT_MAGNITUDE, BadJson, NumberOutOfRange, decode_line
from omniagent.wire.dialects import STRICT, Dialect, RequestId
from omniagent.wire.encode import dumps
from omniagent.wire.errors import LineTooLarge, PeerClosed
from omniagent.wire.jsonl import MAX_LINE_BYTES, ByteSink, LineWriter, read_lines
from omniagent.wire.messages import (
    INTERNAL_ERROR,
    INTERNAL_SENTENCE,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    RpcError,
    error_line,
    reply_id,
    result_line,
    valid_call,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

# The id of the incoming request whose handler runs in this task (each request has its own task), for handlers
# that must name the request they answer, e.g. the runtime's ACP adapter minting `r<id>` request ids.
current_request_id: contextvars.ContextVar[RequestId | None] = contextvars.ContextVar(
    "current_request_id", default=None
)
# Takes the method and raw params of a request no handler is registered for; returns the raw result.
FallbackRequestHandler = Callable[[str, Any], Awaitable[Any]]

# Handlers take the call's raw `params` (None when absent) and return the raw `result`.
RequestHandler = Callable[[Any], Awaitable[Any]]
NotificationHandler = Callable[[Any], Awaitable[None]]
# Takes the method and raw params of a notification no handler is registered for.
FallbackNotificationHandler = Callable[[str, Any], Awaitable[None]]


class Peer:
    """One JSON-RPC connection. Use as `async with Peer(reader, sink, ...) as peer:`.

    `requests` and `notifications` map method names to handlers; `on_request` / `on_notification` add more.
    `other_notifications` (optional) gets every notification without a handler, in order with the rest; without
    it such notifications are ignored.
    Leaving the `async with` cancels running handlers, fails pending requests with `PeerClosed`, and flushes
    what was sent. The streams belong to the caller (close them after the peer).
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        sink: ByteSink,
        *,
        dialect: Dialect = STRICT,
        requests: Mapping[str, RequestHandler] | None = None,
        notifications: Mapping[str, NotificationHandler] | None = None,
        other_notifications: FallbackNotificationHandler | None = None,
        max_line_bytes: int = MAX_LINE_BYTES,
        name: str = "jsonrpc",
        answer_after_eof: bool = False,
        repair_surrogates: bool = False,
        on_output_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.dialect = dialect
        # A server keeps answering requests it read before the other side closed its end (`echo request | server`);
        # a client driving an agent cancels them, since the agent that asked is gone.
        self._answer_after_eof = answer_after_eof
        # A server refuses a line with a lone surrogate; a client relaying an agent's output repairs it (decode.py).
        self._repair_surrogates = repair_surrogates
        self.name = name
        self._reader = reader
        # Told when writing to `sink` fails: a stdio face ends when its reader is gone.
        self._writer = LineWriter(sink, on_error=on_output_error)
        self._requests: dict[str, RequestHandler] = dict(requests or {})
        self._notifications: dict[str, NotificationHandler] = dict(notifications or {})
        self._other_notifications = other_notifications
        self._max_line_bytes = max_line_bytes
        self._next_id = 0
        self._pending: dict[RequestId, asyncio.Future[Any]] = {}
        self._inflight: dict[RequestId, asyncio.Task[bytes]] = {}
        self._cancelled_by_peer: set[RequestId] = set()
        self._closed = asyncio.Event()
        self._tg: asyncio.TaskGroup | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._other_requests: FallbackRequestHandler | None = None

    def on_request(self, method: str, handler: RequestHandler) -> None:
        """Answer incoming `method` requests with `handler`."""
        self._requests[method] = handler

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        """Handle incoming `method` notifications with `handler` (in the reading task, in order)."""
        self._notifications[method] = handler

    def on_other_requests(self, handler: FallbackRequestHandler) -> None:
        """Answer requests for methods without a handler with `handler(method, params)` (else: method not found)."""
        self._other_requests = handler

    def on_other_notifications(self, handler: FallbackNotificationHandler) -> None:
        """Pass notifications for methods without a handler to `handler(method, params)` (else: ignored)."""
        self._other_notifications = handler

    async def __aenter__(self) -> Peer:
        await self._writer.__aenter__()
        self._tg = asyncio.TaskGroup()
        await self._tg.__aenter__()
        self._spawn(self._read_loop(), "reader")
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._closed.set()
        assert self._tg is not None
        tg, self._tg = self._tg, None
        # The reader and every handler are ours: stop them rather than wait on the other side.
        for task in list(self._tasks):
            task.cancel()
        try:
            # Our tasks are cancelled and never fail; the body's own exception propagates as itself, not grouped.
            await tg.__aexit__(None, None, None)
        finally:
            self._fail_pending()
            await self._writer.aclose()

    @property
    def closed(self) -> bool:
        """True once the other side closed its stream or we left the `async with`."""
        return self._closed.is_set()

    async def wait_closed(self) -> None:
        """Wait until the other side closes its stream (or we close)."""
        await self._closed.wait()

    def unanswered(self) -> set[asyncio.Task[Any]]:
        """Tasks still answering requests (and batches) the other side sent; with `answer_after_eof`, they outlive
        EOF and the owner waits for them before leaving the `async with`."""
        return {task for task in self._tasks if not task.done() and task is not asyncio.current_task()}

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request and wait for its result.

        Cancelling the caller sends the dialect's cancel notification (`$/cancel_request`) and re-raises.

        Raises:
            RpcError: the other side answered with an error.
            PeerClosed: the connection closed before the answer.
        """
        if self._closed.is_set():
            raise PeerClosed(f"{self.name}: connection is closed")
        self._next_id += 1
        request_id = self.dialect.mint_id(self._next_id)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        body: dict[str, Any] = {"id": request_id, "method": method}
        if params is not None:
            body["params"] = params
        try:
            self._send(body)
            return await future
        except asyncio.CancelledError:
            # Awaiting cancels the future too; only a future that got an answer needs no cancel notice.
            answered = future.done() and not future.cancelled()
            if not answered and not self._closed.is_set() and self.dialect.cancel_method is not None:
                cancel = {self.dialect.cancel_id_member: request_id}
                with contextlib.suppress(PeerClosed):
                    self.notify(self.dialect.cancel_method, cancel)
            raise
        finally:
            self._pending.pop(request_id, None)

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (queued for the single writer; never waits).

        Raises:
            PeerClosed: the output stream is closed.
        """
        body: dict[str, Any] = {"method": method}
        if params is not None:
            body["params"] = params
        self._send(body)

    async def wait_flushed(self) -> None:
        """Wait until everything sent so far is written to the stream."""
        await self._writer.wait_flushed()

    # --- reading -------------------------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        try:
            async for line in read_lines(self._reader, max_bytes=self._max_line_bytes):
                if isinstance(line, LineTooLarge):
                    log.warning("%s: dropped a line over %d bytes", self.name, line.limit)
                    self._send_error(
                        self.dialect.unknown_id,
                        self.dialect.invalid_request_code,
                        "message exceeds the line size limit",
                        {"limitBytes": line.limit},
                    )
                else:
                    await self._handle_line(line)
        except (OSError, ConnectionError) as exc:
            log.info("%s: input stream failed: %s", self.name, exc)
        finally:
            self._on_peer_closed()

    async def _handle_line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = decode_line(line, repair_surrogates=self._repair_surrogates)
        except NumberOutOfRange as exc:
            self._refuse_out_of_range(exc)
            return
        except BadJson as exc:
            self._send_error(self.dialect.unknown_id, PARSE_ERROR, f"parse error: {exc.reason}")
            return
        if isinstance(message, list):
            await self._handle_batch(message)
            return
        reply = await self._handle_message(message, in_batch=False)
        if isinstance(reply, bytes):
            self._send_line(reply)

    def _refuse_out_of_range(self, exc: NumberOutOfRange) -> None:
        """A line that is JSON but holds a number out of range: a request is answered with its own id (so the other
        side knows which request failed), a notification is dropped (never answered), a response fails the request
        it answers (rather than leave it waiting); anything else, a batch included, is answered as unreadable."""
        message, dialect = exc.value, self.dialect
        if isinstance(message, dict) and "method" in message and valid_call(message, dialect):
            request_id = message.get("id")
            if "id" not in message:
                log.warning("%s: dropped notification %s: %s", self.name, message["method"], exc.reason)
                return
            if not isinstance(request_id, int) or abs(request_id) <= MAX_INT_MAGNITUDE:
                self._send_error(request_id, INVALID_PARAMS, f"invalid params: {exc.reason}")
                return
        elif isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message):
            self._resolve({"id": message.get("id"), "error": {"code": PARSE_ERROR, "message": exc.reason}})
            return
        self._send_error(dialect.unknown_id, PARSE_ERROR, f"parse error: {exc.reason}")

    async def _handle_batch(self, items: list[Any]) -> None:
        if not self.dialect.batches or not items:
            self._send_error(self.dialect.unknown_id, self.dialect.invalid_request_code, "invalid request: batch")
            return
        replies: list[bytes] = []
        tasks: list[asyncio.Task[bytes]] = []
        for item in items:
            reply = await self._handle_message(item, in_batch=True)
            if isinstance(reply, asyncio.Task):
                tasks.append(reply)
            elif reply is not None:
                replies.append(reply)
        if tasks or replies:
            self._spawn(self._finish_batch(tasks, replies), "batch")

    async def _finish_batch(self, tasks: list[asyncio.Task[bytes]], replies: list[bytes]) -> None:
        for task in tasks:
            replies.append(await task)
        self._send_line(b"[" + b",".join(replies) + b"]")

    async def _handle_message(self, message: Any, *, in_batch: bool) -> bytes | asyncio.Task[bytes] | None:
        """Dispatch one message; return an immediate error reply, a request task (batch only), or None."""
        dialect = self.dialect
        if not isinstance(message, dict):
            return self._error_line(dialect.unknown_id, dialect.invalid_request_code, "invalid request")
        if "method" not in message:
            if "result" in message or "error" in message:
                self._resolve(message)
                return None
            return self._error_line(reply_id(message, dialect), dialect.invalid_request_code, "invalid request")
        if not valid_call(message, dialect):
            return self._error_line(reply_id(message, dialect), dialect.invalid_request_code, "invalid request")
        method, params = message["method"], message.get("params")
        if "id" not in message:
            await self._dispatch_notification(method, params)
            return None
        request_id: RequestId = message["id"]
        task = self._spawn(self._run_request(request_id, method, params, send=not in_batch), method)
        self._inflight[request_id] = task
        return task if in_batch else None

    async def _dispatch_notification(self, method: str, params: Any) -> None:
        if method == self.dialect.cancel_method:
            self._cancel_inflight(params)
            return
        handler = self._notifications.get(method)
        try:
            if handler is not None:
                await handler(params)
            elif self._other_notifications is not None:
                await self._other_notifications(method, params)
            else:
                # JSON-RPC: notifications are never answered; unknown ones are ignored (ACP: "_" extensions too).
                log.debug("%s: ignored notification %s", self.name, method)
        except Exception:
            log.exception("%s: handler for notification %s failed", self.name, method)

    async def _run_request(self, request_id: RequestId, method: str, params: Any, *, send: bool) -> bytes:
        current_request_id.set(request_id)  # this task's own context: seen only by this request's handler
        try:
            line = await self._answer(request_id, method, params)
        finally:
            self._inflight.pop(request_id, None)
            self._cancelled_by_peer.discard(request_id)
        if send:
            self._send_line(line)
        return line

    async def _answer(self, request_id: RequestId, method: str, params: Any) -> bytes:
        handler = self._requests.get(method)
        if handler is None and self._other_requests is None:
            return self._error_line(request_id, METHOD_NOT_FOUND, f"method not found: {method}")
        try:
            if handler is not None:
                result = await handler(params)
            else:
                assert self._other_requests is not None
                result = await self._other_requests(method, params)
            return result_line(self.dialect, request_id, result)
        except RpcError as exc:
            return self._error_line(request_id, exc.code, exc.message, exc.data)
        except asyncio.CancelledError:
            if request_id not in self._cancelled_by_peer:
                raise
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            return self._error_line(request_id, REQUEST_CANCELLED, "request cancelled")
        except Exception:
            log.exception("%s: handler for %s failed", self.name, method)
            return self._error_line(request_id, INTERNAL_ERROR, INTERNAL_SENTENCE)

    def _cancel_inflight(self, params: Any) -> None:
        request_id = params.get(self.dialect.cancel_id_member) if isinstance(params, dict) else None
        task = self._inflight.get(request_id) if isinstance(request_id, int | str) else None
        if task is None:
            return  # already answered, or never seen: the cancel is advisory
        assert request_id is not None
        self._cancelled_by_peer.add(request_id)
        task.cancel()

    def _resolve(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        future = self._pending.get(request_id) if isinstance(request_id, int | str) else None
        if future is None or future.done():
            log.debug("%s: response for unknown or finished request %r", self.name, request_id)
            return
        error = message.get("error")
        if error is None:
            future.set_result(message.get("result"))
            return
        if isinstance(error, dict) and isinstance(error.get("code"), int) and isinstance(error.get("message"), str):
            future.set_exception(RpcError(error["code"], error["message"], error.get("data")))
        else:
            future.set_exception(RpcError(INTERNAL_ERROR, "malformed error response", error))

    def _on_peer_closed(self) -> None:
        self._closed.set()
        self._fail_pending()
        if self._answer_after_eof:
            return  # the other side closed only its output: it may still read the answers it is owed
        for task in list(self._inflight.values()):
            task.cancel()  # nobody is left to read the answers

    def _fail_pending(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(PeerClosed(f"{self.name}: the other side closed the connection"))
        self._pending.clear()

    def _spawn(self, coro: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        assert self._tg is not None, "the peer is used outside its async with"
        task = self._tg.create_task(coro, name=f"{self.name}:{name}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # --- writing -------------------------------------------------------------------------------------------

    def _error_line(self, request_id: RequestId | None, code: int, message: str, data: Any = None) -> bytes:
        return error_line(self.dialect, request_id, code, message, data)

    def _send_error(self, request_id: RequestId | None, code: int, message: str, data: Any = None) -> None:
        self._send_line(self._error_line(request_id, code, message, data))

    def _send(self, body: dict[str, Any]) -> None:
        self._writer.send_nowait(dumps(self.dialect.envelope(body)))

    def _send_line(self, line: bytes) -> None:
        try:
            self._writer.send_nowait(line)
        except PeerClosed:
            log.info("%s: output closed; dropped a reply", self.name)
