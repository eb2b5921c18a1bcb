"""The Engine: owns the store, the live sessions and their runs, and the broadcaster. Commands in, broadcasts out.

What it is: the composition root of the agent engine and its method table (yuke method name → handler).
What it is not: the API its callers use (`api.py`, `EngineApi`, wraps it) or a wire. The handlers live in
`session/lifecycle.py` (+ `session/fork.py`, `children/tree.py`), `run/inputs.py`, `slots/methods.py` and
`accounts/methods.py`; one run's rules live in `run/executor.py`. No other engine module takes the `Engine`: each part
gets what it uses.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omniagent.engine.accounts.methods import Accounts
from omniagent.engine.broadcast import Broadcaster
from omniagent.engine.children.tree import Children
from omniagent.engine.config import engine_dirs
from omniagent.engine.errors import EngineError
from omniagent.engine.event_log import SESSION_EVENTS_METHOD, RemoteEvents, SessionEventsParams, session_events
from omniagent.engine.handshake import initialize_result
from omniagent.engine.interactions.permissions import (
    SET_MODE_METHOD,
    PermissionModeResult,
    Permissions,
    SetPermissionModeParams,
)
from omniagent.engine.interactions.questions import Questions
from omniagent.engine.interactions.registry import Interactions
from omniagent.engine.interactions.secrets import Secrets
from omniagent.engine.live import ActiveRun, LiveSessions
from omniagent.engine.mcp.servers import McpServers
from omniagent.engine.model_access import ModelAccess
from omniagent.engine.run.context import RunDeps
from omniagent.engine.run.inputs import Inputs
from omniagent.engine.run.instructions import ProjectInstructions
from omniagent.engine.run.limits import ChildLimits, root_max_rounds
from omniagent.engine.sandbox_file import params_of
from omniagent.engine.sandboxes import SET_SANDBOX_METHOD, Sandboxes, SandboxResult, SetSandboxParams
from omniagent.engine.session.lifecycle import Sessions
from omniagent.engine.skills.catalog import SKILLS_LIST_METHOD, Skills, SkillsListParams
from omniagent.engine.slots.file import AgentsFile
from omniagent.engine.slots.methods import Agents
from omniagent.engine.store import STORE_ENV, Store
from omniagent.engine.store import queries as q
from omniagent.engine.store.connection import STORE_ERRORS
from omniagent.engine.store.ownership import DEFAULT_LEASE_SECONDS, lease_from_env
from omniagent.engine.tools import ToolLimits, ToolRegistry, agent_tools, default_tools
from omniagent.engine.tools.context import SEARCH_TIMEOUT
from omniagent.protocols.yuke.base import Empty, YukeModel
from omniagent.protocols.yuke.content import SkillsListResult
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.initialize import InitializeResult

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
    `tool_limits` bounds every tool call (OMNIAGENT_SEARCH_TIMEOUT sets its search deadline). `child_limits`
    bound child sessions (OMNIAGENT_CHILD_MAX_*).
    """

    data_dir: Path
    config_dir: Path
    retry_scale: float = 1.0
    # Seconds this process's run-ownership lease lasts without renewal (store/ownership.py; OMNIAGENT_LEASE_SECONDS).
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    tool_limits: ToolLimits = field(default_factory=ToolLimits)
    child_limits: ChildLimits = field(default_factory=ChildLimits)
    # The max_rounds of a root session created without one (OMNIAGENT_MAX_ROUNDS); None: no cap.
    max_rounds: int | None = None
    # A shared store's URL (OMNIAGENT_STORE, docs/fleet.md); None: the SQLite file in `data_dir`.
    store_url: str | None = None

    @property
    def store(self) -> Path | str:
        """Where the store is: the shared store's URL, else the SQLite file in the data dir."""
        return self.store_url or self.data_dir / STORE_FILE


def engine_config(data_dir: Path | None) -> EngineConfig:
    """The config of the engine of a face (`rpc`, `acp`, the runtime's in-process engine): store and key file in
    `--data-dir` (else OMNIAGENT_DATA_DIR, else the user data dir); providers.json in the same dir when one is
    given, else the user config dir; a shared store when OMNIAGENT_STORE names one; the test knobs from the
    environment."""
    chosen, config_dir = engine_dirs(data_dir)
    scale = float(os.environ.get("OMNIAGENT_RETRY_SCALE", "1.0"))
    limits = ToolLimits(search_timeout=float(os.environ.get("OMNIAGENT_SEARCH_TIMEOUT", SEARCH_TIMEOUT)))
    return EngineConfig(
        data_dir=chosen,
        config_dir=config_dir,
        retry_scale=scale,
        lease_seconds=lease_from_env(),
        tool_limits=limits,
        child_limits=ChildLimits.from_env(),
        max_rounds=root_max_rounds(),
        store_url=os.environ.get(STORE_ENV) or None,
    )


