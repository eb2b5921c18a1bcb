"""Per real agent: spawn → first text and spawn → turn end, through omniagent's Runtime and through a minimal direct
client of the agent's own wire (ACP; pi's JSONL RPC for `pi`; Claude Code's stream-json for `claude`, in
direct_claude.py; the app-server's JSON-RPC for `codex`), so the overhead omniagent adds is visible (issue targets:
under 10 ms per turn over ACP, 5 ms for the native adapters).

    python benchmarks/real_agents.py [--runs N] [--turns N] [--agents qwen,gemini,…]

Both paths run the same agent the same way: the pinned npm install (scripts/install_agents.py), a fresh HOME, the
loopback-only network namespace with the fake LLM answering "hello from fake llm" (tests/e2e/agents/harness.py).
Each run starts a fresh world; paths alternate so disk caches warm both alike. Per path and agent it prints medians:
- `first`: spawn → the first non-empty agent text (direct: `agent_message_chunk`; omniagent: `TextDelta`);
- `end`: spawn → the turn end (direct: the `session/prompt` response; omniagent: `TurnEnded`);
- `turn`: each further prompt on the same session → its turn end (`--turns` of them per run; no start-up in it:
  the per-turn cost);
- `cpu`: the CPU time this process (the client: omniagent, or the direct client) spent on such a warm turn. The
  agent and the fake LLM are other processes, so this is the client's own cost, and unlike `turn` it does not move
  with the machine's load.
The one-off import of the ACP adapter (first use in a process) is timed apart, before the runs; discovery (once per
Runtime, cached) runs before omniagent's clock starts.
The direct clients are ~40 lines each of raw JSON lines over the pipes below: no models, no validation, no runtime.
`opencode` (its HTTP face) runs both paths inside the namespace, where its server is reachable: see
`opencode_direct.py`, which holds its direct HTTP client and reports the same four figures.
pi's direct client sends `prompt` and reads to `agent_end`, the event omniagent ends pi's turns on. The codex one
does what the adapter must per turn (`turn/start` with `summary:"auto"`, wait for `turn/completed`), not its extra
handshake calls (`account/read`, `model/list`, `skills/list`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests package holds the harness

from benchmarks.agent_process import agent_process
from benchmarks.direct_claude import run_direct_claude
from tests.e2e.agents.harness import World, agent_world, plain_scenario
from tests.e2e.agents.peers import PEERS

from omniagent.protocols.sidecar.events import TextDelta, TurnEnded
from omniagent.runtime.catalog import ConnectionKind, profile
from omniagent.runtime.runtime import Runtime

STEP = 60.0  # seconds: bound on every wait
OPENCODE_RUN = Path(__file__).resolve().parent / "opencode_direct.py"


@dataclass
class Timings:
    first: list[float] = field(default_factory=list)
    end: list[float] = field(default_factory=list)
    turn: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # our process's CPU time per warm turn (load-independent)


class DirectClient:
    """The least an ACP v1 client can do: write requests, read lines, match ids, collect text."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.ids = 0
        self.first_text: float | None = None

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        self.ids += 1
        wanted = self.ids
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params}).encode())
        self.proc.stdin.write(b"\n")
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"agent closed stdout during {method}")
            message = json.loads(line)
            if message.get("id") == wanted and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result")
            if message.get("method") == "session/update" and self.first_text is None:
                content = message["params"]["update"].get("content")
                if isinstance(content, dict) and content.get("text"):
                    self.first_text = time.perf_counter()
            elif "method" in message and "id" in message:  # an agent request we do not serve
                error = {"code": -32601, "message": "not supported"}
                reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
                self.proc.stdin.write(json.dumps(reply).encode() + b"\n")


async def run_direct(world: World, timings: Timings, turns: int) -> None:
    start = time.perf_counter()
    async with agent_process(world) as proc:
        async with asyncio.timeout(STEP):
            client = DirectClient(proc)
            capabilities = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
            await client.call("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
            session = await client.call("session/new", {"cwd": str(world.work), "mcpServers": []})
            prompt = {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "say hello"}]}
            await client.call("session/prompt", prompt)
            ended = time.perf_counter()
            assert client.first_text is not None, "no agent text"
            timings.first.append(client.first_text - start)
            timings.end.append(ended - start)
            for _ in range(turns):
                again, cpu = time.perf_counter(), time.process_time()
                await client.call("session/prompt", prompt)
                timings.turn.append(time.perf_counter() - again)
                timings.cpu.append(time.process_time() - cpu)


