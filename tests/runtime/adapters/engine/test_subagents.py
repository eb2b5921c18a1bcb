"""Subagents of our engine through the `Runtime` (the engine in process against the fake LLM, every event checked
against the anyagent schema): a `spawn_agent` call is a `Subagent` tool, the child's events nest under it
(`parent_tool_id`), its report settles it, and the turn ends once both children have reported; what the children
spend is the session's cost."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniagent.protocols.sidecar.agents import Capability
from omniagent.protocols.sidecar.commands import PermissionMode
from omniagent.protocols.sidecar.events import (
    Cancelled,
    Completed,
    ContextUsage,
    MessageEnded,
    Read,
    Subagent,
    TextDelta,
    ToolStatus,
    ToolUpdated,
    TurnEnded,
)
from omniagent.testing import FakeLLMServer, FakeToolCall, FakeUsage, Reply, Scenario
from tests.runtime.adapters.engine.harness import (
    collect,
    is_kind,
    of,
    one_turn,
    open_engine,
    runtime,
    use_engine,
    workspace,
)

REPORT = "Report from the child agent"


def _spawn(name: str, task: str) -> FakeToolCall:
    return FakeToolCall("spawn_agent", {"name": name, "task": task}, f"call_{name}")


async def test_spawned_children_nest_under_their_subagent_calls_and_the_turn_waits_for_their_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = workspace(tmp_path)
    (ws / "a.txt").write_text("alpha reads this\n")
    scenario = Scenario(
        [
            Reply(text="Both agents reported.", match="BETA-DONE", sticky=True),
            Reply(text="Waiting for the other agent.", match=REPORT, sticky=True),
            Reply(tool_calls=(_spawn("alpha", "TASK-ALPHA"), _spawn("beta", "TASK-BETA")), match="PARENT-GO"),
            Reply(text="Reading.", tool_calls=(FakeToolCall("read", {"path": "a.txt"}, "call_r"),), match="TASK-ALPHA"),
            Reply(text="ALPHA-DONE", match="call_r"),
            Reply(text="BETA-DONE", match="TASK-BETA", gate="beta"),
        ]
    )
    async with FakeLLMServer(scenario) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, ws)
            assert Capability.SUBAGENTS in session.info().details.capabilities.features
            await session.prompt("PARENT-GO")
            # Up to the end of alpha's report turn's answer: beta still works, and the turn goes on.
            events = await collect(
                session,
                lambda e: (
                    isinstance(e.kind, MessageEnded) and e.turn_info is not None and not e.turn_info.parent_tool_id
                ),
            )
            assert not of(events, TurnEnded)
            llm.release("beta")
            events += await one_turn(session)
    ended = of(events, TurnEnded)
    assert len(ended) == 1 and ended[0].stop == Completed()
    calls = [u.tool for u in of(events, ToolUpdated) if isinstance(u.tool.kind, Subagent)]
    assert {c.id for c in calls} == {"t2.0", "t2.1"}
    alpha = [c for c in calls if c.id == "t2.0"]
    assert [c.status for c in alpha][:2] == [ToolStatus.PENDING, ToolStatus.RUNNING]
    assert alpha[-1].status is ToolStatus.COMPLETED and "ALPHA-DONE" in (alpha[-1].output or "")
    assert alpha[0].title == "Agent alpha"
    nested = [e for e in events if e.turn_info is not None and e.turn_info.parent_tool_id == "t2.0"]
    child_text = "".join(e.kind.text for e in nested if isinstance(e.kind, TextDelta))
    assert child_text == "Reading.ALPHA-DONE"
    assert {e.kind.message_id for e in nested if isinstance(e.kind, TextDelta)} <= {"alpha/m2", "alpha/m3"}
    reads = [e.kind.tool for e in nested if isinstance(e.kind, ToolUpdated)]
    assert reads and {r.id for r in reads} == {"alpha/t2.1"} and reads[0].kind == Read()
    assert not [e for e in nested if isinstance(e.kind, ContextUsage)]
    top = [e for e in events if e.turn_info is not None and e.turn_info.parent_tool_id is None]
    text = "".join(e.kind.text for e in top if isinstance(e.kind, TextDelta))
    assert text == "Waiting for the other agent.Both agents reported."


async def test_cancel_stops_the_children_and_ends_the_turn_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = workspace(tmp_path)
    scenario = Scenario(
        [
            Reply(text="A report woke me.", match=REPORT, sticky=True),
            Reply(tool_calls=(_spawn("alpha", "TASK-ALPHA"),), match="PARENT-GO"),
            Reply(text="x" * 400, chunk_size=2, match="TASK-ALPHA", gate="never", hold_after_events=3),
        ]
    )
    async with FakeLLMServer(scenario) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, ws)
            await session.prompt("PARENT-GO")
            await collect(session, is_kind(ToolUpdated))
            assert await llm.wait_held_async("never")
            await session.cancel()
            events = await one_turn(session)
    assert of(events, TurnEnded)[-1].stop == Cancelled()
    assert all(REPORT not in str(r.body) for r in llm.requests)


async def test_a_child_works_at_its_parents_workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session opened with a workdir (a workspace view): the child it spawns writes /app/child.txt, which is the
    workspace's child.txt, and its events show the path the model used."""
    ws = workspace(tmp_path)
    write = FakeToolCall("write", {"path": "/app/child.txt", "content": "from the child\n"}, "call_w")
    scenario = Scenario(
        [
            Reply(text="Done.", match=REPORT, sticky=True),
            Reply(text="KID-DONE", match="call_w"),
            Reply(tool_calls=(_spawn("kid", "TASK-KID"),), match="PARENT-GO"),
            Reply(tool_calls=(write,), match="TASK-KID"),
        ]
    )
    async with FakeLLMServer(scenario) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, ws, workdir="/app", permission_mode=PermissionMode.AUTO_APPROVE)
            await session.prompt("PARENT-GO")
            events = await one_turn(session)
    assert of(events, TurnEnded)[-1].stop == Completed()
    assert (ws / "child.txt").read_text() == "from the child\n"
    written = [u.tool for u in of(events, ToolUpdated) if u.tool.status is ToolStatus.COMPLETED and u.tool.diffs]
    assert [diff.path for tool in written for diff in tool.diffs] == ["/app/child.txt"]


