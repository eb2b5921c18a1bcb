"""The Engine: owns the store, the live sessions and their runs, and the broadcaster. Commands in, broadcasts out.

What it is: the composition root of the agent engine and its method table (yuke method name → handler).
What it is not: a wire. `rpc.py` turns lines into handler calls; the handlers live in `sessions.py`,
`fork.py`, `inputs.py` and `accounts.py`; one run's rules live in `runs.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omniagent import __version__
from omniagent.engine import accounts, fork, sessions
from omniagent.engine.broadcast import Broadcaster
from omniagent.engine.errors import EngineError
from omniagent.engine.inputs import Inputs
from omniagent.engine.live import ActiveRun, LiveSession
from omniagent.engine.permissions import SET_MODE_METHOD, PermissionModeResult, Permissions, SetPermissionModeParams
from omniagent.engine.routes import Routes
from omniagent.engine.sandboxes import SET_SANDBOX_METHOD, Sandboxes, SandboxResult, SetSandboxParams
from omniagent.engine.store import Store
from omniagent.engine.store import queries as q
from omniagent.engine.store.ownership import DEFAULT_LEASE_SECONDS
from omniagent.engine.tools import ToolLimits, default_tools
from omniagent.protocols.yuke.activity import ActivityIdle, SessionActivity, SessionActivityChangedData
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.envelope import PROTOCOL_VERSION, ErrorCode
from omniagent.protocols.yuke.misc import Empty, EngineInfo, InitializeResult
from omniagent.protocols.yuke.sessions import Session, SessionRemovedData, SessionSummaryChangedData

log = logging.getLogger(__name__)

Handler = Callable[[Any], Awaitable[YukeModel]]

STORE_FILE = "engine.sqlite3"
# Seconds shutdown waits for runs to record their end before the process exits anyway.
SHUTDOWN_GRACE = 5.0


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """Where the engine keeps things, and its test knobs.

    `retry_scale` multiplies every retry wait (1.0 in production; tests shrink the documented schedule with
    OMNIAGENT_RETRY_SCALE so five attempts do not take 7.5 s). `lease_seconds`: see `store/ownership.py`.
    `tool_limits` bounds every tool call (OMNIAGENT_SEARCH_TIMEOUT sets its search deadline).
    """

    data_dir: Path
    config_dir: Path
    retry_scale: float = 1.0
    # Seconds this process's run-ownership lease lasts without renewal (store/ownership.py; OMNIAGENT_LEASE_SECONDS).
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    tool_limits: ToolLimits = field(default_factory=ToolLimits)


class Engine:
    """The engine for one process. Open with `async with Engine.open(config) as engine`."""

    def __init__(self, config: EngineConfig, store: Store, routes: Routes, tasks: asyncio.TaskGroup) -> None:
        self.config = config
        self.store = store
        self.routes = routes
        self.tasks = tasks
        self.broadcaster = Broadcaster()
        self.live: dict[str, LiveSession] = {}
        self.revision = 0  # SessionRevision: in-memory, restarts at 0 per process
        self.inputs = Inputs(self)
        self.permissions = Permissions(self.broadcaster)
        self.sandboxes = Sandboxes(config.data_dir, config.config_dir)
        self.tools = default_tools()
        self.handlers: dict[str, Handler] = self._handler_table()
        # Engine extensions to the yuke method table (docs/engine.md): method → params model.
        self.extensions: dict[str, type[YukeModel]] = {
            SET_MODE_METHOD: SetPermissionModeParams,
            SET_SANDBOX_METHOD: SetSandboxParams,
        }

    @classmethod
    @contextlib.asynccontextmanager
    async def open(cls, config: EngineConfig) -> AsyncIterator[Engine]:
        """Open the store and catalog; on exit, end active runs as interrupted and close everything."""
        store = await Store.open(config.data_dir / STORE_FILE, lease_seconds=config.lease_seconds)
        routes = Routes.load(config.data_dir, config.config_dir)
        try:
            async with asyncio.TaskGroup() as tasks:
                engine = cls(config, store, routes, tasks)
                lease = tasks.create_task(engine._keep_lease(), name="lease")
                try:
                    yield engine
                finally:
                    lease.cancel()
                    await engine._stop_runs()
        finally:
            await routes.aclose()
            await store.aclose()

    def _handler_table(self) -> dict[str, Handler]:
        s, i, a = sessions, self.inputs, accounts
        table: dict[str, Handler] = {
            "initialize": self._initialize,
            "session.list": lambda p: s.list_(self, p),
            "session.get": lambda p: s.get(self, p),
            "session.create": lambda p: s.create(self, p),
            "session.patch": lambda p: s.patch(self, p),
            "session.remove": lambda p: s.remove(self, p),
            "session.fork": lambda p: fork.fork(self, p),
            "session.history": lambda p: s.history(self, p),
            "session.config": lambda p: s.config(self, p),
            "session.send_input": i.send_input,
            "session.cancel_input": i.cancel_input,
            "session.queue": i.queue,
            "session.cancel_run": i.cancel_run,
            "session.compact": i.compact,
            "catalog.list": lambda p: a.catalog_list(self, p),
            "catalog.reload": lambda p: a.catalog_reload(self, p),
            "auth.list": lambda p: a.auth_list(self, p),
            "auth.set_api_key": lambda p: a.auth_set_api_key(self, p),
            "auth.remove": lambda p: a.auth_remove(self, p),
            "auth.login": lambda p: a.auth_login(self, p),
            "auth.cancel_login": lambda p: a.auth_login(self, p),  # no login flow can be running
            "interaction.respond": self.permissions.respond,
            SET_MODE_METHOD: self._set_permission_mode,
            SET_SANDBOX_METHOD: self._set_sandbox,
        }
        return table

    async def handle(self, method: str, params: YukeModel) -> YukeModel:
        """Run one method; methods in the protocol but not served answer not_implemented."""
        handler = self.handlers.get(method)
        if handler is None:
            raise EngineError(ErrorCode.NOT_IMPLEMENTED, "this method is not implemented")
        return await handler(params)

    async def _set_permission_mode(self, params: SetPermissionModeParams) -> PermissionModeResult:
        if await self.store.read(q.get_session, params.session_id) is None:
            raise EngineError.unknown_session()
        return await self.permissions.set_mode_method(params)

    async def _set_sandbox(self, params: SetSandboxParams) -> SandboxResult:
        if await self.store.read(q.get_session, params.session_id) is None:
            raise EngineError.unknown_session()
        return await self.sandboxes.set_method(params)

    async def _initialize(self, _params: Empty) -> InitializeResult:
        return InitializeResult(
            protocol=PROTOCOL_VERSION,
            engine=EngineInfo(version=__version__),
            session_revision=self.revision,
            catalog_rev=self.routes.catalog_rev,
        )

    # Live state and the broadcasts that describe it -------------------------------------------------------------

    def live_session(self, session_id: str) -> LiveSession:
        """The live record of a session, created on first touch."""
        live = self.live.get(session_id)
        if live is None:
            live = self.live[session_id] = LiveSession(session_id)
        return live

    def is_busy(self, session_id: str) -> bool:
        live = self.live.get(session_id)
        return live is not None and live.run is not None

    def activity_of(self, record: q.SessionRecord, queued: int) -> SessionActivity:
        """Live activity of a resident session, else the durable idle activity."""
        live = self.live.get(record.session.id)
        if live is not None:
            return live.activity()
        return SessionActivity(state=ActivityIdle(), queued=queued, context_usage=record.usage_last)

    def activity_changed(self, live: LiveSession) -> None:
        self.broadcaster.emit(
            "session.activity_changed", SessionActivityChangedData(session_id=live.session_id, activity=live.activity())
        )

    def summary_changed(self, session: Session) -> None:
        self.revision += 1
        self.broadcaster.emit(
            "session.summary_changed", SessionSummaryChangedData(revision=self.revision, session=session)
        )

    def session_removed(self, session_id: str) -> None:
        self.live.pop(session_id, None)
        self.permissions.forget(session_id)
        self.sandboxes.forget(session_id)
        self.revision += 1
        self.broadcaster.emit("session.removed", SessionRemovedData(revision=self.revision, session_id=session_id))

    # Start and stop ---------------------------------------------------------------------------------------------

    async def recover(self) -> None:
        """End every run a previous process left open as failed `interrupted` (with its run.done)."""
        await self.inputs.recover()

    def interrupt_runs(self) -> list[ActiveRun]:
        """Ask every active run to end `interrupted` (the client went away); returns them without waiting."""
        runs = [live.run for live in self.live.values() if live.run is not None]
        for run in runs:
            self.inputs.interrupt(run, "interrupted")
        return runs

    async def _keep_lease(self) -> None:
        """Renew this process's run-ownership lease every third of its period, and end runs whose owner is gone
        (another process that crashed or stopped renewing), so their sessions do not stay busy forever."""
        ownership = self.store.ownership
        while True:
            await asyncio.sleep(ownership.lease_seconds / 3)
            try:
                if not await self.store.write(ownership.renew):
                    log.warning("this process's run lease had lapsed; registered again")
                await self.inputs.recover()
            except sqlite3.Error as exc:  # a store busy past its timeout: try again next period
                log.warning("renewing the run lease failed: %s", exc)

    async def _stop_runs(self) -> None:
        runs = self.interrupt_runs()
        pending = [r.task for r in runs if r.task is not None]
        if pending:
            _, late = await asyncio.wait(pending, timeout=SHUTDOWN_GRACE)
            for task in late:
                log.warning("a run did not stop in time")
                task.cancel()
