"""The ACP v2 peer through the Runtime: `dual-version-agent.js` from npm `@agentclientprotocol/sdk@1.3.0`,
whose v2 schema is ours. Every real agent answers version 1, so this is the one peer on which
the client negotiates 2 and runs the v2 lifecycle: `{}` prompt response, user_message, running, agent_message, idle
with the stop reason. The agent answers "Hello from the v1 implementation." on v1, so the text proves
which version ran. It is run in the same namespace harness as the real agents (it never touches the network)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from omniagent.protocols.sidecar.events import Cancelled, Completed, Failed, TurnStarted
from omniagent.runtime.errors import ProcessExited, SessionClosed
from tests.e2e.agents.drive import is_turn_end, runtime_session, text_of, turn_end, until
from tests.e2e.agents.harness import STEP, agent_world, plain_scenario

V2_TEXT = "Hello from the v2 implementation."
AGENT = "acp-sdk"
pytestmark = pytest.mark.timeout(120)


async def test_the_v2_agent_negotiates_2_and_a_turn_completes_with_its_v2_text(tmp_path: Path) -> None:
    """Asked for 2 the SDK agent answers 2; the turn (ended by an idle `end_turn` state update, not by
    the prompt response) is `Completed` with the v2 implementation's text; a second turn works the same."""
    async with agent_world(AGENT, tmp_path, plain_scenario()) as world, runtime_session(world) as session:
        for _ in range(2):
            await session.prompt("hi")
            events = await until(session, is_turn_end)
            assert isinstance(turn_end(events).stop, Completed)
            assert text_of(events) == V2_TEXT


async def test_cancel_after_the_v2_agent_starts_running_ends_cancelled_then_the_next_turn_completes(
    tmp_path: Path,
) -> None:
    """`session/cancel` during the turn ends it with idle `cancelled` → `Cancelled`, with no agent text;
    the session stays usable. The runtime keeps the agent's user_message echo to itself, so the cancel follows
    TurnStarted; the adapter sends it after `session/prompt`, and the SDK agent waits 250 ms before answering."""
    async with agent_world(AGENT, tmp_path, plain_scenario()) as world, runtime_session(world) as session:
        await session.prompt("hi")
        await until(session, lambda e: isinstance(e.kind, TurnStarted))
        await session.cancel()
        events = await until(session, is_turn_end)
        assert isinstance(turn_end(events).stop, Cancelled)
        assert text_of(events) == ""
        await session.prompt("again")
        events = await until(session, is_turn_end)
        assert isinstance(turn_end(events).stop, Completed) and text_of(events) == V2_TEXT


async def test_killing_the_v2_agent_mid_turn_fails_the_turn_then_raises_process_exited(tmp_path: Path) -> None:
    """Issue part 6 on the v2 path: the idle update never comes, so only the process exit can end the turn:
    `TurnEnded Failed`, then `ProcessExited`, and the session is closed."""
    async with agent_world(AGENT, tmp_path, plain_scenario()) as world, runtime_session(world) as session:
        await session.prompt("hi")
        seen = await until(session, lambda e: isinstance(e.kind, TurnStarted))
        os.killpg(world.agent_pid(), signal.SIGKILL)
        with pytest.raises(ProcessExited):
            async with asyncio.timeout(STEP):
                async for event in session.events:
                    seen.append(event)
        assert isinstance(turn_end(seen).stop, Failed)
        async with asyncio.timeout(STEP):
            await session.wait_closed()
        with pytest.raises(SessionClosed):
            await session.prompt("again")
