"""The account routes of the fake server: what a logged-in agent's subscription backend answers about its plan.

Only the ChatGPT backend's usage route so far (`GET …/wham/usage`, or `…/api/codex/usage` when the base URL has
no `/backend-api`): `codex app-server` reads it for `account/rateLimits/read` when its `chatgpt_base_url` points
here. Durations are seconds and times epoch seconds, as that backend writes them.
"""

from __future__ import annotations

import time

from omniagent.testing.scenario import PlanQuota, QuotaWindow

CHATGPT_USAGE_PATHS = ("/wham/usage", "/api/codex/usage")
_WINDOW_KEYS = ("primary_window", "secondary_window")


def chatgpt_usage(quota: PlanQuota, *, now: float | None = None) -> dict[str, object]:
    """The ChatGPT backend's usage answer for `quota` (windows beyond the second are not in that shape)."""
    moment = int(time.time() if now is None else now)
    limits: dict[str, object] = {"allowed": True, "limit_reached": False}
    for key, window in zip(_WINDOW_KEYS, quota.windows, strict=False):
        limits[key] = _window(window, moment)
    return {"plan_type": quota.plan, "rate_limit": limits, "credits": None}


def _window(window: QuotaWindow, now: int) -> dict[str, object]:
    return {
        "used_percent": window.used_percent,
        "limit_window_seconds": window.minutes * 60,
        "reset_after_seconds": window.resets_in,
        "reset_at": now + window.resets_in,
    }
