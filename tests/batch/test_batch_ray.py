"""`omniagent batch --ray` on a real local Ray cluster (issue 14 acceptance, Ray part).

Everything runs inside the loopback-only network namespace of the real-agent tests: the fake LLM holds it (started
through `netns.py`), and the batch process, which starts the Ray cluster on 127.0.0.1 (head, raylet, GCS and every
worker are its children), is entered into it with nsenter. No Ray traffic can reach any other address.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.batch.support import (
    AFTER_STALL,
    POLL,
    RUN_WAIT,
    file_name,
    finish,
    results,
    run_batch,
    scenario,
    start_batch,
    task_id,
    trajectory,
    write_tasks,
)
from tests.batch.support import tasks as make_tasks
from tests.e2e.agents.harness import namespaced_llm
from tests.runtime.adapters.engine.harness import KEY, child_env

pytestmark = pytest.mark.timeout(300)
SAME = ("task", "agent", "status", "stop", "error", "text", "changed_files", "tool_calls")


@dataclass(slots=True)
class Namespace:
    origin: str
    enter: list[str]
    log: Path

    def requests(self) -> list[dict[str, Any]]:
        try:
            return [json.loads(line) for line in self.log.read_text().splitlines() if line.endswith("}")]
        except FileNotFoundError:
            return []


@contextlib.asynccontextmanager
async def loopback_namespace(root: Path, story: dict[str, Any]) -> AsyncIterator[Namespace]:
    """A fake LLM answering `story`, holding a fresh namespace with only loopback; `enter` runs a command in it."""
    async with namespaced_llm(root, story) as llm:
        yield Namespace(llm.origin, llm.enter, llm.log)


def _env(tmp_path: Path, origin: str) -> dict[str, str]:
    env = child_env(tmp_path, None) | {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": origin}
    return env | {"RAY_USAGE_STATS_ENABLED": "0"}


def _same(found: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["task"]: {key: r[key] for key in SAME} for r in found}


def _steps(out: Path, task: str) -> list[dict[str, Any]]:
    """A run's trajectory steps without their times (which differ from run to run)."""
    return [{k: v for k, v in step.items() if k != "timestamp"} for step in trajectory(out, task, "omniagent")["steps"]]


async def test_twenty_tasks_through_ray_give_the_same_results_as_locally(tmp_path: Path) -> None:
    """The same 20 tasks, `--ray` (a local cluster on 127.0.0.1, 4 CPUs) and locally at -j 4: identical results
    and diffs; every Ray run says it ran on 127.0.0.1."""
    task_file = write_tasks(tmp_path / "tasks.jsonl", make_tasks(20, agent="omniagent"))
    async with loopback_namespace(tmp_path, scenario(20)) as ns:
        env = _env(tmp_path, ns.origin)
        local, ray = tmp_path / "local", tmp_path / "ray"
        code, _, err = await run_batch(
            str(task_file), "-j", "4", "--out", str(local), env=env, cwd=tmp_path, prefix=ns.enter
        )
        assert code == 0, err
        code, out, err = await run_batch(
            str(task_file), "--ray", "-j", "4", "--out", str(ray), env=env, cwd=tmp_path, prefix=ns.enter
        )
        assert code == 0, err
    on_ray = results(ray)
    assert len(on_ray) == 20
    assert _same(on_ray) == _same(results(local))
    assert {r["where"] for r in on_ray} == {"ray:127.0.0.1"}
    for i in range(20):
        run = ("tasks", task_id(i), "omniagent", "diff.patch")
        assert ray.joinpath(*run).read_text() == local.joinpath(*run).read_text() != ""
        assert _steps(ray, task_id(i)) == _steps(local, task_id(i))  # the driver writes them from the events
    assert "omniagent" in out


async def test_a_worker_killed_during_a_task_is_retried_once_and_completes(tmp_path: Path) -> None:
    """kill -9 of the Ray worker process running a task while its model call is in flight: the run starts again
    once (attempt 2) and completes; the other tasks are untouched."""
    victim = {"id": "victim", "prompt": "KILL-MARK", "agent": "omniagent"}
    story = scenario(3, stall_once="KILL-MARK")
    task_file = write_tasks(tmp_path / "tasks.jsonl", [*make_tasks(3, agent="omniagent"), victim])
    out = tmp_path / "out"
    async with loopback_namespace(tmp_path, story) as ns:
        env = _env(tmp_path, ns.origin)
        batch = await start_batch(
            str(task_file), "--ray", "-j", "2", "--out", str(out), env=env, cwd=tmp_path, prefix=ns.enter
        )
        try:
            worker = out / "tasks" / "victim" / "omniagent" / "worker.json"
            async with asyncio.timeout(RUN_WAIT):
                while True:
                    if worker.exists() and any("KILL-MARK" in json.dumps(r["body"]) for r in ns.requests()):
                        break
                    await asyncio.sleep(POLL)
            first = json.loads(worker.read_text())
            assert first["attempt"] == 1
            os.kill(first["pid"], signal.SIGKILL)
        finally:
            code, _, err = await finish(batch)
    assert code == 0, err
    by_task = {r["task"]: r for r in results(out)}
    assert by_task["victim"]["status"] == "completed"
    assert by_task["victim"]["attempt"] == 2
    assert by_task["victim"]["text"] == AFTER_STALL
    assert json.loads(worker.read_text())["pid"] != first["pid"]
    assert all(by_task[task_id(i)]["status"] == "completed" for i in range(3))
    assert all(by_task[task_id(i)]["changed_files"] == [file_name(i)] for i in range(3))


