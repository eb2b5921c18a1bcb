"""The plan the user can see (issue 13, part 3): one run updates the plan three times, and each face shows the three
plans in order: the yuke `plan.updated` broadcast of `omniagent rpc`, ACP plan updates of `omniagent acp` (v2, and
again on replay), and the sidecar's `PlanUpdated` from `omniagent serve` driving the engine agent."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from omniagent.protocols.acp import v2
from omniagent.runtime.adapters.acp.client import open_acp_client
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.e2e.sidecar_client import Sidecar, kind_of
from tests.engine.rpc_harness import RpcProcess, write_providers
from tests.faces.acp.agent_harness import agent_argv, agent_env, check_transcript, prepare
from tests.faces.acp.test_agent import Client
from tests.runtime.adapters.engine.harness import child_env, workspace

WAIT = 30.0  # seconds: bound on every test body

STEPS = ["Read the code", "Fix the bug", "Run the tests"]
# The three plans the model sends, one per round: each starts the next step.
PLANS: list[list[dict[str, str]]] = [
    [{"content": STEPS[0], "status": "in_progress"}, *({"content": s, "status": "pending"} for s in STEPS[1:])],
    [
        {"content": STEPS[0], "status": "completed"},
        {"content": STEPS[1], "status": "in_progress", "priority": "high"},
        {"content": STEPS[2], "status": "pending", "priority": "low"},
    ],
    [{"content": s, "status": "completed"} for s in STEPS],
]
# The entries as every face spells them: with the priority (medium unless given).
EXPECTED = [
    [{"content": e["content"], "status": e["status"], "priority": e.get("priority", "medium")} for e in p]
    for p in PLANS
]


def three_plans() -> Scenario:
    """Three rounds, each a `plan` call, then the answer."""
    calls = [
        Reply(tool_calls=(FakeToolCall("plan", {"entries": plan}, f"call_plan_{n}"),)) for n, plan in enumerate(PLANS)
    ]
    return Scenario([*calls, Reply(text="All three steps are done.")])


async def test_rpc_broadcasts_plan_updated_for_each_of_the_three_plans(tmp_path: Path) -> None:
    """yuke face: `plan.updated` (an engine extension, schema-checked by the harness) carries the whole plan and the
    tool part that set it; the plan tool never asks, in ask mode too; the model reads the plan back as text."""
    async with FakeLLMServer(three_plans()) as llm:
        write_providers(tmp_path / "data", llm)
        rpc = await RpcProcess.start(tmp_path / "data")
        try:
            ws = workspace(tmp_path)
            created = await rpc.call(
                "session.create", {"workspace_path": str(ws), "model": "fake-anthropic/fake-model"}
            )
            sid = created["session"]["id"]
            content = [{"type": "text", "text": "Fix the bug"}]
            await rpc.call("session.send_input", {"session_id": sid, "input": {"type": "content", "content": content}})
            done = await rpc.broadcast("run.done", within=WAIT)
            assert rpc.lines[done]["params"]["outcome"] == {"type": "turn", "finish": "stop", "rounds": 4}
            updates = [line["params"] for line in rpc.lines if line.get("method") == "plan.updated"]
            assert [u["entries"] for u in updates] == EXPECTED
            assert [(u["session_id"], u["part_id"]) for u in updates] == [(sid, 0)] * 3
            assert "interaction.requested" not in rpc.names()
            second = llm.requests[1].body
            assert isinstance(second, dict)
            result = second["messages"][-1]["content"][0]
            assert result["type"] == "tool_result"
            assert result["content"] == "The plan is now:\n[~] Read the code\n[ ] Fix the bug\n[ ] Run the tests"
        finally:
            assert await rpc.close() == 0


def _plans_of(updates: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    return [u["plan"]["entries"] for u in updates if u["sessionUpdate"] == "plan_update"]


async def test_acp_sends_each_plan_as_a_plan_update_and_replays_the_last(tmp_path: Path) -> None:
    """ACP face (v2): three `plan_update`s with `items` plans, in order, and no tool call for the plan tool; resumed
    with replay in a new process, the conversation shows the plans again. Every message is schema-checked."""
    async with FakeLLMServer(three_plans()) as llm:
        data, ws, log = prepare(tmp_path, llm)
        client = Client()
        async with (
            asyncio.timeout(WAIT),
            open_acp_client(agent_argv(data, log), handlers=client.handlers(), env=agent_env()) as acp,
        ):
            session = await acp.new_session(str(ws))
            end = await acp.prompt(session.session_id, [v2.ContentBlockText(text="Fix the bug")])
        assert end.stop_reason == "end_turn"
        raw = [e.raw for e in client.events]
        # The session language's plan entries carry no priority (the anyagent wire has none): every step is medium.
        assert _plans_of(raw) == [[entry | {"priority": "medium"} for entry in plan] for plan in EXPECTED]
        assert {u["plan"]["planId"] for u in raw if u["sessionUpdate"] == "plan_update"} == {"plan"}
        assert not [u for u in raw if u["sessionUpdate"] == "tool_call_update"]
        check_transcript(log)
        log2 = tmp_path / "second.log"
        second = Client()
        async with (
            asyncio.timeout(WAIT),
            open_acp_client(agent_argv(data, log2), handlers=second.handlers(), env=agent_env()) as acp,
        ):
            await acp.resume_session(session.session_id, str(ws), replay=True)
        assert _plans_of([e.raw for e in second.events]) == [
            [entry | {"priority": "medium"} for entry in plan] for plan in EXPECTED
        ]
        check_transcript(log2)


async def test_the_sidecar_shows_plan_updated_three_times(tmp_path: Path) -> None:
    """anyagent face: the engine agent's turn emits `PlanUpdated` three times with every entry (text and status),
    and no `ToolUpdated` for the plan calls."""
    ws = workspace(tmp_path)
    async with FakeLLMServer(three_plans()) as llm, Sidecar.running(env=child_env(tmp_path, llm)) as sidecar:
        info = await sidecar.ok("open", agent="omniagent", dir=str(ws))
        await sidecar.ok("prompt", session=info["id"], text="Fix the bug")
        ended = await sidecar.wait_event(info["id"], "TurnEnded")
        assert ended["kind"]["TurnEnded"]["stop"] == {"Completed": {"source": "Protocol"}}
        events = sidecar.events(info["id"])
    statuses = {"pending": "Pending", "in_progress": "InProgress", "completed": "Completed"}
    plans = [e["kind"]["PlanUpdated"]["entries"] for e in events if kind_of(e) == "PlanUpdated"]
    assert plans == [[{"text": e["content"], "status": statuses[e["status"]]} for e in plan] for plan in EXPECTED]
    assert not [e for e in events if kind_of(e) == "ToolUpdated"]
