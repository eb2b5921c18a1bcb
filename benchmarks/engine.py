"""Engine figures: the streaming path against a bare httpx reader, delta → line overhead, list and history pages.

Run: `python benchmarks/engine.py` (prints one line per figure with its target; `--runs N` turns per subject for the
streaming figures, `--src DIR` to stream through an older checkout's `omniagent rpc`).

Streaming, side by side in one run against the same fake LLM on 127.0.0.1 (an Anthropic stream of 2,000 text
deltas per turn, unpaced): a real `omniagent rpc` process and `benchmarks/bare_sse_reader.py` (a bare httpx reader
that writes one stdlib-json line per delta) each run the same turns, alternating. The fake LLM holds each answer
after its headers; the clock starts when it is let go, i.e. at the first SSE byte, and stops when this process
reads the first delta line (`message.part_delta` for the engine), then the last. Figures: first SSE byte → first
delta line (median; target ≤ 1.3x the bare reader's) and the per-delta overhead, (engine - bare) time to the last
delta line / 2,000 (target ≤ 0.05 ms).

The in-process overhead is measured inside one process from the instant the provider client yields a text delta
to the instant the rpc writer hands the finished `message.part_delta` line to stdout (draft update, model, JSON,
queue, writer task), with a real store, the real Engine and the real LineWriter; provider HTTP/SSE decoding is not
included (the streaming figures above include it).
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
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests package holds write_providers

from tests.engine.rpc_harness import write_providers

from omniagent.engine.engine import Engine, EngineConfig
from omniagent.engine.model_access import RunModel
from omniagent.engine.providers import neutral as n
from omniagent.engine.session.lifecycle import new_session_id
from omniagent.engine.store import queries as q
from omniagent.engine.store.journal import now_ms
from omniagent.faces.rpc.connection import notification_line, result_line
from omniagent.protocols.yuke.content import ContentText, InputContent
from omniagent.protocols.yuke.messages import AssistantMessage, MessageTime, TextPart, TokenUsage
from omniagent.protocols.yuke.sessions import (
    OriginRoot,
    Session,
    SessionHistoryParams,
    SessionListParams,
)
from omniagent.testing import FakeLLMServer, Reply, Scenario
from omniagent.wire.jsonl import LineWriter

DELTAS = 2000  # text deltas streamed per turn (both the streaming and the in-process figures)
STREAM_RUNS = 30  # streamed turns per subject, alternating
STREAM_WAIT = 60.0  # seconds: bound on each wait of a streamed turn
READ_CHUNK = 1 << 20  # bytes per read of a subject's output
BARE_READER = Path(__file__).with_name("bare_sse_reader.py")
MODEL = "fake-anthropic/fake-model"
KEY = "bench-key-0001"
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


class _BenchModelAccess:
    """Only what a run asks of the engine's `ModelAccess`: the model as the run needs it, and its provider."""

    def __init__(self, run_model: RunModel, provider: _FakeProvider) -> None:
        self._answer = (run_model, provider)

    def open_provider(self, selector: str, reasoning: str) -> tuple[RunModel, _FakeProvider]:
        return self._answer


def _run_model() -> RunModel:
    return RunModel(selector="bench/m", protocol="anthropic_messages", upstream_id="m")


async def delta_overhead(data_dir: Path) -> list[float]:
    sink = _StampingSink()
    provider = _FakeProvider()
    run_model = _run_model()
    async with LineWriter(sink) as writer, Engine.open(EngineConfig(data_dir, data_dir)) as engine:
        engine.broadcaster.subscribe(lambda name, data: writer.send_nowait(notification_line(name, data)))
        # The run loop holds the engine's one `ModelAccess`: its provider is swapped for the in-process fake there.
        bench = _BenchModelAccess(run_model, provider)
        engine.model_access.open_provider = bench.open_provider  # type: ignore[method-assign]
        session = _session(str(data_dir))
        session.model = run_model.selector
        await engine.store.write(_insert, [session])
        done = asyncio.Event()
        engine.broadcaster.subscribe(lambda name, data: done.set() if name == "run.done" else None)
        await engine.inputs.send(session.id, InputContent(content=[ContentText(text="go")]))
        await asyncio.wait_for(done.wait(), 60)
        await writer.wait_flushed()
    return [(sink.stamps[i] - provider.sent[i]) * 1000 for i in range(DELTAS)]


