"""Opening an engine session for the runtime (new, resumed by id, or forked) and setting its options; the engine
calls and the errors the runtime expects from `connect` (docs/sidecar.md "Errors").

- new: `session.create` in the caller's directory; `model` / `reasoning` creation options go into the create.
- resume: the resume token is the engine session id; an unknown one is `ResumeFailed`.
- fork: `session.fork` of the token's session into the caller's directory; `fork_at` is the `message_id` of a
  `MessageEnded` (`m<N>`, also the `omniagent/fork_point` extension): the fork keeps that message and all before it.
  An unknown token or point is `ResumeFailed`; model / reasoning options are patched onto the fork afterwards.
- no provider with a model and a key: `AuthRequired` with the key variables (checked before anything is made).
- MCP servers (`mcp_servers`): stdio and HTTP ones become the session's servers (`engine.mcp`); SSE ones are
  `UnsupportedFeature`, checked before anything is made.
- every creation option is checked against the session's own options (`check_option`), then applied; a bad one is
  `InvalidConfiguration` and a session made for the open is removed again.
- a workdir (a workspace view, runtime/view.py): the session shows its workspace there
  (`EngineApi.show_workspace_at`); without bubblewrap the open is refused before anything is made, as a process
  agent's is.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress

from omniagent.engine.api import SANDBOX_OPTION_IDS, EngineApi, EngineError, ErrorCode, ServerSpec
from omniagent.protocols.sidecar.agents import AgentDetails, ConfigValue
from omniagent.protocols.sidecar.commands import HttpMcp, StdioMcp
from omniagent.protocols.yuke.sessions import Session
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.engine import info
from omniagent.runtime.errors import (
    AgentError,
    AuthRequired,
    InvalidConfiguration,
    ProtocolFailed,
    ResumeFailed,
    UnsupportedFeature,
)
from omniagent.runtime.requests import check_option
from omniagent.runtime.view import launch_prefix

Describe = Callable[[Session], AgentDetails]
MAX_MESSAGE_ID = 2**53 - 1  # the wire's largest integer (2**53 - 1, JSON's exact-integer limit)


def agent_error(exc: EngineError, unknown: str | None = None) -> AgentError:
    """The one reading of an engine refusal for the runtime: what names no session or message is `ResumeFailed`
    (`unknown` says which, for a person), an unsupported model or effort `InvalidConfiguration`, anything else
    (e.g. a directory that is not a usable workspace) `ProtocolFailed`."""
    if exc.code in (ErrorCode.UNKNOWN_SESSION, ErrorCode.UNKNOWN_MESSAGE):
        return ResumeFailed(unknown or exc.message)
    if exc.code in (ErrorCode.UNSUPPORTED_MODEL, ErrorCode.UNSUPPORTED_REASONING):
        return InvalidConfiguration(exc.message)
    return ProtocolFailed(exc.message)


async def open_session(engine: EngineApi, request: d.ConnectRequest, details: Describe) -> Session:
    """The engine session for `request`, with its creation options applied. `details` describes a session (what
    the options are checked against).

    Raises: `AuthRequired`, `ResumeFailed`, `InvalidConfiguration`, `ProtocolFailed`, `SpawnFailed` (a workdir
    without bubblewrap).
    """
    launch_prefix(request)  # a workdir's view needs bubblewrap; not run here, the engine's commands build their own
    catalog = engine.catalog
    if request.configure.get(info.MODEL_OPTION) is None and not info.has_ready_model(catalog):
        raise AuthRequired(info.login_methods(catalog))
    made = request.resume is None  # a session this open makes (new or fork): removed again if an option fails
    created = made and request.fork is None  # its model / reasoning went into session.create
    if request.fork is not None:
        session = await _fork(engine, request)
    elif request.resume is not None:
        session = await existing(engine, request.resume)
    else:
        session = await _create(engine, request)
    if request.workdir is not None:
        engine.show_workspace_at(session.id, request.workdir)
    for option, value in request.configure.items():
        problem = check_option(details(session), option, value, live=False)
        if problem is None and (not created or option in info.IN_MEMORY_OPTIONS):
            session, problem = await set_option(engine, session, option, value)
        if problem is not None:
            if made:  # leave no half-made session behind
                with suppress(EngineError):
                    await engine.remove_session(session.id)
            raise InvalidConfiguration(problem)
    return session


async def existing(engine: EngineApi, session_id: str) -> Session:
    """The stored session with this id. Raises: `ResumeFailed`."""
    try:
        return await engine.session(session_id)
    except EngineError as exc:
        raise agent_error(exc, f"the engine has no session {session_id}") from exc


async def set_option(
    engine: EngineApi, session: Session, option: str, value: ConfigValue
) -> tuple[Session, str | None]:
    """Apply a live option: mode → the engine's permission mode, sandbox / network / fetch → its sandbox settings,
    model / reasoning → `session.patch`. Returns the
    session as it now is, and the engine's refusal as a sentence (None when applied)."""
    if option == info.MODE_OPTION:
        if value not in ("ask", "auto"):
            return session, "the mode is ask or auto"
        engine.set_permission_mode(session.id, "auto" if value == "auto" else "ask")
        return session, None
    if option in SANDBOX_OPTION_IDS:
        return session, engine.choose_sandbox(session.id, option, value)
    if option not in (info.MODEL_OPTION, info.REASONING_OPTION):
        return session, f"unknown option `{option}`"
    if not isinstance(value, str):
        return session, "wrong value type"
    try:
        if option == info.MODEL_OPTION:
            return await engine.patch_session(session.id, model=value), None
        return await engine.patch_session(session.id, reasoning=value), None
    except EngineError as exc:
        return session, exc.message


