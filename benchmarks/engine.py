"""Engine figures: delta → `message.part_delta` line overhead, `session.list` over 10,000 sessions, one history page.

Run: `python benchmarks/engine.py` (prints one line per figure; targets from issue 4: p99 overhead ≤ 2 ms,
list ≤ 20 ms, history page ≤ 10 ms).

The overhead is measured inside one process from the instant the provider client yields a text delta to the
instant the rpc writer hands the finished `message.part_delta` line to stdout (draft update, model, JSON, queue,
writer task), with a real store, the real Engine and the real LineWriter. Provider HTTP/SSE decoding is not
included: that is the provider's cost, measured by its own benchmark.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from omniagent.engine.engine import Engine, EngineConfig
from omniagent.engine.journal import now_ms
from omniagent.engine.providers import neutral as n
from omniagent.engine.routes import ModelRoute
from omniagent.engine.sessions import new_session_id
from omniagent.engine.store import queries as q
from omniagent.protocols.yuke.content import ContentText, InputContent
from omniagent.protocols.yuke.messages import AssistantMessage, MessageTime, TextPart, TokenUsage
from omniagent.protocols.yuke.sessions import (
    OriginRoot,
    Session,
    SessionHistoryParams,
    SessionListParams,
)
from omniagent.wire.jsonl import LineWriter, dumps

DELTAS = 2000  # text deltas streamed for the overhead figure
DELTA_GAP = 0.0005  # seconds between provider deltas (a fast model streams a token every few ms)
SESSIONS = 10_000
HISTORY_MESSAGES = 2_000
REPEAT = 50


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


class _StampingSink:
    """Records when each part_delta line is handed to stdout (then drops it)."""

    def __init__(self) -> None:
        self.stamps: dict[int, float] = {}

    def write(self, data: bytes) -> None:
        now = time.perf_counter()
        for line in data.split(b"\n"):
            if b'"message.part_delta"' in line:
                self.stamps[int(json.loads(line)["params"]["delta"])] = now

    async def drain(self) -> None:
        return None


class _FakeProvider:
    def __init__(self) -> None:
        self.sent: dict[int, float] = {}

    async def _events(self) -> AsyncIterator[n.StreamEvent]:
        for i in range(DELTAS):
            await asyncio.sleep(DELTA_GAP)
            self.sent[i] = time.perf_counter()
            yield n.TextDelta(0, f"{i:06d}")
        yield n.BlockEnded(0)
        yield n.Usage()
        yield n.StreamEnd("stop")

    def stream(self, request: n.ModelRequest) -> AsyncIterator[n.StreamEvent]:
        return self._events()

    async def aclose(self) -> None:
        return None


class _BenchRoutes:
    """Only what a run asks of the routes: the model route and its provider."""

    def __init__(self, route: ModelRoute, provider: _FakeProvider) -> None:
        self._answer = (route, provider)

    def open_provider(self, selector: str, reasoning: str) -> tuple[ModelRoute, _FakeProvider]:
        return self._answer


def _route() -> ModelRoute:
    return ModelRoute(selector="bench/m", protocol="anthropic_messages", upstream_id="m")


async def delta_overhead(data_dir: Path) -> list[float]:
    sink = _StampingSink()
    provider = _FakeProvider()
    route = _route()
    async with LineWriter(sink) as writer, Engine.open(EngineConfig(data_dir, data_dir)) as engine:
        engine.broadcaster.subscribe(
            lambda name, data: writer.send_nowait(dumps({"method": name, "params": data.dump()}))
        )
        engine.routes = _BenchRoutes(route, provider)  # type: ignore[assignment]
        session = _session(str(data_dir))
        session.model = route.selector
        await engine.store.write(_insert, [session])
        done = asyncio.Event()
        engine.broadcaster.subscribe(lambda name, data: done.set() if name == "run.done" else None)
        await engine.inputs.send(session.id, InputContent(content=[ContentText(text="go")]))
        await asyncio.wait_for(done.wait(), 60)
        await writer.wait_flushed()
    return [(sink.stamps[i] - provider.sent[i]) * 1000 for i in range(DELTAS)]


def _session(root: str, updated: int = 0) -> Session:
    now = updated or now_ms()
    return Session(
        id=new_session_id(),
        root=root,
        profile="default",
        model="anthropic/claude-sonnet-4-5",
        reasoning="",
        config_rev=0,
        title="a session title",
        message_count=0,
        usage_total=TokenUsage(),
        created_at_ms=now,
        updated_at_ms=now,
        origin=OriginRoot(),
        agent="root",
    )


def _insert(conn: object, sessions: list[Session]) -> None:
    for s in sessions:
        q.insert_session(conn, s, None)  # type: ignore[arg-type]
        q.insert_config(conn, s.id, 0, s.model, s.reasoning, None)  # type: ignore[arg-type]


def _insert_history(conn: object, sid: str) -> None:
    for mid in range(1, HISTORY_MESSAGES + 1):
        message = AssistantMessage(
            id=mid,
            run_id=1,
            config_rev=0,
            agent="root",
            content=[TextPart(id=0, text="some answer text " * 20)],
            finish="stop",
            tokens=TokenUsage(input=100, output=50),
            time=MessageTime(created_at_ms=mid),
        )
        q.insert_message(conn, sid, mid, "assistant", 1, 0, json.dumps(message.dump()))  # type: ignore[arg-type]


async def timed(engine: Engine, method: str, params: object) -> list[float]:
    out = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        result = await engine.handle(method, params)  # type: ignore[arg-type]
        dumps(result.dump())
        out.append((time.perf_counter() - start) * 1000)
    return out


async def store_figures(data_dir: Path) -> tuple[list[float], list[float]]:
    async with Engine.open(EngineConfig(data_dir, data_dir)) as engine:
        base = now_ms()
        sessions = [_session(str(data_dir), base + i) for i in range(SESSIONS)]
        await engine.store.write(_insert, sessions)
        await engine.store.write(_insert_history, sessions[-1].id)
        listing = await timed(engine, "session.list", SessionListParams())
        history = await timed(
            engine, "session.history", SessionHistoryParams(session_id=sessions[-1].id, before_message_id=2**53 - 1)
        )
    return listing, history


async def main() -> None:
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        overhead = await delta_overhead(Path(one))
        listing, history = await store_figures(Path(two))
    print(f"python {sys.version.split()[0]}")
    print(
        f"delta -> message.part_delta line overhead over {DELTAS} deltas: "
        f"p50 {statistics.median(overhead):.3f} ms, p99 {_pct(overhead, 0.99):.3f} ms (target p99 <= 2 ms)"
    )
    print(
        f"session.list, {SESSIONS} sessions in the store, default page (25): "
        f"p50 {statistics.median(listing):.2f} ms, p99 {_pct(listing, 0.99):.2f} ms (target <= 20 ms)"
    )
    print(
        f"session.history, newest page (50 of {HISTORY_MESSAGES} messages): "
        f"p50 {statistics.median(history):.2f} ms, p99 {_pct(history, 0.99):.2f} ms (target <= 10 ms)"
    )


if __name__ == "__main__":
    asyncio.run(main())
