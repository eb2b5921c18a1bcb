"""`omniagent batch --ray` on a real local Ray cluster (issue 14 acceptance, Ray part; issue 23: its defects, and
Harbor task folders with the oracle on Ray, their verifier's and oracle's logs back on the driver).

Everything runs in this machine's own network namespace, beside its routable interface, as a user's batch does: the
fake LLM listens on 127.0.0.1 in this process, and the batch process starts the Ray cluster (head, raylet, GCS and
every worker are its children) on 127.0.0.1. That the cluster listens on loopback only is checked, not assumed:
from the listening sockets of the batch's process tree.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from omniagent.testing import FakeLLMServer, Scenario
from tests.batch.listening import listening
from tests.batch.support import (
    AFTER_STALL,
    POLL,
    RUN_WAIT,
    file_name,
    finish,
    harbor_task_set,
    results,
    run_batch,
    scenario,
    start_batch,
    task_id,
    trajectory,
    write_tasks,
)
from tests.batch.support import tasks as make_tasks
from tests.runtime.adapters.engine.harness import child_env

pytestmark = pytest.mark.timeout(300)
SAME = ("task", "agent", "status", "stop", "error", "text", "changed_files", "tool_calls")


def _env(tmp_path: Path, llm: FakeLLMServer) -> dict[str, str]:
    return child_env(tmp_path, llm) | {"RAY_USAGE_STATS_ENABLED": "0"}


def _bodies(llm: FakeLLMServer) -> list[str]:
    return [json.dumps(request.body) for request in llm.requests]


def _asked(llm: FakeLLMServer, text: str) -> int:
    """How many model calls carried `text`."""
    return sum(text in body for body in _bodies(llm))


def _attempt(worker: Path) -> int | None:
    """The attempt a run's worker.json names (None before it is written; the driver writes it whole)."""
    try:
        return int(json.loads(worker.read_text())["attempt"])
    except (FileNotFoundError, ValueError):
        return None


def _same(found: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["task"]: {key: r[key] for key in SAME} for r in found}


def _steps(out: Path, task: str) -> list[dict[str, Any]]:
    """A run's trajectory steps without their times (which differ from run to run)."""
    return [{k: v for k, v in step.items() if k != "timestamp"} for step in trajectory(out, task, "omniagent")["steps"]]


async def test_twenty_tasks_through_ray_give_the_same_results_as_locally(tmp_path: Path) -> None:
    """The same 20 tasks, `--ray` (a local cluster on 127.0.0.1, 4 CPUs) and locally at -j 4: identical results
    and diffs; every Ray run says it ran on 127.0.0.1."""
    task_file = write_tasks(tmp_path / "tasks.jsonl", make_tasks(20, agent="omniagent"))
    async with FakeLLMServer(Scenario.from_json(scenario(20))) as llm:
        env = _env(tmp_path, llm)
        local, ray = tmp_path / "local", tmp_path / "ray"
        code, _, err = await run_batch(str(task_file), "-j", "4", "--out", str(local), env=env, cwd=tmp_path)
        assert code == 0, err
        code, out, err = await run_batch(str(task_file), "--ray", "-j", "4", "--out", str(ray), env=env, cwd=tmp_path)
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
    async with FakeLLMServer(Scenario.from_json(story)) as llm:
        batch = await start_batch(
            str(task_file), "--ray", "-j", "2", "--out", str(out), env=_env(tmp_path, llm), cwd=tmp_path
        )
        try:
            worker = out / "tasks" / "victim" / "omniagent" / "worker.json"
            async with asyncio.timeout(RUN_WAIT):
                while True:
                    if worker.exists() and _asked(llm, "KILL-MARK"):
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
    async with FakeLLMServer(Scenario.from_json(story)) as llm:
        env = _env(tmp_path, llm)
        batch = await start_batch(*args, env=env, cwd=tmp_path)
        try:
            async with asyncio.timeout(RUN_WAIT):
                while True:
                    if len(results(out)) == 2 and _asked(llm, "SLOW-MARK"):
                        break
                    await asyncio.sleep(POLL)
            batch.send_signal(signal.SIGINT)
        finally:
            code, _, err = await finish(batch)
        assert code == 130, err
        assert sorted(r["task"] for r in results(out)) == ["t00", "t01"]
        asked_before = len(llm.requests)
        code, _, err = await run_batch(*args, env=env, cwd=tmp_path)
        again = _bodies(llm)[asked_before:]
    assert code == 0, err
    assert sorted(r["task"] for r in results(out)) == ["slow", "t00", "t01"]
    assert {r["task"]: r for r in results(out)}["slow"]["text"] == AFTER_STALL
    assert again and all("SLOW-MARK" in body for body in again)


