"""Where a streamable HTTP connection's output goes: the connection-wide SSE stream (every server→client message,
numbered by the connection) and the per-session SSE streams (one session's messages, numbered by the session's
sequence), with what a reconnecting client is replayed.

`StreamRouter` is the `ByteSink` of the connection's peer: every line the peer writes is routed at once, and nothing
waits on a reader (a slow or absent reader loses the oldest messages past a bound, and is told how many on the
connection stream). Rules, also in docs/hub.md:

- Connection stream: messages are numbered 1, 2, 3, … per connection (the SSE `id`); the last `replay_messages` are
  kept. One stream at a time: a new GET ends the earlier one. A GET with `Last-Event-ID: N` gets the kept messages
  after N; without it, those after the last one an earlier stream was given, so nothing sent between two streams is
  lost. Messages gone from the buffer are announced by one `_omniagent/missed` notification (`{"messages": n}`).
- Session stream: the session's notifications and requests (`params.sessionId`) and the answers to the requests the
  client sent about it; while a session has a stream, they go there only (else on the connection stream), so no
  message reaches a client twice. A message carrying `_meta.omniagent.sequence` has that sequence as its SSE `id`,
  and goes out only if it is not older than the last one it gave (one event may be told by several messages); the
  others carry no `id`.
  A GET with `Last-Event-ID: N` asks the agent side to send the session's events after N again
  (`AcpSide.reattach`), which the hub's log holds; the stream takes what was written after that (a mark line
  through the peer tells where), and those replayed events go to that stream only, not again on the connection
  stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import msgspec

from omniagent.wire.dialects import RequestId
from omniagent.wire.encode import dumps

log = logging.getLogger(__name__)

# The notification telling a connection stream how many messages it will never get.
MISSED_METHOD = "_omniagent/missed"
# A line our own transport writes through the peer right after a replay was asked for, so the router knows which
# lines came before the replay (the agent side's earlier writes, still queued) and which after; never sent on.
MARK_METHOD = "_omniagent/transport_mark"
KEEPALIVE = b": keepalive\n\n"


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One line the peer wrote, read for routing."""

    line: bytes
    request_id: RequestId | None  # set on a response (what it answers)
    session_id: str | None
    sequence: int | None
    mark: int | None = None  # a `MARK_METHOD` line: the view it arms


def sse(event_id: int | None, line: bytes) -> bytes:
    """One SSE event holding one JSON line."""
    head = b"id: %d\n" % event_id if event_id is not None else b""
    return head + b"data: " + line + b"\n\n"


class Outbox:
    """The connection stream's messages: numbered, the last `keep` kept, one stream reading at a time."""

    def __init__(self, keep: int) -> None:
        self._kept: deque[bytes] = deque(maxlen=keep)
        self.last = 0  # the number of the newest message
        self.delivered = 0  # the newest message a stream was given
        self._changed = asyncio.Event()
        self._reader = 0  # the stream allowed to read; a newer one ends the earlier
        self.closed = False

    def put(self, line: bytes) -> None:
        self._kept.append(line)
        self.last += 1
        self._wake()

    def since(self, after: int) -> tuple[list[tuple[int, bytes]], int]:
        """The kept messages after `after`, and how many after it are no longer kept."""
        first = self.last - len(self._kept) + 1
        start = max(after + 1, first)
        missed = max(0, first - (after + 1))
        return [(n, self._kept[n - first]) for n in range(start, self.last + 1)], missed

    def claim(self) -> int:
        """Make a new stream the reader (ending the earlier one); returns its ticket."""
        self._reader += 1
        self._wake()
        return self._reader

    def holds(self, ticket: int) -> bool:
        return ticket == self._reader and not self.closed

    def pending(self) -> asyncio.Event:
        return self._changed

    def close(self) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()


class SessionView:
    """What one per-session stream has still to write; `cursor` is the last sequence it was given. A view waiting
    for a replay takes nothing until its mark (what comes before was written before the replay was asked for)."""

    _numbers = itertools.count(1)

    def __init__(self, session_id: str, after: int | None, backlog: int) -> None:
        self.session_id = session_id
        self.number = next(self._numbers)
        self.armed = after is None
        self.cursor = after
        self._lines: deque[tuple[int | None, bytes]] = deque(maxlen=backlog)
        self._changed = asyncio.Event()
        self.closed = False

    def offer(self, line: bytes, sequence: int | None) -> None:
        if self.closed or not self.armed:
            return
        if sequence is not None:
            if self.cursor is not None and sequence < self.cursor:
                return  # given already (one event may be told by several messages, all with its sequence)
            self.cursor = sequence
        self._lines.append((sequence, line))
        self._changed.set()

    def take(self) -> list[tuple[int | None, bytes]]:
        taken = list(self._lines)
        self._lines.clear()
        self._changed.clear()
        return taken

    def close(self) -> None:
        self.closed = True
        self._changed.set()

    async def wait(self) -> None:
        await self._changed.wait()


