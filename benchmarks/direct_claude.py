"""The direct side of benchmarks/real_agents.py for Claude Code: a minimal stream-json client of `claude -p`, the
least a client of that wire can do (write the `initialize` control request and `user` lines, read lines until the
turn's `result`, note the first text delta). No models, no validation, no runtime."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any, Protocol

from benchmarks.agent_process import agent_process
from tests.e2e.agents.harness import World

STEP = 60.0  # seconds: bound on every wait


class Timings(Protocol):
    first: list[float]
    end: list[float]
    turn: list[float]
    cpu: list[float]


class DirectClaude:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.first_text: float | None = None

    def write(self, value: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(value).encode() + b"\n")

    async def until(self, done: str) -> None:
        """Read frames until one of type `done` (a `control_response` or a `result`)."""
        assert self.proc.stdout is not None
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                raise RuntimeError("claude closed stdout")
            frame = json.loads(line)
            if frame.get("type") == done:
                return
            event = frame.get("event") if frame.get("type") == "stream_event" else None
            delta = event.get("delta") if isinstance(event, dict) else None
            if self.first_text is None and isinstance(delta, dict) and delta.get("text"):
                self.first_text = time.perf_counter()

    async def turn(self, text: str) -> None:
        message = {"role": "user", "content": text}
        self.write(
            {
                "type": "user",
                "uuid": str(uuid.uuid4()),
                "session_id": "",
                "parent_tool_use_id": None,
                "message": message,
            }
        )
        await self.until("result")


async def run_direct_claude(world: World, timings: Timings, turns: int) -> None:
    start = time.perf_counter()
    async with agent_process(world) as proc:
        async with asyncio.timeout(STEP):
            client = DirectClaude(proc)
            client.write({"type": "control_request", "request_id": "init", "request": {"subtype": "initialize"}})
            await client.until("control_response")
            await client.turn("say hello")
            ended = time.perf_counter()
            assert client.first_text is not None, "no agent text"
            timings.first.append(client.first_text - start)
            timings.end.append(ended - start)
            for _ in range(turns):
                again, cpu = time.perf_counter(), time.process_time()
                await client.turn("say hello")
                timings.turn.append(time.perf_counter() - again)
                timings.cpu.append(time.process_time() - cpu)
