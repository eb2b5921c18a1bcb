"""Turns of our engine through the `Runtime`: the engine in process against the fake LLM (Anthropic wire), every
event checked against the anyagent schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omniagent.protocols.sidecar.agents import Capability
from omniagent.protocols.sidecar.commands import PermissionAnswer, PermissionMode
from omniagent.protocols.sidecar.events import (
    Cancelled,
    CommandInput,
    CommandSpec,
    Completed,
    ContextCompacted,
    ContextUsage,
    Edit,
    Execute,
    Failed,
    FromAgent,
    MessageEnded,
    PathInput,
    PermissionAsk,
    PermissionChoice,
    ReasoningDelta,
    RequestClosed,
    RequestOpened,
    StatusChanged,
    TextDelta,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdated,
    TurnEnded,
    TurnStarted,
)
from omniagent.testing import ErrorReply, FakeLLMServer, FakeToolCall, FakeUsage, Reply, Scenario
from tests.runtime.adapters.engine.harness import (
    bodies,
    collect,
    is_kind,
    of,
    one_turn,
    open_engine,
    runtime,
    tool_then_text,
    use_engine,
    workspace,
)


async def test_a_write_asks_permission_then_runs_and_the_turn_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue "One system" part 3: the engine's ask becomes RequestOpened(Permission{AllowOnce, AllowAlways,
    DenyOnce}); AllowOnce runs the tool; tool snapshots, text, MessageEnded, ContextUsage, TurnEnded Completed."""
    ws = workspace(tmp_path)
    async with FakeLLMServer(tool_then_text()) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, ws)
            await session.prompt("write hello.txt")
            asked = await collect(session, is_kind(RequestOpened))
            opened = asked[-1].kind
            assert isinstance(opened, RequestOpened) and isinstance(opened.request, PermissionAsk)
            request = opened.request.request
            assert request.options == [
                PermissionChoice.ALLOW_ONCE,
                PermissionChoice.ALLOW_ALWAYS,
                PermissionChoice.DENY_ONCE,
            ]
            assert request.tool.kind == Edit() and request.tool.status is ToolStatus.PENDING
            assert request.tool.input == PathInput(path=str(ws / "hello.txt"))
            assert not (ws / "hello.txt").exists()  # nothing ran before the answer
            await session.answer(request.id, PermissionAnswer(choice=PermissionChoice.ALLOW_ONCE))
            rest = await one_turn(session)
    assert (ws / "hello.txt").read_text() == "hello\n"
    statuses = [e.kind for e in asked + rest if isinstance(e.kind, StatusChanged)]
    assert [s.status.value for s in statuses] == ["Working", "NeedsInput", "Working"]
    assert of(rest, RequestClosed) == [RequestClosed(request_id=request.id)]
    tools = [u.tool for u in of(rest, ToolUpdated)]
    assert [t.status for t in tools] == [ToolStatus.RUNNING, ToolStatus.COMPLETED]
    done = tools[-1]
    assert done.id == request.tool.id and done.locations == [str(ws / "hello.txt")]
    assert [(diff.path, diff.old_text, diff.new_text) for diff in done.diffs] == [
        (str(ws / "hello.txt"), None, "hello\n")
    ]
    assert "".join(t.text for t in of(rest, TextDelta)) == "All done."
    text_ids = {t.message_id for t in of(rest, TextDelta)}
    assert [m.message_id for m in of(rest, MessageEnded)] == list(text_ids)
    usage = of(rest, ContextUsage)[-1]
    assert usage.window_tokens == 200_000 and usage.used_tokens > 0 and usage.cost_usd is not None
    assert of(rest, TurnEnded)[-1].stop == Completed()


async def test_deny_once_refuses_the_tool_and_the_model_is_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue: DenyOnce → the engine's reject; the tool fails without running and the turn goes on (docs/engine.md)."""
    ws = workspace(tmp_path)
    async with FakeLLMServer(tool_then_text(text="Understood.")) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, ws)
            await session.prompt("write hello.txt")
            opened = (await collect(session, is_kind(RequestOpened)))[-1].kind
            assert isinstance(opened, RequestOpened)
            await session.answer(opened.request.request.id, PermissionAnswer(choice=PermissionChoice.DENY_ONCE))
            rest = await one_turn(session)
        second = (await bodies(llm, 2))[1]
    assert not (ws / "hello.txt").exists()
    failed = of(rest, ToolUpdated)[-1].tool
    assert failed.status is ToolStatus.FAILED and "rejected" in (failed.output or "")
    assert "rejected" in str(second["messages"][-1])
    assert of(rest, TurnEnded)[-1].stop == Completed()


