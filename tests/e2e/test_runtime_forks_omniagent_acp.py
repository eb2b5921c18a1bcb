"""One system: the runtime's ACP adapter forks a session of our own ACP agent (`omniagent acp`) with `session/fork`,
because the agent advertises it (issue "One system")."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from omniagent.protocols.sidecar.agents import Capability
from omniagent.protocols.sidecar.commands import AcpSpec, InlineAcp
from omniagent.protocols.sidecar.events import Completed, TurnEnded
from omniagent.runtime.errors import ResumeFailed, UnsupportedFeature
from omniagent.runtime.runtime import Runtime
from omniagent.runtime.session import Session
from omniagent.testing import FakeLLMServer, Reply, Scenario
from tests.faces.acp.agent_harness import agent_argv, check_transcript, prepare
from tests.sidecar_schema import validate

WAIT = 30.0  # seconds for one step; the agent is a Python process with the engine inside


@pytest.fixture
async def llm() -> AsyncIterator[FakeLLMServer]:
    async with FakeLLMServer(Scenario(fallback=Reply(text="ok"))) as server:
        yield server


async def _turn(session: Session, text: str) -> TurnEnded:
    await session.prompt(text)
    async with asyncio.timeout(WAIT):
        async for event in session.events:
            validate("Event", event.dump())
            if isinstance(event.kind, TurnEnded):
                return event.kind
    raise AssertionError("the stream ended first")


async def test_the_acp_adapter_forks_with_session_fork_when_the_agent_advertises_it(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """The adapter advertises Fork from `capabilities.session.fork`; `open(fork=token)` answers a new session (its
    own resume token) whose next turn carries the source's conversation to the model; `fork_at` stays
    UnsupportedFeature (ACP forks whole sessions); an unknown token is ResumeFailed."""
    data, workspace, log = prepare(tmp_path, llm)
    argv = agent_argv(data, log)
    agent = InlineAcp(acp=AcpSpec(name="omniagent-acp", path=argv[0], args=argv[1:]))
    async with Runtime() as runtime:
        source = await runtime.open(agent, workspace)
        assert Capability.FORK in source.info().details.capabilities.features
        assert isinstance((await _turn(source, "remember the word kumquat")).stop, Completed)
        token = source.info().resume_token
        assert token is not None
        fork = await runtime.open(agent, workspace, fork=token)
        validate("SessionInfo", fork.info().dump())
        assert fork.info().resume_token not in (None, token)
        assert Capability.FORK in fork.info().details.capabilities.features
        assert isinstance((await _turn(fork, "which word?")).stop, Completed)
        sent = json.dumps(llm.requests[-1].body)
        assert "kumquat" in sent and "which word?" in sent
        with pytest.raises(UnsupportedFeature):
            await runtime.open(agent, workspace, fork=token, fork_at="m2")
        with pytest.raises(ResumeFailed):
            await runtime.open(agent, workspace, fork="0" * 32)
        await fork.close()
        await source.close()
    assert check_transcript(log) > 0
