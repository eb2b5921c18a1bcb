"""Helpers for the ACP adapter tests: the fake ACP agent as an inline `{"acp":…}` agent, sessions on a real
`Runtime`, and bounded, schema-checked event collection."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from omniagent.protocols.sidecar.commands import AcpSpec, InlineAcp
from omniagent.protocols.sidecar.events import Event
from omniagent.runtime.runtime import Runtime
from omniagent.runtime.session import Session
from omniagent.runtime.turns import Timing
from tests import event_stream
from tests.event_stream import is_kind as is_kind  # re-exported for the tests
from tests.event_stream import is_turn_end
from tests.event_stream import of as of  # re-exported for the tests
from tests.sidecar_schema import validate

K = TypeVar("K")
AGENT = Path(__file__).resolve().parents[3] / "fixtures" / "acp_agents" / "fake_agent.py"
QUIRKY_AGENT = AGENT.with_name("quirky_agent.py")
# Seconds: the bound on every wait (a cold Python start plus a handshake is well under one).
WAIT = 15.0
# The agent-originated quiet window is shortened so a stray agent turn cannot outlive a test.
TIMING = Timing(agent_quiet=1.0, close_grace=5.0)


def fake_agent(version: int, *flags: str, name: str = "fake") -> InlineAcp:
    """The fake ACP agent speaking at most `version`, as an inline agent."""
    args = [str(AGENT), "--max-version", str(version), *flags]
    return InlineAcp(acp=AcpSpec(name=name, path=sys.executable, args=args))


def quirky_agent(*flags: str) -> InlineAcp:
    """The fake ACP agent (v1) with real agents' quirks (`quirky_agent.py`), as an inline agent."""
    return InlineAcp(acp=AcpSpec(name="quirky", path=sys.executable, args=[str(QUIRKY_AGENT), *flags]))


@asynccontextmanager
async def agent_session(agent: InlineAcp, directory: Path, **open_options: Any) -> AsyncIterator[Session]:
    """One open session on `agent` in a Runtime of its own."""
    async with asyncio.timeout(WAIT * 3), Runtime(timing=TIMING) as runtime:
        session = await runtime.open(agent, directory, **open_options)
        validate("SessionInfo", session.info().dump())
        yield session


@asynccontextmanager
async def acp_session(
    directory: Path, version: int, *flags: str, **open_options: Any
) -> AsyncIterator[tuple[Runtime, Session]]:
    """A Runtime and one open session on the fake agent."""
    async with asyncio.timeout(WAIT * 3), Runtime(timing=TIMING) as runtime:
        session = await runtime.open(fake_agent(version, *flags), directory, **open_options)
        validate("SessionInfo", session.info().dump())
        yield runtime, session


def texts(events: list[Event]) -> str:
    from omniagent.protocols.sidecar.events import TextDelta

    return "".join(delta.text for delta in of(events, TextDelta))


async def collect(session: Session, until: Callable[[Event], bool]) -> list[Event]:
    """Events up to and including the first that matches `until` (bounded by WAIT). Each is schema-checked."""
    return await event_stream.collect(session, until, within=WAIT)


async def one_turn(session: Session) -> list[Event]:
    return await collect(session, is_turn_end)