async def test_allow_always_is_remembered_for_the_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue: "always" is remembered per session: the next call of that tool runs without asking."""
    ws = workspace(tmp_path)
    second_write = FakeToolCall("write", {"path": "again.txt", "content": "x"})
    scenario = Scenario([*tool_then_text().steps, Reply(tool_calls=(second_write,)), Reply(text="again")])
    async with FakeLLMServer(scenario) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, ws)
            await session.prompt("write hello.txt")
            opened = (await collect(session, is_kind(RequestOpened)))[-1].kind
            assert isinstance(opened, RequestOpened)
            await session.answer(opened.request.request.id, PermissionAnswer(choice=PermissionChoice.ALLOW_ALWAYS))
            await one_turn(session)
            await session.prompt("and again")
            second = await one_turn(session)
    assert of(second, RequestOpened) == []
    assert (ws / "again.txt").read_text() == "x"
    assert of(second, TurnEnded)[-1].stop == Completed()


async def test_auto_approve_answers_for_the_caller_and_exec_output_streams(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AutoApprove answers every permission itself, unseen; exec is an Execute tool with its command,
    its output as ToolOutputDelta, and the reasoning as ReasoningDelta."""
    ws = workspace(tmp_path)
    call = FakeToolCall("exec", {"command": "echo from-the-tool"})
    scenario = Scenario([Reply(reasoning="Let me run it.", tool_calls=(call,)), Reply(text="Ran it.")])
    async with FakeLLMServer(scenario) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, ws, permission_mode=PermissionMode.AUTO_APPROVE)
            await session.prompt("run it")
            events = await one_turn(session)
    assert of(events, RequestOpened) == [] and of(events, RequestClosed) == []
    assert "".join(r.text for r in of(events, ReasoningDelta)) == "Let me run it."
    tool = of(events, ToolUpdated)[-1].tool
    assert tool.kind == Execute() and tool.status is ToolStatus.COMPLETED
    assert tool.input == CommandInput(spec=CommandSpec(command="echo from-the-tool", cwd=str(ws)))
    assert "from-the-tool" in "".join(d.text for d in of(events, ToolOutputDelta))
    assert of(events, TurnEnded)[-1].stop == Completed()


async def test_cancel_mid_stream_ends_the_turn_cancelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue: Cancel → the engine's cancel_run; its run.done canceled → TurnEnded Cancelled; the session lives on."""
    ws = workspace(tmp_path)
    slow = Reply(text="word " * 400, chunk_size=5, gate="never", hold_after_events=4)
    async with FakeLLMServer(Scenario([slow, Reply(text="after")])) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, ws)
            await session.prompt("talk")
            await collect(session, is_kind(TextDelta))
            await session.cancel()
            events = await one_turn(session)
            assert of(events, TurnEnded)[-1].stop == Cancelled()
            await session.prompt("again")
            after = await one_turn(session)
    assert "".join(t.text for t in of(after, TextDelta)) == "after"


async def test_a_failed_run_ends_the_turn_failed_with_the_engines_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue: run.done failed → TurnEnded Failed(message): the engine's sentence (with the provider's own words)
    and its error code."""
    ws = workspace(tmp_path)
    async with FakeLLMServer(Scenario([ErrorReply(400, "invalid_request_error", message="bad things")])) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, ws)
            await session.prompt("hi")
            events = await one_turn(session)
    stop = of(events, TurnEnded)[-1].stop
    said = 'The provider said: "bad things"'
    assert stop == Failed(message=f"The provider rejected the request as invalid. {said} (provider)")


async def test_a_refused_key_fails_the_turn_and_closes_the_session_needing_a_login(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AuthLost: the provider's 401 (run.done failed `auth`) ends the session with AuthRequired,
    naming the key variables (never a key)."""
    from omniagent.runtime.errors import AuthRequired

    ws = workspace(tmp_path)
    async with FakeLLMServer(Scenario([ErrorReply(401, "authentication_error", message="invalid x-api-key")])) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, ws)
            await session.prompt("hi")
            events = await one_turn(session)
            with pytest.raises(AuthRequired) as raised:
                await collect(session, lambda e: False)
    assert isinstance(of(events, TurnEnded)[-1].stop, Failed)
    assert "ANTHROPIC_API_KEY" in [getattr(m, "name", None) for m in raised.value.login]


async def test_usage_reports_the_models_window_and_the_sessions_cost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue: usage → ContextUsage (window from the catalog model, cost): prompt + answer tokens of the last call,
    the cost summed over the session's replies (Sonnet 4.5: $3 / $15 per million)."""
    ws = workspace(tmp_path)
    usage = FakeUsage(input=1000, output=100)
    async with FakeLLMServer(Scenario([Reply(text="a", usage=usage), Reply(text="b", usage=usage)])) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, ws)
            await session.prompt("one")
            first = of(await one_turn(session), ContextUsage)
            await session.prompt("two")
            second = of(await one_turn(session), ContextUsage)
    assert [(u.used_tokens, u.window_tokens) for u in first + second] == [(1100, 200_000), (1100, 200_000)]
    assert first[0].cost_usd == pytest.approx(0.0045) and second[0].cost_usd == pytest.approx(0.009)


async def test_compact_runs_as_an_agent_turn_that_reports_context_compacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`compact` and issue "One system" (Compact when the engine has it): the engine session
    advertises Compact; `compact()` is TurnStarted(Agent) … ContextCompacted … TurnEnded Completed, and the next
    turn's request carries the summary instead of the compacted turn (docs/engine.md "Compaction"; Sonnet's window
    keeps a tail of 20000 estimated tokens, so the second prompt alone holds it)."""
    ws = workspace(tmp_path)
    scenario = Scenario([Reply(text="noted"), Reply(text="noted too"), Reply(text="SUMMARY-MARKER"), Reply(text="ok")])
    async with FakeLLMServer(scenario) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, ws)
            assert Capability.COMPACT in session.info().details.capabilities.features
            await session.prompt("OLD-MARKER " + "o" * 4000)
            await one_turn(session)
            await session.prompt("RECENT-MARKER " + "r" * 85_000)
            await one_turn(session)
            await session.compact()
            events = await one_turn(session)
            await session.prompt("next")
            await one_turn(session)
            sent = json.dumps((await bodies(llm, 4))[3]["messages"])
    assert of(events, TurnStarted) == [TurnStarted(origin=FromAgent())]
    assert len(of(events, ContextCompacted)) == 1
    assert of(events, TurnEnded)[-1].stop == Completed()
    assert "SUMMARY-MARKER" in sent and "RECENT-MARKER" in sent and "OLD-MARKER" not in sent
