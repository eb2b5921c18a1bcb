"""Helpers for the session-loop conformance suite: scripted mock sessions and bounded event collection."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from omniagent.protocols.sidecar.base import convert
from omniagent.protocols.sidecar.events import Event, StatusChanged
from omniagent.runtime.adapters.mock import MockScript
from omniagent.runtime.runtime import Runtime
from omniagent.runtime.session import Session
from omniagent.runtime.turns import Timing
from tests import event_stream
from tests.event_stream import is_kind as is_kind  # re-exported for the tests
from tests.event_stream import is_turn_end
from tests.event_stream import tags as tags  # re-exported for the tests

# Every wait in this suite is bounded by this many seconds; nothing sleeps.
WAIT = 5.0
# Short clocks so inferred completion and close grace are observable quickly.
TIMING = Timing(prompted_quiet=0.3, agent_quiet=0.3, cancel_grace=1.0, close_grace=0.5)

END: dict[str, Any] = {"End": {"Completed": {"source": "Protocol"}}}


def text(value: str, message_id: str = "m1") -> dict[str, Any]:
    return {"Emit": {"TextDelta": {"message_id": message_id, "text": value}}}


def tool(tool_id: str, status: str) -> dict[str, Any]:
    return {"Emit": {"ToolUpdated": {"id": tool_id, "kind": "Execute", "title": "run", "status": status}}}


def permission(request_id: str = "r1", options: tuple[str, ...] = ("AllowOnce", "DenyOnce")) -> dict[str, Any]:
    return {
        "Emit": {
            "RequestOpened": {
                "Permission": {
                    "id": request_id,
                    "tool": {"id": "tool-1", "kind": "Execute", "title": "cargo test", "status": "Pending"},
                    "options": list(options),
                }
            }
        }
    }


def question(request_id: str = "q", **fields: Any) -> dict[str, Any]:
    spec = {
        "id": "q0",
        "text": "Pick",
        "choices": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}],
        "multi_select": False,
        "allows_free_text": False,
    } | fields
    return {"Emit": {"RequestOpened": {"Question": {"id": request_id, "questions": [spec]}}}}


@asynccontextmanager
async def mock_session(script: dict[str, Any], **open_options: Any) -> AsyncIterator[tuple[Runtime, Session]]:
    """A Runtime playing `script` and one open session on it."""
    async with asyncio.timeout(WAIT * 4), Runtime(mock=convert(script, MockScript), timing=TIMING) as runtime:
        session = await runtime.open("mock", ".", **open_options)
        yield runtime, session


def without_status(events: list[Event]) -> list[Event]:
    return [event for event in events if not isinstance(event.kind, StatusChanged)]


def statuses(events: list[Event]) -> list[str]:
    return [event.kind.status.value for event in events if isinstance(event.kind, StatusChanged)]


async def collect(session: Session, until: Callable[[Event], bool]) -> list[Event]:
    """Events up to and including the first that matches `until` (bounded by WAIT). Each is schema-checked."""
    return await event_stream.collect(session, until, within=WAIT)


async def collect_all(session: Session) -> list[Event]:
    """Every remaining event until the stream ends (bounded by WAIT)."""
    return await event_stream.collect_all(session, within=WAIT)


async def one_turn(session: Session) -> list[Event]:
    return await collect(session, is_turn_end)
