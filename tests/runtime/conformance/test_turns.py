"""Turn rules: ids, delivery, queue promotion, stale frames, agent-originated turns, turn-end bookkeeping."""

from omniagent.protocols.sidecar.commands import PermissionAnswer, Queued, Started
from omniagent.protocols.sidecar.events import (
    Completed,
    DiagnosticEvent,
    FromAgent,
    FromPrompt,
    MessageEnded,
    PermissionChoice,
    RequestOpened,
    TextDelta,
    ToolUpdated,
    TurnEnded,
    TurnStarted,
)
from omniagent.runtime.errors import InvalidRequest
from tests.runtime.conformance.harness import (
    END,
    collect,
    is_kind,
    mock_session,
    one_turn,
    permission,
    tags,
    text,
    tool,
    without_status,
)


async def test_first_prompt_starts_turn_t1_as_prompt_p1_before_the_reply() -> None:
    """Ids per session; TurnStarted and Working are emitted before the Started reply."""
    async with mock_session({"turns": [[text("hi"), END]]}) as (_, session):
        delivery = await session.prompt("hello")
        assert delivery.prompt_id == "p1"
        assert delivery.kind == Started(turn_id="t1")
        assert session.info().status == "Working"
        events = await one_turn(session)
        started = events[0]
        assert isinstance(started.kind, TurnStarted)
        assert started.kind.origin == FromPrompt(prompt_id="p1")
        assert started.turn_info is not None and started.turn_info.id == "t1"
        assert [e.sequence for e in events] == list(range(1, len(events) + 1))


async def test_second_prompt_during_a_non_steerable_turn_is_queued_at_position_zero() -> None:
    """No Steer capability → Queued{position: prompts ahead}; turns start in prompt order."""
    script = {"turns": [[text("one"), "AwaitAnswer", END], [text("two"), END], [text("three"), END]]}
    async with mock_session(script) as (_, session):
        await session.prompt("first")
        assert (await session.prompt("second")).kind == Queued(position=0)
        third = await session.prompt("third")
        assert third.prompt_id == "p3" and third.kind == Queued(position=1)
        await session.cancel()
        origins = []
        for _ in range(3):
            events = await one_turn(session)
            origins += [e.kind.origin for e in events if isinstance(e.kind, TurnStarted)]
        assert origins == [FromPrompt(prompt_id=p) for p in ("p1", "p2", "p3")]


async def test_a_dequeued_prompt_never_starts_and_dequeue_works_once() -> None:
    """Dequeue removes a queued prompt; a second dequeue is InvalidRequest."""
    async with mock_session({"turns": [["AwaitAnswer", END], [text("never"), END]]}) as (_, session):
        await session.prompt("first")
        queued = await session.prompt("second")
        await session.dequeue(queued.prompt_id)
        try:
            await session.dequeue(queued.prompt_id)
            raise AssertionError("second dequeue succeeded")
        except InvalidRequest as error:
            assert error.kind == "InvalidRequest"
        await session.cancel()
        await one_turn(session)
        await session.close()
        rest = [e async for e in session.events]
        assert not any(isinstance(e.kind, TurnStarted) for e in rest)


async def test_stale_frames_before_the_turn_ack_are_dropped() -> None:
    """Content before TurnAck belongs to the old turn: texts seen exactly first, second."""
    script = {
        "stale_before_ack": {"TextDelta": {"message_id": "old", "text": "stale"}},
        "turns": [[text("first"), END], [text("second"), END]],
    }
    async with mock_session(script) as (_, session):
        await session.prompt("a")
        first = await one_turn(session)
        await session.prompt("b")
        second = await one_turn(session)
        texts = [e.kind.text for e in first + second if isinstance(e.kind, TextDelta)]
        assert texts == ["first", "second"]


async def test_content_after_the_wire_turn_end_opens_an_agent_originated_turn() -> None:
    """[TurnStarted(Prompt), TurnEnded, TurnStarted(Agent), TextDelta, MessageEnded, TurnEnded]."""
    async with mock_session({"turns": [[END, text("late", "m9"), END]]}) as (_, session):
        await session.prompt("go")
        events = without_status(await one_turn(session))
        events += without_status(await one_turn(session))
        assert tags(events) == ["TurnStarted", "TurnEnded", "TurnStarted", "TextDelta", "MessageEnded", "TurnEnded"]
        assert events[2].kind == TurnStarted(origin=FromAgent())
        assert events[2].turn_info is not None and events[2].turn_info.id == "t2"
        assert events[4].kind == MessageEnded(message_id="m9")


