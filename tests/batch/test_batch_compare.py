"""Two agents compared on the same tasks: our engine (against an in-process fake LLM) and the pinned real codex-acp
(in the loopback-only namespace of the real-agent harness, against the namespace's fake LLM)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from omniagent.testing import FakeLLMServer, Scenario
from tests.batch.support import (
    events,
    file_name,
    marker,
    results,
    run_batch,
    scenario,
    task_id,
    tasks,
    trajectory,
    write_tasks,
)
from tests.e2e.agents.harness import agent_world
from tests.runtime.adapters.engine.harness import engine_env

pytestmark = pytest.mark.timeout(300)
AGENTS = ("omniagent", "codex-acp")


def _codex_scenario(count: int) -> dict[str, Any]:
    """Task i's first call runs `touch file-i.txt` through codex's shell tool; a call carrying a tool's output
    (its second) gets a text answer. Sticky, so it does not matter which task asks first."""
    steps: list[dict[str, Any]] = [
        {"kind": "reply", "text": "touched", "match": "function_call_output", "sticky": True}
    ]
    for i in range(count):
        call = {"name": "exec_command", "arguments": {"cmd": f"touch {file_name(i)}"}}
        steps.append({"kind": "reply", "tool_calls": [call], "match": marker(i), "sticky": True})
    return {"steps": steps, "fallback": {"kind": "reply", "text": "no step for this request"}}


async def test_our_engine_and_codex_acp_on_the_same_tasks_with_a_per_agent_summary(tmp_path: Path) -> None:
    """`--agent omniagent --agent codex-acp`: every task runs once per agent, each in a workspace of its own; both
    agents' tools are allowed by the task's list (write, execute), each run's diff holds exactly its file, and the
    summary has one row per agent."""
    task_file = write_tasks(tmp_path / "tasks.jsonl", tasks(2, permissions={"allow": ["write", "execute"]}))
    out = tmp_path / "out"
    async with agent_world("codex-acp", tmp_path / "codex", _codex_scenario(2)) as world:
        async with FakeLLMServer(Scenario.from_json(scenario(2))) as llm:
            env = world.runtime_env | engine_env(tmp_path, llm)
            args = [str(task_file), "-j", "2", "--out", str(out)]
            for agent in AGENTS:
                args += ["--agent", agent]
            code, stdout, err = await run_batch(*args, env=env, cwd=tmp_path)
        assert world.requests(), "codex-acp never called the fake LLM"
    assert code == 0, err
    found = {(r["task"], r["agent"]): r for r in results(out)}
    assert sorted(found) == sorted((task_id(i), agent) for i in range(2) for agent in AGENTS)
    for (task, agent), result in found.items():
        assert result["status"] == "completed", result
        assert result["changed_files"] == [file_name(int(task[1:]))], (task, agent)
        assert result["tool_calls"] >= 1
        assert any(k == "RequestOpened" for k in (next(iter(e["kind"])) for e in events(out, task, agent)))
    assert found[("t00", "codex-acp")]["text"] == "touched"
    assert found[("t00", "omniagent")]["text"] == "wrote file-00.txt"
    # An ACP agent's run as a trajectory: the prompt, the shell call and its result matched by id, the answer.
    codex = trajectory(out, "t00", "codex-acp")
    assert codex["agent"]["name"] == "Codex (ACP)" and codex["agent"]["version"]
    asked, called, answered = codex["steps"]
    assert (asked["source"], asked["message"]) == ("user", f"{marker(0)}: write {file_name(0)}")
    (call,) = called["tool_calls"]
    assert call["arguments"]["command"][-1] == f"touch {file_name(0)}"
    assert called["observation"]["results"] == [
        {"source_call_id": call["tool_call_id"], "extra": {"status": "Completed"}}
    ]
    assert (answered["source"], answered["message"]) == ("agent", "touched")
    rows = [line for line in stdout.splitlines() if line.startswith("│ ")]
    assert [row.split("│")[1].strip() for row in rows] == list(AGENTS)
    assert all(row.split("│")[3].strip() == "2" for row in rows)  # completed: 2 each
