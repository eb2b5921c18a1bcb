"""Steering: the handshake with the adapter decides between Steered and Queued{0}."""

from omniagent.protocols.sidecar.commands import Queued, Steered
from omniagent.protocols.sidecar.events import FromPrompt, TextDelta, TurnStarted
from tests.runtime.conformance.harness import END, collect, is_kind, mock_session, one_turn, text


async def test_accepted_steer_joins_the_running_turn_without_a_new_turn() -> None:
    """Steer accepted → Steered{turn_id of the running turn}."""
    async with mock_session({"steer": True, "turns": [["AwaitAnswer", END]]}) as (_, session):
        first = await session.prompt("first")
        steered = await session.prompt("more")
        assert steered.prompt_id == "p2"
        assert steered.kind == Steered(turn_id="t1")
        await session.cancel()
        events = await one_turn(session)
        assert sum(isinstance(e.kind, TurnStarted) for e in events) == 1
        assert first.kind.turn_id == "t1"  # type: ignore[union-attr]


async def test_rejected_steer_is_queued_at_the_head_and_runs_next() -> None:
    """Steer rejected → Queued{position: 0}; it starts after the running turn."""
    script = {"steer": True, "steer_rejects": True, "turns": [["AwaitAnswer", END], [text("next"), END]]}
    async with mock_session(script) as (_, session):
        await session.prompt("first")
        assert (await session.prompt("more")).kind == Queued(position=0)
        await session.cancel()
        await one_turn(session)
        second = await one_turn(session)
        assert second[0].kind == TurnStarted(origin=FromPrompt(prompt_id="p2"))
        assert any(isinstance(e.kind, TextDelta) and e.kind.text == "next" for e in second)


async def test_a_steer_still_unanswered_when_the_turn_ends_is_queued_at_position_zero() -> None:
    """The turn ended first → the held prompt resolves as Queued{0}."""
    script = {"steer": True, "steer_ack": False, "turns": [["AwaitAnswer", END], [END]]}
    async with mock_session(script) as (_, session):
        await session.prompt("first")
        await collect(session, is_kind(TurnStarted))
        import asyncio

        held = asyncio.ensure_future(session.prompt("more"))
        await session.cancel()
        assert (await asyncio.wait_for(held, 5)).kind == Queued(position=0)
        await one_turn(session)
        promoted = await one_turn(session)
        assert promoted[0].kind == TurnStarted(origin=FromPrompt(prompt_id="p2"))