async def test_ray_with_an_address_where_no_cluster_answers_says_so_and_exits_3(tmp_path: Path) -> None:
    """`--ray 127.0.0.1:1` (nothing listens there): one sentence naming the address, exit 3, nothing run."""
    task_file = write_tasks(tmp_path / "tasks.jsonl", make_tasks(1, agent="omniagent"))
    out = tmp_path / "out"
    async with FakeLLMServer(Scenario.from_json(scenario(1))) as llm:
        args = (str(task_file), "--ray", "127.0.0.1:1", "--out", str(out))
        code, stdout, err = await run_batch(*args, env=_env(tmp_path, llm), cwd=tmp_path)
        assert llm.requests == []
    assert code == 3
    assert err.strip() == "omniagent batch: error: no Ray cluster answers at 127.0.0.1:1 (Connection refused)"
    assert stdout == "" and results(out) == []


# A cluster of its own, owned by one process: started on 127.0.0.1 (Ray's RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 in
# its environment keeps the node address as given: see omniagent/batch/ray_local.py), its GCS address printed, shut
# down (every Ray process with it) when stdin closes.
_CLUSTER = """
import sys, ray
ray.init(address="local", _node_ip_address="127.0.0.1", include_dashboard=False, num_cpus=3)
print(ray.get_runtime_context().gcs_address, flush=True)
sys.stdin.read()
ray.shutdown()
"""


