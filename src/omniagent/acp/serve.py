"""`omniagent acp`: the engine as an ACP agent on stdin/stdout (newline-delimited JSON-RPC 2.0).

One process = one engine = one ACP connection. The engine runs in this process (no `omniagent rpc` child): the
agent subscribes to its broadcasts. Logs go to stderr; stdout carries only the wire. Closing stdin ends the
connection: every request already read is still answered (`echo '<initialize>' | omniagent acp` prints its reply),
an active run ends `interrupted` (as with `omniagent rpc`, so a waiting `session/prompt` answers at once) and the
process exits 0.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from omniagent.acp.agent import AcpAgent
from omniagent.engine.engine import SHUTDOWN_GRACE, Engine, EngineConfig
from omniagent.engine.rpc import STDIN_LIMIT, engine_config
from omniagent.logs import configure, face_logger
from omniagent.wire.dialects import STRICT
from omniagent.wire.jsonrpc import Peer
from omniagent.wire.stdio import open_stdio

# Seconds between interrupt rounds while requests read before EOF are still being answered.
_ROUND = 0.2


def run_acp(data_dir: Path | None) -> int:
    """Serve ACP on stdin/stdout until stdin closes; returns the exit code."""
    configure("acp")
    try:
        asyncio.run(_serve(engine_config(data_dir)))
    except KeyboardInterrupt:
        return 130
    return 0


async def _answer_the_rest(peer: Peer, engine: Engine) -> None:
    """After EOF: interrupt runs until every request read before EOF has its answer (bounded by the engine's
    shutdown grace). A prompt read just before EOF may open its run after the first interrupt, hence the rounds."""
    deadline = asyncio.get_running_loop().time() + SHUTDOWN_GRACE
    while unanswered := peer.unanswered():
        engine.interrupt_runs()
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            face_logger("acp").warning("%d requests unanswered at exit", len(unanswered))
            return
        await asyncio.wait(unanswered, timeout=min(left, _ROUND))


async def _serve(config: EngineConfig) -> None:
    tasks: set[asyncio.Task[None]] = set()

    def spawn(coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        return task

    async with open_stdio(limit=STDIN_LIMIT) as (reader, sink), Engine.open(config) as engine:
        await engine.recover()
        peer = Peer(reader, sink, dialect=STRICT, name="acp-agent", answer_after_eof=True)
        async with peer:
            agent = AcpAgent(engine, peer, spawn)
            try:
                await peer.wait_closed()
                await _answer_the_rest(peer, engine)
            finally:
                agent.close()
                for task in list(tasks):
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
