"""The store on PostgreSQL beside SQLite, in one run: list and history pages, a streamed turn, and how late a client
of one process sees the events of a run executing in another (docs/fleet.md, docs/performance.md).

Run: `python benchmarks/fleet_store.py` (starts its own PostgreSQL server from the distribution's package, as the
tests do; `--runs N` streamed turns per store, `--turns N` turns for the cross-process figure).

1. `session.list` (default page of 25, 10,000 sessions) and `session.history` (newest 50 of 2,000 messages), each
   timed 300 times through the engine's method table plus the encoding of the result line (6 rounds of 50, the two
   stores' engines open side by side and taking turns), after the bulk insert's statistics are taken (VACUUM
   ANALYZE, as autovacuum does; ANALYZE on SQLite). Targets: PostgreSQL within 2x SQLite.
2. A turn of 2,000 text deltas through a real `omniagent rpc` process on each store, alternating, from the fake
   LLM's first SSE byte to the first delta line and to the last (benchmarks/engine.py's subject). Target:
   PostgreSQL within 1.3x SQLite.
3. Two `omniagent rpc` processes on one PostgreSQL database; one runs short turns, the other's client receives each
   durable event (run.started, message.committed, run.done) relayed. Latency: when the watcher's client read the
   line minus when the runner's client read the same event, both clients in this process. Target: p99 <= 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests package: the server and the harness

from benchmarks.engine import (
    HISTORY_MESSAGES,
    SESSIONS,
    _engine_subject,
    _insert,
    _insert_history,
    _pct,
    _session,
    timed,
)
from tests.engine.rpc_harness import RpcProcess, write_providers
from tests.postgres_server import PostgresServer

from omniagent.engine.engine import Engine, EngineConfig
from omniagent.engine.store import STORE_ENV
from omniagent.engine.store.journal import now_ms
from omniagent.protocols.yuke.sessions import SessionHistoryParams, SessionListParams
from omniagent.testing import FakeLLMServer, Reply, Scenario

MODEL = "fake-anthropic/fake-model"
KEY = "bench-key-0001"
STREAM_RUNS = 20
TURNS = 100
ROUNDS = 6  # turns of 50 timed calls per method and store, alternating stores
DURABLE = ("run.started", "message.committed", "run.done")


async def pages(root: Path, store_url: str) -> dict[str, tuple[list[float], list[float]]]:
    """session.list and session.history timings (ms) on each store, the two engines open side by side and timed
    in turns (so both meet the same machine load)."""
    async with contextlib.AsyncExitStack() as stack:
        engines, params = {}, {}
        for name, url in (("sqlite", None), ("postgres", store_url)):
            data_dir = root / f"pages-{name}"
            engine = await stack.enter_async_context(Engine.open(EngineConfig(data_dir, data_dir, store_url=url)))
            base = now_ms()
            sessions = [_session(str(data_dir), base + i) for i in range(SESSIONS)]
            await engine.store.write(_insert, sessions)
            await engine.store.write(_insert_history, sessions[-1].id)
            await _settle(engine, url)
            engines[name] = engine
            params[name] = SessionHistoryParams(session_id=sessions[-1].id, before_message_id=2**53 - 1)
        figures: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in engines}
        for _ in range(ROUNDS):
            for name, engine in engines.items():
                figures[name][0].extend(await timed(engine, "session.list", SessionListParams()))
                figures[name][1].extend(await timed(engine, "session.history", params[name]))
    return figures


async def _settle(engine: Engine, store_url: str | None) -> None:
    """Statistics after the bulk insert, as a store in use has them (PostgreSQL's autovacuum; SQLite's ANALYZE)."""
    if store_url is None:
        await engine.store.write(lambda conn: conn.execute("ANALYZE"))
        return
    with psycopg.connect(store_url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


async def streamed(root: Path, url: str, runs: int) -> dict[str, tuple[list[float], list[float]]]:
    """(first delta, last delta) ms of `runs` 2,000-delta turns through `omniagent rpc` on each store."""
    async with FakeLLMServer(Scenario()) as llm:
        subjects = {}
        for name, store in (("sqlite", None), ("postgres", url)):
            write_providers(root / name, llm, key=KEY)
            os.environ.pop(STORE_ENV, None)
            if store is not None:
                os.environ[STORE_ENV] = store
            subjects[name] = await _engine_subject(root / name, root, None)
        os.environ.pop(STORE_ENV, None)
        figures: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in subjects}
        try:
            for run in range(runs + 1):
                for name, subject in subjects.items():
                    first, last = await subject.turn(llm, f"{name}-{run}")
                    if run > 0:  # the first is a warm-up
                        figures[name][0].append(first)
                        figures[name][1].append(last)
        finally:
            for subject in subjects.values():
                assert subject.proc.stdin is not None
                subject.proc.stdin.close()
                await subject.proc.wait()
    return figures


class _Stamped(RpcProcess):
    """An rpc client that notes when it read each durable event: (method, session, seq) → perf_counter."""

    stamps: dict[tuple[str, str, int], float]

    async def _read(self) -> None:
        self.stamps = {}
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            now = time.perf_counter()
            value = json.loads(line)
            if value.get("method") in DURABLE:
                params = value["params"]
                self.stamps[(value["method"], params["session_id"], params["seq"])] = now
            async with self._changed:
                self.lines.append(value)
                self._changed.notify_all()
        async with self._changed:
            self._changed.notify_all()


async def cross_process(root: Path, url: str, turns: int) -> list[float]:
    """Latency (ms) of each durable event of `turns` turns run by one process, seen by the other's client."""
    os.environ[STORE_ENV] = url
    try:
        async with FakeLLMServer(Scenario()) as llm:
            llm.enqueue(*(Reply(text="ok") for _ in range(turns)))
            members = []
            for name in ("runner", "watcher"):
                write_providers(root / name, llm, key=KEY)
                member = await _Stamped.start(root / name)
                await member.call("session.list")
                members.append(member)
            runner, watcher = members
            workspace = root / "ws"
            workspace.mkdir()
            sid = (await runner.call("session.create", {"workspace_path": str(workspace), "model": MODEL}))["session"][
                "id"
            ]
            content = {"type": "content", "content": [{"type": "text", "text": "go"}]}
            seen = -1
            for _ in range(turns):
                await runner.call("session.send_input", {"session_id": sid, "input": content})
                seen = await watcher.broadcast("run.done", after=seen + 1, within=30)
            for member in members:
                await member.close()
    finally:
        os.environ.pop(STORE_ENV, None)
    return [(watcher.stamps[key] - at) * 1000 for key, at in runner.stamps.items() if key in watcher.stamps]


