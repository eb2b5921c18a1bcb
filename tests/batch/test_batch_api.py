"""`omniagent.batch.run()` in process, against our engine and the fake LLM: workspaces from git, permission
policies, the turn limit, and the task file's schema."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from omniagent.batch import BatchError, Status, Task, TaskResult, load_tasks, parse_task, run
from omniagent.batch.tasks import SCHEMA_FILE, task_schema
from omniagent.testing import FakeLLMServer, Scenario
from tests.batch.support import content, file_name, marker, scenario, tasks, trajectories, write_tasks
from tests.runtime.adapters.engine.harness import child_env, use_engine

ROOT = Path(__file__).resolve().parents[2]


async def _run_all(task_file: Path, out: Path, **options: Any) -> dict[str, TaskResult]:
    """Every result by task; every run written has its trajectory.json, valid ATIF-v1.7."""
    found = {result.task: result async for result in run(load_tasks(task_file), out=out, **options)}
    written = {(t["extra"]["task"], t["extra"]["agent"], 1) for t in trajectories(out)}
    assert written == {r.key for r in found.values() if r.status is not Status.INTERRUPTED}
    return found


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    """A repository whose first commit has notes.txt "v1" and whose second changes it to "v2"."""
    path = tmp_path / "repo"
    path.mkdir()
    _git(path, "init", "-q")
    for version in ("v1", "v2"):
        (path / "notes.txt").write_text(f"{version}\n")
        _git(path, "add", ".")
        _git(path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", version)
    return path, _git(path, "rev-parse", "HEAD~1")


async def test_run_checks_out_each_task_at_its_commit_and_yields_its_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repo: tuple[Path, str]
) -> None:
    """A git workspace is a checkout at the task's commit (the first, not HEAD); the diff is against that commit;
    the repository itself is untouched, with no worktree registered in it while the workspaces are kept (issue 23);
    a commit the repository lacks fails that run, saying so; results come back as an async iterator and are
    written."""
    path, first = repo
    items = tasks(2, agent="omniagent", workspace={"git": "repo", "commit": first})
    items.append({"id": "nowhere", "prompt": "x", "agent": "omniagent", "workspace": {"git": "repo", "commit": "v9"}})
    task_file = write_tasks(tmp_path / "tasks.jsonl", items)
    async with FakeLLMServer(Scenario.from_json(scenario(2))) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        found = await _run_all(task_file, tmp_path / "out", jobs=2)
    assert sorted(found) == ["nowhere", "t00", "t01"]
    nowhere = found.pop("nowhere")
    assert nowhere.status is Status.FAILED
    assert nowhere.error == f"could not start: 'v9' is not a commit of the repository {path}"
    assert _git(path, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert not (path / ".git" / "worktrees").exists()
    for i, result in enumerate(found[key] for key in sorted(found)):
        assert result.status is Status.COMPLETED
        assert result.changed_files == [file_name(i)]
        workspace = tmp_path / "out" / "workspaces" / result.task / "omniagent"
        assert (workspace / "notes.txt").read_text() == "v1\n"
        assert _git(workspace, "rev-parse", "HEAD") == first
        assert f"+{content(i).strip()}" in result.diff and "notes.txt" not in result.diff
    assert _git(path, "status", "--porcelain") == ""
    lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["task"] for line in lines) == ["nowhere", "t00", "t01"]


async def test_deny_allow_and_auto_permissions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """deny: the write is refused (the turn goes on, nothing changes); auto on our engine (its exec sandbox on, the
    default): the write happens; auto with the sandbox turned off and without the flag: the run fails saying why;
    with allow_unsandboxed it runs."""
    unsandboxed = {"agent": "omniagent", "permissions": "auto", "config": {"sandbox": "unsandboxed"}}
    items = [
        {"id": "deny", "prompt": marker(0), "agent": "omniagent", "permissions": "deny"},
        {"id": "sandboxed", "prompt": marker(1), "agent": "omniagent", "permissions": "auto"},
        {"id": "auto", "prompt": marker(2), **unsandboxed},
    ]
    task_file = write_tasks(tmp_path / "tasks.jsonl", items)
    async with FakeLLMServer(Scenario.from_json(scenario(3))) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        refused = await _run_all(task_file, tmp_path / "out")
        allowed = await _run_all(task_file, tmp_path / "out-flag", allow_unsandboxed=True)
    assert refused["deny"].status is Status.COMPLETED and refused["deny"].changed_files == []
    assert refused["sandboxed"].status is Status.COMPLETED
    assert refused["sandboxed"].changed_files == [file_name(1)]
    assert refused["auto"].status is Status.FAILED
    assert "--allow-unsandboxed-auto" in (refused["auto"].error or "")
    assert refused["auto"].changed_files == []
    assert allowed["auto"].status is Status.COMPLETED and allowed["auto"].changed_files == [file_name(2)]


async def test_a_task_over_its_turn_limit_is_cancelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """max_turns 1 and a model that asks for two tool calls: the turn is cancelled at the second, `turn_limit`."""
    calls = [{"name": "write", "arguments": {"path": f"f{n}.txt", "content": "x"}} for n in range(2)]
    story = {
        "steps": [{"kind": "reply", "tool_calls": calls, "match": "LIMIT-MARK", "sticky": True}],
        "fallback": {"kind": "reply", "text": "done"},
    }
    item = {"id": "limited", "prompt": "LIMIT-MARK", "agent": "omniagent", "max_turns": 1, "permissions": "deny"}
    task_file = write_tasks(tmp_path / "tasks.jsonl", [item])
    async with FakeLLMServer(Scenario.from_json(story)) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        found = await _run_all(task_file, tmp_path / "out")
    assert found["limited"].status is Status.TURN_LIMIT
    assert found["limited"].stop == "Cancelled"


async def test_the_agents_own_turn_limit_is_turn_limit_and_a_cut_reply_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33 (docs/batch.md): a turn the agent ends at its own limit of model requests (the engine's
    OMNIAGENT_MAX_ROUNDS) is `turn_limit`, its stop saying the limit and `error` saying why; a reply cut at the
    model's output limit is the agent's answer: `completed`."""
    story = {
        "steps": [
            {"kind": "reply", "tool_calls": [{"name": "read", "arguments": {"path": "x"}}], "match": "ROUNDS-MARK"},
            {"kind": "reply", "text": "cut", "stop": "length", "match": "LENGTH-MARK"},
        ],
        "fallback": {"kind": "reply", "text": "done"},
    }
    items = [
        {"id": "rounds", "prompt": "ROUNDS-MARK", "agent": "omniagent"},
        {"id": "length", "prompt": "LENGTH-MARK", "agent": "omniagent"},
    ]
    task_file = write_tasks(tmp_path / "tasks.jsonl", items)
    async with FakeLLMServer(Scenario.from_json(story)) as llm:
        use_engine(monkeypatch, tmp_path, llm)
        monkeypatch.setenv("OMNIAGENT_MAX_ROUNDS", "1")
        found = await _run_all(task_file, tmp_path / "out")
    rounds, length = found["rounds"], found["length"]
    assert rounds.status is Status.TURN_LIMIT and rounds.error_kind is None
    assert rounds.stop == {"Completed": {"source": "Protocol", "limit": "MaxTurnRequests"}}
    assert rounds.error == "the turn stopped at its limit of model requests"
    assert length.status is Status.COMPLETED and length.error is None
    assert length.stop == {"Completed": {"source": "Protocol", "limit": "MaxTokens"}}


