"""Claude Code's plan usage, read from a short-lived `claude` in stream-json mode (docs/sidecar.md "Plan usage").

    → control_request initialize        ← control_response {account: …}
    → control_request get_usage         ← control_response {subscription_type, rate_limits_available, rate_limits}

Observed with claude 2.1.197 (about 0.6 s): `rate_limits` holds `five_hour` and `seven_day` windows
(`utilization` 0-100, `resets_at` ISO 8601) fetched from the claude.ai backend; with an API key
`rate_limits_available` is false; with no login at all the initialize answer's `account` names no key source and
no subscription. Closing stdin ends the process (no user message was sent, so no model call is made).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from typing import Any

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
from omniagent.runtime.plan_usage import NO_PLAN_QUOTA, claude_plan_usage, open_reader_process
from omniagent.wire.encode import dumps
from omniagent.wire.errors import LineTooLarge
from omniagent.wire.jsonl import read_lines
from omniagent.wire.process import ChildProcess, SpawnError

# Last claude stderr lines carried by a failure.
STDERR_TAIL = 6
_INIT_ID = "omniagent-usage-init"
_USAGE_ID = "omniagent-usage"


async def read_claude_plan_usage(installation: AgentInstallation) -> PlanUsage:
    """Claude Code's plan usage. Raises `UnsupportedFeature` (no plan quota for this login, or a CLI that does not
    answer `get_usage`), `AuthRequired`, `HandshakeTimeout`, `SpawnFailed` or `ProtocolFailed`."""
    try:
        async with asyncio.timeout(HANDSHAKE_TIMEOUT):
            account, usage = await _read(installation)
    except TimeoutError:
        raise HandshakeTimeout() from None
    return _plan_usage(installation, account, usage)


async def _read(installation: AgentInstallation) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    try:
        async with (
            open_reader_process(installation) as child,
            aclosing(_frames(child)) as frames,
        ):
            init = await _control(child, frames, _INIT_ID, {"subtype": "initialize", "hooks": {}})
            usage = await _control(child, frames, _USAGE_ID, {"subtype": "get_usage"})
    except SpawnError as exc:
        raise SpawnFailed(str(exc)) from exc
    account = init.get("account")
    return (account if isinstance(account, Mapping) else {}), usage


async def _frames(child: ChildProcess) -> AsyncGenerator[Mapping[str, Any], None]:
    """The JSON objects claude writes on stdout; lines that are not JSON objects are skipped."""
    async for line in read_lines(child.stdout):
        if isinstance(line, LineTooLarge):
            continue
        try:
            frame = json.loads(line)
        except ValueError:
            continue
        if isinstance(frame, dict):
            yield frame


async def _control(
    child: ChildProcess, frames: AsyncIterator[Mapping[str, Any]], request_id: str, request: dict[str, Any]
) -> Mapping[str, Any]:
    """Send one control request and return its success answer; other frames are not ours to handle here."""
    try:
        child.stdin.write(dumps({"type": "control_request", "request_id": request_id, "request": request}) + b"\n")
        await child.stdin.drain()
    except ConnectionError:
        pass  # claude is gone: the frames below end, and that is reported with its exit status
    async for frame in frames:
        response = frame.get("response")
        if frame.get("type") != "control_response" or not isinstance(response, Mapping):
            continue
        if response.get("request_id") != request_id:
            continue
        if response.get("subtype") == "success":
            body = response.get("response")
            return body if isinstance(body, Mapping) else {}
        raise _refused(request["subtype"], str(response.get("error") or "no reason given"))
    status = await child.wait()
    tail = " | ".join(child.stderr_tail()[-STDERR_TAIL:])
    raise ProtocolFailed(f"claude exited before answering {request['subtype']} ({status}){': ' + tail if tail else ''}")


def _refused(subtype: str, error: str) -> AgentError:
    # A CLI too old (or in a mode) without the request says so in words, not with a code.
    if subtype == "get_usage" and any(word in error.lower() for word in ("not supported", "unsupported", "unknown")):
        return UnsupportedFeature(f"plan usage (claude: {error})")
    return ProtocolFailed(f"claude refused {subtype}: {error}")


def _plan_usage(installation: AgentInstallation, account: Mapping[str, Any], usage: Mapping[str, Any]) -> PlanUsage:
    rate_limits = usage.get("rate_limits")
    plan = usage.get("subscription_type")
    plan = plan if isinstance(plan, str) else None
    if isinstance(rate_limits, Mapping):
        return claude_plan_usage(rate_limits, plan=plan)
    if usage.get("rate_limits_available") is True:
        # A subscription whose numbers could not be fetched (offline, or the backend refused the token).
        raise ProtocolFailed("claude could not fetch the plan usage from claude.ai")
    # 2.1.197's `account`: {tokenSource:"none", apiProvider:"firstParty"} with no login at all; an API key adds
    # `apiKeySource`, a claude.ai login `subscriptionType`, a bearer token its own `tokenSource`.
    token = account.get("tokenSource")
    logged_in = (
        plan is not None
        or "subscriptionType" in account
        or "apiKeySource" in account
        or (isinstance(token, str) and token != "none")
    )
    if logged_in or account.get("apiProvider", "firstParty") != "firstParty":
        raise UnsupportedFeature(NO_PLAN_QUOTA)
    row = catalog.profile(installation.id)
    raise AuthRequired(catalog.login_methods(row, installation.executable_path) if row is not None else [])
