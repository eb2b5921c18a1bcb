"""Child agents through `omniagent acp` (docs/acp.md "Child agents"): a `spawn_agent` call is one ACP tool call
that stays in progress while its child works, shows the child's steps and text, and completes with the child's
run; the prompt's turn goes on through the report turns and ends once the tree has settled. Every message the
agent wrote is validated against the ACP schema of the negotiated version."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.acp import v2
from omniagent.runtime.adapters.acp.client import ClientHandlers, PermissionRequest, SessionEvent, open_acp_client
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.faces.acp.agent_harness import agent_argv, agent_env, check_transcript, prepare

WAIT = 30.0  # seconds: bound on every test body
REPORT = "Report from the child agent"


class Client:
    def __init__(self) -> None:
        self.events: list[SessionEvent] = []
        self.asked: list[PermissionRequest] = []
        self.changed = asyncio.Event()

    async def on_update(self, event: SessionEvent) -> None:
        self.events.append(event)
        self.changed.set()

    def text(self) -> str:
        return "".join(r["content"]["text"] for r in self.raw() if r["sessionUpdate"] == "agent_message_chunk")

    async def wait_text(self, text: str) -> None:
        while text not in self.text():
            self.changed.clear()
            await self.changed.wait()

    async def on_permission(self, request: PermissionRequest) -> str | None:
        self.asked.append(request)
        return "allow_once"

    def handlers(self) -> ClientHandlers:
        return ClientHandlers(on_update=self.on_update, on_permission=self.on_permission)

    def raw(self) -> list[Mapping[str, Any]]:
        return [e.raw for e in self.events]


@pytest.fixture
async def llm() -> AsyncIterator[FakeLLMServer]:
    async with FakeLLMServer(Scenario()) as server:
        yield server


def _spawn(name: str, task: str) -> FakeToolCall:
    return FakeToolCall("spawn_agent", {"name": name, "task": task}, f"call_{name}")


def _script(llm: FakeLLMServer) -> None:
    """A parent that spawns two children in one round, a child that reads a file then answers, and a parent that
    answers once it holds both reports (each report turn before that just notes it)."""
    llm.enqueue(
        Reply(text="Both agents reported.", match="BETA-DONE", sticky=True),
        Reply(text="Waiting for the other agent.", match=REPORT, sticky=True),
        Reply(tool_calls=(_spawn("alpha", "TASK-ALPHA"), _spawn("beta", "TASK-BETA")), match="PARENT-GO"),
        Reply(text="Reading.", tool_calls=(FakeToolCall("read", {"path": "a.txt"}, "call_r"),), match="TASK-ALPHA"),
        Reply(text="ALPHA-DONE", match="call_r"),
        Reply(text="BETA-DONE", match="TASK-BETA", gate="beta"),
    )


async def test_v2_a_spawn_is_a_tool_call_showing_its_child_and_the_turn_ends_after_the_reports(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    _script(llm)
    data, ws, log = prepare(tmp_path, llm)
    (ws / "a.txt").write_text("alpha reads this\n")
    client = Client()
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(), env=agent_env()) as acp,
    ):
        session = await acp.new_session(str(ws))
        turn = asyncio.ensure_future(acp.prompt(session.session_id, [v2.ContentBlockText(text="PARENT-GO")]))
        assert await llm.wait_held_async("beta")
        await client.wait_text("Waiting for the other agent.")  # alpha's report turn ended; beta still works
        assert not turn.done()
        llm.release("beta")
        end = await turn
    assert end.stop_reason == "end_turn"
    raw = client.raw()
    idles = [r for r in raw if r["sessionUpdate"] == "state_update" and r["state"] == "idle"]
    assert idles == [{"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}]
    assert raw[-1] == idles[0]
    calls = {r["toolCallId"]: r for r in raw if r.get("toolCallId") and r.get("title")}
    assert {c["title"] for c in calls.values()} == {"Agent alpha", "Agent beta"}
    alpha_id = next(i for i, c in calls.items() if c["title"] == "Agent alpha")
    alpha = [r for r in raw if r.get("toolCallId") == alpha_id]
    statuses = [u.get("status") for u in alpha]
    assert statuses[0] == "pending" and statuses[-1] == "completed"
    assert "in_progress" in statuses and statuses.index("in_progress") < len(statuses) - 1
    final = alpha[-1]["content"][0]["content"]["text"]
    assert final.startswith("Agent alpha") and "Read a.txt" in final and "ALPHA-DONE" in final
    assert client.text() == "Waiting for the other agent.Both agents reported."
    assert check_transcript(log) > 10


async def test_v1_the_prompt_answers_once_the_tree_has_settled(tmp_path: Path, llm: FakeLLMServer) -> None:
    _script(llm)
    data, ws, log = prepare(tmp_path, llm)
    (ws / "a.txt").write_text("alpha reads this\n")
    client = Client()
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(), env=agent_env(), protocol_version=1) as acp,
    ):
        session = await acp.new_session(str(ws))
        turn = asyncio.ensure_future(acp.prompt(session.session_id, [{"type": "text", "text": "PARENT-GO"}]))
        await client.wait_text("Waiting for the other agent.")  # alpha's report turn ended; beta still works
        assert not turn.done()
        llm.release("beta")
        end = await turn
        await acp._call_raw("session/delete", {"sessionId": session.session_id})  # the whole tree goes
    assert end.stop_reason == "end_turn"
    assert client.text() == "Waiting for the other agent.Both agents reported."
    with sqlite3.connect(data / "engine.sqlite3") as conn:
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0
    creations = [r for r in client.raw() if r["sessionUpdate"] == "tool_call"]
    assert [c["title"] for c in creations] == ["Agent alpha", "Agent beta"]
    assert check_transcript(log) > 8


async def test_v2_cancel_stops_the_children_too_and_their_reports_wake_nothing(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    llm.enqueue(
        Reply(text="A report woke me.", match=REPORT, sticky=True),
        Reply(tool_calls=(_spawn("alpha", "TASK-ALPHA"),), match="PARENT-GO"),
        Reply(text="x" * 400, chunk_size=2, match="TASK-ALPHA", gate="never", hold_after_events=3),
    )
    data, ws, log = prepare(tmp_path, llm)
    client = Client()
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(), env=agent_env()) as acp,
    ):
        session = await acp.new_session(str(ws))
        turn = asyncio.ensure_future(acp.prompt(session.session_id, [v2.ContentBlockText(text="PARENT-GO")]))
        assert await llm.wait_held_async("never")
        await acp.cancel(session.session_id)
        end = await turn
    assert end.stop_reason == "cancelled"
    alpha = [r for r in client.raw() if r.get("toolCallId") == "t2.0"]
    assert alpha[-1]["status"] == "cancelled"
    assert all(REPORT not in str(r.body) for r in llm.requests)
    assert check_transcript(log) > 5