async def _create(engine: EngineApi, request: d.ConnectRequest) -> Session:
    model, reasoning = request.configure.get(info.MODEL_OPTION), request.configure.get(info.REASONING_OPTION)
    if not isinstance(model, str | None) or not isinstance(reasoning, str | None):
        raise InvalidConfiguration("wrong value type")
    try:
        return await engine.create_session(str(request.directory), model=model, reasoning=reasoning)
    except EngineError as exc:
        raise agent_error(exc) from exc


async def _fork(engine: EngineApi, request: d.ConnectRequest) -> Session:
    assert request.fork is not None
    source = await existing(engine, request.fork)
    through = None if request.fork_at is None else fork_point(request.fork_at)
    if request.fork_at is not None and through is None:
        raise ResumeFailed(f"the fork point {request.fork_at} is not a message id (m<N>)")
    try:
        return await engine.fork_session(source.id, str(request.directory), through_message_id=through)
    except EngineError as exc:
        raise agent_error(exc, f"the session {source.id} has no message {request.fork_at}") from exc


def mcp_servers(request: d.ConnectRequest) -> list[ServerSpec]:
    """The caller's MCP servers as the engine's. Raises: `UnsupportedFeature` for an SSE server."""
    specs = []
    for server in request.mcp_servers:
        connection = server.connection
        if isinstance(connection, StdioMcp):
            spec = ServerSpec(
                server.name, "the caller", command=connection.command, args=tuple(connection.args), env=connection.env
            )
        elif isinstance(connection, HttpMcp):
            spec = ServerSpec(server.name, "the caller", url=connection.url, headers=connection.headers)
        else:
            raise UnsupportedFeature("SSE MCP servers (the engine speaks stdio and streamable HTTP)")
        specs.append(spec)
    return specs


def fork_point(message_id: str) -> int | None:
    """The engine message id of a runtime message id (`m<N>`, or plain `N`); None when it is neither."""
    digits = message_id.removeprefix("m")
    if not digits.isascii() or not digits.isdigit() or digits.startswith("0"):
        return None
    value = int(digits)
    return value if value <= MAX_MESSAGE_ID else None
