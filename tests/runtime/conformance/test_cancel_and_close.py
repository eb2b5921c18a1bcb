"""Cancel (with and without clearing the queue) and close (mid-turn, with a grace period)."""

import asyncio

import pytest

from omniagent.protocols.sidecar.commands import Started
from omniagent.protocols.sidecar.events import Cancelled, FromPrompt, RequestOpened, TextDelta, TurnEnded, TurnStarted
from omniagent.runtime.errors import SessionClosed
from omniagent.runtime.session import Session
from tests.runtime.conformance.harness import (
    END,
    TIMING,
    collect,
    collect_all,
    is_kind,
    mock_session,
    one_turn,
    permission,
    tags,
    text,
    without_status,
)


async def test_cancel_closes_open_requests_first_then_the_turn_ends_cancelled_then_the_queue_runs() -> None:
    """RequestOpened(r1), RequestClosed(r1), TurnEnded(Cancelled), TurnStarted(p2)."""
    async with mock_session({"turns": [[permission("r1"), "AwaitAnswer", END], [END]]}) as (_, session):
        await session.prompt("first")
        events = without_status(await collect(session, is_kind(RequestOpened)))
        await session.prompt("second")
        await session.cancel()
        events += without_status(await one_turn(session))
        events += without_status(await one_turn(session))
        assert tags(events)[:5] == ["TurnStarted", "RequestOpened", "RequestClosed", "TurnEnded", "TurnStarted"]
        assert events[3].kind == TurnEnded(stop=Cancelled())
        assert events[4].kind == TurnStarted(origin=FromPrompt(prompt_id="p2"))


async def test_cancel_with_clear_queue_drops_queued_prompts_and_ids_keep_counting() -> None:
    """cancel(true) clears the queue; the next prompt starts as p3."""
    async with mock_session({"turns": [["AwaitAnswer", END], [text("x"), END], [END]]}) as (_, session):
        await session.prompt("first")
        await session.prompt("second")
        await session.cancel(clear_queue=True)
        ended = await one_turn(session)
        assert ended[-1].kind == TurnEnded(stop=Cancelled())
        delivery = await session.prompt("third")
        assert delivery.prompt_id == "p3"
        assert delivery.kind == Started(turn_id="t2")


async def cancelled_at_once(session: Session) -> None:
    """Cancel the running turn: it ends Cancelled by the mock itself, without the loop's grace warning."""
    await session.cancel()
    events = await one_turn(session)
    assert events[-1].kind == TurnEnded(stop=Cancelled())
    assert "Diagnostic" not in tags(events)


async def test_the_mock_ends_a_cancelled_turn_whose_steps_ran_out_at_once() -> None:
    """Cancel with an open turn → TurnEnded Cancelled from the mock, also when the turn's steps
    ran out without an End (nothing left to play, the turn hangs)."""
    async with mock_session({"turns": [[text("a")]]}) as (_, session):
        await session.prompt("go")
        await collect(session, is_kind(TextDelta))
        await cancelled_at_once(session)


async def test_the_mock_ends_a_cancelled_turn_past_its_last_scripted_turn_at_once() -> None:
    """An exhausted script leaves the next turn hanging; cancel still ends it at once, every time."""
    async with mock_session({"turns": [[END]]}) as (_, session):
        await session.prompt("first")
        await one_turn(session)
        for text_ in ("second", "third"):
            await session.prompt(text_)
            await cancelled_at_once(session)


async def test_cancel_while_idle_is_a_no_op() -> None:
    """Not running → ok, nothing emitted."""
    async with mock_session({"turns": []}) as (_, session):
        await session.cancel()
        await session.cancel(clear_queue=True)
        await session.close()
        assert await collect_all(session) == []


async def test_cancel_returns_promptly_while_many_events_are_unread() -> None:
    """Cancel is never blocked by a full event buffer (500 undrained events)."""
    script = {"turns": [[{"Repeat": {"times": 500, "steps": [text("x")]}}, "AwaitAnswer", END]]}
    async with mock_session(script) as (_, session):
        await session.prompt("go")
        # Wait until the agent finished flooding, without reading the events.
        await session.events.wait_unread(500)
        async with asyncio.timeout(1):
            await session.cancel()
        events = await one_turn(session)
        assert events[-1].kind == TurnEnded(stop=Cancelled())
        sequences = [e.sequence for e in events]
        assert sequences == sorted(sequences) and len(set(sequences)) == len(sequences)


async def test_an_adapter_that_never_ends_a_cancelled_turn_gets_it_ended_after_the_grace() -> None:
    """Our choice: a cancel always ends the turn; a silent adapter costs CANCEL_GRACE and a warning."""
    async with mock_session({"turns": [["AwaitAnswer", END]], "ignore_cancel": True}) as (_, session):
        await session.prompt("go")
        await collect(session, is_kind(TurnStarted))
        await session.cancel()
        events = await one_turn(session)
        assert events[-1].kind == TurnEnded(stop=Cancelled())
        assert "Diagnostic" in tags(events)


async def test_close_mid_turn_ends_requests_and_the_turn_cancelled_then_the_stream_ends() -> None:
    """Close → RequestClosed, TurnEnded(Cancelled), StatusChanged Idle, end of stream."""
    async with mock_session({"turns": [[text("a"), permission("r1"), "AwaitAnswer", END]]}) as (_, session):
        await session.prompt("go")
        await collect(session, is_kind(RequestOpened))
        await session.close()
        rest = await collect_all(session)
        assert tags(rest)[-4:] == ["MessageEnded", "RequestClosed", "TurnEnded", "StatusChanged"]
        assert rest[-2].kind == TurnEnded(stop=Cancelled())
        assert session.closed


async def test_every_command_after_close_is_session_closed_but_info_still_answers() -> None:
    """The session map keeps closed sessions; info reads the last snapshot (Idle)."""
    async with mock_session({"turns": [["AwaitAnswer"]]}) as (_, session):
        await session.prompt("go")
        await session.close()
        for call in (session.prompt("x"), session.cancel(), session.close(), session.dequeue("p1")):
            with pytest.raises(SessionClosed):
                await call
        assert session.info().status == "Idle"
        assert session.info().id == session.id


async def test_close_of_an_agent_that_ignores_it_returns_after_the_grace() -> None:
    """Reply when the adapter finishes or the grace (5 s; shortened here) expires."""
    async with mock_session({"ignore_close": True, "turns": []}) as (_, session):
        loop = asyncio.get_running_loop()
        began = loop.time()
        await session.close()
        assert loop.time() - began >= TIMING.close_grace * 0.9
        assert session.closed


async def test_two_closes_join_the_same_wait() -> None:
    """A second close while closing joins the waiters."""
    async with mock_session({"ignore_close": True, "turns": []}) as (_, session):
        await asyncio.gather(session.close(), session.close())
        assert session.closed
