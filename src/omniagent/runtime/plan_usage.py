"""Plan usage: the quota windows of an agent's logged-in plan, read from the agent itself (anyagent §13).

An adapter that can read them registers a reader in `omniagent.runtime.adapters.PLAN_USAGE` for its connection
kind; the runtime caches each answer for `CACHE_SECONDS` per (agent id, executable). This module holds what the
readers and live sessions share: the reader type and the translation of Codex's `rateLimits` object.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from omniagent.protocols.sidecar.agents import AgentInstallation, PlanUsage, UsageWindow
from omniagent.protocols.sidecar.base import SystemTime

# How long one answer is served from the cache (anyagent §13).
CACHE_SECONDS = 60.0

PlanUsageReader = Callable[[AgentInstallation], Awaitable[PlanUsage]]
"""Reads one installation's plan usage. Raises `UnsupportedFeature` (no plan quota for this login),
`AuthRequired`, `HandshakeTimeout`, `SpawnFailed` or `ProtocolFailed`."""

# Codex leaves a window's duration out on some plans: the defaults anyagent uses (§13).
_DEFAULT_PRIMARY_MINUTES = 300
_DEFAULT_SECONDARY_MINUTES = 10080
_MONTHLY_PLANS = frozenset({"free", "go"})
_MONTH_MINUTES = 43200


def window_label(minutes: int) -> str:
    """A person's name for a quota window of this many minutes."""
    if minutes <= 720:
        return "Session"
    if minutes == 10080:
        return "Week"
    if 40320 <= minutes <= 44640:
        return "Month"
    return f"{round(minutes / 60)}h"


def _time(epoch_seconds: Any) -> SystemTime | None:
    if isinstance(epoch_seconds, bool) or not isinstance(epoch_seconds, int | float) or epoch_seconds < 0:
        return None
    return SystemTime(secs_since_epoch=int(epoch_seconds), nanos_since_epoch=0)


def _percent(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(0, min(100, round(value)))


def codex_plan_usage(rate_limits: Mapping[str, Any], *, fetched_at: SystemTime | None = None) -> PlanUsage:
    """Codex's `rateLimits` (from `account/rateLimits/read` or `account/rateLimits/updated`) as `PlanUsage`:
    `primary` and `secondary` become windows labelled by their duration, `planType` the plan."""
    plan = rate_limits.get("planType")
    plan = plan if isinstance(plan, str) else None
    windows: list[UsageWindow] = []
    for key, default in (("primary", _DEFAULT_PRIMARY_MINUTES), ("secondary", _DEFAULT_SECONDARY_MINUTES)):
        window = rate_limits.get(key)
        if not isinstance(window, Mapping):
            continue
        minutes = window.get("windowDurationMins")
        if isinstance(minutes, bool) or not isinstance(minutes, int) or minutes <= 0:
            minutes = _MONTH_MINUTES if plan in _MONTHLY_PLANS and key == "secondary" else default
        windows.append(
            UsageWindow(
                label=window_label(minutes),
                used_percent=_percent(window.get("usedPercent")),
                resets_at=_time(window.get("resetsAt")),
            )
        )
    return PlanUsage(plan=plan, windows=windows, fetched_at=fetched_at or SystemTime.now())
