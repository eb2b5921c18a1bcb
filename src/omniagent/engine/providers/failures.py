"""Provider failures as data: each failure kind → (class, RunErrorCode, safe sentence), and the status classifier.

The message is what reaches the wire (`run.done{failed{message}}`, `retrying` activity): our fixed sentence, then,
for an HTTP error answer or an error reported inside the stream, the provider's own message (what was wrong is
often only there), quoted after "The provider said:". Those words pass `provider_words` first: secrets redacted (the
credential headers we sent, anything key-shaped), escapes dropped, one line, at most MAX_PROVIDER_WORDS characters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum

import httpx

from omniagent.engine.providers.neutral import ProviderError, RunErrorCode
from omniagent.errors import OmniagentError
from omniagent.wire.redact import clip, redact


class FailureClass(Enum):
    """How a failure may be retried (the retry policy still decides; see `retry.next_delay`)."""

    TRANSIENT = "transient"  # the server said "not now" (429, 5xx, overloaded): retry after backoff
    TRANSPORT = "transport"  # the connection or the stream broke: retry only if nothing streamed yet
    PERMANENT = "permanent"  # the same request will fail again (auth, validation, quota): never retry


class FailureKind(StrEnum):
    """Every way a model call can fail, as the provider clients classify it."""

    RATE_LIMITED = "rate_limited"
    QUOTA_EXHAUSTED = "quota_exhausted"
    OVERLOADED = "overloaded"
    SERVER_ERROR = "server_error"
    STREAM_ERROR = "stream_error"
    RETRYABLE_STATUS = "retryable_status"
    AUTH = "auth"
    PERMISSION = "permission"
    UNKNOWN_MODEL = "unknown_model"
    CONTEXT_OVERFLOW = "context_overflow"
    BAD_REQUEST = "bad_request"
    REQUEST_TOO_LARGE = "request_too_large"
    UNEXPECTED_STATUS = "unexpected_status"
    CONNECT_FAILED = "connect_failed"
    CONNECTION_LOST = "connection_lost"
    TIMEOUT = "timeout"
    TRUNCATED = "truncated"
    MALFORMED = "malformed"
    NOT_EVENT_STREAM = "not_event_stream"


@dataclass(frozen=True, slots=True)
class Failure:
    """What a failure kind means for the run."""

    failure_class: FailureClass
    code: RunErrorCode
    sentence: str


_T, _X, _P = FailureClass.TRANSIENT, FailureClass.TRANSPORT, FailureClass.PERMANENT
_C = RunErrorCode

FAILURES: Mapping[FailureKind, Failure] = {
    FailureKind.RATE_LIMITED: Failure(_T, _C.RATE_LIMITED, "The provider is rate limiting requests."),
    FailureKind.QUOTA_EXHAUSTED: Failure(_P, _C.QUOTA_EXHAUSTED, "The provider account has no quota left."),
    FailureKind.OVERLOADED: Failure(_T, _C.PROVIDER, "The provider is overloaded."),
    FailureKind.SERVER_ERROR: Failure(_T, _C.PROVIDER, "The provider had an internal error."),
    FailureKind.STREAM_ERROR: Failure(_T, _C.PROVIDER, "The provider reported an error during the answer."),
    FailureKind.RETRYABLE_STATUS: Failure(_T, _C.PROVIDER, "The provider asked to retry the request."),
    FailureKind.AUTH: Failure(_P, _C.AUTH, "The provider rejected the credential."),
    FailureKind.PERMISSION: Failure(_P, _C.AUTH, "The credential is not allowed to use this model or endpoint."),
    FailureKind.UNKNOWN_MODEL: Failure(_P, _C.UNKNOWN_MODEL, "The provider does not know this model."),
    FailureKind.CONTEXT_OVERFLOW: Failure(
        _P, _C.CONTEXT_OVERFLOW, "The conversation is too long for the model's context window."
    ),
    FailureKind.BAD_REQUEST: Failure(_P, _C.PROVIDER, "The provider rejected the request as invalid."),
    FailureKind.REQUEST_TOO_LARGE: Failure(_P, _C.PROVIDER, "The request is too large for the provider."),
    FailureKind.UNEXPECTED_STATUS: Failure(_P, _C.PROVIDER, "The provider answered with an unexpected HTTP status."),
    FailureKind.CONNECT_FAILED: Failure(_X, _C.NETWORK, "Could not connect to the provider."),
    FailureKind.CONNECTION_LOST: Failure(_X, _C.NETWORK, "The connection to the provider was lost."),
    FailureKind.TIMEOUT: Failure(_X, _C.TIMEOUT, "The provider did not answer in time."),
    FailureKind.TRUNCATED: Failure(_X, _C.PROTOCOL, "The provider's answer ended before it was complete."),
    FailureKind.MALFORMED: Failure(_X, _C.PROTOCOL, "The provider sent an answer that could not be read."),
    # A 2xx that is not SSE: a captive portal or a proxy answered, not the provider; asking again changes nothing.
    FailureKind.NOT_EVENT_STREAM: Failure(_P, _C.PROTOCOL, "The answer is not an event stream"),
}

# Characters of a provider's own error message kept in ours: its sentence, never a body the size of a page.
MAX_PROVIDER_WORDS = 500

# Fragments of provider error text that mean "the prompt does not fit", across vendors.
_OVERFLOW_MARKERS = (
    "prompt is too long",
    "context_length_exceeded",
    "maximum context length",
    "context window",
    "exceeds the maximum number of tokens",  # Gemini
)


def provider_error(
    kind: FailureKind,
    *,
    status: int | None = None,
    headers: httpx.Headers | None = None,
    content_streamed: bool = False,
    detail: str | None = None,
    body: object = None,
    said: str | None = None,
) -> ProviderError:
    """Build the `ProviderError` for `kind`, reading retry hints from response `headers` when given, else from the
    error `body` (Gemini's `RetryInfo`).

    `detail` (our own facts, e.g. a URL without query and a checked media type; never provider text) is appended
    to the kind's sentence; `said` (the provider's own message, from `provider_words`) is quoted after it.
    """
    failure = FAILURES[kind]
    # "Could not connect to the provider: http://…" — the detail continues the sentence, before its full stop.
    sentence = failure.sentence if detail is None else f"{failure.sentence.removesuffix('.')}: {detail}."
    if said:
        sentence += f' The provider said: "{said}"'
    retryable = failure.failure_class is not FailureClass.PERMANENT
    retry_after = None
    if headers is not None:
        retry_after = parse_retry_after(headers)
        # Vendors send x-should-retry to override the status-based guess; a permanent class stays permanent.
        should_retry = headers.get("x-should-retry", "").strip().lower()
        if should_retry == "false":
            retryable = False
    if retry_after is None:
        retry_after = parse_retry_delay(body)
    return ProviderError(
        failure.code,
        sentence,
        status=status,
        retry_after=retry_after,
        retryable=retryable,
        content_streamed=content_streamed,
    )


def provider_words(message: str, secrets: Iterable[str] = ()) -> str | None:
    """A provider's error message made fit to quote in ours: `secrets` (the credentials the call sent) and anything
    key-shaped redacted, escapes dropped, whitespace runs made one space, cut to MAX_PROVIDER_WORDS characters;
    None when nothing is left."""
    words = " ".join(redact(message, secrets).split())
    return clip(words, MAX_PROVIDER_WORDS) if words else None


def classify_status(status: int, error_type: str, error_code: str, error_message: str) -> FailureKind:
    """Pick the failure kind of an HTTP error answer from its status and the provider's error type/code/message."""
    lowered = f"{error_type} {error_code} {error_message}".lower()
    if error_code == "insufficient_quota" or error_type == "insufficient_quota":
        return FailureKind.QUOTA_EXHAUSTED
    if status in (400, 413) and any(marker in lowered for marker in _OVERFLOW_MARKERS):
        return FailureKind.CONTEXT_OVERFLOW
    if status == 400 and "api key not valid" in lowered:  # Gemini refuses a bad key with a 400
        return FailureKind.AUTH
    by_status = {
        400: FailureKind.BAD_REQUEST,
        401: FailureKind.AUTH,
        403: FailureKind.PERMISSION,
        404: FailureKind.UNKNOWN_MODEL,
        408: FailureKind.RETRYABLE_STATUS,
        409: FailureKind.RETRYABLE_STATUS,
        413: FailureKind.REQUEST_TOO_LARGE,
        422: FailureKind.BAD_REQUEST,
        429: FailureKind.RATE_LIMITED,
        529: FailureKind.OVERLOADED,
    }
    if status in by_status:
        return by_status[status]
    if status == 503 or "overloaded" in lowered:
        return FailureKind.OVERLOADED
    if status >= 500:
        return FailureKind.SERVER_ERROR
    return FailureKind.UNEXPECTED_STATUS


