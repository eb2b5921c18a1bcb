"""`omniagent batch` over Harbor task folders (issue 23, items 1-3): the fixture set under `harbor_tasks/` run by the
real CLI with the `oracle` agent and with our engine against the fake LLM, each verifier in real bubblewrap."""

from __future__ import annotations

import asyncio
import json
import math
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from omniagent.batch.harbor import load_folder
from omniagent.batch.tasks import SeedFile, parse_task
from omniagent.testing import FakeLLMServer, Scenario
from tests.batch import harbor_result
from tests.batch.support import HARBOR_TASKS, events, harbor_task_set, results, run_batch
from tests.runtime.adapters.engine.harness import child_env

pytestmark = pytest.mark.timeout(120)

ACP_AGENT = Path(__file__).parents[1] / "fixtures" / "acp_agents" / "fake_agent.py"
HOST_APP = Path("/app")  # the workdir of the task workdir-answer, on this machine: never made by a run
# The tasks made not to score 1, and what each must give instead.
NOT_PASSING = {"x-missing-reward", "x-unparsable-reward", "x-verifier-timeout", "x-no-solution", "x-needs-image"}


def _host_has_app() -> bool:
    return HOST_APP.exists()


def _by_task(found: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {result["task"]: result for result in found}


async def test_the_oracle_scores_the_task_set_and_each_verifier_outcome_is_exact(tmp_path: Path) -> None:
    """28 task folders, `--agent oracle`: every task made to pass scores reward 1 (mean 1.0); reward.json wins
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
    assert len(found) == 28
    passing = [name for name in found if name not in NOT_PASSING]
    assert len(passing) == 23
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
    assert "mean reward" in stdout and f"{23 / 28:.3f}" in stdout


async def test_the_task_set_made_to_pass_scores_mean_reward_1_with_the_oracle(tmp_path: Path) -> None:
    """The 23 tasks made to pass (file edits, a failing test to fix, a computation without network, a task refused
    network, ...) as one job by the oracle: exit 0, mean reward 1.0 and pass@1 1.0 in job.json, no error."""
    server = await asyncio.start_server(lambda _r, w: w.close(), "127.0.0.1", 0)
    tasks = harbor_task_set(tmp_path, server.sockets[0].getsockname()[1])
    for name in NOT_PASSING:
        shutil.rmtree(tasks / name)
    out = tmp_path / "out"
    async with server:
        code, _, err = await run_batch(
            str(tasks), "--agent", "oracle", "-j", "8", "--out", str(out), env=child_env(tmp_path, None), cwd=tmp_path
        )
    assert code == 0, err
    assert {"fix-failing-test", "offline-compute", "network-refused", "edit-00-alpha"} <= {
        r["task"] for r in results(out)
    }
    job = json.loads((out / "job.json").read_text())
    oracle = job["agents"]["oracle"]
    assert (job["planned"], job["finished"], oracle["tasks"]) == (23, 23, 23)
    assert (oracle["mean_reward"], oracle["pass_at_k"]) == (1.0, {"1": 1.0})
    assert oracle["rewards"]["counts"] == {"0": 0, "1": 23}


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
    assert found["edit-00-alpha"]["notes"] == []
    # result.json (checked against its line and in order by `results`): every phase ran, the session said who it was
    record = json.loads((out / "tasks" / "edit-00-alpha" / "omniagent" / "result.json").read_text())
    assert all(record[phase] is not None for phase in harbor_result.PHASES)
    about = found["edit-00-alpha"]["agent_info"]
    assert record["agent_info"]["name"] == "omniagent" and record["agent_info"]["reported_name"] == about["name"]
    assert record["agent_info"]["version"] == about["version"] is not None
    usage = found["edit-00-alpha"]["usage"]
    assert record["agent_result"]["cost_usd"] == usage["cost_usd"]
    assert record["agent_result"]["metadata"] == {"context_tokens": usage["context_tokens"]}


def _write(word: str) -> dict[str, Any]:
    return {"name": "write", "arguments": {"path": "note.txt", "content": f"the word is {word}\n"}}


def _exec(command: str) -> dict[str, Any]:
    return {"name": "exec", "arguments": {"command": command}}


def _solver_scenario(solved: dict[str, int]) -> dict[str, Any]:
    """The engine's script over the task set: an edit task `edit-NN-word` is solved in `solved[word]` of its
    trials (the first ones to ask, whichever they are) and refused in the rest; the failing test is fixed and the sum
    computed with `exec`, `/app/done` created with `write`; every other task gets a reply without tools. A step
    matching a call's own arguments answers the request that carries its result."""
    words = {name.split("-")[2]: count for name, count in solved.items()}
    follow_ups = ["the word is", "return a + b", "range(101)", "DONE-MARK"]
    steps: list[dict[str, Any]] = [
        {"kind": "reply", "text": "done", "match": mark, "sticky": True} for mark in follow_ups
    ]
    steps += [
        {
            "kind": "reply",
            "tool_calls": [_exec("sed -i 's/return a - b/return a + b/' calc.py")],
            "match": "so that `add` adds",
            "sticky": True,
        },
        {
            "kind": "reply",
            "tool_calls": [_exec("python3 -c 'print(sum(range(101)))' > sum.txt")],
            "match": "sum of 1..100",
            "sticky": True,
        },
        {
            "kind": "reply",
            "tool_calls": [{"name": "write", "arguments": {"path": "done", "content": "DONE-MARK"}}],
            "match": "Create /app/done.",
            "sticky": True,
        },
    ]
    for word, count in words.items():
        steps += [{"kind": "reply", "tool_calls": [_write(word)], "match": f"TODO with {word}"}] * count
        steps.append({"kind": "reply", "text": "I will not", "match": f"TODO with {word}", "sticky": True})
    return {"steps": steps, "fallback": {"kind": "reply", "text": "nothing to do"}}


async def test_the_engine_scripted_over_the_task_set_scores_exactly_the_expected_rewards_and_pass_at_k(
    tmp_path: Path,
) -> None:
    """The 23 tasks made to pass, three trials each, our engine against the fake LLM scripted to solve some edit
    tasks in every trial, some in one or two of three, some never, to fix the failing test and compute with `exec`,
    to leave env-vars and workdir-answer undone: each task's rewards and the job's mean reward and pass@1..3 are
    exactly those."""
    solved = {
        f"edit-{i:02d}-{w}": c
        for i, (w, c) in enumerate(
            zip(
                [
                    "alpha",
                    "bravo",
                    "charlie",
                    "delta",
                    "echo",
                    "foxtrot",
                    "golf",
                    "hotel",
                    "india",
                    "juliett",
                    "kilo",
                    "lima",
                ],
                [3, 3, 3, 3, 1, 1, 2, 2, 0, 0, 0, 0],
                strict=True,
            )
        )
    }
    always = [
        "fix-failing-test",
        "offline-compute",
        "exit-code-is-not-reward",
        "reward-json",
        "reward-json-wins",
        "memory-limit",
        "network-public",
        "network-refused",
        "one-cpu",
    ]
    expected = solved | dict.fromkeys(always, 3) | {"env-vars": 0, "workdir-answer": 0}
    server = await asyncio.start_server(lambda _r, w: w.close(), "127.0.0.1", 0)
    tasks = harbor_task_set(tmp_path, server.sockets[0].getsockname()[1])
    for name in NOT_PASSING:
        shutil.rmtree(tasks / name)
    out = tmp_path / "out"
    async with server, FakeLLMServer(Scenario.from_json(_solver_scenario(solved))) as llm:
        code, _, err = await run_batch(
            str(tasks),
            "--agent",
            "omniagent",
            "-k",
            "3",
            "-j",
            "4",
            "--json",
            "--out",
            str(out),
            env=child_env(tmp_path, llm),
            cwd=tmp_path,
        )
    assert code == 0, err
    found = results(out)
    assert len(found) == 23 * 3 == len({(r["task"], r["trial"]) for r in found})
    rewards = {name: sorted(r["rewards"]["reward"] for r in found if r["task"] == name) for name in expected}
    assert rewards == {name: [0.0] * (3 - c) + [1.0] * c for name, c in expected.items()}
    job = json.loads((out / "job.json").read_text())["agents"]["omniagent"]
    counts = list(expected.values())
    assert job["mean_reward"] == pytest.approx(sum(counts) / (3 * len(counts)))
    assert job["pass_at_k"] == pytest.approx(
        {str(k): sum(1 - math.comb(3 - c, k) / math.comb(3, k) for c in counts) / len(counts) for k in (1, 2, 3)}
    )
    assert job["rewards"]["counts"] == {"0": 3 * len(counts) - sum(counts), "1": sum(counts)}


async def test_the_engine_works_in_the_tasks_workdir_where_the_instruction_names_its_files(tmp_path: Path) -> None:
    """A task whose Dockerfile's WORKDIR is /app and whose instruction says "write /app/answer.txt": our engine,
    scripted to write that path and then to run a command there, is told its workspace is /app, writes the file
    into its workspace, runs in /app, and the verifier scores 1; no /app is made on this machine."""
    had_app = _host_has_app()
    write = {"name": "write", "arguments": {"path": "/app/answer.txt", "content": "the answer is 42\n"}}
    run = {"name": "exec", "arguments": {"command": 'echo "$(wc -c </app/answer.txt) bytes in $(pwd)"'}}
    scenario = {
        "steps": [
            {"kind": "reply", "text": "done", "match": "17 bytes in /app", "sticky": True},
            {"kind": "reply", "tool_calls": [run], "match": "created answer.txt", "sticky": True},
            {"kind": "reply", "tool_calls": [write], "match": "write /app/answer.txt", "sticky": True},
        ],
        "fallback": {"kind": "reply", "text": "no step for this request"},
    }
    out = tmp_path / "out"
    async with FakeLLMServer(Scenario.from_json(scenario)) as llm:
        code, _, err = await run_batch(
            str(HARBOR_TASKS / "workdir-answer"), "--agent", "omniagent", "--out", str(out),
            env=child_env(tmp_path, llm), cwd=tmp_path,
        )  # fmt: skip
        system = json.dumps(llm.requests[0].body)
    assert code == 0, err
    (result,) = results(out)
    assert (result["status"], result["text"], result["rewards"]) == ("completed", "done", {"reward": 1.0})
    assert result["changed_files"] == ["answer.txt"] and result["notes"] == []
    assert (out / "workspaces" / "workdir-answer" / "omniagent" / "answer.txt").read_text() == "the answer is 42\n"
    assert "working in the workspace /app." in system
    tools = [e["kind"]["ToolUpdated"] for e in events(out, "workdir-answer", "omniagent") if "ToolUpdated" in e["kind"]]
    done = {tool["kind"]: tool for tool in tools if tool["status"] == "Completed"}
    assert [diff["path"] for diff in done["Edit"]["diffs"]] == ["/app/answer.txt"]  # paths as the model sees them
    assert done["Execute"]["input"]["Command"]["cwd"] == "/app"
    assert _host_has_app() == had_app


async def test_an_acp_agent_works_in_the_tasks_workdir_through_the_launch_view(tmp_path: Path) -> None:
    """The same task by a process agent (the fake ACP agent, installed as `hermes` through its env override): it is
    started in /app, its session's cwd is /app, and the file it writes at /app/answer.txt lands in its workspace;
    the verifier scores 1."""
    agent = tmp_path / "bin" / "fake-acp"
    agent.parent.mkdir()
    agent.write_text(f"#!/bin/sh\nexec {sys.executable} {ACP_AGENT} --max-version 1\n")
    agent.chmod(0o755)
    out = tmp_path / "out"
    env = child_env(tmp_path, None) | {"OMNIAGENT_HERMES_BIN": str(agent)}
    code, _, err = await run_batch(
        str(HARBOR_TASKS / "workdir-answer"), "--agent", "hermes", "--allow-unsandboxed-auto", "--out", str(out),
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, err
    (result,) = results(out)
    assert result["status"] == "completed", result
    assert json.loads(result["text"]) == {"cwd": "/app", "session_cwd": "/app"}
    assert result["rewards"] == {"reward": 1.0}
    assert (out / "workspaces" / "workdir-answer" / "hermes" / "answer.txt").read_text() == "the answer is 42\n"


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


SECRET = "s3cr3t-token-value"


def _templated_task(tmp_path: Path, solution_env: str = "") -> Path:
    """A task folder whose env tables name host variables the way Harbor's do; its verifier scores 1 only when each
    variable came through as Harbor resolves it."""
    folder = tmp_path / "tasks" / "templated"
    (folder / "tests").mkdir(parents=True)
    (folder / "solution").mkdir()
    (folder / "task.toml").write_text(
        'version = "1.0"\n'
        "[verifier]\n"
        'env = { CHECK = "${OMNI_TEST_CHECK}", LITERAL = "a${OMNI_TEST_CHECK}", EMPTY = "${OMNI_TEST_EMPTY:-no}" }\n'
        "[environment]\n"
        'env = { GREETING = "${OMNI_TEST_GREETING:-hello there}", TOKEN = "${OMNI_TEST_SECRET}" }\n'
        f"[solution]\nenv = {{ {solution_env} }}\n"
    )
    (folder / "instruction.md").write_text("Write the value of $GREETING into greeting.txt.\n")
    (folder / "solution" / "solve.sh").write_text('printf "%s\\n" "$GREETING" > greeting.txt\n')
    checks = [
        '[ "$(cat greeting.txt)" = "hello there" ]',
        '[ "$CHECK" = yes ]',
        "[ \"$LITERAL\" = 'a${OMNI_TEST_CHECK}' ]",
        '[ -z "$EMPTY" ]',
        f'[ "$TOKEN" = {SECRET} ]',
    ]
    (folder / "tests" / "test.sh").write_text(
        f"if {' && '.join(checks)}; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n"
    )
    return folder.parent


async def test_env_values_that_name_host_variables_are_resolved_as_harbor_does(tmp_path: Path) -> None:
    """`${VAR}` is the host's variable, `${VAR:-default}` its default when unset (a variable set empty is used as
    it is), a value that only contains `${…}` is literal; the oracle and the verifier see them, and the secret one
    is written nowhere under --out nor printed."""
    tasks = _templated_task(tmp_path)
    out = tmp_path / "out"
    host = {"OMNI_TEST_CHECK": "yes", "OMNI_TEST_EMPTY": "", "OMNI_TEST_SECRET": SECRET}
    code, stdout, err = await run_batch(
        str(tasks), "--agent", "oracle", "--out", str(out), env=child_env(tmp_path, None) | host, cwd=tmp_path
    )
    assert code == 0, err
    (result,) = results(out)
    assert result["rewards"] == {"reward": 1.0}
    leaked = [path for path in out.rglob("*") if path.is_file() and SECRET.encode() in path.read_bytes()]
    assert leaked == [] and SECRET not in stdout + err
    # The host's value wins over the default: the solution writes another greeting, the verifier scores 0.
    env = child_env(tmp_path, None) | host | {"OMNI_TEST_GREETING": "bye"}
    bye = tmp_path / "bye"
    code, _, err = await run_batch(str(tasks), "--agent", "oracle", "--out", str(bye), env=env, cwd=tmp_path)
    assert code == 0, err
    assert [r["rewards"] for r in results(bye)] == [{"reward": 0.0}]


async def test_a_host_variable_that_is_unset_without_a_default_stops_the_batch_naming_it(tmp_path: Path) -> None:
    """[verifier] env naming an unset variable: exit 2 before anything runs, one line naming the task folder, the
    table and the variable, and no value (the secret one set beside it stays unsaid). An unset variable in
    [solution] env stops only a batch that runs the oracle (Harbor reads it only then)."""
    tasks = _templated_task(tmp_path)
    out = tmp_path / "out"
    env = child_env(tmp_path, None) | {"OMNI_TEST_SECRET": SECRET}
    code, stdout, err = await run_batch(str(tasks), "--agent", "oracle", "--out", str(out), env=env, cwd=tmp_path)
    assert code == 2
    assert err == (
        f"omniagent batch: error: {tasks / 'templated'}: task.toml's [verifier] env CHECK needs the host variable "
        "OMNI_TEST_CHECK, which is not set (set it, or give a default: ${OMNI_TEST_CHECK:-VALUE})\n"
    )
    assert stdout == "" and not out.exists()

    shutil.rmtree(tasks)
    tasks = _templated_task(tmp_path, solution_env='KEY = "${OMNI_TEST_SOLVER_KEY}"')
    env |= {"OMNI_TEST_CHECK": "yes"}
    code, _, err = await run_batch(str(tasks), "--agent", "oracle", "--out", str(out), env=env, cwd=tmp_path)
    assert code == 2
    assert err == (
        f"omniagent batch: error: {tasks / 'templated'}: task.toml's [solution] env KEY needs the host variable "
        "OMNI_TEST_SOLVER_KEY, which is not set (set it, or give a default: ${OMNI_TEST_SOLVER_KEY:-VALUE})\n"
    )
    assert not out.exists()
    talker = Scenario.from_json({"steps": [], "fallback": {"kind": "reply", "text": "nothing to do"}})
    async with FakeLLMServer(talker) as llm:  # another agent needs no solution: its batch runs
        env = child_env(tmp_path, llm) | {"OMNI_TEST_SECRET": SECRET, "OMNI_TEST_CHECK": "yes"}
        code, _, err = await run_batch(str(tasks), "--agent", "omniagent", "--out", str(out), env=env, cwd=tmp_path)
    assert code == 0, err
    assert [(r["status"], r["rewards"]) for r in results(out)] == [("completed", {"reward": 0.0})]