class PiDirectClient:
    """The least a pi RPC client can do: write commands, read lines, note the first text delta, stop at a frame."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.first_text: float | None = None

    async def prompt(self, text: str) -> None:
        """Send one prompt and read until its run's `agent_end`."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"id": "p", "type": "prompt", "message": text}).encode() + b"\n")
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                raise RuntimeError("pi closed stdout during the turn")
            frame = json.loads(line)
            if frame.get("type") == "response" and frame.get("success") is False:
                raise RuntimeError(f"pi refused the prompt: {frame.get('error')}")
            if frame.get("type") == "message_update" and self.first_text is None:
                event = frame.get("assistantMessageEvent") or {}
                if event.get("type") == "text_delta" and event.get("delta"):
                    self.first_text = time.perf_counter()
            if frame.get("type") == "agent_end":
                return


async def run_direct_pi(world: World, timings: Timings, turns: int) -> None:
    start = time.perf_counter()
    async with agent_process(world) as proc:
        async with asyncio.timeout(STEP):
            client = PiDirectClient(proc)
            await client.prompt("say hello")
            ended = time.perf_counter()
            assert client.first_text is not None, "no agent text"
            timings.first.append(client.first_text - start)
            timings.end.append(ended - start)
            for _ in range(turns):
                again, cpu = time.perf_counter(), time.process_time()
                await client.prompt("say hello")
                timings.turn.append(time.perf_counter() - again)
                timings.cpu.append(time.process_time() - cpu)


class DirectCodexClient:
    """The least a codex app-server client can do: JSON-RPC without `jsonrpc`, match ids, watch one turn's frames."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.ids = 0
        self.first_text: float | None = None

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")

    async def call(self, method: str, params: dict[str, Any], *, until: str | None = None) -> Any:
        """Send a request; return its result, or with `until`, the params of the first such notification."""
        self.ids += 1
        wanted = self.ids
        self.send({"id": wanted, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"agent closed stdout during {method}")
            message = json.loads(line)
            name = message.get("method")
            if message.get("id") == wanted and name is None:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                if until is None:
                    return message.get("result")
            elif name == "item/agentMessage/delta" and self.first_text is None and message["params"].get("delta"):
                self.first_text = time.perf_counter()
            elif name is not None and name == until:
                return message.get("params")
            elif name is not None and "id" in message:  # a server request we do not serve
                self.send({"id": message["id"], "error": {"code": -32601, "message": "not supported"}})


async def run_direct_codex(world: World, timings: Timings, turns: int) -> None:
    start = time.perf_counter()
    async with agent_process(world) as proc:
        async with asyncio.timeout(STEP):
            client = DirectCodexClient(proc)
            await client.call("initialize", {"clientInfo": {"name": "bench", "version": "0"}})
            client.send({"method": "initialized"})
            thread = (await client.call("thread/start", {"cwd": str(world.work)}))["thread"]["id"]
            for number in range(1 + turns):
                sent, cpu = time.perf_counter(), time.process_time()
                params = {
                    "threadId": thread,
                    "clientUserMessageId": f"bench-{number}",
                    "input": [{"type": "text", "text": "say hello"}],
                    "summary": "auto",
                }
                await client.call("turn/start", params, until="turn/completed")
                ended = time.perf_counter()
                if number == 0:
                    assert client.first_text is not None, "no agent text"
                    timings.first.append(client.first_text - start)
                    timings.end.append(ended - start)
                else:
                    timings.turn.append(ended - sent)
                    timings.cpu.append(time.process_time() - cpu)


# Agents whose direct client speaks their native wire; every other agent gets the ACP one.
DIRECT = {"pi": run_direct_pi, "claude": run_direct_claude, "codex": run_direct_codex}


async def run_omniagent(world: World, timings: Timings, turns: int) -> None:
    async with asyncio.timeout(STEP * 2), Runtime(env=world.runtime_env) as runtime:
        await runtime.discover()  # once per Runtime (cached), and the direct client has nothing like it
        start = time.perf_counter()
        session = await runtime.open(world.ref, world.work)
        for number in range(1 + turns):
            sent, cpu = time.perf_counter(), time.process_time()
            await session.prompt("say hello")
            first = None
            async for event in session.events:
                if first is None and isinstance(event.kind, TextDelta) and event.kind.text:
                    first = time.perf_counter()
                if isinstance(event.kind, TurnEnded):
                    break
            ended = time.perf_counter()
            assert first is not None, "no agent text"
            if number == 0:
                timings.first.append(first - start)
                timings.end.append(ended - start)
            else:
                timings.turn.append(ended - sent)
                timings.cpu.append(time.process_time() - cpu)
        # Closing is not measured: agents that ignore stdin EOF take the close grace.
        os.killpg(world.agent_pid(), signal.SIGKILL)


async def run_in_namespace(world: World, path: str, timings: Timings, turns: int) -> None:
    """One run of an agent with a local HTTP server: `opencode_direct.py` inside the world's namespace."""
    argv = [*world.enter, sys.executable, str(OPENCODE_RUN), path, str(turns), str(world.launcher), str(world.work)]
    proc = await asyncio.create_subprocess_exec(*argv, env=world.runtime_env, stdout=asyncio.subprocess.PIPE)
    async with asyncio.timeout(STEP * 3):
        out, _ = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"{path} run of {world.agent} failed ({proc.returncode})")
    times = json.loads(out)
    if times["first"] is not None:
        timings.first.append(times["first"])
    timings.end.append(times["end"])
    timings.turn.extend(times["turn"])
    timings.cpu.extend(times["cpu"])