async def test_what_the_children_spend_is_counted_in_the_sessions_cost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each reply costs $0.0045 (1,000 in and 100 out at Sonnet 4.5's $3 / $15 per million): the parent's spawn,
    the child's two replies, the parent's answer. The session's reports count the child's replies from the
    parent's answer on (never reported on their own, never as a nested report), and its context stays its own."""
    usage = FakeUsage(input=1000, output=100)
    scenario = Scenario(
        [
            Reply(text="The scout reported.", match=REPORT, usage=usage),
            Reply(tool_calls=(_spawn("scout", "SCOUT-TASK"),), match="PARENT-GO", usage=usage),
            Reply(
                text="Looking.",
                tool_calls=(FakeToolCall("read", {"path": "."}, "call_r"),),
                match="SCOUT-TASK",
                usage=usage,
            ),
            Reply(text="Nothing there.", match="call_r", usage=usage),
        ]
    )
    async with FakeLLMServer(scenario) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        async with runtime() as rt:
            session = await open_engine(rt, workspace(tmp_path))
            await session.prompt("PARENT-GO")
            events = await one_turn(session)
    reports = [e for e in events if isinstance(e.kind, ContextUsage)]
    assert all(e.turn_info is not None and e.turn_info.parent_tool_id is None for e in reports)
    costs = [e.kind.cost_usd for e in reports if isinstance(e.kind, ContextUsage)]
    assert costs == [pytest.approx(0.0045), pytest.approx(0.018)]
    assert {e.kind.used_tokens for e in reports if isinstance(e.kind, ContextUsage)} == {1100}
