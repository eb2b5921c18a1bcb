"""Opening a Codex app-server session: the launch command, then `initialize` →
`initialized` → `account/read` → `model/list` → the thread (`thread/start`, `thread/resume` or `thread/fork`) with
the creation-time options.

Each step's refusal becomes the runtime error the caller can act on: no login → `AuthRequired` with the ways to
log in; a bad option → `InvalidConfiguration` before any thread exists; a thread the server cannot reopen →
`ResumeFailed`. Transport failures are the adapter's to map.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from omniagent._version import __version__
from omniagent.protocols.sidecar.agents import AgentInstallation, Unauthenticated
from omniagent.protocols.sidecar.commands import McpServer, StdioMcp
from omniagent.runtime import catalog
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.codex.info import (
    EFFORT,
    CodexState,
    agent_version,
    auth_status,
    creation_problem,
    parse_models,
    thread_params,
)
from omniagent.runtime.errors import (
    AuthRequired,
    InvalidConfiguration,
    ProtocolFailed,
    ResumeFailed,
    UnsupportedFeature,
)
from omniagent.wire.jsonrpc import Peer
from omniagent.wire.messages import RpcError

CLIENT_NAME = "omniagent"
# Pages of `model/list` read at most (0.171.0 answers in one); a server that keeps paging is cut off here.
MODEL_PAGES = 10


def launch_argv(installation: AgentInstallation) -> list[str]:
    """The executable, then the catalog row's launch args (`app-server`)."""
    row = catalog.profile(installation.id)
    return [installation.executable_path, *(row.launch_args if row is not None else ("app-server",))]


async def handshake(peer: Peer, request: d.ConnectRequest, warnings: list[str]) -> tuple[CodexState, dict[str, Any]]:
    """Run the handshake and bind the thread; returns the session's state and the live per-turn overrides (an
    `effort` asked for at creation rides every `turn/start`). What went wrong without stopping it is appended to
    `warnings`.

    Raises: `AuthRequired`, `InvalidConfiguration`, `ResumeFailed`, `ProtocolFailed`, and the peer's
    `RpcError` / `PeerClosed` for the adapter to map.
    """
    init = await peer.request("initialize", {"clientInfo": {"name": CLIENT_NAME, "version": __version__}})
    peer.notify("initialized")
    state = CodexState(version=agent_version(init.get("userAgent") if isinstance(init, Mapping) else None))
    installation = request.installation
    row = catalog.profile(installation.id)
    logins = catalog.login_methods(row, installation.executable_path) if row is not None else []
    try:
        account = await peer.request("account/read", {})
    except RpcError as exc:
        # The login is only described here; a server that cannot check it now (a ChatGPT login whose workspace
        # lookup failed) may still run turns, and a turn that needs a login says so itself.
        warnings.append(f"could not read the codex login: {exc.message}")
    else:
        state.auth = auth_status(account if isinstance(account, Mapping) else {}, logins)
    if isinstance(state.auth, Unauthenticated):
        raise AuthRequired(logins)
    state.models = parse_models(await _models(peer))
    problem = creation_problem(state, request.configure)
    if problem is not None:
        raise InvalidConfiguration(problem)
    result = await _bind_thread(peer, request)
    if not isinstance(result, Mapping) or not isinstance(result.get("thread"), Mapping):
        raise ProtocolFailed("the app-server's thread result has no thread")
    state.apply_thread(result)
    overrides: dict[str, Any] = {}
    if EFFORT in request.configure:
        overrides[EFFORT] = request.configure[EFFORT]
        state.effort = str(request.configure[EFFORT])
    return state, overrides


def mcp_config(servers: Sequence[McpServer]) -> dict[str, Any]:
    """The caller's MCP servers as the app-server's `mcp_servers` config override (as in its config.toml). Only
    stdio servers were seen to start this way; HTTP and SSE servers are refused.

    Raises: `UnsupportedFeature`.
    """
    config: dict[str, Any] = {}
    for server in servers:
        connection = server.connection
        if not isinstance(connection, StdioMcp):
            raise UnsupportedFeature(f"{connection.TAG} MCP servers")
        config[server.name] = {
            "command": connection.command,
            "args": list(connection.args),
            "env": dict(connection.env),
        }
    return config


async def _models(peer: Peer) -> list[Any]:
    entries: list[Any] = []
    cursor: str | None = None
    for _ in range(MODEL_PAGES):
        page = await peer.request("model/list", {"cursor": cursor} if cursor else {})
        if not isinstance(page, Mapping):
            break
        data = page.get("data")
        entries.extend(data if isinstance(data, list) else [])
        cursor = page.get("nextCursor") if isinstance(page.get("nextCursor"), str) else None
        if cursor is None:
            break
    return entries


async def _bind_thread(peer: Peer, request: d.ConnectRequest) -> Any:
    """`thread/start`, or `thread/resume` / `thread/fork` (whose refusal means the token is no good)."""
    params: dict[str, Any] = {"cwd": request.cwd, **thread_params(request.configure)}
    servers = mcp_config(request.mcp_servers)
    if servers:
        params["config"] = {"mcp_servers": servers}
    if request.disable_tools:
        # `generate`: the wire cannot switch tools off, so every tool asks (and generate declines) and nothing is
        # written; the one-shot thread is not kept.
        params.setdefault("approvalPolicy", "untrusted")
        params.setdefault("sandbox", "read-only")
    if request.fork is not None:
        fork = {"threadId": request.fork, "excludeTurns": True, **params}
        if request.fork_at is not None:
            fork["lastTurnId"] = request.fork_at
        return await _reopen(peer, "thread/fork", fork)
    if request.resume is not None:
        return await _reopen(peer, "thread/resume", {"threadId": request.resume, "excludeTurns": True, **params})
    try:
        return await peer.request("thread/start", {**params, "ephemeral": True} if request.disable_tools else params)
    except RpcError as exc:
        raise InvalidConfiguration(f"agent rejected the session options: {exc.message}") from exc


async def _reopen(peer: Peer, method: str, params: dict[str, Any]) -> Any:
    try:
        return await peer.request(method, params)
    except RpcError as exc:
        raise ResumeFailed(f"{exc.message} ({exc.code})") from exc
