"""The ACP client against a real subprocess agent speaking v1 or v2: negotiation, sessions, prompts, permission,
cancel. The agent is `tests/fixtures/acp_agents/fake_agent.py`; its --log shows what our client put on the wire."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.acp import v1, v2
from omniagent.runtime.adapters.acp.client import (
    AcpClient,
    AgentExited,
    AgentUnsupported,
    ClientHandlers,
    McpServerConfig,
    PermissionRequest,
    SessionEvent,
    open_acp_client,
)

AGENT = Path(__file__).resolve().parents[3] / "fixtures" / "acp_agents" / "fake_agent.py"
WAIT = 20.0  # seconds: bound on every wait


class Recorder:
    """Collects session events; `wait_for` waits (bounded) until one matches."""

    def __init__(self) -> None:
        self.events: list[SessionEvent] = []
        self.changed = asyncio.Event()

    async def __call__(self, event: SessionEvent) -> None:
        self.events.append(event)
        self.changed.set()

    async def wait_for(self, kind: str) -> SessionEvent:
        async with asyncio.timeout(WAIT):
            while True:
                for event in self.events:
                    if event.raw.get("sessionUpdate") == kind:
                        return event
                self.changed.clear()
                await self.changed.wait()

    def texts(self) -> list[str]:
        return [e.raw["content"]["text"] for e in self.events if e.raw.get("sessionUpdate") == "agent_message_chunk"]


def wire_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@asynccontextmanager
async def agent(tmp_path: Path, max_version: int, handlers: ClientHandlers) -> AsyncIterator[tuple[AcpClient, Path]]:
    log = tmp_path / "wire.jsonl"
    argv = [sys.executable, str(AGENT), "--max-version", str(max_version), "--log", str(log)]
    async with asyncio.timeout(WAIT), open_acp_client(argv, handlers=handlers, handshake_timeout=WAIT) as client:
        yield client, log


async def test_v2_agent_negotiates_2_and_the_turn_ends_with_the_idle_state_update(tmp_path: Path) -> None:
    """We ask for 2; a v2 agent answers `{}` to the prompt and ends the turn with idle + stopReason."""
    updates = Recorder()
    async with agent(tmp_path, 2, ClientHandlers(on_update=updates)) as (client, log):
        assert client.version == 2
        assert isinstance(client.agent, v2.InitializeResponse)
        session = await client.new_session(str(tmp_path))
        end = await client.prompt(session.session_id, [v2.ContentBlockText(text="hello")])
    assert end.stop_reason == "end_turn"
    kinds = [e.raw["sessionUpdate"] for e in updates.events]
    assert kinds == ["user_message", "state_update", "agent_message_chunk", "agent_message_chunk", "state_update"]
    assert isinstance(updates.events[2].update, v2.SessionUpdateAgentMessageChunk)
    assert isinstance(updates.events[-1].update, v2.SessionUpdateStateUpdateIdle)
    assert updates.texts() == ["Hel", "lo"]
    sent = wire_log(log)
    assert sent[0]["method"] == "initialize"
    assert sent[0]["params"]["protocolVersion"] == 2 and sent[0]["params"]["info"]["name"] == "omniagent"
    assert "mcpServers" not in sent[1]["params"]  # optional in v2


async def test_v1_agent_answering_1_gets_the_v1_surface_for_the_whole_connection(tmp_path: Path) -> None:
    """A v1 answer switches to v1: `mcpServers` sent on session/new, stop reason in the response."""
    updates = Recorder()
    async with agent(tmp_path, 1, ClientHandlers(on_update=updates)) as (client, log):
        assert client.version == 1
        assert isinstance(client.agent, v1.InitializeResponse)
        assert client.agent.auth_methods is not None and isinstance(client.agent.auth_methods[0], v1.AuthMethodAgent)
        session = await client.new_session(str(tmp_path))
        end = await client.prompt(session.session_id, [{"type": "text", "text": "hello"}])
        assert end.stop_reason == "end_turn"
        assert updates.texts() == ["Hel", "lo"]
        assert isinstance(updates.events[0].update, v1.SessionUpdateAgentMessageChunk)
        await client.load_session(session.session_id, str(tmp_path))
        assert (await updates.wait_for("user_message_chunk")).raw["content"]["text"] == "old"
        await client.close_session(session.session_id)
    sent = wire_log(log)
    assert sent[1]["method"] == "session/new" and sent[1]["params"]["mcpServers"] == []
    assert [m["method"] for m in sent[3:]] == ["session/load", "session/close"]


@pytest.mark.parametrize("version", [1, 2])
async def test_permission_requests_reach_the_handler_and_its_choice_goes_back(tmp_path: Path, version: int) -> None:
    """ACP session/request_permission: the caller's handler picks an option; the agent gets `selected`."""
    updates, asked = Recorder(), []

    async def allow(request: PermissionRequest) -> str | None:
        asked.append(request)
        return "allow"

    async with agent(tmp_path, version, ClientHandlers(on_update=updates, on_permission=allow)) as (client, _):
        session = await client.new_session(str(tmp_path))
        end = await client.prompt(session.session_id, [{"type": "text", "text": "permission"}])
    assert end.stop_reason == "end_turn"
    assert isinstance(asked[0], v1.RequestPermissionRequest if version == 1 else v2.RequestPermissionRequest)
    assert json.loads(updates.texts()[0]) == {"outcome": {"outcome": "selected", "optionId": "allow"}}