async def main(runs: int, turns: int) -> None:
    server = PostgresServer.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            page = await pages(root, server.database())
            stream = await streamed(root / "stream", server.database(), runs)
            latency = await cross_process(root / "fleet", server.database(), turns)
    finally:
        server.stop()
    print(f"python {sys.version.split()[0]}; PostgreSQL from the distribution's package, unix socket, fsync off")
    for index, what in enumerate(
        (f"session.list, {SESSIONS} sessions, default page", f"session.history, newest 50 of {HISTORY_MESSAGES}")
    ):
        lite, pg = page["sqlite"][index], page["postgres"][index]
        ratio = statistics.median(pg) / statistics.median(lite)
        print(
            f"{what}: sqlite p50 {statistics.median(lite):.2f} ms p99 {_pct(lite, 0.99):.2f} ms; postgres p50 "
            f"{statistics.median(pg):.2f} ms p99 {_pct(pg, 0.99):.2f} ms: {ratio:.2f}x (target <= 2x)"
        )
    for index, what in enumerate(("first SSE byte -> first delta line", "first SSE byte -> last (2,000th) delta")):
        lite, pg = statistics.median(stream["sqlite"][index]), statistics.median(stream["postgres"][index])
        print(
            f"{what}, median of {runs}: sqlite {lite:.2f} ms, postgres {pg:.2f} ms: {pg / lite:.2f}x (target <= 1.3x)"
        )
    print(
        f"cross-process durable events ({len(latency)} of {turns} turns): p50 {statistics.median(latency):.2f} ms, "
        f"p99 {_pct(latency, 0.99):.2f} ms, max {max(latency):.2f} ms (target p99 <= 50 ms)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=STREAM_RUNS, help="streamed 2,000-delta turns per store")
    parser.add_argument("--turns", type=int, default=TURNS, help="turns for the cross-process latency")
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.turns))