def test_the_schema_file_is_current_and_the_documented_examples_are_valid_tasks() -> None:
    """task.schema.json equals the model's schema (regenerate: python -m omniagent.batch.tasks), and every task
    line in docs/batch.md's examples passes both the schema and the model."""
    assert json.loads(SCHEMA_FILE.read_text()) == task_schema()
    schema = task_schema()
    documented = [line for line in (ROOT / "docs" / "batch.md").read_text().splitlines() if line.startswith('{"id"')]
    assert len(documented) >= 4
    for line in documented:
        jsonschema.validate(json.loads(line), schema)
        parse_task(line)


def test_ray_without_ray_installed_says_how_to_install_it(tmp_path: Path) -> None:
    """Where `import ray` fails, `--ray` exits 3 with the install command (here a `ray` package that cannot be
    imported shadows the installed one, as on a machine without the extra)."""
    shadow = tmp_path / "shadow" / "ray"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    task_file = write_tasks(tmp_path / "tasks.jsonl", tasks(1, agent="omniagent"))
    env = child_env(tmp_path, None) | {"PYTHONPATH": str(tmp_path / "shadow")}
    done = subprocess.run(
        [sys.executable, "-m", "omniagent", "batch", str(task_file), "--ray", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 3, done.stderr
    assert "pip install 'omniagent[ray]'" in done.stderr
    assert not (tmp_path / "out").exists()


async def test_run_refuses_a_task_or_agent_id_that_is_a_path_before_writing_anything(tmp_path: Path) -> None:
    """Tasks built in Python skip the task file's validation: `run()` checks every task and agent id itself (ids
    name directories under `out`) and raises BatchError naming the bad one before anything is written."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep\n")
    out = tmp_path / "deep" / "out"
    bad = [
        ([Task(id="t1", prompt="hi", agent="../../../../victim")], (), "agent id '../../../../victim'"),
        ([Task(id="t1", prompt="hi")], ("omniagent", "/abs"), "agent id '/abs'"),
        ([Task(id="../../victim", prompt="hi", agent="omniagent")], (), "task id '../../victim'"),
    ]
    for tasks_, agents, named in bad:
        with pytest.raises(BatchError, match=f"^{re.escape(named)} is not valid: an id is 1 to 128 letters"):
            async for _ in run(tasks_, agents=agents, out=out):
                pass
        assert not (tmp_path / "deep").exists()
        assert [p.name for p in victim.iterdir()] == ["keep.txt"]
