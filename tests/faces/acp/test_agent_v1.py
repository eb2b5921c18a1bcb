"""`omniagent acp` driven by our own ACP client asking for version 1: the v1 surface for the whole connection —
v1 initialize fields, `tool_call` creation, v1 permission requests and diffs, the stop reason in the prompt
response, session modes, `session/load` replay. Every message is validated against the v1 JSON schema
(issue "One system" part 1: "v1: the same updates in v1 shapes and the stop reason in the prompt response")."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from omniagent.protocols.acp import v1
from omniagent.runtime.adapters.acp.client import ClientHandlers, PermissionRequest, SessionEvent, open_acp_client
from omniagent.testing import ErrorReply, FakeLLMServer, FakeToolCall, Reply, Scenario
from omniagent.wire.messages import INTERNAL_ERROR, RpcError
from tests.faces.acp.agent_harness import agent_argv, agent_env, agent_messages, check_transcript, prepare

WAIT = 30.0  # seconds: bound on every test body


class Client:
    def __init__(self, answers: list[str] | None = None) -> None:
        self.events: list[SessionEvent] = []
        self.asked: list[PermissionRequest] = []
        self.answers = list(answers or [])
        self.changed = asyncio.Event()

    async def on_update(self, event: SessionEvent) -> None:
        self.events.append(event)
        self.changed.set()

    async def on_permission(self, request: PermissionRequest) -> str | None:
        self.asked.append(request)
        return self.answers.pop(0) if self.answers else None

    def handlers(self) -> ClientHandlers:
        return ClientHandlers(on_update=self.on_update, on_permission=self.on_permission)

    async def wait_kind(self, kind: str) -> None:
        while not any(e.raw.get("sessionUpdate") == kind for e in self.events):
            self.changed.clear()
            await self.changed.wait()


@pytest.fixture
async def llm() -> AsyncIterator[FakeLLMServer]:
    async with FakeLLMServer(Scenario()) as server:
        yield server


def _edit_round() -> Reply:
    args: dict[str, object] = {"path": "a.txt", "old_string": "old", "new_string": "new"}
    return Reply(text="Editing.", tool_calls=(FakeToolCall("edit", args, "call_e"),))


async def test_asked_for_1_the_agent_speaks_v1_with_tool_calls_permissions_and_the_stop_reason(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """v1 initialize (agentInfo, agentCapabilities with loadSession and session capabilities),
    `tool_call` creates the call, the v1 permission request carries `toolCall`, the edit's diff is
    path/oldText/newText, text streams as agent_message_chunk, and the prompt response holds `end_turn`."""
    llm.enqueue(_edit_round(), Reply(text="Done editing."))
    data, ws, log = prepare(tmp_path, llm)
    (ws / "a.txt").write_text("an old line\n")
    client = Client(["allow_once"])
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(), env=agent_env(), protocol_version=1) as acp,
    ):
        assert acp.version == 1 and isinstance(acp.agent, v1.InitializeResponse)
        caps = acp.init_result["agentCapabilities"]
        assert caps["loadSession"] is True
        histories = ["full", "pending_only", "none"]
        attach = {"roles": ["controller", "observer"], "historyPolicies": histories, "after": True}
        assert caps["sessionCapabilities"] == {
            **{"list": {}, "resume": {}, "close": {}, "delete": {}, "fork": {}},
            "attach": attach,
        }
        assert acp.init_result["agentInfo"]["name"] == "omniagent"
        session = await acp.new_session(str(ws))
        assert session.modes.current_mode_id == "ask"
        assert [o.id for o in session.config_options] == ["model", "reasoning", "mode", "sandbox", "network", "fetch"]
        end = await acp.prompt(session.session_id, [{"type": "text", "text": "fix a.txt"}])
    assert end.stop_reason == "end_turn"
    assert (ws / "a.txt").read_text() == "an new line\n"
    kinds = [e.raw["sessionUpdate"] for e in client.events]
    assert "user_message" not in kinds and "state_update" not in kinds
    tool = [e.raw for e in client.events if e.raw.get("toolCallId") == "t2.1"]
    assert [u["sessionUpdate"] for u in tool] == ["tool_call", "tool_call_update", "tool_call_update"]
    assert [u["status"] for u in tool] == ["pending", "in_progress", "completed"]
    diff = next(c for c in tool[2]["content"] if c["type"] == "diff")
    assert diff == {"type": "diff", "path": str(ws / "a.txt"), "oldText": "an old line\n", "newText": "an new line\n"}
    asked = client.asked[0]
    assert isinstance(asked, v1.RequestPermissionRequest) and asked.tool_call.tool_call_id == "t2.1"
    texts = [e.raw for e in client.events if e.raw["sessionUpdate"] == "agent_message_chunk"]
    assert "".join(t["content"]["text"] for t in texts) == "Editing.Done editing."
    # The stop reason arrives in the prompt response, after every update of the turn.
    wire = agent_messages(log)
    answer = next(i for i, m in enumerate(wire) if m.get("result") == {"stopReason": "end_turn"})
    assert all(m.get("method") != "session/update" for m in wire[answer + 1 :])
    assert check_transcript(log) > 8


async def test_v1_set_mode_auto_skips_asks_and_load_replays_the_session(tmp_path: Path, llm: FakeLLMServer) -> None:
    """v1 session modes are the permission mode: `session/set_mode auto` runs the edit without asking;
    `session/load` replays the conversation in v1 shapes (chunks, a `tool_call` with its final status) before
    answering with the modes."""
    llm.enqueue(_edit_round(), Reply(text="Done."))
    data, ws, log = prepare(tmp_path, llm)
    (ws / "a.txt").write_text("old\n")
    client = Client()
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(), env=agent_env(), protocol_version=1) as acp,
    ):
        session = await acp.new_session(str(ws))
        await acp.set_mode(session.session_id, "auto")
        assert (await acp.prompt(session.session_id, [{"type": "text", "text": "go"}])).stop_reason == "end_turn"
        assert client.asked == [] and (ws / "a.txt").read_text() == "new\n"
        client.events.clear()
        loaded = await acp.load_session(session.session_id, str(ws))
        assert loaded.modes.current_mode_id == "auto"
    # The session's kept events again, in v1 shapes: the prompt, the text, the call from its creation to its end.
    replayed = [(e.raw["sessionUpdate"], e.raw.get("status")) for e in client.events]
    told = [kind for kind in replayed if kind[0] in ("user_message_chunk", "agent_message_chunk", "tool_call")]
    told = [kind for i, kind in enumerate(told) if i == 0 or told[i - 1] != kind]  # a text streams in chunks
    assert told == [
        ("user_message_chunk", None),
        ("agent_message_chunk", None),
        ("tool_call", "pending"),
        ("agent_message_chunk", None),
    ]
    assert replayed[replayed.index(("tool_call", "pending")) :].count(("tool_call_update", "completed")) == 1
    check_transcript(log)


async def test_v1_cancel_ends_the_prompt_with_cancelled_and_a_failed_run_with_an_error(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """v1 (the turn ends in the prompt's stopReason): cancel answers the prompt `cancelled`; a run that fails for good
    answers the prompt with -32603 naming the failure (never a key)."""
    llm.enqueue(
        Reply(text="a long answer " * 40, chunk_size=4, gate="never", hold_after_events=4),
        ErrorReply(400, "invalid_request_error", message="bad request from the test"),
    )
    data, ws, log = prepare(tmp_path, llm)
    client = Client()
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(), env=agent_env(), protocol_version=1) as acp,
    ):
        session = await acp.new_session(str(ws))
        turn = asyncio.create_task(acp.prompt(session.session_id, [{"type": "text", "text": "long"}]))
        await client.wait_kind("agent_message_chunk")
        await acp.cancel(session.session_id)
        assert (await turn).stop_reason == "cancelled"
        with pytest.raises(RpcError) as failed:
            await acp.prompt(session.session_id, [{"type": "text", "text": "fail"}])
    assert failed.value.code == INTERNAL_ERROR and "the turn failed" in failed.value.message
    assert "test-key" not in log.read_text()
    check_transcript(log)
