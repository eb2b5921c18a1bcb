"""One ACP connection on our stdin/stdout, once the first reply is out: the engine built on first use, every request
after `initialize` routed to the agent, the end of input.

One process = one engine = one ACP connection. The engine runs in this process (no `omniagent rpc` child): the
agent subscribes to its broadcasts. Closing stdin ends the connection: every request already read is still answered
(`echo '<initialize>' | omniagent acp` prints its reply), an active run ends `interrupted` (as with `omniagent rpc`,
so a waiting `session/prompt` answers at once) and the process exits 0. A write that finds stdout's reader gone ends
it too, at once (nobody is left to answer), with exit code 141.

Start-up is lazy (docs/performance.md): `initialize` is answered from the provider catalog alone
(`faces.acp.handshake`), usually by `faces/acp/serve.py` before this module is imported; the engine (store, providers,
HTTP client), the ACP models and the agent are imported and built on the first other request, which waits for them. An
editor that only asks `initialize` never pays for them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omniagent.engine.config import STDIN_LIMIT
from omniagent.faces.pipes import BrokenStdout, unless_reader_gone
from omniagent.logs import face_logger
from omniagent.protocols.acp.versions import VersionSpec
from omniagent.serving.acp import handshake
from omniagent.wire.dialects import STRICT
from omniagent.wire.first_request import Prelude
from omniagent.wire.jsonrpc import Peer
from omniagent.wire.messages import INTERNAL_ERROR, METHOD_NOT_FOUND, RpcError
from omniagent.wire.stdio import open_stdio

if TYPE_CHECKING:
    from omniagent.engine.api import EngineApi
    from omniagent.faces.acp.agent import EngineAcpAgent

# Seconds between interrupt rounds while requests read before EOF are still being answered.
_ROUND = 0.2
# Seconds the engine gets to end its runs at exit (the engine's own SHUTDOWN_GRACE; not imported: start-up).
_SHUTDOWN_GRACE = 5.0


def serve_connection(data_dir: Path | None, greeted: handshake.Handshake, prelude: Prelude) -> int:
    """Serve the connection until stdin closes (exit code 0) or a write finds stdout broken (141 when its reader is
    gone, else 1); `greeted` holds what an `initialize` answered already fixed, `prelude` the bytes read before
    (`wire/first_request.py`). KeyboardInterrupt propagates."""
    return asyncio.run(_serve(data_dir, greeted, prelude))


class _Connection:
    """One ACP connection: answers `initialize`, then builds the engine and the agent on first use."""

    def __init__(self, data_dir: Path | None, greeted: handshake.Handshake, peer: Peer, spawn: Any) -> None:
        self._data_dir = data_dir
        self._handshake = greeted
        self._peer = peer
        self._spawn = spawn
        self._spec: VersionSpec | None = None
        self._agent: asyncio.Future[EngineAcpAgent] | None = None
        self._engine: EngineApi | None = None
        self._stop = asyncio.Event()
        self._engine_task: asyncio.Task[None] | None = None
        peer.on_request("initialize", self._initialize)
        if greeted.spec is not None:
            self._select(greeted.spec)

    async def _initialize(self, params: Any) -> dict[str, Any]:
        catalog = self._engine.catalog if self._engine is not None else None
        result = self._handshake.initialize(params, catalog)
        if self._spec is None and self._handshake.spec is not None:
            self._select(self._handshake.spec)
        return result

    def _select(self, spec: VersionSpec) -> None:
        """Route the version's methods to the agent (built on the first of them); once per connection."""
        self._spec = spec
        for operation, method in spec.method_names.items():
            if operation in handshake.OPERATIONS:
                self._peer.on_request(method, self._forward(method))
        self._peer.on_notification(spec.method_names["cancel"], self._cancel)

    def _forward(self, method: str) -> Any:
        async def run(params: Any) -> Any:
            agent = await self.agent()
            handler = agent.handlers.get(method)
            if handler is None:
                raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")
            return await handler(params)

        return run

    async def _cancel(self, params: Any) -> None:
        if self._agent is not None and self._agent.done() and not self._agent.exception():
            await self._agent.result().cancel(params)  # no agent yet: no run to cancel

    def agent(self) -> asyncio.Future[EngineAcpAgent]:
        """The agent, opening the engine on the first call."""
        if self._agent is None:
            self._agent = asyncio.get_running_loop().create_future()
            self._engine_task = asyncio.ensure_future(self._run_engine(self._agent))
        return self._agent

    async def _run_engine(self, ready: asyncio.Future[EngineAcpAgent]) -> None:
        """Own the engine for the connection's life: `EngineApi.open`'s task group must be entered and left in one
        task, so it lives here until `close()`."""
        from omniagent.engine.api import EngineApi
        from omniagent.faces.acp.agent import EngineAcpAgent

        assert self._spec is not None
        try:
            async with EngineApi.open(EngineApi.config(self._data_dir)) as engine:
                self._engine = engine
                agent = EngineAcpAgent(engine, self._peer, self._spawn, self._spec, elicits=self._handshake.elicits)
                ready.set_result(agent)
                try:
                    await self._stop.wait()
                finally:
                    agent.close()
        except Exception as exc:
            if not ready.done():
                face_logger("acp").error("the engine did not open: %s: %s", type(exc).__name__, exc)
                ready.set_exception(RpcError(INTERNAL_ERROR, "the engine did not open"))
                await self._stop.wait()
            else:
                raise

    async def answer_the_rest(self) -> None:
        """After EOF: interrupt runs until every request read before EOF has its answer (bounded by the engine's
        shutdown grace). A prompt read just before EOF may open its run after the first interrupt, hence the
        rounds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _SHUTDOWN_GRACE
        while unanswered := self._peer.unanswered():
            if self._engine is not None:
                self._engine.interrupt_runs()
            left = deadline - loop.time()
            if left <= 0:
                face_logger("acp").warning("%d requests unanswered at exit", len(unanswered))
                return
            await asyncio.wait(unanswered, timeout=min(left, _ROUND))

    async def close(self) -> None:
        """Close the engine (its runs end interrupted), if it was ever opened."""
        self._stop.set()
        if self._engine_task is not None:
            await self._engine_task


async def _serve(data_dir: Path | None, greeted: handshake.Handshake, prelude: Prelude) -> int:
    """Serve; returns the exit code (a broken stdout stops the face at once: nobody reads it)."""
    tasks: set[asyncio.Task[None]] = set()
    broken = BrokenStdout(face_logger("acp"))

    def spawn(coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        return task

    async with open_stdio(limit=STDIN_LIMIT, prelude=prelude) as (reader, sink):
        peer = Peer(reader, sink, dialect=STRICT, name="acp-agent", answer_after_eof=True, on_output_error=broken)
        connection = _Connection(data_dir, greeted, peer, spawn)
        try:
            async with peer:
                try:
                    await unless_reader_gone(peer.wait_closed(), broken.event)
                    await unless_reader_gone(connection.answer_the_rest(), broken.event)
                finally:
                    for task in list(tasks):
                        task.cancel()
                    await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            await connection.close()
    return broken.exit_status()