async def bench(agent: str, runs: int, turns: int) -> dict[str, Timings]:
    results = {"direct": Timings(), "omniagent": Timings()}
    row = profile(agent)
    http = row is not None and row.connection is ConnectionKind.OPENCODE
    with tempfile.TemporaryDirectory(prefix=f"bench-{agent}-") as scratch:
        for number in range(runs):
            order = ("direct", "omniagent") if number % 2 == 0 else ("omniagent", "direct")
            for path in order:
                root = Path(scratch) / f"{path}-{number}"
                async with agent_world(agent, root, plain_scenario(), launcher_enters=not http) as world:
                    if http:
                        await run_in_namespace(world, path, results[path], turns)
                        continue
                    runner = DIRECT.get(agent, run_direct) if path == "direct" else run_omniagent
                    await runner(world, results[path], turns)
    return results


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:8.1f}" if values else f"{'-':>8}"


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh worlds per path and agent")
    parser.add_argument("--turns", type=int, default=5, help="warm turns per run after the first")
    parser.add_argument("--agents", default=",".join(PEERS), help="comma-separated (default: every peer)")
    args = parser.parse_args()
    # The adapter is imported on first use (~250 ms of ACP models); a one-off per process, so it is paid here and
    # shown apart, not charged to the first agent's spawn.
    started = time.perf_counter()

    took = (time.perf_counter() - started) * 1000
    print(f"one-off per process: importing the ACP and codex adapters took {took:.0f} ms")
    print(f"medians, ms, {args.runs} runs x (1 + {args.turns} turns)")
    print("first = spawn→first text, end = spawn→turn end, turn = a warm turn (prompt→turn end),")
    print("cpu = this process's CPU time in a warm turn (the client's own work, whatever the machine's load)")
    print(f"{'agent':16} {'path':10} {'first':>8} {'end':>8} {'turn':>8} {'cpu':>8}")
    for agent in args.agents.split(","):
        results = await bench(agent, args.runs, args.turns)
        for path, timings in results.items():
            row = " ".join(ms(getattr(timings, f.name)) for f in fields(Timings))
            print(f"{agent:16} {path:10} {row}")
        direct, omni = results["direct"], results["omniagent"]
        names = [f.name for f in fields(Timings)]
        deltas = [
            f"{(statistics.median(getattr(omni, n)) - statistics.median(getattr(direct, n))) * 1000:8.1f}"
            if getattr(omni, n) and getattr(direct, n)
            else f"{'-':>8}"
            for n in names
        ]
        print(f"{agent:16} {'overhead':10} " + " ".join(deltas), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
