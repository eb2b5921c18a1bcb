"""Skills of our engine through a real `omniagent serve` subprocess: the session's skills are the agent's slash
commands, and a prompt `/name arguments` runs the skill (the model reads its instructions with the arguments)."""

from __future__ import annotations

from pathlib import Path

from omniagent.testing import FakeLLMServer, Reply, Scenario
from tests.e2e.sidecar_client import Sidecar
from tests.runtime.adapters.engine.harness import child_env, workspace


async def test_skills_are_the_engine_sessions_slash_commands(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    skill = ws / ".claude" / "skills" / "review" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    # A description on several lines is one line as a slash command (a menu shows one line per command).
    description = "description: |\n  Review a file.\n  Use when: asked.\n"
    skill.write_text(f"---\nname: review\n{description}argument-hint: <path>\n---\nRead $ARGUMENTS.\n")
    async with (
        FakeLLMServer(Scenario([Reply(text="Reviewed.")])) as llm,
        Sidecar.running(env=child_env(tmp_path, llm)) as sidecar,
    ):
        info = await sidecar.ok("open", agent="omniagent", dir=str(ws))
        assert info["details"]["commands"] == [
            {"name": "review", "description": "Review a file. Use when: asked.", "input_hint": "<path>"}
        ]
        await sidecar.ok("prompt", session=info["id"], text="/review src/app.py")
        ended = await sidecar.wait_event(info["id"], "TurnEnded")
        assert ended["kind"]["TurnEnded"]["stop"] == {"Completed": {"source": "Protocol"}}
        (request,) = await llm.wait_for_requests_async(1)
    assert isinstance(request.body, dict)
    (user,) = [m for m in request.body["messages"] if m["role"] == "user"]
    assert "Read src/app.py." in str(user["content"])