async def test_ctrl_c_on_ray_cancels_the_running_task_keeps_the_finished_ones_and_a_rerun_resumes(
    tmp_path: Path,
) -> None:
    """SIGINT while a task runs on a Ray worker: exit 130 once the worker has stopped it (Ray's cancel), the
    finished runs kept, the interrupted one not written; the same command again runs only that one."""
    story = scenario(2, stall_once="SLOW-MARK")
    slow = {"id": "slow", "prompt": "SLOW-MARK", "agent": "omniagent"}
    task_file = write_tasks(tmp_path / "tasks.jsonl", [*make_tasks(2, agent="omniagent"), slow])
    out = tmp_path / "out"
    args = (str(task_file), "--ray", "-j", "3", "--out", str(out))
    async with loopback_namespace(tmp_path, story) as ns:
        env = _env(tmp_path, ns.origin)
        batch = await start_batch(*args, env=env, cwd=tmp_path, prefix=ns.enter)
        try:
            async with asyncio.timeout(RUN_WAIT):
                while True:
                    if len(results(out)) == 2 and any("SLOW-MARK" in json.dumps(r["body"]) for r in ns.requests()):
                        break
                    await asyncio.sleep(POLL)
            batch.send_signal(signal.SIGINT)
        finally:
            code, _, err = await finish(batch)
        assert code == 130, err
        assert sorted(r["task"] for r in results(out)) == ["t00", "t01"]
        asked_before = len(ns.requests())
        code, _, err = await run_batch(*args, env=env, cwd=tmp_path, prefix=ns.enter)
        again = [json.dumps(r["body"]) for r in ns.requests()[asked_before:]]
    assert code == 0, err
    assert sorted(r["task"] for r in results(out)) == ["slow", "t00", "t01"]
    assert {r["task"]: r for r in results(out)}["slow"]["text"] == AFTER_STALL
    assert again and all("SLOW-MARK" in body for body in again)


async def test_ray_with_an_address_where_no_cluster_answers_says_so_and_exits_3(tmp_path: Path) -> None:
    """`--ray 127.0.0.1:1` (nothing listens there): one sentence naming the address, exit 3, nothing run."""
    task_file = write_tasks(tmp_path / "tasks.jsonl", make_tasks(1, agent="omniagent"))
    out = tmp_path / "out"
    async with loopback_namespace(tmp_path, scenario(1)) as ns:
        args = (str(task_file), "--ray", "127.0.0.1:1", "--out", str(out))
        code, stdout, err = await run_batch(*args, env=_env(tmp_path, ns.origin), cwd=tmp_path, prefix=ns.enter)
        assert ns.requests() == []
    assert code == 3
    assert err.strip() == "omniagent batch: error: no Ray cluster answers at 127.0.0.1:1 (Connection refused)"
    assert stdout == "" and results(out) == []


# A cluster of its own, owned by one process: started on 127.0.0.1, its GCS address printed, shut down (every Ray
# process with it) when stdin closes.
_CLUSTER = """
import sys, ray
ray.init(address="local", _node_ip_address="127.0.0.1", include_dashboard=False, num_cpus=3)
print(ray.get_runtime_context().gcs_address, flush=True)
sys.stdin.read()
ray.shutdown()
"""


async def test_ray_address_joins_a_running_cluster_whose_workers_run_the_tasks(tmp_path: Path) -> None:
    """`--ray 127.0.0.1:PORT` joins a cluster another process started (its workers have the engine's settings from
    that process, as a real cluster's nodes have their own): the tasks run there and complete."""
    task_file = write_tasks(tmp_path / "tasks.jsonl", make_tasks(3, agent="omniagent"))
    out = tmp_path / "out"
    async with loopback_namespace(tmp_path, scenario(3)) as ns:
        env = _env(tmp_path, ns.origin)
        cluster = await asyncio.create_subprocess_exec(
            *ns.enter,
            sys.executable,
            "-c",
            _CLUSTER,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        try:
            assert cluster.stdout is not None and cluster.stdin is not None
            async with asyncio.timeout(RUN_WAIT):
                address = (await cluster.stdout.readline()).decode().strip()
            assert address.startswith("127.0.0.1:"), address
            args = (str(task_file), "--ray", address, "--out", str(out))
            # The cluster has token auth on (Ray's default for a new one); its token is in HOME/.ray, shared here.
            joining = env | {"RAY_AUTH_MODE": "token"}
            code, _, err = await run_batch(*args, env=joining, cwd=tmp_path, prefix=ns.enter)
        finally:
            assert cluster.stdin is not None
            cluster.stdin.close()
            await finish(cluster)
    assert code == 0, err
    found = results(out)
    assert sorted(r["task"] for r in found) == [task_id(i) for i in range(3)]
    assert all(r["status"] == "completed" and r["where"] == "ray:127.0.0.1" for r in found)
