"""opencode's HTTP face for `real_agents.py`: one timed run, inside the loopback-only namespace, through omniagent
or through a minimal direct HTTP client of the same `opencode serve`.

    python benchmarks/opencode_direct.py {direct|omniagent} TURNS LAUNCHER WORKDIR   (prints the timings as JSON)

Per warm turn it reports the wall time and this process's CPU time (the client's own work, load-independent).
The runtime talks to opencode's server on 127.0.0.1, so both paths must run inside the namespace the fake LLM
holds: `real_agents.py` starts this script there (`World.enter`) with the world's env, the launcher not entering
again. The direct client is the least a client of that server does: start it with a password and the same permission
config, poll `/global/health`, read `/event`, create a session, `prompt_async`, wait for `session.idle`. No models,
no validation, no runtime.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from omniagent.protocols.sidecar.commands import PermissionMode
from omniagent.protocols.sidecar.events import TextDelta, TurnEnded
from omniagent.runtime.adapters.opencode.server import config_content
from omniagent.runtime.runtime import Runtime

STEP = 60.0  # seconds: bound on every wait
PROMPT = "say hello"


async def through_direct(turns: int, launcher: str, work: str) -> dict[str, Any]:
    start = time.perf_counter()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    password = secrets.token_urlsafe(16)
    env = dict(os.environ, OPENCODE_SERVER_USERNAME="opencode", OPENCODE_SERVER_PASSWORD=password)
    env["OPENCODE_CONFIG_CONTENT"] = config_content(env.get("OPENCODE_CONFIG_CONTENT"), PermissionMode.ASK)
    argv = [launcher, "serve", "--hostname", "127.0.0.1", "--port", str(port)]
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=work, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    times: dict[str, Any] = {"turn": [], "cpu": []}
    try:
        async with asyncio.timeout(STEP), httpx.AsyncClient(base_url=url, auth=("opencode", password)) as client:
            while True:
                try:
                    if (await client.get("/global/health")).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.1)
            async with client.stream("GET", "/event", timeout=None) as stream:
                lines = stream.aiter_lines()
                session = ""

                async def until_idle(sent: float) -> float | None:
                    first = None
                    async for line in lines:
                        if not line.startswith("data:"):
                            continue
                        event = json.loads(line[5:])
                        props = event.get("properties", {})
                        if props.get("sessionID") != session:
                            continue
                        if event["type"] == "message.part.delta" and first is None:
                            first = time.perf_counter() - sent
                        if event["type"] == "session.idle":
                            return first
                    raise RuntimeError("the event stream ended")

                session = (await client.post("/session", json={})).json()["id"]
                body = {"parts": [{"type": "text", "text": PROMPT}]}
                await client.post(f"/session/{session}/prompt_async", json=body)
                first = await until_idle(start)
                times["end"] = time.perf_counter() - start
                times["first"] = first
                for _ in range(turns):
                    sent, cpu = time.perf_counter(), time.process_time()
                    await client.post(f"/session/{session}/prompt_async", json=body)
                    await until_idle(sent)
                    times["turn"].append(time.perf_counter() - sent)
                    times["cpu"].append(time.process_time() - cpu)
    finally:
        proc.kill()
        await proc.wait()
    return times


async def through_omniagent(turns: int, work: str) -> dict[str, Any]:
    times: dict[str, Any] = {"turn": [], "cpu": []}
    async with asyncio.timeout(STEP * 2), Runtime() as runtime:
        await runtime.discover()  # once per Runtime (cached), and the direct client has nothing like it
        start = time.perf_counter()
        session = await runtime.open("opencode", work)
        for number in range(1 + turns):
            sent, cpu = time.perf_counter(), time.process_time()
            await session.prompt(PROMPT)
            first = None
            async for event in session.events:
                if first is None and isinstance(event.kind, TextDelta) and event.kind.text:
                    first = time.perf_counter()
                if isinstance(event.kind, TurnEnded):
                    break
            ended = time.perf_counter()
            if number == 0:
                times["first"] = None if first is None else first - start
                times["end"] = ended - start
            else:
                times["turn"].append(ended - sent)
                times["cpu"].append(time.process_time() - cpu)
    return times


def main(argv: list[str]) -> int:
    path, turns, launcher, work = argv[0], int(argv[1]), argv[2], argv[3]
    if path == "direct":
        times = asyncio.run(through_direct(turns, launcher, work))
    else:
        times = asyncio.run(through_omniagent(turns, work))
    print(json.dumps(times))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
