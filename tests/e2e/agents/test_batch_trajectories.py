"""`omniagent batch` with real agent CLIs driven natively (Claude Code's stream-json, Codex's app-server, pi's rpc
mode), each in its loopback-only namespace against the fake LLM (harness.py): the run's `trajectory.json` is
ATIF-v1.7 for them as for our engine and ACP agents (checked by `tests/batch/atif.py` and Harbor's own validator),
with the agent's shell call and its result as a step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.batch.support import results, run_batch, trajectory, write_tasks
from tests.e2e.agents.harness import agent_world, tool_scenario

pytestmark = pytest.mark.timeout(180)
# The shell call's name in each agent's own stream.
NAMES = {"claude": "Bash", "codex": "commandExecution", "pi": "bash"}


@pytest.mark.parametrize("agent", sorted(NAMES))
async def test_a_native_agents_batch_run_is_an_atif_trajectory_with_its_shell_call(tmp_path: Path, agent: str) -> None:
    task = {"id": "touch", "prompt": "create the marker file", "permissions": {"allow": ["execute"]}}
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task])
    out = tmp_path / "out"
    async with agent_world(agent, tmp_path / "world", tool_scenario(agent)) as world:
        code, _, err = await run_batch(
            str(tasks), "--agent", agent, "--out", str(out), env=world.runtime_env, cwd=tmp_path
        )
    assert code == 0, err
    (result,) = results(out)  # its trajectory.json validated on the way
    assert result["status"] == "completed", result
    assert (out / "workspaces" / "touch" / agent / "fake_tool_ran.txt").exists()
    found = trajectory(out, "touch", agent)
    assert found["steps"][0] == found["steps"][0] | {"source": "user", "message": "create the marker file"}
    calls = [call for step in found["steps"] for call in step.get("tool_calls") or []]
    # Named as the agent names it (Codex's app-server: its item type), the command as it ran.
    assert [(call["function_name"], call["extra"]["kind"]) for call in calls] == [(NAMES[agent], "Execute")], calls
    assert "touch fake_tool_ran.txt" in json.dumps(calls[0]["arguments"])
    results_seen = [r for step in found["steps"] for r in (step.get("observation") or {}).get("results", [])]
    assert [r["source_call_id"] for r in results_seen] == [calls[0]["tool_call_id"]]
    assert found["agent"]["name"] and found["final_metrics"]["total_steps"] == len(found["steps"])