@contextlib.asynccontextmanager
async def _cluster(env: dict[str, str], *, hiding: Path | None = None) -> AsyncIterator[str]:
    """A cluster another process starts (`_CLUSTER`; its workers have the settings of `env`, as a real cluster's
    nodes have their own), its GCS address while it runs. With `hiding`, that process and every Ray process it
    starts see an empty file system of their own at that path (a tmpfs, by bubblewrap) where this process sees the
    directory: as a worker on another machine sees none of the driver's files."""
    prefix = ["bwrap", "--dev-bind", "/", "/", "--tmpfs", str(hiding)] if hiding is not None else []
    cluster = await asyncio.create_subprocess_exec(
        *prefix,
        sys.executable,
        "-c",
        _CLUSTER,
        env=env | {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert cluster.stdout is not None and cluster.stdin is not None
    try:
        async with asyncio.timeout(RUN_WAIT):
            address = (await cluster.stdout.readline()).decode().strip()
        assert address.startswith("127.0.0.1:"), address
        yield address
    finally:
        cluster.stdin.close()
        await finish(cluster)


def _joining(env: dict[str, str]) -> dict[str, str]:
    """`env` for a batch joining a `_cluster`: it has token auth on (Ray's default for a new cluster); its token is in
    HOME/.ray, shared here."""
    return env | {"RAY_AUTH_MODE": "token"}


async def test_ray_address_joins_a_running_cluster_whose_workers_run_the_tasks(tmp_path: Path) -> None:
    """`--ray 127.0.0.1:PORT` joins a cluster another process started: the tasks run there and complete."""
    task_file = write_tasks(tmp_path / "tasks.jsonl", make_tasks(3, agent="omniagent"))
    out = tmp_path / "out"
    async with FakeLLMServer(Scenario.from_json(scenario(3))) as llm:
        env = _env(tmp_path, llm)
        async with _cluster(env) as address:
            args = (str(task_file), "--ray", address, "--out", str(out))
            code, _, err = await run_batch(*args, env=_joining(env), cwd=tmp_path)
    assert code == 0, err
    found = results(out)
    assert sorted(r["task"] for r in found) == [task_id(i) for i in range(3)]
    assert all(r["status"] == "completed" and r["where"] == "ray:127.0.0.1" for r in found)


async def test_the_local_cluster_listens_on_loopback_only_and_where_names_its_node(tmp_path: Path) -> None:
    """Issue 23, on a host with a routable interface: while a run is held mid-turn, every TCP socket the batch's
    process tree listens on (the driver, gcs_server, the raylet, the runtime-env agent, the workers) is on
    127.0.0.1; each run's `where` and worker.json name the node 127.0.0.1; Ray prints no WARNING lines."""
    story = scenario(1)
    story["steps"].insert(0, {"kind": "reply", "text": "let go", "match": "HOLD-MARK", "gate": "sockets"})
    held = {"id": "held", "prompt": "HOLD-MARK", "agent": "omniagent"}
    task_file = write_tasks(tmp_path / "tasks.jsonl", [*make_tasks(1, agent="omniagent"), held])
    out = tmp_path / "out"
    async with FakeLLMServer(Scenario.from_json(story)) as llm:
        batch = await start_batch(
            str(task_file), "--ray", "-j", "2", "--out", str(out), env=_env(tmp_path, llm), cwd=tmp_path
        )
        # Its output is read from the start, and its end is raced against the held request: a batch that ends
        # before the run is held fails here with what it said, not after a silent wait.
        output = asyncio.create_task(batch.communicate())
        try:
            held = asyncio.create_task(llm.wait_held_async("sockets", RUN_WAIT))
            await asyncio.wait({held, output}, return_when=asyncio.FIRST_COMPLETED)
            if not held.done():
                _, early = output.result()
                pytest.fail(f"the batch ended (exit {batch.returncode}) before its run was held: {early.decode()}")
            assert held.result(), f"no run held within {RUN_WAIT} s; results so far: {results(out)}"
            found = listening(batch.pid)
            llm.release("sockets")
            async with asyncio.timeout(RUN_WAIT):
                _, said = await output
        finally:
            if batch.returncode is None:
                batch.kill()
                await batch.wait()
        code, err = batch.returncode, said.decode()
    assert code == 0, err
    names = {socket.name for socket in found}
    assert {"gcs_server", "raylet", "ray::RuntimeEnv"} <= names, found  # comm: 15 characters at most
    assert any(name in ("ray::IDLE", "ray::_work") for name in names), found  # the workers
    # python (or python3, as the interpreter was started): the driver (this batch process) only; the dashboard and
    # the monitors are python too, and listen nowhere
    assert {socket.pid for socket in found if socket.name.startswith("python")} == {batch.pid}, found
    assert not any(name.startswith("ray::Dashboard") for name in names), found
    assert [socket for socket in found if not socket.loopback] == []
    assert {r["where"] for r in results(out)} == {"ray:127.0.0.1"}
    worker = json.loads((out / "tasks" / "held" / "omniagent" / "worker.json").read_text())
    assert worker["node"] == "127.0.0.1" and worker["node_id"]
    assert "WARNING" not in err, err


async def test_a_run_whose_worker_is_lost_twice_fails_and_leaves_nothing_in_the_workers_temp_dir(
    tmp_path: Path,
) -> None:
    """kill -9 of the worker running a task, twice (its model call in flight each time): the run fails saying the
    worker was lost twice, and neither attempt's workspace, baseline or directory is left in the worker's temp dir
    (nor is anything of the task that completed)."""
    story = scenario(1, stall="LOST-MARK")
    victim = {"id": "victim", "prompt": "LOST-MARK", "agent": "omniagent"}
    task_file = write_tasks(tmp_path / "tasks.jsonl", [*make_tasks(1, agent="omniagent"), victim])
    out, worker_tmp = tmp_path / "out", tmp_path / "worker-tmp"
    worker_tmp.mkdir()
    # The workers' temp dir (TMPDIR) is the test's; Ray's own session files stay in /tmp/ray (RAY_TMPDIR).
    async with FakeLLMServer(Scenario.from_json(story)) as llm:
        env = _env(tmp_path, llm) | {"TMPDIR": str(worker_tmp), "RAY_TMPDIR": "/tmp"}
        batch = await start_batch(str(task_file), "--ray", "-j", "2", "--out", str(out), env=env, cwd=tmp_path)
        try:
            worker = out / "tasks" / "victim" / "omniagent" / "worker.json"
            for attempt in (1, 2):
                async with asyncio.timeout(RUN_WAIT):
                    while True:
                        if _attempt(worker) == attempt and _asked(llm, "LOST-MARK") == attempt:
                            break
                        await asyncio.sleep(POLL)
                os.kill(json.loads(worker.read_text())["pid"], signal.SIGKILL)
        finally:
            code, _, err = await finish(batch)
    assert code == 1, err
    by_task = {r["task"]: r for r in results(out)}
    assert by_task["victim"]["status"] == "failed"
    assert by_task["victim"]["attempt"] == 2
    assert by_task["victim"]["error"] == "the Ray worker was lost twice: WorkerCrashedError"
    assert by_task["victim"]["where"] == "ray:127.0.0.1"
    assert by_task[task_id(0)]["status"] == "completed"
    assert [p.name for p in worker_tmp.iterdir() if p.name.startswith("omniagent-batch")] == []


def _trials(out: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """Each trial's result line without what differs from run to run (its times, where it ran)."""
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for result in results(out):
        trial = {key: value for key, value in result.items() if key not in ("timings", "where")}
        if trial["verifier"] is not None:
            trial["verifier"] = {key: value for key, value in trial["verifier"].items() if key != "seconds"}
        found[(trial["task"], trial["trial"])] = trial
    return found


def _metrics(out: Path) -> dict[str, Any]:
    """job.json without its options and times."""
    job = json.loads((out / "job.json").read_text())
    timeless = {key: value for key, value in job["agents"]["oracle"].items() if "seconds" not in key}
    return {key: job[key] for key in ("planned", "finished", "complete", "stopped")} | {"oracle": timeless}


def _logs(out: Path) -> dict[str, str | None]:
    """Every file of the trials' verifier/ and agent/ logs, with its text where it does not depend on timing (the
    reward files, the oracle's output; unittest's report without its "Ran 1 test in 0.002s" time)."""
    return {
        path.relative_to(out).as_posix(): _untimed(path.read_text()) if path.name != "test-stdout.txt" else None
        for path in sorted((out / "tasks").glob("*/*/*/*"))
        if path.parent.name in ("verifier", "agent")
    }


def _untimed(text: str) -> str:
    return re.sub(r" in \d+\.\d+s$", " in …s", text, flags=re.MULTILINE)


async def test_the_harbor_task_set_on_ray_gives_each_trial_as_locally_and_its_logs_reach_the_driver(
    tmp_path: Path,
) -> None:
    """Every Harbor task folder (those made to pass and the x- ones made to fail) by the oracle, -k 2, locally and
    on a cluster whose processes see an empty file system of their own where the driver writes OUT (as a worker on
    another machine does): each trial's status, error, error_kind, rewards and verifier outcome are the same, so is
    job.json's account, and every trial's verifier/ and agent/ logs (run on the worker) are in the driver's OUT."""

    async def accept(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    tasks = harbor_task_set(tmp_path, server.sockets[0].getsockname()[1])
    local, ray = tmp_path / "local", tmp_path / "ray"
    ray.mkdir()
    env = child_env(tmp_path, None) | {"RAY_USAGE_STATS_ENABLED": "0"}
    args = (str(tasks), "--agent", "oracle", "-k", "2")
    async with server:
        code, _, err = await run_batch(*args, "-j", "4", "--out", str(local), env=env, cwd=tmp_path)
        assert code == 1, err  # the x- tasks
        async with _cluster(env, hiding=ray) as address:
            code, _, err = await run_batch(*args, "--ray", address, "--out", str(ray), env=_joining(env), cwd=tmp_path)
        assert code == 1, err
    on_ray = _trials(ray)
    assert len(on_ray) == 2 * len(list(tasks.iterdir()))
    assert on_ray == _trials(local)
    assert {result["where"] for result in results(ray)} == {"ray:127.0.0.1"}
    assert _metrics(ray) == _metrics(local)
    logs = _logs(ray)
    assert logs == _logs(local)
    assert logs["tasks/edit-00-alpha/oracle@2/verifier/reward.txt"] == "1\n"
    assert "tasks/reward-json/oracle/verifier/reward.json" in logs
    assert "tasks/edit-00-alpha/oracle/agent/oracle.txt" in logs


# The oracle's solution is held, once it has begun, until the test makes /solution/go.
_HELD_SOLUTION = """#!/bin/bash
echo solving
: > began
while [ ! -e /solution/go ]; do sleep 0.05; done
echo solved > answer.txt
echo done
"""
_VERIFY_ANSWER = """#!/bin/bash
if [ "$(cat answer.txt)" = solved ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
"""


def _held_task(folder: Path) -> Path:
    """A Harbor task folder whose solution waits for the file `solution/go` (see `_HELD_SOLUTION`)."""
    for name, text in {
        "task.toml": 'version = "1.0"\n',
        "instruction.md": "Write solved into answer.txt.\n",
        "solution/solve.sh": _HELD_SOLUTION,
        "tests/test.sh": _VERIFY_ANSWER,
    }.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def _began(worker: Path, attempt: int) -> dict[str, Any] | None:
    """worker.json once it names `attempt` and that attempt's solution has begun in its workspace (on the worker,
    this machine here); else None."""
    if _attempt(worker) != attempt:
        return None
    where: dict[str, Any] = json.loads(worker.read_text())
    return where if Path(where["workspace"], "began").exists() else None


async def _solving(worker: Path, attempt: int) -> dict[str, Any]:
    """Until `_began(worker, attempt)` (a file another process writes: polled)."""
    async with asyncio.timeout(RUN_WAIT):
        while True:
            where = _began(worker, attempt)
            if where is not None:
                return where
            await asyncio.sleep(POLL)


async def test_a_worker_killed_while_the_oracle_solves_a_harbor_task_is_retried_once_and_scores(
    tmp_path: Path,
) -> None:
    """kill -9 of the Ray worker while the oracle's solve.sh runs: the trial starts again (attempt 2) on a fresh
    worker and workspace, is verified and scores 1; its logs are the second attempt's, and nothing of either
    attempt is left in the worker's temp dir."""
    task = _held_task(tmp_path / "held")
    out, worker_tmp = tmp_path / "out", tmp_path / "worker-tmp"
    worker_tmp.mkdir()
    env = child_env(tmp_path, None) | {"RAY_USAGE_STATS_ENABLED": "0", "TMPDIR": str(worker_tmp), "RAY_TMPDIR": "/tmp"}
    args = (str(task), "--agent", "oracle", "--ray", "-j", "1", "--out", str(out))
    batch = await start_batch(*args, env=env, cwd=tmp_path)
    worker = out / "tasks" / "held" / "oracle" / "worker.json"
    try:
        first = await _solving(worker, 1)
        os.kill(first["pid"], signal.SIGKILL)
        second = await _solving(worker, 2)
        (task / "solution" / "go").touch()
    finally:
        code, _, err = await finish(batch)
    assert code == 0, err
    (result,) = results(out)
    assert (result["status"], result["attempt"], result["rewards"]) == ("completed", 2, {"reward": 1.0})
    assert result["changed_files"] == ["answer.txt", "began"]
    assert second["pid"] != first["pid"] and second["workspace"] != first["workspace"]
    run = out / "tasks" / "held" / "oracle"
    assert (run / "agent" / "oracle.txt").read_text() == "solving\ndone\n"
    assert (run / "verifier" / "reward.txt").read_text() == "1\n"
    assert [path.name for path in worker_tmp.iterdir() if path.name.startswith("omniagent-batch")] == []
