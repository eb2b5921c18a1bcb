"""Driving a real agent through the Runtime in tests: open a session on a `World`, collect events, answer asks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from omniagent.protocols.sidecar.events import Event, PermissionAsk, RequestOpened, TextDelta, TurnEnded
from omniagent.runtime.runtime import Runtime
from omniagent.runtime.session import Session
from tests import event_stream
from tests.e2e.agents.harness import STEP, World
from tests.event_stream import is_turn_end as is_turn_end  # re-exported for the tests


@asynccontextmanager
async def runtime_session(world: World) -> AsyncIterator[Session]:
    """A Runtime that discovers the world's launcher (OMNIAGENT_<ID>_BIN, or inline ACP for the SDK agent) and one
    session opened in its work dir."""
    async with Runtime(env=world.runtime_env) as runtime:
        async with asyncio.timeout(STEP):
            session = await runtime.open(world.ref, world.work)
        yield session


def is_text(event: Event) -> bool:
    return isinstance(event.kind, TextDelta) and bool(event.kind.text)


def is_permission(event: Event) -> bool:
    return isinstance(event.kind, RequestOpened) and isinstance(event.kind.request, PermissionAsk)


def text_of(events: list[Event]) -> str:
    """The agent's text in these events, deltas joined."""
    return "".join(e.kind.text for e in events if isinstance(e.kind, TextDelta))


def turn_end(events: list[Event]) -> TurnEnded:
    """The TurnEnded among `events` (the last event of `until(…, is_turn_end)`)."""
    ends = [e.kind for e in events if isinstance(e.kind, TurnEnded)]
    assert len(ends) == 1, f"expected one TurnEnded, got {ends}"
    return ends[0]


async def until(session: Session, done: Callable[[Event], bool], within: float = STEP) -> list[Event]:
    """Events up to and including the first `done` one, each checked against the sidecar schema; bounded."""
    return await event_stream.collect(session, done, within=within)
