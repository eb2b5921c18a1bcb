"""The retry policy table (docs/providers.md "Errors and retries"), pure: attempt + error → delay or give up."""

from __future__ import annotations

import pytest

from omniagent.engine.providers import retry
from omniagent.engine.providers.failures import FailureKind, provider_error
from omniagent.engine.providers.neutral import ProviderError, RunErrorCode
from omniagent.engine.providers.retry import MAX_ATTEMPTS, next_delay


def transient(retry_after: float | None = None, streamed: bool = False) -> ProviderError:
    return ProviderError(RunErrorCode.PROVIDER, "x", retryable=True, retry_after=retry_after, content_streamed=streamed)


@pytest.mark.parametrize(("attempt", "delay"), [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0)])
def test_backoff_doubles_from_half_a_second(attempt: int, delay: float) -> None:
    """min(500 ms * 2^(n-1), 8 s) without jitter."""
    assert next_delay(attempt, transient()) == delay


def test_fifth_failed_attempt_gives_up() -> None:
    """Max 5 attempts in all."""
    assert MAX_ATTEMPTS == 5 and next_delay(5, transient()) is None


def test_jitter_shortens_the_delay_by_at_most_a_quarter() -> None:
    """The delay is multiplied by (1 - 0.25 * jitter)."""
    assert next_delay(3, transient(), jitter=1.0) == 1.5
    assert next_delay(3, transient(), jitter=0.5) == 1.75


def test_backoff_is_capped_at_eight_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cap is 8 s (reachable only with a larger attempt budget than the default)."""
    monkeypatch.setattr(retry, "MAX_ATTEMPTS", 10)
    assert next_delay(5, transient()) == 8.0 and next_delay(9, transient()) == 8.0


def test_retry_after_is_a_floor_not_a_replacement() -> None:
    """Wait max(asked, computed)."""
    assert next_delay(1, transient(retry_after=3.0)) == 3.0
    assert next_delay(4, transient(retry_after=0.1)) == 4.0


def test_retry_after_beyond_two_minutes_fails_at_once() -> None:
    """docs/providers.md "Errors and retries": retry-after > 120 s → fail the run."""
    assert next_delay(1, transient(retry_after=121)) is None
    assert next_delay(1, transient(retry_after=120)) == 120


def test_no_retry_once_content_streamed() -> None:
    """A semantic event already published for the attempt → never retry."""
    assert next_delay(1, transient(streamed=True)) is None


@pytest.mark.parametrize(
    "kind", [FailureKind.AUTH, FailureKind.QUOTA_EXHAUSTED, FailureKind.CONTEXT_OVERFLOW, FailureKind.BAD_REQUEST]
)
def test_permanent_failures_are_never_retried(kind: FailureKind) -> None:
    """Permanent classes (auth, 4xx validation, quota) never retry."""
    assert next_delay(1, provider_error(kind)) is None


@pytest.mark.parametrize(
    "kind", [FailureKind.RATE_LIMITED, FailureKind.OVERLOADED, FailureKind.CONNECT_FAILED, FailureKind.TIMEOUT]
)
def test_transient_and_transport_failures_are_retried(kind: FailureKind) -> None:
    """docs/providers.md "Errors and retries": rate limits, overload, connection failures retry with backoff."""
    assert next_delay(1, provider_error(kind)) == 0.5


def test_a_detail_continues_the_kinds_sentence_before_its_full_stop() -> None:
    """Issue 26 (found with item 7): "Could not connect to the provider: URL.", never "provider.: URL."."""
    error = provider_error(FailureKind.CONNECT_FAILED, detail="http://127.0.0.1:9/v1/messages")
    assert str(error) == "Could not connect to the provider: http://127.0.0.1:9/v1/messages."
