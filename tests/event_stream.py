"""Reading a runtime session's events in tests: every wait bounded, every event checked against the schema."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from omniagent.protocols.sidecar.events import Event, TurnEnded
from omniagent.runtime.session import Session
from tests.sidecar_schema import validate

K = TypeVar("K")


async def collect(session: Session, until: Callable[[Event], bool], *, within: float) -> list[Event]:
    """Events up to and including the first that matches `until`; fails if the stream ends or `within` passes."""
    seen: list[Event] = []
    async with asyncio.timeout(within):
        async for event in session.events:
            validate("Event", event.dump())
            seen.append(event)
            if until(event):
                return seen
    raise AssertionError(f"the event stream ended before the awaited event; saw {tags(seen)}")


async def collect_all(session: Session, *, within: float) -> list[Event]:
    """Every remaining event until the stream ends."""
    seen: list[Event] = []
    async with asyncio.timeout(within):
        async for event in session.events:
            validate("Event", event.dump())
            seen.append(event)
    return seen


def is_kind(kind: type) -> Callable[[Event], bool]:
    return lambda event: isinstance(event.kind, kind)


def is_turn_end(event: Event) -> bool:
    return isinstance(event.kind, TurnEnded)


def of(events: list[Event], kind: type[K]) -> list[K]:
    """The payloads of one kind, in order."""
    return [event.kind for event in events if isinstance(event.kind, kind)]


def tags(events: list[Event]) -> list[str]:
    return [event.kind.TAG for event in events]


__all__ = ["collect", "collect_all", "is_kind", "is_turn_end", "of", "tags"]