def classify_stream_error(error_type: str, error_code: str, error_message: str) -> FailureKind:
    """Pick the failure kind of an error reported inside a 200 stream (Anthropic `error` event, Chat error line)."""
    lowered = f"{error_type} {error_code}".lower()
    if "insufficient_quota" in lowered:
        return FailureKind.QUOTA_EXHAUSTED
    if "rate_limit" in lowered:
        return FailureKind.RATE_LIMITED
    if "overloaded" in lowered:
        return FailureKind.OVERLOADED
    if any(marker in f"{lowered} {error_message.lower()}" for marker in _OVERFLOW_MARKERS):
        return FailureKind.CONTEXT_OVERFLOW
    return FailureKind.STREAM_ERROR


class StreamErrorReported(OmniagentError):
    """An error the provider reported inside a 200 stream (an Anthropic `error` event, an OpenAI error line, a
    Gemini error chunk), as the decoder read it. The decoder does not hold the credentials the call sent, so it
    raises this and the endpoint that does makes the run's `ProviderError` of it (`failure`)."""

    def __init__(self, error_type: str, error_code: str, message: str) -> None:
        super().__init__(error_type or error_code or "stream error")
        self.error_type, self.error_code, self.message = error_type, error_code, message

    def failure(self, secrets: Iterable[str]) -> ProviderError:
        """The `ProviderError` this stands for: classified, the provider's own words quoted with `secrets` and
        anything key-shaped redacted, as for an HTTP error answer."""
        kind = classify_stream_error(self.error_type, self.error_code, self.message)
        return provider_error(kind, said=provider_words(self.message, secrets))


