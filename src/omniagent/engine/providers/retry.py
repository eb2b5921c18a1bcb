"""The retry policy for model calls (docs/providers.md "Errors and retries"), as a pure function: no I/O, no
clock, no randomness of its own.

`engine.run.executor` owns the attempt counter and the timer: after attempt `n` fails with `error`, it asks
`next_delay(n, error, jitter=random.random())`; None means fail the run with `error.code`, a number means show
`retrying{attempt, max_attempts, next_at_ms, code, message}` and call again after that many seconds.
"""

from __future__ import annotations

from omniagent.engine.providers.neutral import ProviderError

MAX_ATTEMPTS = 5  # model calls per round, first one included (yuke retry.zig)
BASE_DELAY = 0.5  # seconds before the second attempt; doubles per attempt
MAX_DELAY = 8.0  # seconds; cap of the computed backoff
JITTER_FRACTION = 0.25  # the computed delay shrinks by up to this fraction, spreading retries of many clients
MAX_RETRY_AFTER = 120.0  # seconds; a server asking for longer fails the run at once instead of stalling it


def next_delay(attempt: int, error: ProviderError, *, jitter: float = 0.0) -> float | None:
    """Seconds to wait before attempt `attempt + 1`, or None when the run must fail with `error`.

    `attempt` counts the attempts made so far (1 after the first failure). `jitter` in [0, 1) is supplied by the
    caller (0 gives the exact schedule 0.5, 1, 2, 4 s). The server's `retry_after` is a floor, never shortened.
    """
    if not error.retryable or error.content_streamed or attempt >= MAX_ATTEMPTS:
        return None
    if error.retry_after is not None and error.retry_after > MAX_RETRY_AFTER:
        return None
    jitter = min(max(jitter, 0.0), 1.0)
    computed = min(BASE_DELAY * 2.0 ** (attempt - 1), MAX_DELAY) * (1 - JITTER_FRACTION * jitter)
    return max(computed, error.retry_after or 0.0)
