"""Backpressure on the per-session stream, agent death and login loss."""

import asyncio

import pytest

from omniagent.protocols.sidecar.events import Failed, TextDelta, TurnEnded
from omniagent.runtime.errors import AuthRequired, ProcessExited, SessionClosed
from omniagent.runtime.stream import SESSION_EVENT_BUFFER
from omniagent.runtime.turns import CONSUMER_PAUSE_AT
from tests.runtime.conformance.harness import END, WAIT, mock_session, text

STALL = 0.1  # seconds the consumer does not read (CONSUMER_GRACE is 1 s)


async def test_a_stalled_consumer_loses_only_its_session_and_gets_at_most_the_buffer() -> None:
    """G6: 1300 events never drained → ≤1024 delivered, then the stream ends, no error."""
    script = {"turns": [[{"Repeat": {"times": 1300, "steps": [text("x")]}}, END]]}
    async with mock_session(script) as (runtime, session):
        await session.prompt("go")
        async with asyncio.timeout(WAIT):
            await session.wait_closed()
        events = [e async for e in session.events]
        assert len(events) <= SESSION_EVENT_BUFFER
        assert [e.sequence for e in events] == list(range(1, len(events) + 1))
        other = await runtime.open("mock", ".")
        assert not other.closed


async def test_a_consumer_that_pauses_then_catches_up_within_the_grace_gets_every_event() -> None:
    """Issue 11: 1300 unpaced events; once the session has buffered enough to pause, the consumer stalls for
    STALL (a reader not scheduled for a moment; the stall is the stimulus, well inside the loop's grace), then reads
    on: the session waited for it instead of closing it."""
    script = {"turns": [[{"Repeat": {"times": 1300, "steps": [text("x")]}}, END]]}
    async with mock_session(script) as (_, session):
        await session.prompt("go")
        async with asyncio.timeout(WAIT):
            await session.events.wait_unread(CONSUMER_PAUSE_AT)
            await asyncio.sleep(STALL)
            deltas = 0
            async for event in session.events:
                deltas += isinstance(event.kind, TextDelta)
                if isinstance(event.kind, TurnEnded):
                    break
        assert deltas == 1300
        assert not session.closed


async def test_a_slow_consumer_through_a_small_adapter_buffer_gets_every_event_in_order() -> None:
    """1000 deltas through an adapter buffer of 8 all arrive, sequence increasing."""
    script = {"buffer": 8, "turns": [[{"Repeat": {"times": 1000, "steps": [text("x")]}}, END]]}
    async with mock_session(script) as (_, session):
        await session.prompt("go")
        count, last = 0, 0
        async with asyncio.timeout(WAIT):
            async for event in session.events:
                assert event.sequence == last + 1
                last = event.sequence
                count += isinstance(event.kind, TextDelta)
                if isinstance(event.kind, TurnEnded):
                    break
                await asyncio.sleep(0)  # a consumer that yields after every event
        assert count == 1000


async def test_agent_death_fails_the_turn_then_the_stream_raises_process_exited() -> None:
    """The crash path: TurnEnded Failed "agent exited during the turn" with the status and stderr,
    then ProcessExited status 9."""
    async with mock_session({"turns": [[text("hi"), "Die"]]}) as (_, session):
        await session.prompt("go")
        seen = []
        with pytest.raises(ProcessExited) as died:
            async with asyncio.timeout(WAIT):
                async for event in session.events:
                    seen.append(event)
        assert died.value.status == "9" and died.value.stderr == "mock died"
        ended = [e.kind for e in seen if isinstance(e.kind, TurnEnded)]
        assert ended == [TurnEnded(stop=Failed(message="agent exited during the turn (9): mock died"))]
        with pytest.raises(SessionClosed):
            await session.prompt("again")


async def test_login_loss_fails_the_turn_then_the_stream_raises_auth_required() -> None:
    """The auth path: TurnEnded Failed "agent needs login", then AuthRequired with login methods."""
    async with mock_session({"turns": [[text("hi"), "LoseAuth"]]}) as (_, session):
        await session.prompt("go")
        seen = []
        with pytest.raises(AuthRequired) as lost:
            async with asyncio.timeout(WAIT):
                async for event in session.events:
                    seen.append(event)
        assert lost.value.body().dump()["login"] == [{"EnvVar": {"name": "ANTHROPIC_API_KEY"}}]
        assert TurnEnded(stop=Failed(message="agent needs login")) in [e.kind for e in seen]