async def test_trailing_agent_content_runs_fully_before_a_queued_prompt() -> None:
    """Promotion waits until the adapter's pending frames are drained."""
    script = {"turns": [[permission("r1"), "AwaitAnswer", END, text("late"), END], [text("queued"), END]]}
    async with mock_session(script) as (_, session):
        await session.prompt("first")
        events = without_status(await collect(session, is_kind(RequestOpened)))
        assert (await session.prompt("second")).kind == Queued(position=0)
        await session.answer("r1", PermissionAnswer(choice=PermissionChoice.ALLOW_ONCE))
        events += without_status(await one_turn(session))  # the prompted turn
        events += without_status(await one_turn(session))  # the agent's trailing turn
        events += without_status(await one_turn(session))  # then the queued prompt
        starts = [e.kind.origin for e in events if isinstance(e.kind, TurnStarted)]
        assert starts == [FromPrompt(prompt_id="p1"), FromAgent(), FromPrompt(prompt_id="p2")]
        assert tags(events)[-8:] == [
            "TurnStarted", "TextDelta", "MessageEnded", "TurnEnded",  # the agent's turn, whole
            "TurnStarted", "TextDelta", "MessageEnded", "TurnEnded",  # then the queued prompt
        ]  # fmt: skip


async def test_bookkeeping_after_the_turn_is_not_a_turn_and_background_lists_running_tools() -> None:
    """TurnEnded.background == ["bg"]; a late completed ToolUpdated has turn_info null."""
    script = {"turns": [[tool("bg", "Running"), tool("zz", "Running"), END, tool("bg", "Completed")]]}
    async with mock_session(script) as (_, session):
        await session.prompt("go")
        events = await one_turn(session)
        assert events[-1].kind == TurnEnded(stop=Completed(), background=["bg", "zz"])
        late = await collect(session, is_kind(ToolUpdated))
        assert late[-1].turn_info is None


async def test_a_late_second_stop_frame_gives_one_warning_diagnostic() -> None:
    """A wire turn-end while idle → one Warning per turn, never a second TurnEnded."""
    async with mock_session({"turns": [[END, END, END]]}) as (_, session):
        await session.prompt("go")
        await one_turn(session)
        await session.close()
        rest = [e async for e in session.events]
        warnings = [e for e in rest if isinstance(e.kind, DiagnosticEvent)]
        assert len(warnings) == 1 and warnings[0].kind.diagnostic.level == "Warning"
        assert warnings[0].turn_info is None
        assert not any(isinstance(e.kind, TurnEnded) for e in rest)


async def test_engine_owned_kinds_sent_by_an_adapter_are_dropped_with_a_warning() -> None:
    """An adapter cannot emit TurnStarted/TurnEnded/RequestClosed/SessionUpdated/StatusChanged."""
    script = {"turns": [[{"Emit": {"RequestClosed": {"request_id": "x"}}}, {"Emit": {"StatusChanged": "Idle"}}, END]]}
    async with mock_session(script) as (_, session):
        await session.prompt("go")
        events = await one_turn(session)
        assert "RequestClosed" not in tags(events)
        warnings = [e.kind.diagnostic.message for e in events if isinstance(e.kind, DiagnosticEvent)]
        assert warnings == [
            "adapter sent engine-owned event RequestClosed; dropped",
            "adapter sent engine-owned event StatusChanged; dropped",
        ]


async def test_turn_end_bookkeeping_ends_messages_then_requests_then_the_turn() -> None:
    """MessageEnded for unended messages, RequestClosed for open requests, then TurnEnded."""
    script = {"turns": [[text("a", "m1"), text("b", "m2"), permission("r1"), END]]}
    async with mock_session(script) as (_, session):
        await session.prompt("go")
        tail = without_status(await one_turn(session))[-4:]
        assert tags(tail) == ["MessageEnded", "MessageEnded", "RequestClosed", "TurnEnded"]
        assert [e.kind.message_id for e in tail[:2]] == ["m1", "m2"]
        assert all(e.turn_info is not None and e.turn_info.parent_tool_id is None for e in tail)
