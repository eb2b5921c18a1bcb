"""Helpers for the batch tests: task files whose tasks each write their own file, the fake LLM scenario that
answers them (the same JSON in process and as a file for the namespace), and `omniagent batch` as a subprocess."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

from omniagent.batch.results import trial_name
from omniagent.testing import FakeLLMServer
from tests.batch import atif, harbor_result
from tests.sidecar_schema import validate

HARBOR_TASKS = Path(__file__).with_name("harbor_tasks")  # the Harbor task folders of the tests
RUN_WAIT = 120.0  # seconds: the bound on one `omniagent batch` run
POLL = 0.05
AFTER_STALL = "answered at last"  # seconds between looks at a file another process writes


def marker(index: int) -> str:
    return f"TASK-{index:02d}-MARK"


def file_name(index: int) -> str:
    return f"file-{index:02d}.txt"


def content(index: int) -> str:
    return f"CONTENT-{index:02d}\n"


def task_id(index: int) -> str:
    return f"t{index:02d}"


def tasks(count: int, **extra: Any) -> list[dict[str, Any]]:
    """`count` tasks; task i asks (through its marker) for a write of file-i.txt."""
    return [
        {"id": task_id(i), "prompt": f"{marker(i)}: write {file_name(i)}", "permissions": {"allow": ["write"]}} | extra
        for i in range(count)
    ]


def write_tasks(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def scenario(
    count: int,
    *,
    delay: float = 0.0,
    answer_delay: float = 0.0,
    stall: str | None = None,
    stall_once: str | None = None,
) -> dict[str, Any]:
    """Every step sticky, so any request gets the same answer whatever ran before (a resumed batch included):
    a request carrying task i's written content (its second call) gets "wrote file-i.txt"; one carrying only task
    i's marker (its first call) gets the write. `stall`: a request with that text gets headers and then nothing;
    `stall_once`: the first such request does, the later ones get AFTER_STALL. `delay` holds each write back,
    `answer_delay` each answer after it."""
    steps: list[dict[str, Any]] = []
    if stall is not None:
        steps.append({"kind": "reply", "stall_after_events": 0, "match": stall, "sticky": True})
    if stall_once is not None:
        steps.append({"kind": "reply", "stall_after_events": 0, "match": stall_once})
        steps.append({"kind": "reply", "text": AFTER_STALL, "match": stall_once, "sticky": True})
    for i in range(count):
        answer = {"kind": "reply", "text": f"wrote {file_name(i)}", "match": content(i).strip(), "sticky": True}
        steps.append(answer | {"delay": answer_delay})
    for i in range(count):
        call = {"name": "write", "arguments": {"path": file_name(i), "content": content(i)}}
        steps.append({"kind": "reply", "tool_calls": [call], "match": marker(i), "sticky": True, "delay": delay})
    return {"steps": steps, "fallback": {"kind": "reply", "text": "no step for this request"}}


async def start_batch(*args: str, env: dict[str, str], cwd: Path, prefix: list[str] | None = None) -> Any:
    return await asyncio.create_subprocess_exec(
        *(prefix or []),
        sys.executable,
        "-m",
        "omniagent",
        "batch",
        *args,
        env=env,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def finish(process: Any, within: float = RUN_WAIT) -> tuple[int, str, str]:
    try:
        async with asyncio.timeout(within):
            out, err = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return process.returncode, (out or b"").decode(), (err or b"").decode()


async def run_batch(
    *args: str, env: dict[str, str], cwd: Path, prefix: list[str] | None = None
) -> tuple[int, str, str]:
    return await finish(await start_batch(*args, env=env, cwd=cwd, prefix=prefix))


def results(out: Path) -> list[dict[str, Any]]:
    """The lines of results.jsonl (whole lines only: a killed writer may leave a torn last one); each listed run's
    trajectory.json, written before its line, is checked against ATIF-v1.7, and its result.json (the last line of
    a trial: a rerun rewrites it) against the line and Harbor's shape (`harbor_result.py`)."""
    found = _result_lines(out)
    for result in found:
        trajectory(out, result["task"], result["agent"], result.get("trial", 1))
    last = {(r["task"], r["agent"], r.get("trial", 1)): r for r in found}
    for result in last.values():
        harbor_result.trial(out, result)
    return found


def _result_lines(out: Path) -> list[dict[str, Any]]:
    try:
        text = (out / "results.jsonl").read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.splitlines(keepends=True) if line.endswith("\n")]


async def wait_results(out: Path, count: int, within: float = RUN_WAIT) -> None:
    """Until results.jsonl holds at least `count` whole lines (a file another process writes: polled)."""
    async with asyncio.timeout(within):
        while True:
            if len(_result_lines(out)) >= count:
                return
            await asyncio.sleep(POLL)


async def kill_9_after(out: Path, count: int, *args: str, env: dict[str, str], cwd: Path) -> None:
    """Start `omniagent batch *args` and kill it with SIGKILL once `out` holds `count` results (a kill -9 midway)."""
    batch = await start_batch(*args, env=env, cwd=cwd)
    try:
        await wait_results(out, count)
    finally:
        batch.send_signal(signal.SIGKILL)
        await finish(batch)


async def wait_request(llm: FakeLLMServer, text: str, within: float = RUN_WAIT) -> None:
    """Until the fake LLM has received a request whose body contains `text` (its log is polled)."""
    async with asyncio.timeout(within):
        while True:
            if any(text in json.dumps(request.body) for request in llm.requests):
                return
            await asyncio.sleep(POLL)


def events(out: Path, task: str, agent: str) -> list[dict[str, Any]]:
    """A run's events.jsonl, every line checked against the sidecar Event schema."""
    lines = (out / "tasks" / task / agent / "events.jsonl").read_text(encoding="utf-8").splitlines()
    found = [json.loads(line) for line in lines]
    for event in found:
        validate("Event", event)
    return found


def trajectory(out: Path, task: str, agent: str, trial: int = 1) -> dict[str, Any]:
    """A trial's trajectory.json, checked against ATIF-v1.7 (`atif.py`)."""
    return atif.load(out / "tasks" / task / trial_name(agent, trial) / "trajectory.json")


def trajectories(out: Path) -> list[dict[str, Any]]:
    """Every trajectory.json under `out`, each checked against ATIF-v1.7."""
    return [atif.load(path) for path in sorted((out / "tasks").glob("*/*/trajectory.json"))]


def kinds(found: list[dict[str, Any]]) -> list[str]:
    return [kind if isinstance(kind, str) else next(iter(kind)) for kind in (event["kind"] for event in found)]


def harbor_task_set(tmp_path: Path, port: int) -> Path:
    """A copy of the Harbor task folders, their network probes pointed at `port` (a listener on the host's
    loopback: `network-public` reaches it, `network-refused` must not)."""
    tasks = tmp_path / "tasks"
    shutil.copytree(HARBOR_TASKS, tasks)
    for name in ("network-refused", "network-public"):
        config = tasks / name / "task.toml"
        config.write_text(config.read_text().replace('PROBE_PORT = "9"', f'PROBE_PORT = "{port}"'))
    return tasks
