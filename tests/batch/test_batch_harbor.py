"""`omniagent batch` over Harbor task folders (issue 23, items 1-3): the fixture set under `harbor_tasks/` run by the
real CLI with the `oracle` agent and with our engine against the fake LLM, each verifier in real bubblewrap."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from omniagent.batch.harbor import load_folder
from omniagent.batch.tasks import SeedFile, parse_task
from omniagent.testing import FakeLLMServer, Scenario
from tests.batch.support import HARBOR_TASKS, harbor_task_set, results, run_batch
from tests.runtime.adapters.engine.harness import child_env

pytestmark = pytest.mark.timeout(120)

# The tasks made not to score 1, and what each must give instead.
NOT_PASSING = {"x-missing-reward", "x-unparsable-reward", "x-verifier-timeout", "x-no-solution", "x-needs-image"}


def _by_task(found: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {result["task"]: result for result in found}


async def test_the_oracle_scores_the_task_set_and_each_verifier_outcome_is_exact(tmp_path: Path) -> None:
    """27 task folders, `--agent oracle`: every task made to pass scores reward 1 (mean 1.0); reward.json wins
    over reward.txt, the exit code is not the reward, a missing, unparsable or late reward is a named verifier
    error, a task without a solution fails, a task whose image cannot be built is refused; a `no-network`
    verifier cannot reach a listener on the host's loopback that a `public` one reaches."""
    connections: list[str] = []

    async def accept(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append("connected")
        writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    tasks = harbor_task_set(tmp_path, port)
    out = tmp_path / "out"
    async with server:
        code, stdout, err = await run_batch(
            str(tasks), "--agent", "oracle", "-j", "8", "--out", str(out), env=child_env(tmp_path, None), cwd=tmp_path
        )
    assert code == 1, err  # the tasks made to fail
    found = _by_task(results(out))
    assert len(found) == 27
    passing = [name for name in found if name not in NOT_PASSING]
    assert len(passing) == 22
    assert {name: found[name]["rewards"]["reward"] for name in passing} == dict.fromkeys(passing, 1.0)
    assert all(found[name]["status"] == "completed" for name in passing)
    assert found["reward-json"]["rewards"] == {"reward": 1.0, "style": 0.5}
    assert found["reward-json-wins"]["rewards"] == {"reward": 1.0}
    assert found["exit-code-is-not-reward"]["verifier"]["exit_code"] == 3
    assert connections == ["connected"]  # network-public's probe only
    assert found["x-missing-reward"]["rewards"] is None
    assert found["x-missing-reward"]["verifier"]["error"] == (
        "no reward file: the verifier wrote neither /logs/verifier/reward.json nor /logs/verifier/reward.txt"
    )
    assert found["x-unparsable-reward"]["verifier"]["error"] == (
        "the reward file /logs/verifier/reward.txt cannot be parsed: it must hold one number"
    )
    assert found["x-verifier-timeout"]["verifier"] == {
        "exit_code": None,
        "seconds": found["x-verifier-timeout"]["verifier"]["seconds"],
        "error": "the verifier timed out after 1 s ([verifier] timeout_sec)",
    }
    assert found["x-no-solution"]["status"] == "failed"
    assert found["x-no-solution"]["error"] == "the task has no solution (solution/solve.sh) for the oracle agent to run"
    assert found["x-no-solution"]["rewards"] == {"reward": 0.0}
    assert found["x-needs-image"]["status"] == "failed"
    assert found["x-needs-image"]["error"] == (
        "task x-needs-image: its environment needs an image omniagent batch does not build (RUN in Dockerfile); "
        "pass --host-image to run it on this machine's system instead"
    )
    assert found["x-needs-image"]["verifier"] is None
    edit = out / "tasks" / "edit-00-alpha" / "oracle"
    assert (edit / "verifier" / "reward.txt").read_text() == "1\n"
    assert (out / "workspaces" / "edit-00-alpha" / "oracle" / "note.txt").read_text() == "the word is alpha\n"
    assert "+the word is alpha" in (edit / "diff.patch").read_text()
    assert "mean reward" in stdout and f"{22 / 27:.3f}" in stdout


async def test_a_task_refused_for_its_image_runs_on_the_host_when_the_user_says_so(tmp_path: Path) -> None:
    """One task folder given itself, with --host-image: the RUN line is skipped, the task runs here, and its result
    says so."""
    code, _, err = await run_batch(
        str(HARBOR_TASKS / "x-needs-image"),
        "--agent",
        "oracle",
        "--host-image",
        "--out",
        str(tmp_path / "out"),
        env=child_env(tmp_path, None),
        cwd=tmp_path,
    )
    assert code == 0, err
    (result,) = results(tmp_path / "out")
    assert result["rewards"] == {"reward": 1.0}
    assert result["notes"] == [
        "ran on this machine's system, not the task's image (--host-image); not run: RUN in Dockerfile"
    ]


async def test_the_engine_scripted_to_solve_one_task_and_not_another_scores_1_and_0(tmp_path: Path) -> None:
    """Our engine against the fake LLM: it edits the alpha task's file as asked and only talks on the bravo task;
    the verifiers, run after each turn, give rewards 1 and 0."""
    tasks = tmp_path / "tasks"
    for name in ("edit-00-alpha", "edit-01-bravo"):
        shutil.copytree(HARBOR_TASKS / name, tasks / name)
    write = {"name": "write", "arguments": {"path": "note.txt", "content": "the word is alpha\n"}}
    scenario = {
        "steps": [
            {"kind": "reply", "text": "done", "match": "the word is alpha\\n", "sticky": True},
            {"kind": "reply", "tool_calls": [write], "match": "TODO with alpha", "sticky": True},
            {"kind": "reply", "text": "I will not", "match": "TODO with bravo", "sticky": True},
        ],
        "fallback": {"kind": "reply", "text": "no step for this request"},
    }
    out = tmp_path / "out"
    async with FakeLLMServer(Scenario.from_json(scenario)) as llm:
        code, _, err = await run_batch(
            str(tasks), "--agent", "omniagent", "--out", str(out), env=child_env(tmp_path, llm), cwd=tmp_path
        )
    assert code == 0, err
    found = _by_task(results(out))
    assert found["edit-00-alpha"]["rewards"] == {"reward": 1.0}
    assert found["edit-01-bravo"]["rewards"] == {"reward": 0.0}
    assert found["edit-00-alpha"]["changed_files"] == ["note.txt"]
    assert "not at the task's workdir /app" in found["edit-00-alpha"]["notes"][0]


def test_a_task_folder_reads_as_harbor_means_it() -> None:
    """Canary lines stripped from the instruction, the workdir and files of the Dockerfile's WORKDIR and COPY, its
    ENV under the task's, the timeouts; a JSONL line may name a verifier too."""
    (task,) = load_folder(HARBOR_TASKS / "edit-00-alpha")
    assert task.prompt == "In /app/note.txt, replace the word TODO with alpha.\n"
    assert task.time_limit == 60.0
    assert task.verifier is not None and task.verifier.timeout_sec == 30.0
    assert task.environment.workdir == "/app"
    assert task.environment.env == {"GREETING": "hello there"}
    assert task.environment.seed == [SeedFile(source=str(HARBOR_TASKS / "edit-00-alpha/environment/app"), target="./")]
    line = '{"id": "t", "prompt": "p", "verifier": {"command": "bash /tests/test.sh", "tests": "t", "timeout_sec": 5}}'
    parsed = parse_task(line)
    assert parsed.verifier is not None and parsed.verifier.timeout_sec == 5 and parsed.verifier.tests == "t"
