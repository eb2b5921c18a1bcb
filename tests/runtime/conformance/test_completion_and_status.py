"""Inferred completion (quiet windows) and the status rules."""

from omniagent.protocols.sidecar.commands import PermissionAnswer
from omniagent.protocols.sidecar.events import (
    Completed,
    CompletionSource,
    FromAgent,
    PermissionChoice,
    RequestOpened,
    TurnEnded,
    TurnStarted,
)
from tests.runtime.conformance.harness import (
    END,
    collect,
    collect_all,
    is_kind,
    mock_session,
    one_turn,
    permission,
    statuses,
    tags,
    text,
    tool,
    without_status,
)

INFERRED = Completed(source=CompletionSource.INFERRED)


async def test_a_quiet_non_deterministic_agent_turn_ends_completed_inferred() -> None:
    """No wire turn end → TurnEnded{Completed{Inferred}} after the quiet window."""
    async with mock_session({"deterministic": False, "turns": [[text("hi")]]}) as (_, session):
        await session.prompt("go")
        events = await one_turn(session)
        assert events[-1].kind == TurnEnded(stop=INFERRED)


async def test_an_answer_rearms_the_quiet_window_and_none_runs_while_the_request_is_open() -> None:
    """Never inferred while a request is open; the answer re-arms → RequestClosed, TurnEnded."""
    quiet = {"Emit": {"Diagnostic": {"level": "Info", "message": "still waiting"}}}
    script = {"deterministic": False, "turns": [[permission("r1"), {"Sleep": 700}, quiet, "AwaitAnswer"]]}
    async with mock_session(script) as (_, session):
        await session.prompt("go")
        # The diagnostic comes more than two quiet windows after the request opened, and it is not content.
        waited = await collect(session, lambda e: tags([e]) == ["Diagnostic"])
        assert "TurnEnded" not in tags(waited)
        assert session.info().status == "NeedsInput"
        await session.answer("r1", PermissionAnswer(choice=PermissionChoice.ALLOW_ONCE))
        rest = without_status(await one_turn(session))
        assert tags(rest) == ["RequestClosed", "TurnEnded"]
        assert rest[-1].kind == TurnEnded(stop=INFERRED)


async def test_no_inferred_end_while_a_tool_runs() -> None:
    """The quiet window never ends a turn while a tool is running."""
    script = {"deterministic": False, "turns": [[tool("t", "Running"), {"Sleep": 700}, tool("t", "Completed")]]}
    async with mock_session(script) as (_, session):
        await session.prompt("go")
        events = await one_turn(session)
        kinds = tags(without_status(events))
        assert kinds == ["TurnStarted", "ToolUpdated", "ToolUpdated", "TurnEnded"]
        assert events[-1].kind == TurnEnded(stop=INFERRED, background=[])


async def test_agent_originated_turns_use_their_own_quiet_window() -> None:
    """Deterministic prompted turns, non-deterministic agent turns (the ACP shape)."""
    async with mock_session({"deterministic_agent": False, "turns": [[END, text("late")]]}) as (_, session):
        await session.prompt("go")
        await one_turn(session)
        agent = without_status(await one_turn(session))
        assert agent[0].kind == TurnStarted(origin=FromAgent())
        assert agent[-1].kind == TurnEnded(stop=INFERRED)


async def test_a_permission_turn_reports_working_needs_input_working_idle() -> None:
    """StatusChanged only on change: [Working, NeedsInput, Working, Idle]."""
    async with mock_session({"turns": [[permission("r1"), "AwaitAnswer", text("Done."), END]]}) as (_, session):
        await session.prompt("go")
        events = await collect(session, is_kind(RequestOpened))
        events += await collect(session, lambda e: statuses([e]) == ["NeedsInput"])
        await session.answer("r1", PermissionAnswer(choice=PermissionChoice.ALLOW_ONCE))
        events += await one_turn(session)
        await session.close()
        events += await collect_all(session)
        assert statuses(events) == ["Working", "NeedsInput", "Working", "Idle"]
        assert all(e.turn_info is None for e in events if statuses([e]))


async def test_two_chained_prompts_never_flash_idle() -> None:
    """A queued prompt keeps the status Working between turns: [Working, Idle]."""
    async with mock_session({"turns": [[text("a"), "AwaitAnswer", END], [text("b"), END]]}) as (_, session):
        await session.prompt("one")
        await session.prompt("two")
        await session.cancel()
        events = await one_turn(session)
        events += await one_turn(session)
        await session.close()
        events += await collect_all(session)
        assert statuses(events) == ["Working", "Idle"]


async def test_info_right_after_a_prompt_already_says_working() -> None:
    """Status is synced before the prompt reply."""
    async with mock_session({"turns": [["AwaitAnswer"]]}) as (_, session):
        assert session.info().status == "Idle"
        await session.prompt("go")
        assert session.info().status == "Working"
