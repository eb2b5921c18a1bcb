"""Batch figures: tasks per minute at -j 1, 2 and 4 against the fake LLM, and the overhead per task of
`omniagent.batch.run` over a bare `Runtime` loop doing the same turns.

Run: `python benchmarks/batch.py [--tasks N] [--repeat R]` (prints one line per figure, each the median of R runs).

Every task asks our engine (in process, as `omniagent batch` runs it) to write one file through its `write` tool
and then answers; the fake LLM answers at once, so the figures are omniagent's own cost: workspace preparation (an
empty directory plus its git baseline), the session, the turn, the diff and the output files. The bare loop opens
a session in an existing directory, sends the prompt, allows the write, reads to `TurnEnded` and closes: what a
user's hand-written loop around `Runtime` does, without isolation or outputs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from omniagent.batch import Task, parse_task, run
from omniagent.protocols.sidecar.commands import PermissionAnswer
from omniagent.protocols.sidecar.events import PermissionAsk, PermissionChoice, RequestOpened, TurnEnded
from omniagent.runtime.runtime import Runtime
from omniagent.testing import FakeLLMServer, Scenario

KEY = "sk-ant-fake-key-for-benchmarks-0123456789"


def _scenario(count: int) -> Scenario:
    steps: list[dict[str, Any]] = []
    for i in range(count):
        steps.append({"kind": "reply", "text": f"wrote f{i}", "match": f"CONTENT-{i:03d}", "sticky": True})
    for i in range(count):
        call = {"name": "write", "arguments": {"path": f"f{i}.txt", "content": f"CONTENT-{i:03d}\n"}}
        steps.append({"kind": "reply", "tool_calls": [call], "match": f"MARK-{i:03d}", "sticky": True})
    return Scenario.from_json({"steps": steps, "fallback": {"kind": "reply", "text": "?"}})


def _tasks(count: int) -> list[Task]:
    return [
        parse_task(
            json.dumps(
                {
                    "id": f"t{i:03d}",
                    "prompt": f"MARK-{i:03d}",
                    "agent": "omniagent",
                    "permissions": {"allow": ["write"]},
                }
            )
        )
        for i in range(count)
    ]


async def _batch(tasks: list[Task], out: Path, jobs: int) -> float:
    start = time.perf_counter()
    statuses = [result.status.value async for result in run(tasks, out=out, jobs=jobs)]
    elapsed = time.perf_counter() - start
    assert statuses == ["completed"] * len(tasks), statuses
    return elapsed


async def _bare(tasks: list[Task], root: Path) -> float:
    start = time.perf_counter()
    async with Runtime() as runtime:
        for task in tasks:
            directory = root / task.id
            directory.mkdir(parents=True)
            session = await runtime.open("omniagent", directory)
            await session.prompt(task.prompt)
            async for event in session.events:
                kind = event.kind
                if isinstance(kind, RequestOpened) and isinstance(kind.request, PermissionAsk):
                    answer = PermissionAnswer(choice=PermissionChoice.ALLOW_ONCE)
                    await session.answer(kind.request.request.id, answer)
                elif isinstance(kind, TurnEnded):
                    break
            await session.close()
    return time.perf_counter() - start


async def _main(count: int, repeat: int) -> None:
    tasks = _tasks(count)
    with tempfile.TemporaryDirectory() as scratch, FakeLLMServer(_scenario(count)) as llm:
        root = Path(scratch)
        os.environ |= {
            "OMNIAGENT_DATA_DIR": str(root / "data"),
            "ANTHROPIC_API_KEY": KEY,
            "ANTHROPIC_BASE_URL": llm.url,
        }
        await _batch(tasks[:2], root / "warm-up", 1)  # imports, the engine's store
        per_task: dict[int, float] = {}
        for jobs in (1, 2, 4):
            elapsed = statistics.median([await _batch(tasks, root / f"j{jobs}-{n}", jobs) for n in range(repeat)])
            per_task[jobs] = elapsed / count
            print(f"batch -j {jobs}: {count} tasks in {elapsed:.2f} s = {count * 60 / elapsed:.0f} tasks/min")
        bare = [await _bare(tasks, root / f"bare{n}") / count for n in range(repeat)]
        bare_task = statistics.median(bare)
        print(f"bare Runtime loop: {bare_task * 1000:.0f} ms per task ({60 / bare_task:.0f} tasks/min)")
        overhead = per_task[1] - bare_task
        print(f"batch overhead at -j 1: {overhead * 1000:.0f} ms per task (workspace, baseline, diff, files)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(_main(args.tasks, args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
