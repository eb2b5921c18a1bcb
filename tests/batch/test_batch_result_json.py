"""`result.json` per trial and per job in Harbor's shape (issue 23, item 6): real batches over the Harbor fixtures
with the oracle and over failing agents; every file is checked against Harbor's shape and its results.jsonl line
(`harbor_result.py`, run by `results()`), and here against what each trial did."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from omniagent.batch.results import trial_name
from tests.batch import harbor_result
from tests.batch.support import results, run_batch, write_tasks
from tests.runtime.adapters.engine.harness import child_env

pytestmark = pytest.mark.timeout(120)

FIXTURES = Path(__file__).with_name("harbor_tasks")
TASKS = ("edit-00-alpha", "reward-json", "x-missing-reward", "x-no-solution", "x-needs-image", "x-verifier-timeout")


def _record(out: Path, task: str, trial: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((out / "tasks" / task / trial / "result.json").read_text())
    return loaded


async def test_the_oracle_s_trials_and_job_say_in_harbor_s_words_what_results_jsonl_says(tmp_path: Path) -> None:
    """Six fixtures by two trials: a pass, two rewards, a missing reward, no solution, a refused image, a late
    verifier. Each trial's phases, rewards and exception; the job's counts, reward_stats and exception_stats."""
    tasks = tmp_path / "tasks"
    for name in TASKS:
        shutil.copytree(FIXTURES / name, tasks / name)
    out = tmp_path / "out"
    code, _, err = await run_batch(
        str(tasks), "--agent", "oracle", "-k", "2", "--out", str(out), env=child_env(tmp_path, None), cwd=tmp_path
    )
    assert code == 1, err
    lines = results(out)  # every result.json checked against its line and Harbor's shape
    assert len(lines) == 12

    passed = _record(out, "edit-00-alpha", "oracle@2")
    assert passed["trial_name"] == "edit-00-alpha/oracle@2" and passed["exception_info"] is None
    assert passed["verifier_result"] == {"rewards": {"reward": 1.0}}
    assert passed["agent_info"] == {
        "name": "oracle",
        "version": "unknown",
        "model_info": None,
        "reported_name": None,
        "model": None,
        "session_id": None,
    }
    assert passed["agent_setup"] is None  # the oracle opens no session
    assert all(passed[phase] is not None for phase in ("environment_setup", "agent_execution", "verifier"))
    assert passed["agent_result"]["cost_usd"] is None and passed["agent_result"]["n_input_tokens"] is None

    missing = _record(out, "x-missing-reward", "oracle")
    assert missing["verifier_result"] is None
    assert missing["exception_info"]["exception_type"] == "verifier"
    assert missing["exception_info"]["exception_message"] == missing["verifier"]["error"]
    assert missing["exception_info"]["occurred_at"] == missing["verifier"]["finished_at"]
    assert "verifier phase" in missing["exception_info"]["exception_traceback"]

    unsolved = _record(out, "x-no-solution", "oracle")
    assert unsolved["exception_info"]["exception_type"] == "solution_failed"
    assert unsolved["exception_info"]["exception_message"] == unsolved["error"]
    assert unsolved["exception_info"]["phase"] == "agent_execution"
    assert unsolved["verifier_result"] == {"rewards": {"reward": 0.0}}  # its verifier still ran

    refused = _record(out, "x-needs-image", "oracle")
    assert refused["exception_info"]["exception_type"] == "refused"
    assert refused["exception_info"]["phase"] == "environment_setup"
    assert [refused[p] is None for p in harbor_result.PHASES] == [False, True, True, True]

    late = _record(out, "x-verifier-timeout", "oracle@2")
    assert late["exception_info"]["exception_type"] == "verifier"
    assert late["exception_info"]["exception_message"] == "the verifier timed out after 1 s ([verifier] timeout_sec)"

    job = harbor_result.job(out)
    assert job["n_total_trials"] == 12 and job["finished_at"] is not None
    started, finished = harbor_result.when(job["started_at"]), harbor_result.when(job["finished_at"])
    for line in lines:
        trial = _record(out, line["task"], trial_name(line["agent"], line["trial"]))
        assert started <= harbor_result.when(trial["started_at"])
        assert harbor_result.when(trial["finished_at"]) <= finished
    stats = job["stats"]
    assert (stats["n_completed_trials"], stats["n_errored_trials"], stats["n_pending_trials"]) == (12, 8, 0)
    oracle = stats["evals"]["oracle"]
    assert (oracle["n_trials"], oracle["n_errors"]) == (6, 8)
    pair = ["oracle", "oracle@2"]
    assert oracle["reward_stats"] == {
        "reward": {
            "1.0": sorted(f"{task}/{t}" for task in ("edit-00-alpha", "reward-json") for t in pair),
            "0.0": [f"x-no-solution/{t}" for t in pair],
        },
        "style": {"0.5": [f"reward-json/{t}" for t in pair]},
    }
    by_task = {task: [f"{task}/{t}" for t in pair] for task in TASKS}
    assert oracle["exception_stats"] == {
        "refused": by_task["x-needs-image"],
        "solution_failed": by_task["x-no-solution"],
        "verifier": sorted(by_task["x-missing-reward"] + by_task["x-verifier-timeout"]),
    }
    assert oracle["metrics"] == [{"mean": pytest.approx(4 / 12)}]
    assert oracle["metrics"][0]["mean"] == job["agents"]["oracle"]["mean_reward"]
    assert oracle["pass_at_k"] == job["agents"]["oracle"]["pass_at_k"]


async def test_an_agent_that_cannot_start_and_a_workspace_that_cannot_be_made(tmp_path: Path) -> None:
    """An agent that exits during the handshake: its exception is `agent_start` in the agent_setup phase and no turn
    ran; a workspace whose source is missing: `workspace`, in environment_setup, and nothing after it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    qwen = bin_dir / "qwen"  # an agent omniagent knows, found on PATH
    qwen.write_text('#!/bin/sh\necho "no start" >&2\nexit 1\n')
    qwen.chmod(0o755)
    lines = [
        {"id": "no-start", "prompt": "hi", "agent": "qwen"},
        {"id": "no-source", "prompt": "hi", "agent": "qwen", "workspace": {"copy": str(tmp_path / "absent")}},
    ]
    task_file = write_tasks(tmp_path / "tasks.jsonl", lines)
    out = tmp_path / "out"
    env = child_env(tmp_path, None) | {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    code, _, err = await run_batch(str(task_file), "--out", str(out), env=env, cwd=tmp_path)
    assert code == 1, err
    results(out)
    unstarted = _record(out, "no-start", "qwen")
    assert unstarted["exception_info"]["exception_type"] == "agent_start"
    assert unstarted["exception_info"]["phase"] == "agent_setup"
    assert unstarted["exception_info"]["exception_message"] == unstarted["error"]
    assert unstarted["exception_info"]["occurred_at"] == unstarted["agent_setup"]["finished_at"]
    assert unstarted["agent_execution"] is None and unstarted["agent_result"] is None
    assert unstarted["agent_info"]["name"] == "qwen" and unstarted["agent_info"]["version"] == "unknown"
    sourceless = _record(out, "no-source", "qwen")
    assert sourceless["exception_info"]["exception_type"] == "workspace"
    assert sourceless["exception_info"]["phase"] == "environment_setup"
    assert [sourceless[p] is None for p in harbor_result.PHASES] == [False, True, True, True]
    stats = harbor_result.job(out)["stats"]
    assert stats["n_errored_trials"] == 2
    exceptions = stats["evals"]["qwen"]["exception_stats"]
    assert exceptions == {"agent_start": ["no-start/qwen"], "workspace": ["no-source/qwen"]}
    assert stats["evals"]["qwen"]["reward_stats"] == {} and stats["evals"]["qwen"]["metrics"] == []


async def test_the_job_keeps_its_id_and_start_across_a_rerun_that_adds_trials(tmp_path: Path) -> None:
    """`-k 1`, then `-k 2` on the same --out: one job (same id, same start), its totals grown."""
    tasks = tmp_path / "tasks"
    shutil.copytree(FIXTURES / "edit-00-alpha", tasks / "edit-00-alpha")
    out = tmp_path / "out"
    args = (str(tasks), "--agent", "oracle", "--out", str(out))
    code, _, err = await run_batch(*args, env=child_env(tmp_path, None), cwd=tmp_path)
    assert code == 0, err
    first = harbor_result.job(out)
    assert first["n_total_trials"] == 1 and first["stats"]["n_completed_trials"] == 1
    code, _, err = await run_batch(*args, "-k", "2", env=child_env(tmp_path, None), cwd=tmp_path)
    assert code == 0, err
    results(out)
    second = harbor_result.job(out)
    assert (second["id"], second["started_at"]) == (first["id"], first["started_at"])
    assert harbor_result.when(second["finished_at"]) > harbor_result.when(first["finished_at"])
    assert second["n_total_trials"] == 2 and second["stats"]["evals"]["oracle"]["reward_stats"] == {
        "reward": {"1.0": ["edit-00-alpha/oracle", "edit-00-alpha/oracle@2"]}
    }
