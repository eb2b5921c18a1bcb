"""A session's event stream: ordered, bounded, filled without blocking, read by one consumer.

Backpressure: the loop offers each event with `offer`, which never waits. When `capacity` events are unread
the consumer is taken to be gone: `offer` returns False, the session closes, and the consumer later reads the
buffered events and then the end (no error). Below the cap nothing is lost. Before the cap, the session loop
pauses once, for a bounded time (`wait_read_below`), so a consumer that keeps up but was briefly not scheduled
(a full pipe on a busy machine) catches up instead of being closed; one that does not read in that time is let
fall behind as before. A stream that ends because the
agent died or lost its login raises that error to the consumer after the last event.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator

from omniagent.protocols.sidecar.events import Event
from omniagent.runtime.errors import AgentError

# Unread events one session may hold before its consumer is declared gone (G6 in docs/sidecar.md "Ordering guarantees").
SESSION_EVENT_BUFFER = 1024


class EventStream:
    """The events of one session, in `sequence` order."""

    def __init__(self, capacity: int = SESSION_EVENT_BUFFER) -> None:
        self._capacity = capacity
        self._items: deque[Event] = deque()
        self._ready = asyncio.Event()
        self._read = asyncio.Event()  # set whenever the consumer takes events
        self._ended = False
        self._error: AgentError | None = None
        self.lagged = False

    def offer(self, event: Event) -> bool:
        """Queue an event without waiting; False (and nothing queued) once the consumer lags or the stream ended."""
        if self._ended or self.lagged:
            return False
        if len(self._items) >= self._capacity:
            self.lagged = True
            return False
        self._items.append(event)
        self._ready.set()
        return True

    def widen(self, extra: int) -> None:
        """Let `extra` more events be unread before the consumer is taken to be gone: for events the loop tells at
        once (a resumed session's history), which no consumer could have read as they came."""
        self._capacity += extra

    def end(self, error: AgentError | None = None) -> None:
        """No more events; the consumer gets `error` (if any) after the buffered ones."""
        if not self._ended:
            self._ended = True
            self._error = error
            self._ready.set()

    @property
    def ended(self) -> bool:
        return self._ended

    @property
    def unread(self) -> int:
        """Events buffered and not yet read."""
        return len(self._items)

    @property
    def error(self) -> AgentError | None:
        """The terminal error the stream ended with, if any."""
        return self._error

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        while self._items or await self._more():
            self._read.set()
            yield self._items.popleft()

    async def batches(self) -> AsyncIterator[list[Event]]:
        """The same events as iterating, as lists of every event buffered when the consumer comes to read: a
        consumer that keeps up gets small lists, one that was busy takes its whole backlog at once."""
        while self._items or await self._more():
            self._read.set()
            batch = list(self._items)
            self._items.clear()
            yield batch

    def take_ready(self) -> list[Event]:
        """The events buffered now, without waiting (the consumer's, as iterating would give them): what a consumer
        takes when it starts, such as a resumed session's history, which the loop tells before `open` returns."""
        batch = list(self._items)
        self._items.clear()
        if batch:
            self._read.set()
        return batch

    async def _more(self) -> bool:
        """Wait for events: True once some are buffered, False when the stream ended without more (raising the
        error it ended with, if any)."""
        while not self._items:
            if self._ended:
                if self._error is not None:
                    raise self._error
                return False
            self._ready.clear()
            await self._ready.wait()
        return True

    async def wait_unread(self, count: int) -> None:
        """Wait until at least `count` events are buffered unread, or the stream ended."""
        while len(self._items) < count and not self._ended:
            self._ready.clear()
            await self._ready.wait()

    async def wait_read_below(self, count: int, within: float) -> bool:
        """Wait up to `within` seconds until fewer than `count` events are unread (or the stream ended); False if
        the consumer did not read that far in time."""
        try:
            async with asyncio.timeout(within):
                while len(self._items) >= count and not self._ended:
                    self._read.clear()
                    await self._read.wait()
        except TimeoutError:
            return False
        return True
