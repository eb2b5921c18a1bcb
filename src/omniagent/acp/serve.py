"""`omniagent acp`: the engine as an ACP agent on stdin/stdout (newline-delimited JSON-RPC 2.0).

One process = one engine = one ACP connection. The engine runs in this process (no `omniagent rpc` child): the
agent subscribes to its broadcasts. Logs go to stderr; stdout carries only the wire. Closing stdin ends the
connection: an active run ends `interrupted` (as with `omniagent rpc`) and the process exits 0.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from omniagent.acp.agent import AcpAgent
from omniagent.engine.engine import Engine, EngineConfig
from omniagent.engine.rpc import STDIN_LIMIT, engine_config
from omniagent.wire.dialects import STRICT
from omniagent.wire.jsonrpc import Peer
from omniagent.wire.stdio import open_stdio


def run_acp(data_dir: Path | None) -> int:
    """Serve ACP on stdin/stdout until stdin closes; returns the exit code."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="omniagent acp: %(message)s")
    try:
        asyncio.run(_serve(engine_config(data_dir)))
    except KeyboardInterrupt:
        return 130
    return 0


async def _serve(config: EngineConfig) -> None:
    tasks: set[asyncio.Task[None]] = set()

    def spawn(coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        return task

    async with open_stdio(limit=STDIN_LIMIT) as (reader, sink), Engine.open(config) as engine:
        await engine.recover()
        peer = Peer(reader, sink, dialect=STRICT, name="acp-agent")
        async with peer:
            agent = AcpAgent(engine, peer, spawn)
            try:
                await peer.wait_closed()
            finally:
                agent.close()
                for task in list(tasks):
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
