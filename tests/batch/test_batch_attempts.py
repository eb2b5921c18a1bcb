"""`-k/--attempts`, infrastructure retries and `job.json` (issue 23, item 4): trials of every (task, agent), each run
once even across a kill -9 and a rerun, the job's metrics over them, and a failed start run again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from omniagent.batch import parse_task, run
from omniagent.batch.execute import RunSpec
from omniagent.batch.results import TaskResult
from omniagent.testing import FakeLLMServer, Scenario
from tests.batch import harbor_result
from tests.batch.support import (
    content,
    kill_9_after,
    marker,
    results,
    run_batch,
    scenario,
    task_id,
    tasks,
    write_tasks,
)
from tests.runtime.adapters.engine.harness import child_env

pytestmark = pytest.mark.timeout(300)

# The verifier scores the answer the oracle's solution left in the workspace.
VERIFY = {"command": 'if [ "$(cat answer.txt)" = right ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt'}


def _oracle_task(task: str, solution: str) -> dict[str, Any]:
    return {"id": task, "prompt": "answer", "agent": "oracle", "solution": {"command": solution}, "verifier": VERIFY}


async def test_three_trials_of_each_task_give_the_mean_reward_and_pass_at_k_in_job_json(tmp_path: Path) -> None:
    """-k 3 with the oracle: `right` always passes, `wrong` never, `flaky` fails its second trial only (its solution
    sees its workspace's path, which names the trial). Mean reward 5/9; pass@1 = (1 + 2/3 + 0)/3, pass@2 and
    pass@3 = (1 + 1 + 0)/3; each trial has its own directory and result line."""
    flaky = 'case "$PWD" in *@2) echo wrong;; *) echo right;; esac > answer.txt'
    task_file = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            _oracle_task("right", "echo right > answer.txt"),
            _oracle_task("wrong", "echo wrong > answer.txt"),
            _oracle_task("flaky", flaky),
        ],
    )
    out = tmp_path / "out"
    code, stdout, err = await run_batch(
        str(task_file), "-k", "3", "-j", "3", "--out", str(out), env=child_env(tmp_path, None), cwd=tmp_path
    )
    assert code == 0, err  # every trial completed (the solutions exit 0); the rewards differ
    found = results(out)
    assert sorted((r["task"], r["trial"]) for r in found) == sorted(
        (task, trial) for task in ("right", "wrong", "flaky") for trial in (1, 2, 3)
    )
    rewards = {(r["task"], r["trial"]): r["rewards"]["reward"] for r in found}
    assert [rewards[("flaky", trial)] for trial in (1, 2, 3)] == [1.0, 0.0, 1.0]
    assert sorted(p.name for p in (out / "tasks" / "flaky").iterdir()) == ["oracle", "oracle@2", "oracle@3"]
    assert (out / "workspaces" / "flaky" / "oracle@2" / "answer.txt").read_text() == "wrong\n"
    job = json.loads((out / "job.json").read_text())
    assert (job["planned"], job["finished"], job["complete"], job["stopped"]) == (9, 9, True, False)
    assert job["options"]["trials"] == 3
    oracle = job["agents"]["oracle"]
    assert oracle["trials"] == 9 and oracle["tasks"] == 3
    assert oracle["mean_reward"] == pytest.approx(5 / 9)
    assert oracle["pass_at_k"] == pytest.approx({"1": 5 / 9, "2": 2 / 3, "3": 2 / 3})
    assert oracle["rewards"]["counts"] == {"0": 4, "1": 5}
    assert "pass@1" in stdout and "pass@3" in stdout and "0.556" in stdout and "0.667" in stdout


async def test_kill_9_mid_job_then_a_rerun_runs_only_the_trials_without_a_result(tmp_path: Path) -> None:
    """4 tasks by 3 trials on our engine against the fake LLM, killed with SIGKILL after a few results; the same
    command again sends each task's first request once per trial that had no result (no more), and its `--json`
    output is job.json, which counts each of the 12 trials once."""
    task_file = write_tasks(tmp_path / "tasks.jsonl", tasks(4, agent="omniagent"))
    out = tmp_path / "out"
    args = (str(task_file), "-k", "3", "-j", "2", "--out", str(out))
    async with FakeLLMServer(Scenario.from_json(scenario(4, delay=0.3))) as llm:
        env = child_env(tmp_path, llm)
        await kill_9_after(out, 3, *args, env=env, cwd=tmp_path)
        done_first = [(r["task"], r["trial"]) for r in results(out)]
        assert 3 <= len(done_first) < 12
        killed = harbor_result.job(out)  # written as the batch started; the kill left it so
        assert killed["finished_at"] is None and killed["n_total_trials"] == 12
        seen_before = len(llm.requests)
        code, stdout, err = await run_batch(*args, "--json", env=env, cwd=tmp_path)
        second = [json.dumps(request.body) for request in llm.requests[seen_before:]]
    assert code == 0, err
    for i in range(4):
        # A trial's first request carries its task's marker and not yet the content it wrote.
        started = sum(1 for body in second if marker(i) in body and content(i).strip() not in body)
        missing = 3 - sum(1 for task, _ in done_first if task == task_id(i))
        assert started == missing, task_id(i)
    found = results(out)
    keys = [(r["task"], r["trial"]) for r in found]
    assert sorted(keys) == sorted((task_id(i), trial) for i in range(4) for trial in (1, 2, 3))  # each once
    job = json.loads((out / "job.json").read_text())
    assert json.loads(stdout) == job
    assert (job["planned"], job["finished"], job["complete"]) == (12, 12, True)
    rerun = harbor_result.job(out)  # the same job: its id and start kept
    assert (rerun["id"], rerun["started_at"]) == (killed["id"], killed["started_at"])
    assert rerun["stats"]["n_completed_trials"] == 12 and rerun["finished_at"] is not None
    assert job["agents"]["omniagent"]["trials"] == 12 and job["agents"]["omniagent"]["completed"] == 12
    assert job["totals"]["trials"] == 12
    assert job["agents"]["omniagent"]["pass_at_k_absent"] == "no trial was verified (the tasks have no verifier)"


class _Mender:
    """An observer that makes the missing workspace source when the trial's second try starts: the first try's
    workspace cannot be made (an infrastructure failure), the second's can."""

    def __init__(self, source: Path) -> None:
        self.source = source
        self.tries = 0

    def planned(self, total: int, already_done: list[TaskResult]) -> None:
        pass

    def started(self, spec: RunSpec) -> None:
        self.tries += 1
        if self.tries == 2:
            self.source.mkdir()

    def event(self, spec: RunSpec, event: dict[str, Any]) -> None:
        pass

    def finished(self, result: TaskResult) -> None:
        pass


async def _run_oracle(tmp_path: Path, name: str, solution: str, retries: int) -> tuple[TaskResult, _Mender]:
    source = tmp_path / f"{name}-source"
    line = _oracle_task(name, solution) | {"workspace": {"copy": str(source)}}
    mender = _Mender(source)
    found = [
        result
        async for result in run([parse_task(json.dumps(line))], out=tmp_path / name, retries=retries, observer=mender)
    ]
    assert len(found) == 1
    return found[0], mender


async def test_an_infrastructure_failure_is_retried_and_recorded_and_a_wrong_answer_is_not(tmp_path: Path) -> None:
    healed, mender = await _run_oracle(tmp_path, "healed", "echo right > answer.txt", retries=1)
    assert healed.status == "completed" and healed.rewards == {"reward": 1.0} and mender.tries == 2
    assert len(healed.retried) == 1 and "is not a directory" in healed.retried[0]
    job = json.loads((tmp_path / "healed" / "job.json").read_text())
    assert job["totals"]["trials"] == 1 and job["totals"]["errors"]["retried"] == 1

    unretried, mender = await _run_oracle(tmp_path, "unretried", "echo right > answer.txt", retries=0)
    assert unretried.status == "failed" and unretried.error_kind == "workspace" and mender.tries == 1
    assert unretried.retried == []

    (tmp_path / "wrong-source").mkdir()
    wrong, mender = await _run_oracle(tmp_path, "wrong", "exit 1", retries=2)
    assert wrong.status == "failed" and wrong.error_kind == "solution_failed"
    assert mender.tries == 1 and wrong.retried == []  # the answer was wrong: never run again
