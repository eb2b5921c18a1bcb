"""The pinned real agents of peers.py through the Runtime — those driven natively (Claude Code over stream-json,
the codex app-server) and the five ACP agents (claude-code-acp, codex-acp, gemini, qwen, opencode-acp) — each in a
loopback-only network namespace against the fake LLM, with a fresh HOME (harness.py; docs/testing.md, "Real agents").

Rules from the issue "ACP client: drive every ACP agent (v1 and v2) through the runtime", part 6: a plain turn ends
`Completed` with the scripted text; a permission turn offers AllowOnce/DenyOnce, allowing creates the file and
denying does not; cancel mid-turn ends `Cancelled` and the next prompt works; killing the agent gives `TurnEnded
Failed`, `ProcessExited`, closed. All of them ask for permission with the configuration in peers.py (opencode-acp
only because its config sets `permission.bash = "ask"`; codex-acp only with `approval_policy = "untrusted"`; the codex
app-server under `on-request` because the scripted call asks to leave the sandbox).
"""

from __future__ import annotations

import asyncio
import os
import signal
from dataclasses import dataclass
from pathlib import Path

import pytest

from omniagent.protocols.sidecar.commands import PermissionAnswer
from omniagent.protocols.sidecar.events import (
    Cancelled,
    Completed,
    Failed,
    PermissionAsk,
    PermissionChoice,
    RequestOpened,
)
from omniagent.runtime.catalog import ConnectionKind, profile
from omniagent.runtime.errors import ProcessExited, SessionClosed
from tests.e2e.agents.drive import (
    is_permission,
    is_text,
    is_turn_end,
    runtime_session,
    text_of,
    turn_end,
    until,
)
from tests.e2e.agents.harness import STEP, agent_world, plain_scenario, slow_scenario, tool_scenario
from tests.e2e.agents.peers import PEERS, TEXT

# The ACP peers; native wires have their own test files (test_pi_native.py, test_opencode_native.py).
AGENTS = [name for name in PEERS if getattr(profile(name), "connection", None) is ConnectionKind.ACP]
# How each agent ends a turn whose command was denied (observed with the pinned versions): codex-acp aborts the turn
# (its "cancel" decision → stopReason cancelled); claude-code-acp and opencode-acp end it at once without asking the
# model again; claude (native), gemini, qwen and the codex app-server (answered `decline`) report the refusal to the
# model and end with its answer.
DENIED: dict[str, tuple[type, bool]] = {
    "claude": (Completed, True),
    "codex": (Completed, True),
    "claude-code-acp": (Completed, False),
    "codex-acp": (Cancelled, False),
    "gemini": (Completed, True),
    "qwen": (Completed, True),
    "opencode-acp": (Completed, False),
}
pytestmark = [pytest.mark.timeout(300), pytest.mark.parametrize("agent", AGENTS)]


async def test_a_plain_turn_completes_with_the_scripted_text(agent: str, tmp_path: Path) -> None:
    """Issue part 6: a plain turn ends `Completed` and carries the fake LLM's text."""
    async with agent_world(agent, tmp_path, plain_scenario()) as world, runtime_session(world) as session:
        await session.prompt("say hello")
        events = await until(session, is_turn_end)
        assert isinstance(turn_end(events).stop, Completed)
        assert text_of(events).strip() == TEXT
        assert world.requests(), "the agent never called the fake LLM"


@dataclass(frozen=True, slots=True)
class PermissionTurn:
    options: list[PermissionChoice]
    stop: object
    text: str
    touched: bool


async def _permission_turn(agent: str, root: Path, choice: PermissionChoice) -> PermissionTurn:
    """Run one tool turn and answer its permission ask with `choice`."""
    async with agent_world(agent, root, tool_scenario(agent)) as world, runtime_session(world) as session:
        await session.prompt("create the marker file")
        asked = await until(session, is_permission)
        opened = asked[-1].kind
        assert isinstance(opened, RequestOpened) and isinstance(opened.request, PermissionAsk)
        request = opened.request.request
        await session.answer(request.id, PermissionAnswer(choice=choice))
        rest = await until(session, is_turn_end)
        return PermissionTurn(request.options, turn_end(rest).stop, text_of(rest), world.touched.exists())


async def test_allowing_once_runs_the_command(agent: str, tmp_path: Path) -> None:
    """Issue part 6: the permission ask offers AllowOnce and DenyOnce; AllowOnce lets the shell command create the
    file, the agent hands the result back to the model and the turn completes with the model's answer."""
    turn = await _permission_turn(agent, tmp_path, PermissionChoice.ALLOW_ONCE)
    assert {PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ONCE} <= set(turn.options)
    assert turn.touched
    assert isinstance(turn.stop, Completed) and turn.text.strip() == "tool done"


async def test_denying_once_leaves_no_file(agent: str, tmp_path: Path) -> None:
    """Issue part 6: DenyOnce keeps the command from running. How the turn then ends is the agent's choice (DENIED)."""
    turn = await _permission_turn(agent, tmp_path, PermissionChoice.DENY_ONCE)
    assert not turn.touched
    stop, asks_model_again = DENIED[agent]
    assert isinstance(turn.stop, stop), turn.stop
    assert turn.text.strip() == ("tool done" if asks_model_again else "")


async def test_cancel_mid_turn_ends_cancelled_and_the_next_prompt_completes(agent: str, tmp_path: Path) -> None:
    """Issue part 6: cancelling while the model streams ends the turn `Cancelled`; the session then runs a normal
    turn (the fake LLM answers TEXT once the slow reply is used up)."""
    async with agent_world(agent, tmp_path, slow_scenario(agent)) as world, runtime_session(world) as session:
        await session.prompt("say something slowly")
        await until(session, is_text)
        await session.cancel()
        events = await until(session, is_turn_end)
        assert isinstance(turn_end(events).stop, Cancelled)
        await session.prompt("say hello")
        events = await until(session, is_turn_end)
        assert isinstance(turn_end(events).stop, Completed)
        assert TEXT in text_of(events)


async def test_killing_the_agent_fails_the_turn_then_raises_process_exited(agent: str, tmp_path: Path) -> None:
    """Issue part 6: SIGKILL to the agent mid-turn gives `TurnEnded Failed`, then the event stream raises
    `ProcessExited` (status = the signal) and the session is closed.

    The whole process group is killed, i.e. the agent and what it spawned: codex-acp's npm entry is a node launcher
    that runs the native binary as a child sharing its stdio, so killing only the launcher's pid leaves the native
    agent running with the pipes open, and nothing ever reaches the runtime (observed: no event for 60 s)."""
    async with agent_world(agent, tmp_path, slow_scenario(agent)) as world, runtime_session(world) as session:
        await session.prompt("say something slowly")
        seen = await until(session, is_text)
        os.killpg(world.agent_pid(), signal.SIGKILL)  # the runtime starts each agent in its own group
        with pytest.raises(ProcessExited) as exited:
            async with asyncio.timeout(STEP):
                async for event in session.events:
                    seen.append(event)
        assert "9" in exited.value.status
        assert isinstance(turn_end(seen).stop, Failed)
        async with asyncio.timeout(STEP):
            await session.wait_closed()
        assert session.closed
        with pytest.raises(SessionClosed):
            await session.prompt("again")