class Engine:
    """The engine for one process: the composition root. Open with `async with Engine.open(config) as engine`.

    Each part is built here with exactly what it uses: `sessions`, `inputs`, `children`, `agents`, `accounts`,
    `interactions` (every open ask: `permissions` and `questions`), `sandboxes`, `model_access`, `mcp` (each
    session's MCP servers), `live` (live state, locks and the broadcaster). Only `EngineApi` (`api.py`) reaches into
    them; every face and the runtime's engine adapter go through it. `handle()` runs the yuke method table;
    `serves(method)` tells whether a method is served; `spawn()` runs a task in the engine's task group.
    """

    def __init__(self, config: EngineConfig, store: Store, model_access: ModelAccess, tasks: asyncio.TaskGroup) -> None:
        self.config = config
        self._tasks = tasks
        self.store = store
        self.model_access = model_access
        self.broadcaster = Broadcaster()
        self.live = LiveSessions(self.broadcaster)
        self.interactions = Interactions(self.broadcaster)
        self.permissions = Permissions(self.interactions)
        self.questions = Questions(self.interactions, Secrets())
        self.sandboxes = Sandboxes(config.data_dir, config.config_dir)
        self.skills = Skills(config.config_dir)
        self.mcp = McpServers(self.broadcaster, config.config_dir)
        self.live.on_removed(self.permissions.forget)
        self.live.on_removed(self.questions.secrets.forget)
        self.live.on_removed(self.sandboxes.forget)
        self.live.on_removed(self.skills.forget)
        self.live.on_removed(self.mcp.forget)
        self.tools = ToolRegistry([*default_tools(), *agent_tools()])
        deps = RunDeps(
            store=store,
            sessions=self.live,
            model_access=model_access,
            tools=self.tools,
            permissions=self.permissions,
            questions=self.questions,
            sandboxes=self.sandboxes,
            retry_scale=config.retry_scale,
            tool_limits=config.tool_limits,
            skills=self.skills,
            child_limits=config.child_limits,
            instructions=ProjectInstructions(config.config_dir),
            mcp=self.mcp,
        )
        self.inputs = Inputs(store, self.live, tasks, deps)
        agents_file = AgentsFile(config.config_dir, model_access)
        limits, inherit = config.child_limits, self._inherit
        self.children = Children(store, self.live, model_access, self.inputs, self.skills, agents_file, limits, inherit)
        self.sessions = Sessions(
            store, self.live, model_access, self.inputs, self.skills, self.children, max_rounds=config.max_rounds
        )
        self.agents = Agents(agents_file, store, self.live, self.sessions)
        self.accounts = Accounts(model_access, self.broadcaster)
        self._handlers: dict[str, Handler] = self._handler_table()
        # Engine extensions to the yuke method table (docs/engine.md): method → params model.
        self.extensions: dict[str, type[YukeModel]] = {
            SET_MODE_METHOD: SetPermissionModeParams,
            SET_SANDBOX_METHOD: SetSandboxParams,
            SKILLS_LIST_METHOD: SkillsListParams,
            SESSION_EVENTS_METHOD: SessionEventsParams,
        }

    @classmethod
    @contextlib.asynccontextmanager
    async def open(cls, config: EngineConfig) -> AsyncIterator[Engine]:
        """Open the store and catalog; on exit, end active runs as interrupted and close everything."""
        store = await Store.open(config.store, lease_seconds=config.lease_seconds)
        model_access = ModelAccess.load(config.data_dir, config.config_dir)
        try:
            async with asyncio.TaskGroup() as tasks:
                engine = cls(config, store, model_access, tasks)
                lease = tasks.create_task(engine._keep_lease(), name="lease")
                relay = tasks.create_task(RemoteEvents(store, engine.live).follow(), name="remote-events")
                try:
                    yield engine
                finally:
                    lease.cancel()
                    relay.cancel()
                    await engine._stop_runs()
                    await engine.accounts.aclose()
                    await engine.mcp.aclose()
        finally:
            await model_access.aclose()
            await store.aclose()

    def _handler_table(self) -> dict[str, Handler]:
        s, i, a, g = self.sessions, self.inputs, self.accounts, self.agents
        table: dict[str, Handler] = {
            "agents.get": g.get,
            "agents.update": g.update,
            "agents.resolve": g.resolve,
            "agents.set_model": g.set_model,
            "initialize": self._initialize,
            "session.list": s.list_,
            "session.get": s.get,
            "session.create": s.create,
            "session.patch": s.patch,
            "session.remove": s.remove,
            "session.fork": s.fork,
            "session.rewind": s.rewind,
            "session.history": s.history,
            "session.config": s.config,
            "session.send_input": i.send_input,
            "session.cancel_input": i.cancel_input,
            "session.queue": i.queue,
            "session.cancel_run": i.cancel_run,
            "session.compact": i.compact,
            "catalog.list": a.catalog_list,
            "catalog.reload": a.catalog_reload,
            "auth.list": a.auth_list,
            "auth.set_api_key": a.auth_set_api_key,
            "auth.remove": a.auth_remove,
            "auth.login": a.auth_login,
            "auth.cancel_login": a.auth_cancel_login,
            "interaction.respond": self.interactions.respond,
            SET_MODE_METHOD: self._set_permission_mode,
            SET_SANDBOX_METHOD: self._set_sandbox,
            SKILLS_LIST_METHOD: self._skills_list,
            SESSION_EVENTS_METHOD: functools.partial(session_events, self.store),
        }
        return table

    def spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run `work` in the engine's task group (it is cancelled when the engine closes)."""
        return self._tasks.create_task(work)

    def serves(self, method: str) -> bool:
        """Whether `handle(method, …)` runs the method (others answer not_implemented)."""
        return method in self._handlers

    async def handle(self, method: str, params: YukeModel) -> YukeModel:
        """Run one method; methods in the protocol but not served answer not_implemented."""
        handler = self._handlers.get(method)
        if handler is None:
            raise EngineError(ErrorCode.NOT_IMPLEMENTED, "this method is not implemented")
        return await handler(params)

    def _inherit(self, child: str, parent: str) -> None:
        """A new child runs with its parent's permission mode and exec sandbox settings, its workdir included (not
        its "always" answers)."""
        self.permissions.set_mode(child, self.permissions.mode(parent))
        s = self.sandboxes.settings(parent)
        domains = [str(rule) for rule in s.allowed_domains]
        self.sandboxes.update(
            SetSandboxParams(
                session_id=child,
                mode=s.mode,
                network=s.network,
                ask_unsandboxed=s.ask_unsandboxed,
                allowed_domains=domains,
                limits=params_of(s.limits),
            )
        )
        self.sandboxes.show_workspace_at(child, s.workdir)

    async def _set_permission_mode(self, params: SetPermissionModeParams) -> PermissionModeResult:
        if await self.store.query(q.get_session, params.session_id) is None:
            raise EngineError.unknown_session()
        return await self.permissions.set_mode_method(params)

    async def _set_sandbox(self, params: SetSandboxParams) -> SandboxResult:
        if await self.store.query(q.get_session, params.session_id) is None:
            raise EngineError.unknown_session()
        return await self.sandboxes.set_method(params)

    async def _skills_list(self, params: SkillsListParams) -> SkillsListResult:
        record_ = await self.store.query(q.get_session, params.session_id)
        if record_ is None:
            raise EngineError.unknown_session()
        catalog = await self.skills.catalog(record_.session.id, record_.session.root)
        return SkillsListResult(skills=catalog.infos())

    async def _initialize(self, _params: Empty) -> InitializeResult:
        return initialize_result(self.live.revision, self.model_access.catalog_rev)

    # Start and stop ---------------------------------------------------------------------------------------------

    async def recover(self) -> None:
        """End every run a previous process left open as failed `interrupted` (with its run.done)."""
        await self.inputs.recover()

    def interrupt_runs(self) -> list[ActiveRun]:
        """Ask every active run to end `interrupted` (the client went away); returns them without waiting."""
        runs = self.live.active_runs()
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
            except STORE_ERRORS as exc:  # a store busy past its timeout: try again next period
                log.warning("renewing the run lease failed: %s", exc)

    async def _stop_runs(self) -> None:
        runs = self.interrupt_runs()
        pending = [r.task for r in runs if r.task is not None]
        if pending:
            _, late = await asyncio.wait(pending, timeout=SHUTDOWN_GRACE)
            for task in late:
                log.warning("a run did not stop in time")
                task.cancel()
