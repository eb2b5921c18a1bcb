"""Plan usage: the quota windows of an agent's logged-in plan, read from the agent itself (docs/sidecar.md).

An adapter that can read them registers a reader in `omniagent.runtime.adapters.PLAN_USAGE` for its connection
kind; the runtime keeps each answer in a `PlanUsageCache` for `CACHE_SECONDS` per (agent id, executable). This
module holds what the readers and live sessions share: the reader type, the cache, and the translations of Codex's
`rateLimits` object and of Claude Code's `get_usage` answer.
"""

from __future__ import annotations

import asyncio
import functools
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from omniagent.protocols.sidecar.agents import AgentInstallation, PlanUsage, UsageWindow
from omniagent.protocols.sidecar.base import SystemTime
from omniagent.runtime.catalog import profile
from omniagent.wire.process import ChildProcess, open_process

# How long one answer is served from the cache.
CACHE_SECONDS = 60.0

PlanUsageReader = Callable[[AgentInstallation], Awaitable[PlanUsage]]
"""Reads one installation's plan usage. Raises `UnsupportedFeature` (no plan quota for this login),
`AuthRequired`, `HandshakeTimeout`, `SpawnFailed` or `ProtocolFailed`."""

# Seconds a reader's throwaway process gets to exit after stdin closes, then after SIGTERM. The answer is in hand
# and the process has nothing to save; codex 0.171.0 sometimes lingers 5 s after EOF and ignores SIGTERM.
READER_CLOSE_GRACE = 0.5
READER_TERM_GRACE = 0.5

# The detail of `UnsupportedFeature` for a login that has no plan quota (an API key, a cloud provider).
NO_PLAN_QUOTA = "no plan quota for this login"

# Codex leaves a window's duration out on some plans: the defaults anyagent uses.
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


# Claude Code's `get_usage` windows, in display order, with their labels.
_CLAUDE_WINDOWS = (("five_hour", "Session"), ("seven_day", "Week"))


def _iso_time(value: Any) -> SystemTime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None  # a reset time without a zone cannot be placed; better none than a wrong one
    return _time(moment.timestamp())


def claude_plan_usage(rate_limits: Mapping[str, Any], *, plan: str | None = None) -> PlanUsage:
    """Claude Code's `get_usage` `rate_limits` as `PlanUsage`: `five_hour` becomes "Session" and `seven_day`
    "Week" (`utilization` is a percentage, `resets_at` an ISO 8601 time); windows it leaves null are left out."""
    windows: list[UsageWindow] = []
    for key, label in _CLAUDE_WINDOWS:
        window = rate_limits.get(key)
        if not isinstance(window, Mapping):
            continue
        windows.append(
            UsageWindow(
                label=label,
                used_percent=_percent(window.get("utilization")),
                resets_at=_iso_time(window.get("resets_at")),
            )
        )
    return PlanUsage(plan=plan, windows=windows, fetched_at=SystemTime.now())


def catalog_argv(installation: AgentInstallation) -> list[str]:
    """The executable and its catalog row's launch args (what puts the CLI in its protocol mode)."""
    row = profile(installation.id)
    return [installation.executable_path, *(row.launch_args if row is not None else ())]


def open_reader_process(installation: AgentInstallation) -> ChildProcess:
    """The throwaway agent process a reader asks: catalog launch args, in the temp dir, closed briskly."""
    return open_process(
        catalog_argv(installation),
        cwd=tempfile.gettempdir(),
        close_grace=READER_CLOSE_GRACE,
        term_grace=READER_TERM_GRACE,
    )


CacheKey = tuple[str, str]
"""(agent id, executable path)."""


@dataclass(slots=True)
class _Entry:
    read: asyncio.Future[PlanUsage]
    expires: float | None = None  # set once the read succeeded


class PlanUsageCache:
    """Plan-usage answers kept `ttl` seconds per (agent id, executable). Asks for a key while its read runs share
    that read; a failed read is not kept (the next ask reads again). `clock` is injectable for tests."""

    def __init__(self, *, ttl: float = CACHE_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl
        self._clock = clock
        self._entries: dict[CacheKey, _Entry] = {}

    async def get(self, key: CacheKey, read: Callable[[], Awaitable[PlanUsage]]) -> PlanUsage:
        """The cached answer for `key`, or the answer of `read()` (then kept for `ttl` seconds)."""
        entry = self._entries.get(key)
        if entry is None or (entry.expires is not None and entry.expires <= self._clock()):
            entry = _Entry(asyncio.ensure_future(read()))
            self._entries[key] = entry
            entry.read.add_done_callback(functools.partial(self._settled, key, entry))
        # Shielded: a caller that gives up must not cancel a read other callers share.
        return await asyncio.shield(entry.read)

    def _settled(self, key: CacheKey, entry: _Entry, _read: asyncio.Future[PlanUsage]) -> None:
        if entry.read.cancelled() or entry.read.exception() is not None:
            if self._entries.get(key) is entry:
                del self._entries[key]
            return
        entry.expires = self._clock() + self._ttl