@pytest.mark.parametrize("version", [1, 2])
async def test_cancel_ends_the_turn_with_cancelled(tmp_path: Path, version: int) -> None:
    """ACP session/cancel: a notification; v1 answers the prompt `cancelled`, v2 sends idle `cancelled`."""
    updates = Recorder()
    async with agent(tmp_path, version, ClientHandlers(on_update=updates)) as (client, log):
        session = await client.new_session(str(tmp_path))
        turn = asyncio.create_task(client.prompt(session.session_id, [{"type": "text", "text": "wait"}]))
        await updates.wait_for("agent_message_chunk")
        await client.cancel(session.session_id)
        end = await turn
    assert end.stop_reason == "cancelled"
    cancel = [m for m in wire_log(log) if m.get("method") == "session/cancel"]
    assert cancel == [{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session.session_id}}]


@pytest.mark.parametrize("version", [1, 2])
async def test_cancel_answers_a_pending_permission_request_cancelled(tmp_path: Path, version: int) -> None:
    """The schema's `cancelled` outcome: on cancel the client MUST answer every pending permission request with it."""
    updates, asked = Recorder(), asyncio.Event()

    async def never(request: PermissionRequest) -> str | None:
        asked.set()
        await asyncio.Event().wait()
        return "allow"

    async with agent(tmp_path, version, ClientHandlers(on_update=updates, on_permission=never)) as (client, _):
        session = await client.new_session(str(tmp_path))
        turn = asyncio.create_task(client.prompt(session.session_id, [{"type": "text", "text": "permission-wait"}]))
        async with asyncio.timeout(WAIT):
            await asked.wait()
        await client.cancel(session.session_id)
        end = await turn
    assert end.stop_reason == "cancelled"
    assert json.loads(updates.texts()[0]) == {"outcome": {"outcome": "cancelled"}}


async def test_operations_the_agent_did_not_advertise_are_refused_locally(tmp_path: Path) -> None:
    """v2 has no set_mode (nor v1's unstable set_model), fork needs `session.fork`; v1 load needs
    `loadSession`."""
    async with agent(tmp_path, 2, ClientHandlers()) as (client, _):
        assert not client.supports("fork") and not client.supports("set_mode") and not client.supports("set_model")
        assert client.supports("load")  # v2: a resume with replay
        with pytest.raises(AgentUnsupported):
            await client.fork_session("s1", str(tmp_path))
        with pytest.raises(AgentUnsupported):
            await client.set_mode("s1", "code")
        with pytest.raises(AgentUnsupported):
            await client.set_model("s1", "opus")


async def test_mcp_servers_are_forwarded_in_the_versions_shape(tmp_path: Path) -> None:
    """v1 stdio servers are untagged; v2 requires `type: "stdio"`."""
    servers = [McpServerConfig(name="fs", command="/bin/fs", args=["-v"], env={"A": "1"})]
    for version in (1, 2):
        run = tmp_path / f"v{version}"
        run.mkdir()
        async with agent(run, version, ClientHandlers()) as (client, log):
            await client.new_session(str(run), mcp_servers=servers)
        sent = wire_log(log)[1]["params"]["mcpServers"][0]
        expected = {"name": "fs", "command": "/bin/fs", "args": ["-v"], "env": [{"name": "A", "value": "1"}]}
        assert sent == (expected if version == 1 else {"type": "stdio", **expected})


async def test_an_agent_that_exits_during_the_handshake_is_reported_with_its_status(tmp_path: Path) -> None:
    """House style: never a hang; the error names the exit status and keeps the stderr tail."""
    argv = [sys.executable, "-c", "import sys; print('no key', file=sys.stderr); sys.exit(3)"]
    with pytest.raises(AgentExited) as info:
        async with asyncio.timeout(WAIT), open_acp_client(argv, handshake_timeout=WAIT):
            pass
    assert info.value.status == "exit status: 3"
    assert info.value.stderr == ["no key"]


async def test_auth_and_config_options_use_each_versions_method_and_shape(tmp_path: Path) -> None:
    """v1 `authenticate` vs v2 `auth/login` (only with non-empty authMethods); v2 tags `type: "id"`."""
    async with agent(tmp_path, 1, ClientHandlers()) as (client, log):
        await client.authenticate("key")
        session = await client.new_session(str(tmp_path))
        await client.set_config_option(session.session_id, "model", "fast")
        await client.set_config_option(session.session_id, "think", True)
    sent = wire_log(log)
    assert sent[1] == {"jsonrpc": "2.0", "id": sent[1]["id"], "method": "authenticate", "params": {"methodId": "key"}}
    assert [m["params"].get("type") for m in sent[3:]] == [None, "boolean"]
    log.unlink()
    async with agent(tmp_path, 2, ClientHandlers()) as (client, log):
        assert not client.supports("authenticate")  # the v2 fake agent lists no auth methods
        with pytest.raises(AgentUnsupported):
            await client.authenticate("key")
        session = await client.new_session(str(tmp_path))
        await client.set_config_option(session.session_id, "model", "fast")
        listed = await client.list_sessions()
        assert [s.session_id for s in listed.sessions] == [session.session_id]
    assert wire_log(log)[2]["params"] == {
        "sessionId": session.session_id,
        "configId": "model",
        "type": "id",
        "value": "fast",
    }


@pytest.mark.parametrize("version", [1, 2])
async def test_an_agent_dying_mid_turn_fails_the_prompt_with_its_exit_status(tmp_path: Path, version: int) -> None:
    """House style: never a hang; a v2 turn waits on the idle update, so the exit must end that wait too."""
    async with agent(tmp_path, version, ClientHandlers()) as (client, _):
        session = await client.new_session(str(tmp_path))
        with pytest.raises(AgentExited) as info:
            await client.prompt(session.session_id, [{"type": "text", "text": "exit"}])
    assert info.value.status == "exit status: 5"
