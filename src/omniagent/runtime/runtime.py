"""The Runtime: discover agents, open sessions, one-shot `generate`. It picks an adapter per agent; the turn
rules live in `turns.py`, never here.

    async with Runtime() as runtime:
        session = await runtime.open("mock", ".")
        await session.prompt("hello")
        async for event in session.events:
            ...
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from omniagent.protocols.sidecar.agents import (
    AgentDetails,
    AgentInstallation,
    AuthUnknown,
    Capabilities,
    Capability,
    DiscoveryReport,
    InstallationSource,
    PlanUsage,
    SessionConfiguration,
    SessionInfo,
    Unauthenticated,
)
from omniagent.protocols.sidecar.base import dump
from omniagent.protocols.sidecar.commands import (
    AgentRef,
    ChoicesAnswer,
    InlineAcp,
    PermissionAnswer,
    PermissionMode,
    QuestionsAnswer,
    TextAnswer,
)
from omniagent.protocols.sidecar.events import (
    Completed,
    PermissionAsk,
    PermissionChoice,
    QuestionAsk,
    RequestOpened,
    StopReason,
    TextDelta,
    ToolUpdated,
    TurnEnded,
)
from omniagent.runtime import driver as d
from omniagent.runtime.adapters import adapter_for, plan_usage_reader_for
from omniagent.runtime.adapters.mock import MOCK_AGENT_ID, MockAdapter, load_script, mock_installation

# Re-exported: what `Runtime(mock=…)` takes and what `Runtime.load_mock` raises, so callers need not reach into the
# adapters.
from omniagent.runtime.adapters.mock import MockScript as MockScript
from omniagent.runtime.adapters.mock import MockScriptError as MockScriptError
from omniagent.runtime.catalog import ConnectionKind, profile
from omniagent.runtime.discovery import discover_async, engine_installation, resolve
from omniagent.runtime.errors import (
    AgentError,
    AuthRequired,
    HandshakeTimeout,
    InvalidConfiguration,
    InvalidRequest,
    NotInstalled,
    ProtocolFailed,
    SessionClosed,
    UnsupportedFeature,
)
from omniagent.runtime.options import OpenOptions, option_values
from omniagent.runtime.plan_usage import PlanUsageCache
from omniagent.runtime.session import Session
from omniagent.runtime.stream import EventStream
from omniagent.runtime.turns import SessionLoop, Timing
from omniagent.runtime.view import checked_workdir

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EngineChoice:
    """The model a new session of our engine would run, and what lets its provider run it, in words for a person."""

    model: str  # the `provider/model` selector
    because: str  # e.g. "ANTHROPIC_API_KEY is set": where the key is, never the key


class Runtime:
    """Drives the agents on this machine. Use as `async with Runtime() as runtime:`; leaving closes every session.

    `mock` replaces the machine's agents with one scripted agent, id `mock` (what `serve --mock` does).
    `timing` shortens the session loop's clocks (tests). `session_ids` names the sessions (default `s1`, `s2`, …;
    the hub continues its index's numbering so ids stay unique across its restarts).
    """

    def __init__(
        self,
        *,
        mock: MockScript | None = None,
        timing: Timing | None = None,
        env: Mapping[str, str] | None = None,
        session_ids: Iterator[str] | None = None,
    ) -> None:
        self._mock = mock
        self._timing = timing or Timing()
        self._env = env
        self._report: DiscoveryReport | None = None
        self._sessions: dict[str, Session] = {}
        self._ids = session_ids or (f"s{n}" for n in itertools.count(1))
        self._group: asyncio.TaskGroup | None = None
        self._stack = AsyncExitStack()
        self._plan_usage = PlanUsageCache()

    @staticmethod
    def load_mock(source: str) -> MockScript:
        """A mock script for `Runtime(mock=…)`: a file, or a bundled script by name (`turn`, `die`, …).

        Raises: `MockScriptError` (the file is missing or does not follow the format).
        """
        return load_script(source)

    @property
    def cancel_grace(self) -> float:
        """Seconds a cancelled turn is given to end before its session loop ends it itself."""
        return self._timing.cancel_grace

    async def __aenter__(self) -> Runtime:
        self._group = await self._stack.enter_async_context(asyncio.TaskGroup())
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
        # The sessions are closed, so their tasks end by themselves. The caller's own exception is not handed to
        # the task group: it would come back wrapped in an ExceptionGroup, and callers catch `OmniagentError`.
        try:
            await self._stack.__aexit__(None, None, None)
        except BaseExceptionGroup as group:
            if exc is None:
                raise _single(group) from group

    async def aclose(self) -> None:
        """Close every open session (each within its close grace)."""
        await asyncio.gather(*(self._close_quietly(s) for s in list(self._sessions.values())))

    @staticmethod
    async def _close_quietly(session: Session) -> None:
        if not session.closed:
            with suppress(SessionClosed):
                await session.close()

    # --- discovery -----------------------------------------------------------------------------------------

    async def discover(self) -> DiscoveryReport:
        """Find the installed agents (never launches one, never uses the network) and cache the report."""
        if self._mock is not None:
            report = DiscoveryReport(agents=[mock_installation()], missing=[], diagnostics=[])
        else:
            report = await discover_async(env=self._env)
        self._report = report
        return report

    async def resolve(self, agent: AgentRef) -> AgentInstallation:
        """An installation for `agent`: inline ACP as given, our engine as it always is (no discovery needed: it
        runs in process), else from the cached discovery (refreshed on a miss).

        Raises: `NotInstalled`.
        """
        if isinstance(agent, InlineAcp):
            spec = agent.acp
            return AgentInstallation(
                id=spec.name,
                name=spec.name,
                executable_path=spec.path,
                source=InstallationSource.PINNED,
                acp_args=list(spec.args),
            )
        row = profile(agent)
        if self._mock is None and row is not None and row.connection is ConnectionKind.ENGINE:
            return engine_installation(row)
        found = resolve(agent, self._report) if self._report is not None else None
        if found is None:
            found = resolve(agent, await self.discover())
        if found is None:
            raise NotInstalled(agent)
        return found

    def drivable(self, installation: AgentInstallation) -> bool:
        """Whether `open` has an adapter for the installation's wire (the mock's, under a mock script)."""
        if self._mock is not None and installation.id == MOCK_AGENT_ID:
            return True
        return adapter_for(installation) is not None

    def engine_ready(self) -> bool:
        """Whether our engine can run a turn now: a provider with a model and a key (reads the catalog and the key
        file; no network). False under a mock script, which replaces every agent."""
        return self.engine_choice() is not None

    def engine_choice(self, model: str | None = None) -> EngineChoice | None:
        """The model a new engine session would run (`model`, else the engine's default) and what lets its
        provider run it, in words for a person (`ANTHROPIC_API_KEY is set`; never a key); None when it cannot run
        now, and under a mock script. Reads the catalog and the key file; no network."""
        if self._mock is not None:
            return None
        # Imported on first use: the engine is not needed to drive the other agents.
        from omniagent.runtime.adapters.engine.info import engine_choice

        found = engine_choice(model)
        return EngineChoice(*found) if found is not None else None

    # --- sessions ------------------------------------------------------------------------------------------

    async def open(
        self,
        agent: AgentRef,
        directory: str | os.PathLike[str],
        options: OpenOptions | None = None,
        *,
        session_id: str | None = None,
        workdir: str | None = None,
        **changes: Any,
    ) -> Session:
        """Launch the agent and open a session in `directory`, with `options` (and any option named in
        `changes`, e.g. `resume=token`; None keeps the default). `session_id` names the session (the hub's ids are
        claimed in its folder; a session resumed by a later hub keeps its id); default: the next of `session_ids`.
        `workdir` (an absolute path, e.g. `/app`): the agent sees `directory` there and works there, in a view of
        this machine (`view.py`; Linux with bubblewrap); nothing is made at that path on the host.

        Raises: `NotInstalled`, `SpawnFailed` (bubblewrap missing for a `workdir` too), `HandshakeTimeout`,
        `AuthRequired`, `ResumeFailed`, `InvalidConfiguration` (a `workdir` that is not an absolute path),
        `UnsupportedFeature`, `ProtocolFailed`, `InvalidRequest` (`session_id` names a session of this runtime
        that is still open).
        """
        if workdir is not None:
            checked_workdir(workdir)
        if session_id is not None:
            known = self._sessions.get(session_id)
            if known is not None and not known.closed:
                raise InvalidRequest(f"session {session_id} is open already")
        chosen = (options or OpenOptions()).changed(**changes)
        installation = await self.resolve(agent)
        request = d.ConnectRequest(
            installation=installation, directory=_absolute(directory), workdir=workdir, **option_values(chosen)
        )
        return await self._open(request, register=True, session_id=session_id)

    async def _open(self, request: d.ConnectRequest, *, register: bool, session_id: str | None = None) -> Session:
        """Open a session; `register` keeps it findable by id (throwaway probe/generate sessions are not)."""
        adapter = self._adapter(request.installation)
        session_id = session_id if session_id is not None else next(self._ids)
        placeholder = SessionInfo(
            id=session_id,
            agent=request.installation,
            details=AgentDetails(auth=AuthUnknown(), capabilities=Capabilities()),
            configuration=SessionConfiguration(),
        )
        loop = SessionLoop(
            info=placeholder, permission_mode=request.permission_mode, stream=EventStream(), timing=self._timing
        )
        events = loop.event_sink(getattr(adapter, "buffer", d.ADAPTER_EVENT_BUFFER))
        opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        assert self._group is not None, "use the Runtime as `async with Runtime() as runtime:`"
        self._group.create_task(self._run_session(adapter, request, loop, events, opened), name=session_id)
        await opened
        session = Session(loop)
        if register:
            self._sessions[session_id] = session
        return session

    async def _run_session(
        self,
        adapter: d.Adapter,
        request: d.ConnectRequest,
        loop: SessionLoop,
        events: d.EventSink,
        opened: asyncio.Future[None],
    ) -> None:
        try:
            async with AsyncExitStack() as stack:
                try:
                    async with asyncio.timeout(d.HANDSHAKE_TIMEOUT):
                        driver = await stack.enter_async_context(adapter.connect(request, events))
                except TimeoutError:
                    raise HandshakeTimeout() from None
                loop.info = SessionInfo(
                    id=loop.info.id,
                    agent=request.installation,
                    details=driver.info.details,
                    configuration=driver.info.configuration,
                    resume_token=driver.info.resume_token,
                    title=driver.info.title,
                )
                opened.set_result(None)
                await loop.run(driver)
        except AgentError as error:
            self._session_failed(loop, opened, error)
        except ExceptionGroup as group:
            # Adapters run task groups: report the first of our own errors they raised, else an adapter bug.
            ours = group.subgroup(AgentError)
            if ours is None:
                log.exception("session %s: adapter failed", loop.info.id)
                self._session_failed(loop, opened, ProtocolFailed("the adapter failed unexpectedly"))
            else:
                first = ours.exceptions[0]
                self._session_failed(
                    loop, opened, first if isinstance(first, AgentError) else ProtocolFailed(str(first))
                )
        except Exception:
            # An adapter bug must not take the runtime down; the caller sees a protocol failure.
            log.exception("session %s: adapter failed", loop.info.id)
            if not opened.done():
                opened.set_exception(ProtocolFailed("the adapter failed unexpectedly"))
        finally:
            if not loop.finished:
                loop.abandon()

    @staticmethod
    def _session_failed(loop: SessionLoop, opened: asyncio.Future[None], error: AgentError) -> None:
        if not opened.done():
            opened.set_exception(error)
        else:
            log.warning("session %s ended with %s", loop.info.id, error.kind.value)

    def session(self, session_id: str) -> Session | None:
        """A session this runtime opened (closed ones included), or None."""
        return self._sessions.get(session_id)

    def _adapter(self, installation: AgentInstallation) -> d.Adapter:
        if self._mock is not None and installation.id == MOCK_AGENT_ID:
            return MockAdapter(self._mock)
        adapter = adapter_for(installation)
        if adapter is None:
            raise ProtocolFailed(f"no adapter implemented for {installation.id} yet")
        return adapter

    # --- one-shot calls ------------------------------------------------------------------------------------

    async def probe(self, agent: AgentRef) -> AgentDetails:
        """The agent's details from a throwaway session in the temp dir; a logged-out agent is a result."""
        import tempfile

        try:
            session = await self.open(agent, tempfile.gettempdir())
        except AuthRequired as error:
            return AgentDetails(auth=Unauthenticated(login=error.login), capabilities=Capabilities())
        try:
            return session.info().details
        finally:
            await session.close()

    async def plan_usage(self, agent: AgentRef) -> PlanUsage:
        """The quota windows of the agent's logged-in plan, read from the agent itself: Codex and
        Claude Code. Each answer is kept 60 s per (agent id, executable); a kept answer launches nothing.

        Raises: `NotInstalled`, `UnsupportedFeature` ("plan usage" for agents that cannot tell, "no plan quota
        for this login" for an API key), `AuthRequired`, `HandshakeTimeout`, `SpawnFailed`, `ProtocolFailed`.
        """
        installation = await self.resolve(agent)
        reader = None if self._mock is not None else plan_usage_reader_for(installation)
        if reader is None:
            raise UnsupportedFeature("plan usage")
        key = (installation.id, installation.executable_path)
        return await self._plan_usage.get(key, lambda: reader(installation))

    async def generate(
        self,
        agent: AgentRef,
        directory: str | os.PathLike[str],
        prompt: str,
        options: OpenOptions | None = None,
        **changes: Any,
    ) -> str:
        """One-shot text: a new session, one prompt, the turn's top-level text. The permission
        mode is ignored: generate always asks, so it can decline every tool.

        Raises: `InvalidConfiguration` (resume or fork), `UnsupportedFeature`, `ProtocolFailed`, and the errors
        of `open`.
        """
        chosen = (options or OpenOptions()).changed(**changes)
        if chosen.resume is not None or chosen.fork is not None:
            raise InvalidConfiguration("generate requires a new session")
        installation = await self.resolve(agent)
        request = d.ConnectRequest(
            **option_values(chosen.changed(permission_mode=PermissionMode.ASK)),
            installation=installation,
            directory=_absolute(directory),
            disable_tools=True,
        )
        session = await self._open(request, register=False)
        try:
            return await _collect_text(session, prompt)
        finally:
            if not session.closed:
                await session.close()


async def _collect_text(session: Session, prompt: str) -> str:
    if not session.tools_disabled and Capability.PERMISSIONS not in session.info().details.capabilities.features:
        raise UnsupportedFeature("generate requires tool permissions or launch-time tool disabling")
    delivery = await session.prompt(prompt)
    turn_id = getattr(delivery.kind, "turn_id", None)
    parts: list[str] = []
    async for event in session.events:
        if event.turn_info is None or event.turn_info.id != turn_id:
            continue
        kind = event.kind
        if isinstance(kind, TextDelta) and event.turn_info.parent_tool_id is None:
            parts.append(kind.text)
        elif isinstance(kind, ToolUpdated):
            await session.cancel(clear_queue=True)
            raise ProtocolFailed("generate: the agent attempted to use a tool")
        elif isinstance(kind, RequestOpened):
            await _decline(session, kind)
        elif isinstance(kind, TurnEnded):
            if isinstance(kind.stop, Completed):
                return "".join(parts)
            raise ProtocolFailed(f"generate: turn ended with {_describe(kind.stop)}")
    raise SessionClosed()


async def _decline(session: Session, opened: RequestOpened) -> None:
    request = opened.request
    if isinstance(request, PermissionAsk):
        for choice in (PermissionChoice.DENY_ONCE, PermissionChoice.DENY_ALWAYS):
            if choice in request.request.options:
                await session.answer(request.request.id, PermissionAnswer(choice=choice))
                return
    elif isinstance(request, QuestionAsk) and all(q.allows_free_text for q in request.request.questions):
        answers: list[TextAnswer | ChoicesAnswer] = [TextAnswer(text="") for _ in request.request.questions]
        await session.answer(request.request.id, QuestionsAnswer(answers=answers))
        return
    await session.cancel(clear_queue=True)
    raise ProtocolFailed("generate: the request cannot be declined without making a choice")


def _first_agent_error(group: BaseExceptionGroup[Any]) -> AgentError | None:
    for error in group.exceptions:
        if isinstance(error, AgentError):
            return error
        if isinstance(error, BaseExceptionGroup):
            nested = _first_agent_error(error)
            if nested is not None:
                return nested
    return None


def _absolute(directory: str | os.PathLike[str]) -> Path:
    """Made absolute lexically, as the reference does (no symlink resolution)."""
    return Path(os.path.abspath(directory))


def _describe(stop: StopReason) -> str:
    value = dump(stop)
    return value if isinstance(value, str) else next(iter(value))


def _single(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one error a group holds (what a caller can catch by type), else the group itself."""
    leaves: list[BaseException] = []
    pending: list[BaseException] = [group]
    while pending:
        error = pending.pop()
        if isinstance(error, BaseExceptionGroup):
            pending.extend(error.exceptions)
        else:
            leaves.append(error)
    return leaves[0] if len(leaves) == 1 else group
