"""One session's events as the hub keeps them: in `sequence` order, the last `retention` of them, read by any number
of readers at their own pace.

A reader holds a cursor (the last sequence it has) and asks for what follows; nothing is pushed, so a slow reader
slows nobody and costs nothing but its cursor. The runtime numbers a session's events 1, 2, 3, … without gaps, so a
cursor below the oldest kept event says exactly how many events that reader missed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from omniagent.protocols.sidecar.events import Event
from omniagent.runtime.errors import AgentError

# Events one session keeps for replay (docs/hub.md, "Replay and retention"). A turn of a chatty agent is a few hundred
# events, so this holds the last dozens of turns; an event is about 0.5-2 KB in memory.
DEFAULT_RETENTION = 10_000


@dataclass(frozen=True, slots=True)
class Slice:
    """What follows a cursor: the events still kept, and how many before them are gone (0 when none)."""

    events: list[Event]
    missed: int


class EventLog:
    """The kept events of one session, and its end."""

    def __init__(self, retention: int = DEFAULT_RETENTION) -> None:
        if retention < 1:
            raise ValueError("retention must be at least 1")
        self.retention = retention
        self._events: list[Event] = []
        self._start = 0  # index of the oldest kept event in `_events` (trimmed in chunks: amortised O(1) appends)
        self._dropped = 0  # the sequence of the newest event no longer kept
        self._changed = asyncio.Event()
        self._lines: dict[int, bytes] = {}  # sequence → the event as a face's line, encoded once for every reader
        self._ended = False
        self.error: AgentError | None = None

    @property
    def last(self) -> int:
        """The sequence of the newest event (0 before the first)."""
        return self._events[-1].sequence if len(self._events) > self._start else self._dropped

    @property
    def first(self) -> int:
        """The sequence of the oldest kept event (`last + 1` when none is kept)."""
        return self._dropped + 1

    @property
    def ended(self) -> bool:
        return self._ended

    def __len__(self) -> int:
        return len(self._events) - self._start

    def extend(self, events: list[Event]) -> None:
        """Keep `events` (newer than every kept one) and wake every waiting reader."""
        if not events or self._ended:
            return
        self._events.extend(events)
        excess = len(self) - self.retention
        if excess > 0:
            for event in self._events[self._start : self._start + excess]:
                self._lines.pop(event.sequence, None)
            self._start += excess
            self._dropped = self._events[self._start - 1].sequence
            if self._start > self.retention:  # compact once the dead head outgrows the kept events
                del self._events[: self._start]
                self._start = 0
        self.wake()

    def end(self, error: AgentError | None = None) -> None:
        """No more events: readers get what is kept, then the end (with `error` when the agent failed)."""
        if not self._ended:
            self._ended = True
            self.error = error
            self.wake()

    def since(self, cursor: int) -> Slice:
        """The kept events after `cursor`, and how many after it are no longer kept."""
        missed = max(0, self._dropped - cursor)
        after = max(cursor, self._dropped)
        # Sequences are contiguous, so the position is arithmetic; the last event bounds it.
        offset = after - self._dropped
        return Slice(self._events[self._start + offset :], missed)

    def lines(self, events: list[Event], encode: Callable[[Event], bytes]) -> list[bytes]:
        """`events` (kept ones) as `encode` makes them, each encoded once however many readers ask: the clients of
        one session read the same lines. One encoding per log (a face that reads other lines encodes its own)."""
        cache = self._lines
        out = []
        for event in events:
            line = cache.get(event.sequence)
            if line is None:
                line = cache[event.sequence] = encode(event)
            out.append(line)
        return out

    def pending(self) -> asyncio.Event:
        """An event set at the next change (an append or the end): take it before reading, then wait on it."""
        return self._changed

    def wake(self) -> None:
        """Wake every waiting reader (each reads again, and finds what changed, if anything)."""
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
