"""The adapter for opencode's own HTTP face (`opencode serve`): one server per session.

`connect` launches the server (`server.py`), subscribes to its event stream, reads what the server offers
(`info.py`), then creates, resumes or forks the session and yields the driver (`driver.py`). The resume
token is opencode's session id. A fork point is the message id of a `MessageEnded` (its `opencode/fork_point`
extension): the fork keeps that message and everything before it. The catalog row `opencode-acp` drives the same
CLI through its ACP face instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from typing import Any

from omniagent.protocols.sidecar.agents import AgentInstallation, ConfigValue, LoginMethod
from omniagent.runtime import catalog
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.opencode.driver import OpencodeDriver
from omniagent.runtime.adapters.opencode.info import (
    ServerFacts,
    SessionSettings,
    apply_option,
    driver_info,
    real_title,
    server_facts,
)
from omniagent.runtime.adapters.opencode.server import (
    ConfigProblem,
    OpencodeServer,
    ServerError,
    ServerExited,
    launch_server,
    stop_task,
)
from omniagent.runtime.errors import (
    AuthRequired,
    HandshakeTimeout,
    InvalidConfiguration,
    ProtocolFailed,
    ResumeFailed,
    SpawnFailed,
    UnsupportedFeature,
)
from omniagent.runtime.requests import check_option
from omniagent.runtime.view import launch_prefix
from omniagent.wire.process import SpawnError

# Last server stderr lines appended to a startup failure.
STDERR_TAIL = 6


class OpencodeAdapter:
    """Speaks opencode's HTTP + SSE API to one installation, one `opencode serve` per session."""

    buffer = d.ADAPTER_EVENT_BUFFER

    def __init__(self, installation: AgentInstallation) -> None:
        self.installation = installation

    @asynccontextmanager
    async def connect(self, request: d.ConnectRequest, events: d.EventSink) -> AsyncIterator[d.Driver]:
        if request.mcp_servers:
            raise UnsupportedFeature("MCP servers from the caller (opencode reads its own config)")
        executable = request.installation.executable_path
        async with AsyncExitStack() as stack:
            with _startup_errors():
                async with asyncio.timeout(d.HANDSHAKE_TIMEOUT):
                    server = await stack.enter_async_context(
                        launch_server(
                            executable,
                            str(request.directory),
                            request.permission_mode,
                            startup_timeout=d.HANDSHAKE_TIMEOUT,
                            prefix=launch_prefix(request),
                        )
                    )
            with _startup_errors():
                async with asyncio.timeout(d.HANDSHAKE_TIMEOUT):
                    driver = await _open(server, request, events, stack)
            # Entered only now: a TaskGroup would wrap an open failure in an ExceptionGroup.
            group = await stack.enter_async_context(asyncio.TaskGroup())
            driver.group = group
            group.create_task(driver.run())
            try:
                yield driver
            finally:
                driver.stop()


async def _open(
    server: OpencodeServer, request: d.ConnectRequest, events: d.EventSink, stack: AsyncExitStack
) -> OpencodeDriver:
    """Read the server's facts, subscribe to its events, then create, resume or fork the session.

    Raises: `AuthRequired`, `ResumeFailed`, `InvalidConfiguration`, `ServerError`.
    """
    facts = await _facts(server)
    logins = catalog_logins(request.installation)
    if not facts.connected:
        raise AuthRequired(logins)
    settings = SessionSettings(model=facts.default_model, agent=facts.default_agent)
    driver = OpencodeDriver(server, events, facts, settings, logins, request.cwd)
    pump = asyncio.create_task(driver.pump())
    stack.push_async_callback(stop_task, pump)
    await driver.connected.wait()  # from here on no event of the new session can be missed
    session = await _session(server, request)
    _take_session(settings, session)
    if request.resume is not None or request.fork is not None:
        # A fork's copies are announced as new messages, maybe after this: known ids are history, not news.
        messages = await server.get(f"/session/{session['id']}/message")
        driver.mapper.history.update(_message_ids(messages))
    for option, value in request.configure.items():
        _configure_at_creation(facts, settings, logins, option, value)
    driver.go_live(str(session["id"]))
    return driver


