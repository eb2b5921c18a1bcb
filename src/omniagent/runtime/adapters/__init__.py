"""Adapters: each turns one agent wire into driver events and back, with zero turn rules.

The registry maps a catalog row's connection kind to the adapter that speaks it. A kind without an adapter
here makes `open` fail with `ProtocolFailed("no adapter implemented for X yet")`.
"""

from __future__ import annotations

from collections.abc import Callable

from omniagent.protocols.sidecar.agents import AgentInstallation
from omniagent.runtime.catalog import ConnectionKind, profile
from omniagent.runtime.driver import Adapter
from omniagent.runtime.plan_usage import PlanUsageReader


def _acp(installation: AgentInstallation) -> Adapter:
    # Imported on first use: the ACP models cost ~250 ms to import, more than `serve --mock` needs to say hello.
    from omniagent.runtime.adapters.acp.adapter import AcpAdapter

    return AcpAdapter(installation)


def _claude(installation: AgentInstallation) -> Adapter:
    from omniagent.runtime.adapters.claude.adapter import ClaudeAdapter

    return ClaudeAdapter(installation)


def _codex(installation: AgentInstallation) -> Adapter:
    from omniagent.runtime.adapters.codex.adapter import CodexAdapter

    return CodexAdapter(installation)


def _engine(installation: AgentInstallation) -> Adapter:
    # Imported on first use too: the engine (store, providers, tools) is not needed to say hello.
    from omniagent.runtime.adapters.engine.adapter import EngineAdapter

    return EngineAdapter(installation)


def _pi(installation: AgentInstallation) -> Adapter:
    from omniagent.runtime.adapters.pi.adapter import PiAdapter

    return PiAdapter(installation)


def _opencode(installation: AgentInstallation) -> Adapter:
    from omniagent.runtime.adapters.opencode.adapter import OpencodeAdapter

    return OpencodeAdapter(installation)


# connection kind → factory taking the installation. Filled as adapters land.
ADAPTERS: dict[ConnectionKind, Callable[[AgentInstallation], Adapter]] = {
    ConnectionKind.ACP: _acp,
    ConnectionKind.CLAUDE: _claude,
    ConnectionKind.CODEX: _codex,
    ConnectionKind.ENGINE: _engine,
    ConnectionKind.PI: _pi,
    ConnectionKind.OPENCODE: _opencode,
}


def adapter_for(installation: AgentInstallation) -> Adapter | None:
    """The adapter for an installation, or None when its wire has no adapter yet. An inline `{"acp":…}` agent
    (one with `acp_args`) is always ACP, whatever its name."""
    if installation.acp_args is not None:
        return _acp(installation)
    row = profile(installation.id)
    if row is None:
        return None
    factory = ADAPTERS.get(row.connection)
    return factory(installation) if factory is not None else None


def _codex_usage() -> PlanUsageReader:
    from omniagent.runtime.adapters.codex.usage import read_codex_plan_usage

    return read_codex_plan_usage


def _claude_usage() -> PlanUsageReader:
    from omniagent.runtime.adapters.claude.usage import read_claude_plan_usage

    return read_claude_plan_usage


# connection kind → loader of the kind's plan-usage reader (imported on first use, like the adapters).
# Kinds without one answer `UnsupportedFeature("plan usage")`.
PLAN_USAGE: dict[ConnectionKind, Callable[[], PlanUsageReader]] = {
    ConnectionKind.CODEX: _codex_usage,
    ConnectionKind.CLAUDE: _claude_usage,
}


def plan_usage_reader_for(installation: AgentInstallation) -> PlanUsageReader | None:
    """The plan-usage reader for an installation's wire, or None when that wire cannot report plan usage."""
    if installation.acp_args is not None:
        return None
    row = profile(installation.id)
    if row is None:
        return None
    loader = PLAN_USAGE.get(row.connection)
    return loader() if loader is not None else None
