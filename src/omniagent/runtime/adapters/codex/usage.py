"""Codex's plan usage, read from a short-lived `codex app-server` (docs/sidecar.md "Plan usage").

    initialize → initialized → account/rateLimits/read → shut down      (~0.4 s, capped at 30 s)

The app-server asks its ChatGPT backend for the numbers; we only speak its JSON-RPC (no `jsonrpc` member). When it
refuses with "authentication required", one `account/read` tells a login without a plan quota (an API key, or a
custom model provider that needs no OpenAI login) from a missing login.
"""

from __future__ import annotations

import asyncio
from typing import Any

from omniagent._version import __version__
from omniagent.protocols.sidecar.agents import AgentInstallation, PlanUsage
from omniagent.runtime import catalog
from omniagent.runtime.driver import HANDSHAKE_TIMEOUT
from omniagent.runtime.errors import (
    AgentError,
    AuthRequired,
    HandshakeTimeout,
    ProtocolFailed,
    SpawnFailed,
    UnsupportedFeature,
)
from omniagent.runtime.plan_usage import NO_PLAN_QUOTA, codex_plan_usage, open_reader_process
from omniagent.wire.dialects import CODEX
from omniagent.wire.errors import PeerClosed
from omniagent.wire.jsonrpc import Peer
from omniagent.wire.messages import RpcError
from omniagent.wire.process import ChildProcess, SpawnError

# Last app-server stderr lines carried by a failure.
STDERR_TAIL = 6
# What the app-server's refusal says when the login cannot read rate limits (0.171.0: "chatgpt authentication
# required to read rate limits" for an API key, "codex account authentication required …" with no login).
_AUTH_REQUIRED = "authentication required"


async def read_codex_plan_usage(installation: AgentInstallation) -> PlanUsage:
    """Codex's plan usage. Raises `UnsupportedFeature` (no plan quota for this login), `AuthRequired`,
    `HandshakeTimeout`, `SpawnFailed` or `ProtocolFailed`."""
    try:
        async with asyncio.timeout(HANDSHAKE_TIMEOUT):
            return await _read(installation)
    except TimeoutError:
        raise HandshakeTimeout() from None


async def _read(installation: AgentInstallation) -> PlanUsage:
    try:
        async with (
            open_reader_process(installation) as child,
            Peer(child.stdout, child.stdin, dialect=CODEX, name="codex-usage") as peer,
        ):
            return await _ask(peer, child, installation)
    except SpawnError as exc:
        raise SpawnFailed(str(exc)) from exc


async def _ask(peer: Peer, child: ChildProcess, installation: AgentInstallation) -> PlanUsage:
    try:
        await peer.request("initialize", {"clientInfo": {"name": "omniagent", "version": __version__}})
        peer.notify("initialized")
        answer = await peer.request("account/rateLimits/read")
    except RpcError as exc:
        if _AUTH_REQUIRED in exc.message.lower():
            raise await _login_problem(peer, installation) from None
        raise ProtocolFailed(f"codex app-server: {exc.message}") from None
    except PeerClosed:
        raise ProtocolFailed(f"codex app-server exited before answering{_tail(child)}") from None
    rate_limits = answer.get("rateLimits") if isinstance(answer, dict) else None
    if not isinstance(rate_limits, dict):
        raise ProtocolFailed("codex app-server: account/rateLimits/read answered without rateLimits")
    return codex_plan_usage(rate_limits)


async def _login_problem(peer: Peer, installation: AgentInstallation) -> AgentError:
    """What an "authentication required" refusal means for this login: no plan quota, or no login at all."""
    try:
        answer: Any = await peer.request("account/read", {})
    except (RpcError, PeerClosed):
        answer = None
    if isinstance(answer, dict):
        account = answer.get("account")
        api_key = isinstance(account, dict) and account.get("type") == "apiKey"
        # A custom model provider needs no OpenAI login (`requiresOpenaiAuth: false`): nothing is missing.
        if api_key or answer.get("requiresOpenaiAuth") is False:
            return UnsupportedFeature(NO_PLAN_QUOTA)
    row = catalog.profile(installation.id)
    return AuthRequired(catalog.login_methods(row, installation.executable_path) if row is not None else [])


def _tail(child: ChildProcess) -> str:
    lines = child.stderr_tail()[-STDERR_TAIL:]
    return (": " + " | ".join(lines)) if lines else ""