async def _facts(server: OpencodeServer) -> ServerFacts:
    answers = await asyncio.gather(
        server.get("/config"),
        server.get("/config/providers"),
        server.get("/agent"),
        server.get("/command"),
    )
    return server_facts(server.version, *answers)


async def _session(server: OpencodeServer, request: d.ConnectRequest) -> Any:
    """The session the request asks for: forked, resumed or new. Raises `ResumeFailed`."""
    if request.fork is not None:
        return await _fork(server, request.fork, request.fork_at)
    if request.resume is not None:
        try:
            return await server.get(f"/session/{request.resume}")
        except ServerError as exc:
            raise ResumeFailed(f"opencode has no session {request.resume} ({exc.message})") from exc
    return await server.post("/session", {})


async def _fork(server: OpencodeServer, source: str, point: str | None) -> Any:
    """opencode's fork copies the messages *before* the one named; to keep `point` itself, name the next one."""
    body: dict[str, str] = {}
    try:
        if point is not None:
            messages = await server.get(f"/session/{source}/message")
            ids = _message_ids(messages)
            if point not in ids:
                raise ResumeFailed(f"no message {point} in session {source}")
            following = ids[ids.index(point) + 1 :]
            if following:
                body["messageID"] = following[0]
        return await server.post(f"/session/{source}/fork", body)
    except ServerError as exc:
        raise ResumeFailed(f"opencode cannot fork {source} ({exc.message})") from exc


def _message_ids(messages: Any) -> list[str]:
    """The ids in a `/session/{id}/message` answer (entries of another shape are skipped)."""
    if not isinstance(messages, list):
        return []
    infos = [m.get("info") for m in messages if isinstance(m, dict)]
    return [str(info["id"]) for info in infos if isinstance(info, dict) and "id" in info]


def _take_session(settings: SessionSettings, session: Any) -> None:
    """A resumed or forked session keeps the model and agent it last used."""
    if not isinstance(session, dict) or not isinstance(session.get("id"), str):
        raise ServerError("the session answer has no id")
    model = session.get("model")
    if isinstance(model, dict) and model.get("providerID") and model.get("id"):
        settings.model = f"{model['providerID']}/{model['id']}"
    if isinstance(session.get("agent"), str) and session["agent"]:
        settings.agent = session["agent"]
    settings.title = real_title(session.get("title"))


def _configure_at_creation(
    facts: ServerFacts, settings: SessionSettings, logins: list[LoginMethod], option: str, value: ConfigValue
) -> None:
    problem = check_option(driver_info(facts, settings, logins).details, option, value, live=False)
    if problem is not None:
        raise InvalidConfiguration(problem)
    apply_option(facts, settings, option, value)


def catalog_logins(installation: AgentInstallation) -> list[LoginMethod]:
    """How to log in to opencode: its own `auth login`, from the catalog row."""
    row = catalog.profile(installation.id)
    return catalog.login_methods(row, installation.executable_path) if row is not None else []


@contextmanager
def _startup_errors() -> Iterator[None]:
    """The one place where launch and open failures become the runtime's errors."""
    try:
        yield
    except TimeoutError as exc:
        raise HandshakeTimeout() from exc
    except SpawnError as exc:
        raise SpawnFailed(str(exc)) from exc
    except ConfigProblem as exc:
        raise InvalidConfiguration(str(exc)) from exc
    except ServerExited as exc:
        raise ProtocolFailed(f"opencode serve exited while starting ({exc.status}){_tail(exc.stderr)}") from exc
    except ServerError as exc:
        raise ProtocolFailed(exc.message) from exc


def _tail(lines: Sequence[str]) -> str:
    kept = [line for line in lines if line.strip()][-STDERR_TAIL:]
    return "\n" + "\n".join(kept) if kept else ""