def classify_transport(exc: httpx.HTTPError) -> FailureKind:
    """Pick the failure kind of an httpx exception raised while sending or reading."""
    if isinstance(exc, httpx.TimeoutException):
        return FailureKind.TIMEOUT
    if isinstance(exc, httpx.ConnectError):
        return FailureKind.CONNECT_FAILED
    if isinstance(exc, httpx.DecodingError):
        return FailureKind.MALFORMED
    return FailureKind.CONNECTION_LOST


def parse_retry_after(headers: httpx.Headers) -> float | None:
    """Seconds the server asked to wait: `retry-after-ms` (OpenAI) first, then `retry-after` in seconds.

    HTTP-date forms are ignored (no provider we target sends them, and reading them needs a clock).
    """
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value.strip()) * scale
        except ValueError:
            continue
        if seconds >= 0:
            return seconds
    return None


def parse_retry_delay(body: object) -> float | None:
    """Seconds a google.rpc `RetryInfo` in an error body asks to wait (`{"error": {"details": [{"retryDelay":
    "38s"}]}}`, as Gemini sends with a 429), or None."""
    error = body.get("error") if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    for detail in details if isinstance(details, list) else []:
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        if isinstance(delay, str) and delay.endswith("s"):
            try:
                seconds = float(delay[:-1])
            except ValueError:
                continue
            if seconds >= 0:
                return seconds
    return None
