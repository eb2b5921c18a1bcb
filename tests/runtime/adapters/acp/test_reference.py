"""The ACP adapter against the reference v2 peer (`dual-version-agent.js` from npm `@agentclientprotocol/sdk@1.3.0`),
driven through `Runtime` + `Session` as an inline agent: an implementation we did not write."""

from __future__ import annotations

import asyncio
from pathlib import Path

from omniagent.protocols.sidecar.commands import AcpSpec, InlineAcp
from omniagent.protocols.sidecar.events import Cancelled, Completed, TextDelta, TurnEnded, UserMessage
from omniagent.runtime.runtime import Runtime
from tests.runtime.adapters.acp.harness import TIMING, WAIT, of, one_turn
from tests.runtime.adapters.acp.test_client_ts_peer import dual_agent

__all__ = ["dual_agent"]  # the module-scoped fixture, shared with the client's tests


async def test_the_reference_v2_agent_streams_whole_messages_and_cancels(dual_agent: list[str], tmp_path: Path) -> None:
    """v2 `agent_message` upserts become TextDelta, the prompt's own `user_message` echo is not a
    UserMessage, idle `end_turn` → Completed, and cancel → idle `cancelled` → Cancelled."""
    agent = InlineAcp(acp=AcpSpec(name="reference", path=dual_agent[0], args=dual_agent[1:]))
    async with asyncio.timeout(WAIT * 2), Runtime(timing=TIMING) as runtime:
        session = await runtime.open(agent, tmp_path)
        await session.prompt("hi")
        events = await one_turn(session)
        assert of(events, TurnEnded)[0].stop == Completed()
        assert of(events, TextDelta) and not of(events, UserMessage)
        await session.prompt("again")
        await session.cancel()  # at once: the reference agent finishes a turn within milliseconds
        stops = [ended.stop for ended in of(await one_turn(session), TurnEnded)]
        assert stops == [Cancelled()]
