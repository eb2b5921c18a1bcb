"""The ACP client against the reference peer: `dual-version-agent.js` from npm `@agentclientprotocol/sdk@1.3.0`,
whose v2 schema is identical to ours. The package is installed once into a cache directory outside
the repository by `scripts/install_agents.py` (pinned in tests/e2e/agents/versions.json); the tests need `node` and
`npm` on PATH."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from omniagent.protocols.acp import v1, v2
from omniagent.runtime.adapters.acp.client import ClientHandlers, SessionEvent, open_acp_client
from tests.e2e.agents import packages

WAIT = 30.0  # seconds: node starts in well under a second; bound every wait anyway


@pytest.fixture(scope="module")
def dual_agent() -> list[str]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is needed to run the reference ACP agent")
    # Pinned in tests/e2e/agents/versions.json and installed by scripts/install_agents.py (once, shared cache).
    return [node, str(packages.entry("acp-sdk"))]


class Updates:
    def __init__(self) -> None:
        self.events: list[SessionEvent] = []
        self.running = asyncio.Event()

    async def __call__(self, event: SessionEvent) -> None:
        self.events.append(event)
        if event.raw.get("state") == "running":
            self.running.set()


async def test_reference_agent_negotiates_v2_and_runs_a_turn_resume_and_cancel(
    dual_agent: list[str], tmp_path: Path
) -> None:
    """The TS agent answers 2; `{}` then user_message, running, agent_message, idle end_turn;
    resume with replay from start replays the history; cancel ends the turn with idle `cancelled`."""
    updates = Updates()
    async with asyncio.timeout(WAIT), open_acp_client(dual_agent, handlers=ClientHandlers(on_update=updates)) as acp:
        assert acp.version == 2 and isinstance(acp.agent, v2.InitializeResponse)
        session = await acp.new_session(str(tmp_path))
        end = await acp.prompt(session.session_id, [v2.ContentBlockText(text="hi")])
        assert end.stop_reason == "end_turn"
        kinds = [type(e.update) for e in updates.events]
        assert kinds == [
            v2.SessionUpdateUserMessage,
            v2.SessionUpdateStateUpdateRunning,
            v2.SessionUpdateAgentMessage,
            v2.SessionUpdateStateUpdateIdleEndTurn,
        ]
        first_turn = [e.raw for e in updates.events]
        updates.events.clear()
        await acp.load_session(session.session_id, str(tmp_path))
        assert [e.raw for e in updates.events] == [first_turn[0], first_turn[2]]  # same messageIds, before the answer
        listed = await acp.list_sessions()
        assert [s.session_id for s in listed.sessions] == [session.session_id]
        updates.running.clear()
        turn = asyncio.create_task(acp.prompt(session.session_id, [v2.ContentBlockText(text="again")]))
        await updates.running.wait()
        await acp.cancel(session.session_id)
        assert (await turn).stop_reason == "cancelled"


async def test_reference_agent_asked_for_1_speaks_v1(dual_agent: list[str], tmp_path: Path) -> None:
    """Asked for 1, the dual agent answers a v1 result and the v1 turn ends in the prompt response."""
    updates = Updates()
    handlers = ClientHandlers(on_update=updates)
    async with asyncio.timeout(WAIT), open_acp_client(dual_agent, handlers=handlers, protocol_version=1) as acp:
        assert acp.version == 1 and isinstance(acp.agent, v1.InitializeResponse)
        assert not acp.supports("load")  # loadSession: false
        session = await acp.new_session(str(tmp_path))
        end = await acp.prompt(session.session_id, [{"type": "text", "text": "hi"}])
    assert end.stop_reason == "end_turn"
    assert [type(e.update) for e in updates.events] == [v1.SessionUpdateAgentMessageChunk]
