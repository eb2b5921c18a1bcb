"""Prompt caching, measured: the share of input tokens served from cache over a 20-turn session, per provider wire.

Run: `python benchmarks/prompt_cache.py` (`--turns N` for another length). Prints one row per configuration and
exits 1 if a configuration that should cache (every one but the control row) reads nothing from its cache.

Each configuration is one session of the real engine (in process, real store, real tools), talking to the fake LLM
over loopback with `prompt_cache` on: the fake computes every call's input, cache-read and cache-write tokens from
the request it receives, as that API computes them (src/omniagent/testing/prompt_cache.py), so the figure moves
with what the engine actually sends. A turn is what a coding session does most: the user asks about a file, the
model reads it (one tool round), then answers. So 20 turns are 40 model calls, each longer than the one before.

Rows: Anthropic with its breakpoints (the `anthropic_breakpoint` endpoint), Anthropic with caching off (`cache:
unsupported`: the control, which shows the breakpoints are what earns the cache), OpenAI Responses and Chat with the
session's `prompt_cache_key` (`openai_breakpoint`), and Gemini's implicit cache. "saved" is the share of the
session's input cost the cache saved at the fake provider's prices (cache reads at a tenth of the input price,
Anthropic's writes at 1.25 times it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from omniagent.engine.engine import Engine, EngineConfig
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.content import ContentText, InputContent
from omniagent.protocols.yuke.messages import AssistantMessage, MessageCommittedData
from omniagent.protocols.yuke.sessions import CreateSession
from omniagent.testing import FakeLLMServer, FakeToolCall, FakeUsage, Reply, Scenario

TURNS = 20
FILE_LINES = 60  # lines of each file the model reads (about 2.5 KB, 600 tokens)
PRICES = {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}  # USD per million tokens
# (row label, providers.json id, protocol, endpoint cache mode)
CONFIGS = (
    ("anthropic, breakpoints", "anthropic-cached", "anthropic_messages", "anthropic_breakpoint"),
    ("anthropic, caching off", "anthropic-plain", "anthropic_messages", "unsupported"),
    ("openai responses, cache key", "responses", "openai_responses", "openai_breakpoint"),
    ("openai chat, cache key", "chat", "openai_chat", "openai_breakpoint"),
    ("gemini, implicit", "gemini", "gemini", "automatic"),
)
CONTROL = "anthropic, caching off"


@dataclass
class Tally:
    """What one session's committed assistant messages report."""

    calls: int = 0
    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    costs: list[float] = field(default_factory=list)

    def add(self, message: AssistantMessage) -> None:
        assert message.tokens is not None
        self.calls += 1
        self.input += message.tokens.input
        self.cache_read += message.tokens.cache_read
        self.cache_write += message.tokens.cache_write
        self.costs.append(message.cost or 0.0)

    @property
    def read_share(self) -> float:
        return self.cache_read / self.input if self.input else 0.0

    @property
    def saved(self) -> float:
        """The input cost the cache saved: the same input tokens, all fresh, against what they cost."""
        fresh = self.input - self.cache_read - self.cache_write
        paid = fresh * PRICES["input"] + self.cache_read * PRICES["cache_read"]
        paid += self.cache_write * PRICES["cache_write"]
        return 1 - paid / (self.input * PRICES["input"]) if self.input else 0.0


def _providers(config_dir: Path, llm: FakeLLMServer) -> None:
    entries = []
    for _, pid, protocol, cache in CONFIGS:
        base = llm.url + "/v1beta" if protocol == "gemini" else llm.openai_base_url
        header = "x_api_key" if protocol in ("anthropic_messages", "gemini") else "authorization_bearer"
        entries.append(
            {
                "id": pid,
                "base_url": base,
                "endpoints": [{"protocol": protocol, "key_header": header, "cache": cache}],
                "api_key": f"bench-key-{pid}",
                "models": [{"id": "fake-model", "cost": [PRICES], "limits": {"context_window": 1_000_000}}],
            }
        )
    path = config_dir / "providers.json"
    path.write_text(json.dumps({"providers": entries}))
    path.chmod(0o600)


def _script(turns: int) -> list[Reply]:
    """Per turn: read the turn's file, then a short answer about it."""
    steps: list[Reply] = []
    for turn in range(1, turns + 1):
        read = FakeToolCall("read", {"path": f"module_{turn:02d}.py"}, f"call_{turn}")
        steps.append(Reply(text=f"Let me read module_{turn:02d}.py.", tool_calls=(read,), usage=FakeUsage(output=30)))
        answer = f"module_{turn:02d}.py defines {FILE_LINES // 3} small functions; none of them has tests yet. " * 3
        steps.append(Reply(text=answer, usage=FakeUsage(output=80)))
    return steps


def _workspace(root: Path, turns: int) -> None:
    for turn in range(1, turns + 1):
        lines = [f"def function_{turn}_{n}(value):\n    return value * {n} + {turn}\n" for n in range(FILE_LINES // 3)]
        (root / f"module_{turn:02d}.py").write_text("".join(lines))


async def _session(engine: Engine, workspace: Path, pid: str, turns: int) -> Tally:
    tally = Tally()
    done = asyncio.Event()

    def on_broadcast(name: str, data: YukeModel) -> None:
        if isinstance(data, MessageCommittedData) and isinstance(data.message, AssistantMessage):
            tally.add(data.message)
        elif name == "run.done":
            done.set()

    unsubscribe = engine.broadcaster.subscribe(on_broadcast)
    try:
        params = CreateSession(workspace_path=str(workspace), model=f"{pid}/fake-model")
        session = (await engine.sessions.create(params)).session
        for turn in range(1, turns + 1):
            done.clear()
            ask = f"What does module_{turn:02d}.py do? Is it tested?"
            await engine.inputs.send(session.id, InputContent(content=[ContentText(text=ask)]))
            await asyncio.wait_for(done.wait(), 60)
    finally:
        unsubscribe()
    return tally


async def measure(turns: int) -> dict[str, Tally]:
    """One session per configuration; its tally by row label."""
    results: dict[str, Tally] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # A home of its own: personal skills would change the system prompt, so the figures would differ per machine.
        os.environ.update({"HOME": str(root / "home"), "CLAUDE_CONFIG_DIR": ""})
        workspace = root / "ws"
        workspace.mkdir()
        _workspace(workspace, turns)
        for label, pid, _, _ in CONFIGS:
            data = root / pid
            data.mkdir()
            async with FakeLLMServer(Scenario(_script(turns), prompt_cache=True)) as llm:
                _providers(data, llm)
                async with Engine.open(EngineConfig(data, data)) as engine:
                    results[label] = await _session(engine, workspace, pid, turns)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=TURNS, help=f"turns per session (default {TURNS})")
    args = parser.parse_args(argv)
    results = asyncio.run(measure(args.turns))
    print(f"{args.turns} turns, {2 * args.turns} model calls per session")
    columns = ("input tokens", 12), ("cache read", 11), ("cache write", 12), ("read share", 11), ("saved", 6)
    print(f"{'configuration':<30}" + "".join(f" {name:>{width}}" for name, width in columns))
    for label, tally in results.items():
        print(
            f"{label:<30} {tally.input:>12,} {tally.cache_read:>11,} {tally.cache_write:>12,} "
            f"{tally.read_share:>10.1%} {tally.saved:>6.1%}"
        )
    failed = [label for label, tally in results.items() if label != CONTROL and tally.cache_read == 0]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
