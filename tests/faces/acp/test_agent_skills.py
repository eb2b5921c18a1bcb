"""Skills through `omniagent acp` (a real subprocess, against the fake LLM): a session's skills are its available
commands (`available_commands_update`, after the session's answer), and a prompt `/name arguments` runs the skill.
Every message the agent wrote is validated against the negotiated version's schema."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from omniagent.protocols.acp import v1, v2
from omniagent.runtime.adapters.acp.client import ClientHandlers, SessionEvent, open_acp_client
from omniagent.testing import FakeLLMServer, Reply, Scenario
from tests.faces.acp.agent_harness import agent_argv, agent_env, agent_messages, check_transcript, prepare, updates

WAIT = 30.0  # seconds: bound on every test body
REVIEW = "---\nname: review\ndescription: Review a file.\nargument-hint: <path>\n---\nRead $ARGUMENTS closely.\n"


class Client:
    def __init__(self) -> None:
        self.events: list[SessionEvent] = []

    async def on_update(self, event: SessionEvent) -> None:
        self.events.append(event)

    async def on_permission(self, _request: object) -> str | None:
        return None

    def handlers(self) -> ClientHandlers:
        return ClientHandlers(on_update=self.on_update, on_permission=self.on_permission)


@pytest.fixture
async def llm() -> AsyncIterator[FakeLLMServer]:
    async with FakeLLMServer(Scenario()) as server:
        yield server


def _setup(tmp_path: Path, llm: FakeLLMServer) -> tuple[Path, Path, Path, dict[str, str]]:
    data, ws, log = prepare(tmp_path, llm)
    skill = ws / ".agents" / "skills" / "review" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(REVIEW)
    personal = tmp_path / "home" / ".claude" / "skills" / "commit" / "SKILL.md"
    personal.parent.mkdir(parents=True)
    # A description on several lines is one line as a command (a command menu shows one line per command).
    personal.write_text("---\nname: commit\ndescription: |\n  Write a commit message.\n  Use when: asked.\n---\nGo.\n")
    env = agent_env() | {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": ""}
    return data, ws, log, env


async def test_v2_skills_are_available_commands_and_a_slash_prompt_runs_one(tmp_path: Path, llm: FakeLLMServer) -> None:
    llm.enqueue(Reply(text="Looks fine."))
    data, ws, log, env = _setup(tmp_path, llm)
    client = Client()
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(), env=env) as acp,
    ):
        session = await acp.new_session(str(ws))
        end = await acp.prompt(session.session_id, [v2.ContentBlockText(text="/review src/app.py")])
    assert end.stop_reason == "end_turn"
    sent = updates(log, session.session_id)
    assert sent[0] == {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"type": "command", "name": "commit", "description": "Write a commit message. Use when: asked."},
            {
                "type": "command",
                "name": "review",
                "description": "Review a file.",
                "input": {"type": "text", "hint": "<path>"},
            },
        ],
    }
    # The update follows the answer that made the session known to the client.
    wire = agent_messages(log)
    answer = next(i for i, m in enumerate(wire) if isinstance(m.get("result"), dict) and "sessionId" in m["result"])
    first_update = next(i for i, m in enumerate(wire) if m.get("method") == "session/update")
    assert answer < first_update
    # The user's message echoes the command as typed; the model reads the skill's instructions.
    echo = next(u for u in sent if u["sessionUpdate"] == "user_message")
    assert echo["content"] == [{"type": "text", "text": "/review src/app.py"}]
    (request,) = await llm.wait_for_requests_async(1)
    assert "Read src/app.py closely." in str(request.body)
    check_transcript(log)


async def test_v1_commands_have_an_untyped_input_and_plain_text_is_no_command(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """v1's command input has no `type`; a prompt naming no skill (`/unknown …`) is sent as plain text."""
    llm.enqueue(Reply(text="ok"))
    data, ws, log, env = _setup(tmp_path, llm)
    client = Client()
    async with (
        asyncio.timeout(WAIT),
        open_acp_client(agent_argv(data, log), handlers=client.handlers(), env=env, protocol_version=1) as acp,
    ):
        session = await acp.new_session(str(ws))
        end = await acp.prompt(session.session_id, [v1.ContentBlockText(text="/unknown thing")])
    assert end.stop_reason == "end_turn"
    commands = next(u for u in updates(log) if u["sessionUpdate"] == "available_commands_update")
    assert commands["availableCommands"][1]["input"] == {"hint": "<path>"}
    (request,) = await llm.wait_for_requests_async(1)
    assert isinstance(request.body, dict)
    assert request.body["messages"][-1]["content"][0]["text"] == "/unknown thing"
    check_transcript(log)