@dataclass
class _Subject:
    """One process streaming turns: how to start a turn and how to read its lines."""

    name: str
    proc: asyncio.subprocess.Process
    trigger: bytes  # the stdin line that starts one turn
    is_delta: Callable[[bytes], bool]
    is_end: Callable[[bytes], bool]
    first: list[float] = field(default_factory=list)  # ms: first SSE byte → first delta line read
    last: list[float] = field(default_factory=list)  # ms: first SSE byte → last delta line read

    async def turn(self, llm: FakeLLMServer, gate: str) -> tuple[float, float]:
        """One turn whose answer the fake LLM holds after its headers; the clock starts when it is let go."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        llm.enqueue(Reply(text="ab" * DELTAS, chunk_size=2, gate=gate, hold_after_events=0))
        self.proc.stdin.write(self.trigger)
        await self.proc.stdin.drain()
        if not await llm.wait_held_async(gate, STREAM_WAIT):
            raise SystemExit(f"{self.name}: no request reached the fake LLM")
        start = time.perf_counter()
        llm.release(gate)
        first = last = 0.0
        pending = b""
        # Read in large chunks and only look at line starts: the reader must cost next to nothing.
        while chunk := await asyncio.wait_for(self.proc.stdout.read(READ_CHUNK), STREAM_WAIT):
            now = time.perf_counter()
            *lines, pending = (pending + chunk).split(b"\n")
            for raw in lines:
                if self.is_delta(raw):
                    first, last = first or now, now
                elif self.is_end(raw):  # what follows the end in this chunk (the idle activity) is not needed
                    return (first - start) * 1000, (last - start) * 1000
        raise SystemExit(f"{self.name} closed its output")


async def _spawn(*argv: str, src: str | None = None) -> asyncio.subprocess.Process:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    if src is not None:
        env["PYTHONPATH"] = src
    return await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, limit=16 * 1024 * 1024
    )


async def _engine_subject(data: Path, workspace: Path, src: str | None) -> _Subject:
    proc = await _spawn(sys.executable, "-m", "omniagent", "rpc", "--data-dir", str(data), src=src)
    assert proc.stdin is not None and proc.stdout is not None
    create = {"id": "create", "method": "session.create", "params": {"workspace_path": str(workspace), "model": MODEL}}
    proc.stdin.write(json.dumps(create).encode() + b"\n")
    while (line := json.loads(await asyncio.wait_for(proc.stdout.readline(), STREAM_WAIT))).get("id") != "create":
        pass
    sid = line["result"]["session"]["id"]
    content = {"type": "content", "content": [{"type": "text", "text": "go"}]}
    send = {"id": "send", "method": "session.send_input", "params": {"session_id": sid, "input": content}}
    return _Subject(
        "omniagent rpc",
        proc,
        json.dumps(send).encode() + b"\n",
        lambda raw: raw.startswith(b'{"method":"message.part_delta"'),
        lambda raw: raw.startswith(b'{"method":"run.done"'),
    )


async def _bare_subject(llm: FakeLLMServer) -> _Subject:
    proc = await _spawn(sys.executable, str(BARE_READER), llm.url + "/v1/messages", KEY)
    return _Subject(
        "bare httpx reader",
        proc,
        b"go\n",
        lambda raw: raw.startswith(b'{"delta"'),
        lambda raw: raw.startswith(b'{"done"'),
    )


async def stream_figures(root: Path, runs: int, src: str | None) -> tuple[_Subject, _Subject]:
    """The same streamed turns through `omniagent rpc` and the bare reader, alternating (one warm-up each)."""
    async with FakeLLMServer(Scenario()) as llm:
        write_providers(root / "data", llm, key=KEY)
        engine, bare = await _engine_subject(root / "data", root, src), await _bare_subject(llm)
        try:
            for run in range(runs + 1):
                for subject in (engine, bare):
                    first, last = await subject.turn(llm, f"{subject.name}-{run}")
                    if run > 0:
                        subject.first.append(first)
                        subject.last.append(last)
        finally:
            for subject in (engine, bare):
                assert subject.proc.stdin is not None
                subject.proc.stdin.close()
                await asyncio.wait_for(subject.proc.wait(), STREAM_WAIT)
    return engine, bare


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
        result_line("1", result)
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


async def main(runs: int, src: str | None) -> None:
    with (
        tempfile.TemporaryDirectory() as zero,
        tempfile.TemporaryDirectory() as one,
        tempfile.TemporaryDirectory() as two,
    ):
        engine, bare = await stream_figures(Path(zero), runs, src)
        overhead = await delta_overhead(Path(one))
        listing, history = await store_figures(Path(two))
    print(f"python {sys.version.split()[0]}; {runs} streamed turns of {DELTAS} text deltas per subject, alternating")
    first = {s.name: statistics.median(s.first) for s in (engine, bare)}
    last = {s.name: statistics.median(s.last) for s in (engine, bare)}
    for s in (engine, bare):
        print(f"  {s.name:<18} first SSE byte -> first delta line {first[s.name]:6.2f} ms, last {last[s.name]:7.1f} ms")
    print(
        f"first SSE byte -> first message.part_delta line: {first[engine.name]:.2f} ms against the bare reader's "
        f"{first[bare.name]:.2f} ms: {first[engine.name] / first[bare.name]:.2f}x (target <= 1.3x)"
    )
    per_delta = (last[engine.name] - last[bare.name]) / DELTAS
    print(f"per-delta overhead over the bare reader: {per_delta:.4f} ms (target <= 0.05 ms)")
    print(
        f"in process, provider delta -> message.part_delta line handed to stdout, over {DELTAS} deltas: "
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=STREAM_RUNS, help="streamed turns per subject")
    parser.add_argument("--src", help="run `omniagent rpc` from this source dir (PYTHONPATH), e.g. an older checkout")
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.src))
