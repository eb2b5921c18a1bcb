"""`omniagent batch` on this machine against our engine and the fake LLM (issue 14 acceptance, local part)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from omniagent.testing import FakeLLMServer, Scenario
from tests.batch.support import (
    AFTER_STALL,
    content,
    events,
    file_name,
    finish,
    kill_9_after,
    kinds,
    marker,
    results,
    run_batch,
    scenario,
    start_batch,
    task_id,
    tasks,
    wait_request,
    wait_results,
    write_tasks,
)
from tests.runtime.adapters.engine.harness import child_env

pytestmark = pytest.mark.timeout(300)


def _seed(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    source.mkdir()
    (source / "README.md").write_text("seed\n", encoding="utf-8")
    return source


async def test_twenty_tasks_at_j4_each_in_its_own_workspace(tmp_path: Path) -> None:
    """20 tasks, -j 4, each writing a different file into a copy of the same directory: every workspace holds
    only its own file, every diff and final text is that task's, every event line is schema-valid."""
    source = _seed(tmp_path)
    task_file = write_tasks(tmp_path / "tasks.jsonl", tasks(20, workspace={"copy": "source"}))
    out = tmp_path / "out"
    async with FakeLLMServer(Scenario.from_json(scenario(20))) as llm:
        code, stdout, err = await run_batch(
            str(task_file),
            "--agent",
            "omniagent",
            "-j",
            "4",
            "--out",
            str(out),
            env=child_env(tmp_path, llm),
            cwd=tmp_path,
        )
    assert code == 0, err
    found = results(out)
    assert sorted(r["task"] for r in found) == [task_id(i) for i in range(20)]
    for i in range(20):
        result = next(r for r in found if r["task"] == task_id(i))
        assert result["status"] == "completed"
        assert result["stop"] == {"Completed": {"source": "Protocol"}}
        assert result["changed_files"] == [file_name(i)]
        run = out / "tasks" / task_id(i) / "omniagent"
        assert (run / "final.txt").read_text() == f"wrote {file_name(i)}"
        diff = (run / "diff.patch").read_text()
        assert f"+++ b/{file_name(i)}" in diff and f"+{content(i).strip()}" in diff
        assert diff.count("diff --git") == 1
        workspace = out / "workspaces" / task_id(i) / "omniagent"
        assert sorted(p.name for p in workspace.iterdir()) == ["README.md", file_name(i)]
        assert "ToolUpdated" in kinds(events(out, task_id(i), "omniagent"))
    assert (source / "README.md").read_text() == "seed\n" and len(list(source.iterdir())) == 1
    assert "omniagent" in stdout and "20" in stdout  # the summary table: 20 runs of omniagent


async def test_kill_9_midway_then_a_rerun_completes_only_the_rest(tmp_path: Path) -> None:
    """kill -9 of the batch process midway; the same command again skips what results.jsonl holds and runs only
    the rest (the fake LLM sees no request of a finished task the second time)."""
    task_file = write_tasks(tmp_path / "tasks.jsonl", tasks(20, agent="omniagent"))
    out = tmp_path / "out"
    args = (str(task_file), "-j", "2", "--out", str(out))
    async with FakeLLMServer(Scenario.from_json(scenario(20, delay=0.3))) as llm:
        env = child_env(tmp_path, llm)
        await kill_9_after(out, 3, *args, env=env, cwd=tmp_path)
        done_first = {r["task"] for r in results(out)}
        assert 3 <= len(done_first) < 20
        seen_before = len(llm.requests)
        code, _, err = await run_batch(*args, env=env, cwd=tmp_path)
        second = [json.dumps(request.body) for request in llm.requests[seen_before:]]
    assert code == 0, err
    found = results(out)
    assert sorted(r["task"] for r in found) == [task_id(i) for i in range(20)]  # each exactly once
    assert all(r["status"] == "completed" for r in found)
    for i in range(20):
        asked = any(marker(i) in body for body in second)
        assert asked == (task_id(i) not in done_first), task_id(i)
        assert (out / "workspaces" / task_id(i) / "omniagent" / file_name(i)).read_text() == content(i)


async def test_a_task_over_its_time_limit_is_cancelled_and_reported_timed_out(tmp_path: Path) -> None:
    """The model never answers the slow task: after its 2 s limit the turn is cancelled, the result says
    timed_out (stop Cancelled), the other task completes, and the exit code is 1."""
    slow = {"id": "slow", "prompt": "SLOW-MARK", "agent": "omniagent", "time_limit": 2}
    items = [*tasks(1, agent="omniagent"), slow]
    task_file = write_tasks(tmp_path / "tasks.jsonl", items)
    out = tmp_path / "out"
    async with FakeLLMServer(Scenario.from_json(scenario(1, stall="SLOW-MARK"))) as llm:
        code, _, err = await run_batch(str(task_file), "--out", str(out), env=child_env(tmp_path, llm), cwd=tmp_path)
    assert code == 1, err
    by_task = {r["task"]: r for r in results(out)}
    assert by_task["t00"]["status"] == "completed"
    slow = by_task["slow"]
    assert slow["status"] == "timed_out"
    assert slow["stop"] == "Cancelled"
    assert 2.0 <= slow["timings"]["turn_seconds"] < 10.0
    assert kinds(events(out, "slow", "omniagent"))[-1] == "TurnEnded"
    assert "timed out" in err or "timed_out" in err


async def test_ctrl_c_cancels_running_turns_keeps_what_is_done_and_a_rerun_resumes(tmp_path: Path) -> None:
    """SIGINT midway: running turns end Cancelled, exit 130, finished runs stay in results.jsonl and interrupted
    ones do not; the same command again completes the batch."""
    items = [*tasks(2, agent="omniagent"), {"id": "slow", "prompt": "SLOW-MARK", "agent": "omniagent"}]
    task_file = write_tasks(tmp_path / "tasks.jsonl", items)
    out = tmp_path / "out"
    async with FakeLLMServer(Scenario.from_json(scenario(2, stall_once="SLOW-MARK"))) as llm:
        env = child_env(tmp_path, llm)
        process = await start_batch(str(task_file), "-j", "3", "--out", str(out), env=env, cwd=tmp_path)
        await wait_results(out, 2)
        await wait_request(llm, "SLOW-MARK")  # the slow task's turn is running
        process.send_signal(signal.SIGINT)
        code, _, err = await finish(process)
        assert code == 130, err
        assert {r["task"] for r in results(out)} == {"t00", "t01"}
        assert kinds(events(out, "slow", "omniagent"))[-1] == "TurnEnded"
        assert events(out, "slow", "omniagent")[-1]["kind"]["TurnEnded"]["stop"] == "Cancelled"
        assert "resume" in err
        assert not (out / "tasks" / "slow" / "omniagent" / "result.json").exists()
        report = (out / "report.html").read_text()  # written when stopped too, the interrupted trial not run
        assert "id=state>stopped<" in report and report.count("<span class=score>not run</span>") == 1
        code, _, err = await run_batch(str(task_file), "--out", str(out), env=env, cwd=tmp_path)
    assert code == 0, err
    by_task = {r["task"]: r for r in results(out)}
    assert sorted(by_task) == ["slow", "t00", "t01"]
    assert by_task["slow"]["text"] == AFTER_STALL
    assert "id=state>complete<" in (out / "report.html").read_text()
