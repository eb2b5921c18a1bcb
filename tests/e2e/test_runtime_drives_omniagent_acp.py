"""One system: our runtime's ACP adapter drives our own ACP agent (`omniagent acp`) end to end."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from omniagent.protocols.sidecar.commands import AcpSpec, InlineAcp, PermissionAnswer
from omniagent.protocols.sidecar.events import (
    Completed,
    Event,
    PermissionAsk,
    PermissionChoice,
    RequestOpened,
    TextDelta,
    ToolUpdated,
    TurnEnded,
)
from omniagent.runtime.runtime import Runtime
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply
from tests.faces.acp.agent_harness import agent_argv, check_transcript, prepare
from tests.sidecar_schema import validate

WAIT = 30.0  # seconds for one step; the agent is a Python process with the engine inside


async def _until_turn_end(events: AsyncIterator[Event], seen: list[Event]) -> Event:
    async with asyncio.timeout(WAIT):
        async for event in events:
            validate("Event", event.dump())
            seen.append(event)
            if isinstance(event.kind, TurnEnded | RequestOpened):
                return event
    raise AssertionError("the stream ended first")


async def test_the_runtime_drives_omniagent_acp_through_a_permission_turn(tmp_path: Path, llm: FakeLLMServer) -> None:
    """Issue "One system": our ACP client (the runtime's ACP adapter) drives our ACP agent; the write is asked,
    allowed, done, and the turn ends Completed; every agent line validates against the negotiated ACP schema."""
    data, workspace, log = prepare(tmp_path, llm)
    llm.enqueue(Reply(tool_calls=(FakeToolCall("write", {"path": "hello.txt", "content": "hi\n"}, "call_1"),)))
    llm.enqueue(Reply(text="Written."))
    argv = agent_argv(data, log)
    agent = InlineAcp(acp=AcpSpec(name="omniagent-acp", path=argv[0], args=argv[1:]))
    async with Runtime() as runtime:
        session = await runtime.open(agent, workspace)
        assert session.info().agent.acp_args == argv[1:]
        await session.prompt("write hello.txt")
        seen: list[Event] = []
        asked = await _until_turn_end(aiter(session.events), seen)
        assert isinstance(asked.kind, RequestOpened) and isinstance(asked.kind.request, PermissionAsk)
        assert not (workspace / "hello.txt").exists()
        await session.answer(asked.kind.request.request.id, PermissionAnswer(choice=PermissionChoice.ALLOW_ONCE))
        ended = await _until_turn_end(aiter(session.events), seen)
        assert isinstance(ended.kind, TurnEnded) and isinstance(ended.kind.stop, Completed)
        assert (workspace / "hello.txt").read_text() == "hi\n"
        assert "Written." in "".join(e.kind.text for e in seen if isinstance(e.kind, TextDelta))
        assert any(isinstance(e.kind, ToolUpdated) and e.kind.tool.status == "Completed" for e in seen)
        await session.close()
    assert check_transcript(log) > 0
