"""Unit tests of the engine core on an in-memory store (issue 15): admission and the queue (`inputs.Inputs`), the run
loop (`executor.RunExecutor`), tool calls (`tool_calls`, through a `RunContext` of the test's own) and compaction runs.
A failure here names the broken part, where the rpc end-to-end tests only name a yuke method."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest

from omniagent.engine.broadcast import Broadcaster
from omniagent.engine.interactions.permissions import Decision, Permissions
from omniagent.engine.interactions.registry import Interactions
from omniagent.engine.interactions.secrets import Scrubber
from omniagent.engine.live import ActiveRun
from omniagent.engine.providers import neutral as n
from omniagent.engine.run import tool_calls
from omniagent.engine.run.context import RunContext, Sink
from omniagent.engine.run.draft import Draft
from omniagent.engine.store import Store
from omniagent.engine.tools import ToolContext, ToolLimits, ToolRegistry, default_tools
from omniagent.protocols.yuke.activity import ActivityState
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.content import ContentText, InputContent
from omniagent.protocols.yuke.interactions import InteractionRequestedData
from omniagent.protocols.yuke.messages import (
    AssistantMessage,
    MessageCommittedData,
    TokenUsage,
    ToolStateChangedData,
    UserMessage,
)
from omniagent.protocols.yuke.runs import RunConfig, RunDoneData, RunOutcomeSkipped, RunOutcomeTurn
from omniagent.protocols.yuke.sessions import (
    SendInputQueued,
    SendInputStarted,
    Session,
    SessionCompactParams,
    SessionQueueParams,
)
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.engine.core_harness import Parts, open_parts
from tests.stores import open_test_store

# Each test runs on both stores: SQLite, and a fresh PostgreSQL database (conftest.py `each_store`).
pytestmark = pytest.mark.usefixtures("each_store")


T = TypeVar("T")


def _input(text: str) -> InputContent:
    return InputContent(content=[ContentText(text=text)])


@pytest.fixture
async def llm() -> AsyncIterator[FakeLLMServer]:
    async with FakeLLMServer(Scenario()) as server:
        yield server


def _done_of(parts: Parts, run_id: int) -> Callable[[YukeModel], bool]:
    return lambda data: isinstance(data, RunDoneData) and data.run_id == run_id


# Admission and the queue -------------------------------------------------------------------------------------------


async def test_input_on_an_idle_session_starts_a_run_and_input_sent_meanwhile_queues_then_drains_into_one_turn(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    llm.enqueue(Reply(text="first answer", chunk_size=2, gate="first", hold_after_events=4), Reply(text="second"))
    async with open_parts(tmp_path, llm) as parts:
        sid = await parts.new_session()
        started = await parts.inputs.send(sid, _input("one"))
        assert isinstance(started, SendInputStarted) and started.run_id == 1
        assert await llm.wait_held_async("first")
        assert parts.live.is_busy(sid)
        second = await parts.inputs.send(sid, _input("two"))
        third = await parts.inputs.send(sid, _input("three"))
        assert isinstance(second, SendInputQueued) and isinstance(third, SendInputQueued)
        assert (second.input_id, third.input_id) == (2, 3)
        queue = await parts.inputs.queue(SessionQueueParams(session_id=sid))
        assert [item.input_id for item in queue.items] == [2, 3]
        assert parts.live.get(sid).queued == 2
        llm.release("first")
        first_done = await parts.wait("run.done", _done_of(parts, 1))
        second_done = await parts.wait("run.done", _done_of(parts, 2), start=first_done)
        between = parts.seen[first_done + 1 : second_done]
        users = [d.message for name, d in between if isinstance(d, MessageCommittedData)]
        assert [m.content[0].text for m in users if isinstance(m, UserMessage)] == ["two", "three"]  # type: ignore[union-attr]
        assert parts.names(first_done).index("run.started") > parts.names(first_done).index("message.committed")
        assert (await parts.inputs.queue(SessionQueueParams(session_id=sid))).items == []
        assert not parts.live.is_busy(sid)


async def test_a_full_queue_refuses_the_next_input(tmp_path: Path, llm: FakeLLMServer) -> None:
    from omniagent.engine.errors import EngineError
    from omniagent.engine.run.queue import MAX_QUEUED
    from omniagent.protocols.yuke.envelope import ErrorCode

    llm.enqueue(Reply(text="held", gate="held", hold_after_events=4))
    async with open_parts(tmp_path, llm) as parts:
        sid = await parts.new_session()
        await parts.inputs.send(sid, _input("start"))
        for number in range(MAX_QUEUED):
            assert isinstance(await parts.inputs.send(sid, _input(f"q{number}")), SendInputQueued)
        with pytest.raises(EngineError) as refused:
            await parts.inputs.send(sid, _input("one too many"))
        assert refused.value.code == ErrorCode.QUEUE_FULL


# The run loop ------------------------------------------------------------------------------------------------------


async def test_a_run_streams_its_draft_commits_it_with_usage_and_ends_idle(tmp_path: Path, llm: FakeLLMServer) -> None:
    llm.enqueue(Reply(text="hello there"))
    async with open_parts(tmp_path, llm) as parts:
        sid = await parts.new_session()
        await parts.inputs.send(sid, _input("hi"))
        done = parts.data(await parts.wait("run.done"))
        assert isinstance(done, RunDoneData) and done.outcome == RunOutcomeTurn(finish="stop", rounds=1)
        names = parts.names()
        assert names.index("message.started") < names.index("message.part_delta") < names.index("run.done")
        committed = [d.message for _, d in parts.seen if isinstance(d, MessageCommittedData)]
        assistant = committed[-1]
        assert isinstance(assistant, AssistantMessage) and assistant.finish == "stop"
        assert assistant.content[0].text == "hello there"  # type: ignore[union-attr]
        assert assistant.tokens is not None and assistant.tokens.input == 12 and assistant.cost is not None
        assert parts.live.get(sid).activity().state.type == "idle"


async def test_a_tool_call_runs_and_its_result_is_what_the_next_round_sends(tmp_path: Path, llm: FakeLLMServer) -> None:
    llm.enqueue(Reply(tool_calls=(FakeToolCall("read", {"path": "notes.txt"}),)), Reply(text="it says hi"))
    async with open_parts(tmp_path, llm) as parts:
        (parts.workspace / "notes.txt").write_text("hi from the file\n")
        sid = await parts.new_session()
        await parts.inputs.send(sid, _input("read notes.txt"))
        done = parts.data(await parts.wait("run.done"))
        assert isinstance(done, RunDoneData) and done.outcome == RunOutcomeTurn(finish="stop", rounds=2)
        states = [d.state.type for _, d in parts.seen if isinstance(d, ToolStateChangedData)]
        assert states == ["running", "completed"]
        second = (await llm.wait_for_requests_async(2))[1].body
        assert "hi from the file" in json.dumps(second)


async def test_a_compaction_of_a_short_transcript_is_skipped_and_changes_nothing(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    llm.enqueue(Reply(text="short"))
    async with open_parts(tmp_path, llm) as parts:
        sid = await parts.new_session()
        await parts.inputs.send(sid, _input("hi"))
        turn = await parts.wait("run.done", _done_of(parts, 1))
        result = await parts.inputs.compact(SessionCompactParams(session_id=sid))
        assert (result.status, result.run_id) == ("started", 2)
        done = parts.data(await parts.wait("run.done", _done_of(parts, 2), start=turn))
        assert isinstance(done, RunDoneData) and done.kind == "compaction"
        assert done.outcome == RunOutcomeSkipped(reason="too_few_messages")
        assert "message.committed" not in parts.names(turn + 1)
        assert len(llm.requests) == 1  # no summary call was made


# Tool calls through a RunContext of the test's own ---------------------------------------------------------------


class RecordingContext:
    """A `RunContext` without a run loop or an engine: what `tool_calls` and `Draft` need, and a log of what they
    did."""

    def __init__(self, store: Store, permissions: Permissions, root: Path) -> None:
        self.session_id = "0" * 32
        self.run = ActiveRun(
            run_id=1, kind="turn", config=RunConfig(config_rev=0, model="m", reasoning="off"), started_at_ms=0
        )
        self.store = store
        self.tools: ToolRegistry = default_tools()
        self.permissions = permissions
        self.emitted: list[tuple[str, YukeModel]] = []
        self.activities: list[str] = []
        self._root = root

    def emit(self, name: str, data: YukeModel) -> None:
        self.emitted.append((name, data))

    def set_activity(self, state: ActivityState) -> None:
        self.activities.append(state.type)

    def step(self, work: Awaitable[T]) -> Awaitable[T]:
        return work

    async def attempts(
        self, provider: n.Provider, request: n.ModelRequest, sink: Sink, active: Callable[[], ActivityState]
    ) -> None:
        raise AssertionError("no model call in these tests")

    def summary_changed(self, session: Session) -> None:
        self.emitted.append(("session.summary_changed", session))

    def note_context(self, usage: TokenUsage) -> None:
        pass

    def exec_needs_confirm(self) -> bool:
        return False

    def secrets_named(self, command: str) -> tuple[str, ...]:
        return ()

    def tool_context(
        self, root: str, on_output: Callable[[str], None], message_id: int, part_id: int, secrets: tuple[str, ...] = ()
    ) -> ToolContext:
        return ToolContext.for_workspace(root, on_output=on_output, limits=ToolLimits())

    def scrubber(self) -> Scrubber:
        return Scrubber(())


def _draft_calling(ctx: RunContext, name: str, arguments: dict[str, object]) -> Draft:
    draft = Draft(ctx, 7, "root")
    for event in (
        n.ToolCallStarted(index=0, call_id="c1", name=name),
        n.ToolCallArgumentsDelta(index=0, call_id="c1", delta=json.dumps(arguments)),
        n.BlockEnded(index=0),
        n.StreamEnd(stop_reason="tool_calls"),
    ):
        draft.feed(event)
    return draft


async def test_a_guarded_call_waits_for_its_answer_and_a_rejection_is_what_the_model_reads(tmp_path: Path) -> None:
    store = await open_test_store()
    try:
        broadcaster = Broadcaster()
        asked: list[InteractionRequestedData] = []
        waiting = asyncio.Event()

        def on_broadcast(_name: str, data: YukeModel) -> None:
            if isinstance(data, InteractionRequestedData):
                asked.append(data)
                waiting.set()

        broadcaster.subscribe(on_broadcast)
        permissions = Permissions(Interactions(broadcaster))
        ctx = RecordingContext(store, permissions, tmp_path)
        draft = _draft_calling(ctx, "write", {"path": "out.txt", "content": "x"})
        assert draft.tool_parts() == [0] and ctx.emitted[-1][0] == "message.part_added"
        running = asyncio.ensure_future(tool_calls.run_tools(ctx, draft, str(tmp_path), [0]))
        await asyncio.wait_for(waiting.wait(), 5.0)
        permissions.answer(asked[0].interaction_id, Decision.REJECT)
        await asyncio.wait_for(running, 5.0)
    finally:
        await store.aclose()
    states = [d.state for name, d in ctx.emitted if isinstance(d, ToolStateChangedData)]
    assert [s.type for s in states] == ["error"]
    assert states[0].error == "the user rejected this tool call; it did not run"  # type: ignore[union-attr]
    assert not (tmp_path / "out.txt").exists()
    assert ctx.activities == ["running_tool", "running"]


async def test_an_unguarded_call_runs_and_reports_its_output_and_views(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("line one\n")
    store = await open_test_store()
    try:
        ctx = RecordingContext(store, Permissions(Interactions(Broadcaster())), tmp_path)
        draft = _draft_calling(ctx, "read", {"path": "notes.txt"})
        await asyncio.wait_for(tool_calls.run_tools(ctx, draft, str(tmp_path), [0]), 5.0)
    finally:
        await store.aclose()
    states = [d.state for _, d in ctx.emitted if isinstance(d, ToolStateChangedData)]
    assert [s.type for s in states] == ["running", "completed"]
    assert "line one" in states[-1].output  # type: ignore[union-attr]
    assert draft.parts[0].state == states[-1]