class StreamRouter:
    """The connection peer's sink: routes each line to the connection stream, a session stream, or the POST that
    waits for it (`initialize`)."""

    def __init__(self, *, replay_messages: int, session_backlog: int) -> None:
        self.outbox = Outbox(replay_messages)
        self._backlog = session_backlog
        self._views: dict[str, SessionView] = {}
        self._about: dict[RequestId, str] = {}  # the client's pending requests about a session
        self._awaited: dict[RequestId, asyncio.Future[bytes]] = {}

    # --- ByteSink -------------------------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        for line in data.split(b"\n"):
            if line:
                self._route(_read(line))

    async def drain(self) -> None:
        """Nothing to wait for: every line is routed when written."""

    # --- what the transport tells it ------------------------------------------------------------------------

    def note_request(self, request_id: RequestId, session_id: str) -> None:
        """The client sent request `request_id` about `session_id`: its answer belongs to that session too."""
        self._about[request_id] = session_id

    def answer_of(self, request_id: RequestId) -> asyncio.Future[bytes]:
        """The answer to `request_id`, taken out of the streams (the POST that sent it returns it)."""
        future = asyncio.get_running_loop().create_future()
        self._awaited[request_id] = future
        return future

    def forget(self, request_id: RequestId) -> None:
        self._awaited.pop(request_id, None)

    def open_view(self, session_id: str, after: int | None) -> SessionView:
        """A new stream of one session (ending an earlier stream of it on this connection)."""
        old = self._views.get(session_id)
        if old is not None:
            old.close()
        view = SessionView(session_id, after, self._backlog)
        self._views[session_id] = view
        return view

    def close_view(self, view: SessionView) -> None:
        view.close()
        if self._views.get(view.session_id) is view:
            del self._views[view.session_id]

    def close(self) -> None:
        """The connection ended: every stream ends, every waiting POST fails."""
        self.outbox.close()
        for view in list(self._views.values()):
            self.close_view(view)
        for future in self._awaited.values():
            if not future.done():
                future.set_exception(ConnectionError("the connection ended"))
                future.exception()  # retrieved: the POST may be gone already
        self._awaited.clear()

    # --- routing --------------------------------------------------------------------------------------------

    def _route(self, out: Outgoing) -> None:
        if out.mark is not None:
            for waiting in self._views.values():
                if waiting.number == out.mark:
                    waiting.armed = True
            return
        session_id = out.session_id
        if out.request_id is not None:
            awaited = self._awaited.pop(out.request_id, None)
            if awaited is not None and not awaited.done():
                awaited.set_result(out.line)
                return
            session_id = self._about.pop(out.request_id, session_id)
        view = self._views.get(session_id) if session_id is not None else None
        if view is not None:
            # A session with its own stream gets its messages there only: a client reads both streams, and a
            # message on both would reach it twice (the ACP SDK's client, for one, handles each it reads).
            if view.armed:
                view.offer(out.line, out.sequence)
                return
            if out.sequence is not None:
                return  # written before the replay was asked for: the replay sends it on the session stream
        self.outbox.put(out.line)


async def connection_events(outbox: Outbox, after: int | None, keepalive: float) -> AsyncIterator[bytes]:
    """The connection stream, from after `after` (else after what an earlier stream was given), until the
    connection ends or a newer stream takes over."""
    ticket = outbox.claim()
    cursor = outbox.delivered if after is None else after
    while outbox.holds(ticket):
        changed = outbox.pending()
        batch, missed = outbox.since(cursor)
        if missed:
            notice = dumps({"jsonrpc": "2.0", "method": MISSED_METHOD, "params": {"messages": missed}})
            yield sse(None, notice)
        if batch:
            cursor = batch[-1][0]
            outbox.delivered = max(outbox.delivered, cursor)
            yield b"".join(sse(number, line) for number, line in batch)
            continue
        if not await _woken(changed.wait(), keepalive):
            yield KEEPALIVE


async def session_events(view: SessionView, keepalive: float) -> AsyncIterator[bytes]:
    """One session's stream, until the connection ends or a newer stream of the session takes over."""
    while True:
        lines = view.take()
        if lines:
            yield b"".join(sse(sequence, line) for sequence, line in lines)
        if view.closed:
            return
        if not lines and not await _woken(view.wait(), keepalive):
            yield KEEPALIVE


async def _woken(wait: Any, seconds: float) -> bool:
    """Await `wait` for at most `seconds`; whether it finished."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await wait
            return True
    return False


def _read(line: bytes) -> Outgoing:
    try:
        message = msgspec.json.decode(line)
    except msgspec.DecodeError:  # our own peer wrote it: never expected, but never fatal
        log.warning("an outgoing line is not JSON; sent on the connection stream")
        return Outgoing(line, None, None, None)
    if not isinstance(message, dict):
        return Outgoing(line, None, None, None)
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    session = params.get("sessionId")
    meta = params.get("_meta")
    ours = meta.get("omniagent") if isinstance(meta, dict) else None
    sequence = ours.get("sequence") if isinstance(ours, dict) else None
    if message.get("method") == MARK_METHOD:
        view = params.get("view")
        return Outgoing(line, None, None, None, mark=view if isinstance(view, int) else 0)
    raw_id = message.get("id")
    answers = "method" not in message and isinstance(raw_id, int | str) and not isinstance(raw_id, bool)
    return Outgoing(
        line=line,
        request_id=raw_id if answers else None,
        session_id=session if isinstance(session, str) else None,
        sequence=sequence if isinstance(sequence, int) and not isinstance(sequence, bool) else None,
    )
