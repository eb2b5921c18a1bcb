"""The one in-process Engine that every `omniagent` session of this event loop shares.

Why one, and why in process (docs/architecture.md, "The engine as an agent"): the engine's store is one SQLite
file, and an engine that opens it first ends every run the store says is open (crash recovery). Two engines on one
store would each end the other's live runs. So sessions never get an engine of their own: the first session to
open starts the engine for its event loop, later ones share it, and the last one to close shuts it down (active
runs then end `interrupted`, as when `omniagent rpc` stops).

The engine reads its data dir and keys from the process environment, exactly as `omniagent rpc` does
(`EngineApi.config`: `OMNIAGENT_DATA_DIR`, else the user data dir).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from omniagent.engine.api import EngineApi, EngineConfig

log = logging.getLogger(__name__)
# Engines whose opener was cancelled while they started: referenced here until they have closed again.
_closing: set[asyncio.Task[None]] = set()


@dataclass(slots=True)
class _Generation:
    """One open engine: the task holding it open, the event that lets it close, and the event set once it did."""

    task: asyncio.Task[None]
    engine: EngineApi
    stop: asyncio.Event
    ended: asyncio.Event = field(default_factory=asyncio.Event)


class EngineHost:
    """Starts the engine on first use, shares it, stops it when its last user leaves."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._users = 0
        self._current: _Generation | None = None

    @contextlib.asynccontextmanager
    async def lease(self) -> AsyncIterator[tuple[EngineApi, asyncio.Event]]:
        """The shared engine and an event set when it stops (for any reason) while the lease is held.

        Raises: whatever opening the store raises (`OSError`, a store error) when the engine cannot start.
        """
        generation = await self._acquire()
        try:
            yield generation.engine, generation.ended
        finally:
            # Shielded: a session torn down by cancellation still has to let the engine close cleanly.
            await asyncio.shield(self._release())

    async def _acquire(self) -> _Generation:
        async with self._lock:
            if self._current is None or self._current.ended.is_set():
                self._current = await _start(EngineApi.config(None))
            self._users += 1
            return self._current

    async def _release(self) -> None:
        async with self._lock:
            self._users -= 1
            current = self._current
            if self._users > 0 or current is None:
                return
            self._current = None
            current.stop.set()
            await asyncio.gather(current.task, return_exceptions=True)


async def _start(config: EngineConfig) -> _Generation:
    """Open the engine in a task of its own (it outlives the session that started it) and wait until it is up."""
    ready: asyncio.Future[EngineApi] = asyncio.get_running_loop().create_future()
    stop, ended = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        try:
            async with EngineApi.open(config) as engine:
                ready.set_result(engine)
                await stop.wait()
        except Exception as exc:
            if ready.done():
                log.exception("the in-process engine stopped")
            else:
                ready.set_exception(exc)
        finally:
            ended.set()
            if not ready.done():
                ready.cancel()

    task = asyncio.create_task(hold(), name="omniagent-engine")
    try:
        engine = await asyncio.shield(ready)
    except asyncio.CancelledError:
        stop.set()  # it closes as soon as it is up; keep it referenced until then
        _closing.add(task)
        task.add_done_callback(_closing.discard)
        raise
    return _Generation(task, engine, stop, ended)


_HOSTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, EngineHost] = weakref.WeakKeyDictionary()


def engine_host() -> EngineHost:
    """The host of the running event loop (one per loop, so one engine per process in practice)."""
    loop = asyncio.get_running_loop()
    host = _HOSTS.get(loop)
    if host is None:
        host = _HOSTS[loop] = EngineHost()
    return host
