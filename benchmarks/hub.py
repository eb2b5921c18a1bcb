"""`omniagent hub` figures, beside `omniagent serve` over stdio in the same run (issue 21; docs/performance.md):

1. Throughput: one mock session's unpaced turn of N text deltas to one client, events per second from the prompt to
   `TurnEnded`: `omniagent serve` on stdio (as benchmarks/sidecar.py measures it) and the hub's `/sidecar` WebSocket,
   alternating, median of the runs, and their ratio.
2. Fan-out latency: S live mock sessions x C clients each (one WebSocket connection per client: the first opens the
   session, the others attach as observers); every session streams a paced turn at once; latency = a client's receipt
   of an event minus the event's `occurred_at` (one machine, one clock); p50 / p99 / max over every delivery.
3. Attach → first replayed event: a new client attaches to a session with history (`after: 0`); time from sending the
   `attach` line to reading the first replayed event line (median and max of N).
4. Hub RSS per idle session: the hub process's RSS before and after opening K more idle mock sessions, divided by K.

    python benchmarks/hub.py [--runs 5] [--deltas 100000] [--sessions 100] [--clients 3] [--idle 500]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from websockets.asyncio.client import ClientConnection, connect

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sidecar import Lagged, throughput  # benchmarks/ is not a package

HUB = [sys.executable, "-m", "omniagent", "hub", "--port", "0"]
OCCURRED = re.compile(rb'"occurred_at":\{"secs_since_epoch":(\d+),"nanos_since_epoch":(\d+)\}')


def _flood(path: Path, deltas: int) -> Path:
    step = {"Emit": {"TextDelta": {"message_id": "m1", "text": "x"}}}
    turn = [{"Repeat": {"times": deltas, "steps": [step]}}, {"End": {"Completed": {"source": "Protocol"}}}]
    path.write_text(json.dumps({"turns": [turn]}))
    return path


def _paced(path: Path, events: int, every_ms: int) -> Path:
    steps = [{"Emit": {"TextDelta": {"message_id": "m1", "text": "x"}}}, {"Sleep": every_ms}]
    turn = [{"Repeat": {"times": events, "steps": steps}}, {"End": {"Completed": {"source": "Protocol"}}}]
    path.write_text(json.dumps({"turns": [turn, turn, turn]}))
    return path


@contextlib.asynccontextmanager
async def running_hub(script: Path, data: Path) -> AsyncIterator[tuple[str, str, int]]:
    """(sidecar URL, token, pid) of `omniagent hub --mock script` (its data dir `data`, existing), stopped after."""
    proc = await asyncio.create_subprocess_exec(
        *HUB, "--data-dir", str(data), "--mock", str(script), "--max-clients", "1000",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdout is not None
    first = (await proc.stdout.readline()).decode().split()[-1]
    token = (data / "hub" / "token").read_text().strip()
    try:
        yield first.replace("http", "ws", 1) + "/sidecar", token, proc.pid
    finally:
        proc.terminate()
        await proc.wait()


class Client:
    """The sidecar wire over one WebSocket: lines out, lines in (a frame may hold several)."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.pending: list[bytes] = []
        self.ids = iter(range(1, 1 << 30))

    @classmethod
    async def connect(cls, url: str, token: str) -> Client:
        # No permessage-deflate (the `websockets` default): our own clients do not ask for it, and it costs the hub
        # a compression per frame.
        ws = await connect(
            url, additional_headers={"Authorization": f"Bearer {token}"}, max_size=None, compression=None
        )
        client = cls(ws)
        await client.line()  # the hello
        return client

    async def line(self) -> bytes:
        while not self.pending:
            frame = await self.ws.recv(decode=False)
            self.pending = [part for part in frame.split(b"\n") if part]
        return self.pending.pop(0)

    async def call(self, cmd: str, **fields: object) -> dict[str, object]:
        ident = next(self.ids)
        await self.ws.send(json.dumps({"id": ident, "cmd": cmd, **fields}))
        tag = f'"id":{ident},'.encode()
        while True:
            line = await self.line()
            if line.startswith(b'{"id":') and tag in line[:24]:
                reply = json.loads(line)
                assert "ok" in reply, reply
                return reply["ok"]  # type: ignore[no-any-return]


async def hub_throughput(script: Path, data: Path) -> tuple[int, float]:
    async with running_hub(script, data) as (url, token, _pid):
        client = await Client.connect(url, token)
        session = (await client.call("open", agent="mock", dir="."))["id"]
        start = time.perf_counter()
        await client.ws.send(json.dumps({"id": 99, "cmd": "prompt", "session": session, "text": "go"}))
        events = 0
        while True:
            frame = await client.ws.recv(decode=False)
            events += frame.count(b'{"event"')
            if b'"TurnEnded"' in frame:
                break
        elapsed = time.perf_counter() - start
        await client.ws.close()
        return events, elapsed


async def fan_out(data: Path, sessions: int, clients: int) -> tuple[list[float], list[float]]:
    """(latencies of every delivery, attach → first replayed event times), seconds."""
    script = _paced(data / "paced.json", events=100, every_ms=20)
    latencies: list[float] = []
    async with running_hub(script, data) as (url, token, pid):
        groups: list[tuple[str, list[Client]]] = []
        for _ in range(sessions):
            owner = await Client.connect(url, token)
            session = str((await owner.call("open", agent="mock", dir="."))["id"])
            watchers = [await Client.connect(url, token) for _ in range(clients - 1)]
            for watcher in watchers:
                await watcher.call("attach", session=session, role="observer", history="none")
            groups.append((session, [owner, *watchers]))

        async def read(client: Client) -> None:
            # A regular expression, not a JSON parse per line: 300 clients share this one process and one core.
            while True:
                frame = await client.ws.recv(decode=False)
                now = time.time()
                for secs, nanos in OCCURRED.findall(frame):
                    latencies.append(now - (int(secs) + int(nanos) / 1e9))
                if b'"TurnEnded"' in frame:
                    return

        readers = [asyncio.ensure_future(read(c)) for _, group in groups for c in group]
        cpu, start = _cpu(pid), time.perf_counter()
        for session, (owner, *_rest) in groups:
            await owner.ws.send(json.dumps({"id": 7, "cmd": "prompt", "session": session, "text": "go"}))
        await asyncio.gather(*readers)
        busy = (_cpu(pid) - cpu) / (time.perf_counter() - start)
        print(f"  (the hub process was on a CPU {busy:.0%} of the turns' time)")
        attaches = []
        for session, _group in groups[:20]:
            late = await Client.connect(url, token)
            start = time.perf_counter()
            await late.ws.send(
                json.dumps({"id": 1, "cmd": "attach", "session": session, "after": 0, "role": "observer"})
            )
            while not (await late.line()).startswith(b'{"event"'):
                pass
            attaches.append(time.perf_counter() - start)
            await late.ws.close()
        for _, group in groups:
            for client in group:
                await client.ws.close()
    return latencies, attaches


def _cpu(pid: int) -> float:
    """Seconds of CPU the process has used (user + system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss(pid: int) -> int:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmRSS:"):
            return int(row.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


async def idle_rss(data: Path, count: int) -> float:
    script = _paced(data / "idle.json", events=1, every_ms=1)
    async with running_hub(script, data) as (url, token, pid):
        client = await Client.connect(url, token)
        for _ in range(20):  # warm: the first sessions pay for imports and pools
            await client.call("open", agent="mock", dir=".")
        before = _rss(pid)
        for _ in range(count):
            await client.call("open", agent="mock", dir=".")
        after = _rss(pid)
        await client.ws.close()
    return (after - before) / count


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--deltas", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--clients", type=int, default=3)
    parser.add_argument("--idle", type=int, default=500)
    args = parser.parse_args()
    stdio, hub, lagged = [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        flood = _flood(root / "flood.json", args.deltas)
        for run in range(args.runs):  # alternate, so load hits both alike
            try:
                events, seconds, _ = throughput(args.deltas, root)
                stdio.append(events / seconds)
            except Lagged:
                lagged += 1
            data = root / f"d{run}"
            data.mkdir()
            events, seconds = asyncio.run(hub_throughput(flood, data))
            hub.append(events / seconds)
        print(f"unpaced mock turn of {args.deltas:,} text deltas to one client, {args.runs} runs (median events/s):")
        print(f"  omniagent serve (stdio)       {statistics.median(stdio) if stdio else 0:>11,.0f}  ({lagged} lagging)")
        print(f"  omniagent hub (/sidecar, WS)  {statistics.median(hub):>11,.0f}")
        print(f"  ratio hub / stdio             {statistics.median(hub) / statistics.median(stdio):11.2f}x")
        (root / "fan").mkdir()
        (root / "idle").mkdir()
        latencies, attaches = asyncio.run(fan_out(root / "fan", args.sessions, args.clients))
        print(f"{args.sessions} live mock sessions x {args.clients} clients, paced turns at once "
              f"({len(latencies):,} deliveries): latency p50 {_percentile(latencies, 0.5) * 1000:.1f} ms, "
              f"p99 {_percentile(latencies, 0.99) * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms")  # fmt: skip
        print(f"attach (after: 0) → first replayed event, {len(attaches)} attaches: median "
              f"{statistics.median(attaches) * 1000:.1f} ms, max {max(attaches) * 1000:.1f} ms")  # fmt: skip
        per = asyncio.run(idle_rss(root / "idle", args.idle))
        print(f"hub RSS per idle mock session ({args.idle} opened): {per / 1024:.0f} KB")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMNIAGENT_LOG", "error")
    sys.exit(main())
