"""HTTP for every provider client: one POST answered by SSE, and the one place httpx failures become ProviderError.

Each provider builds its URL, headers and body, then reads `post_sse()`; error answers (non-2xx) and transport
exceptions are classified here through `failures.py`. Of an error answer's body, or of an error the provider reports
inside the stream, only its own error message reaches ours, redacted of the credentials this call sent
(`failures.provider_words`), so no key can leak into a message.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import AsyncGenerator, Collection, Mapping
from contextlib import aclosing
from urllib.parse import urlsplit

import httpx

from omniagent.engine.providers.clients.payload import error_fields
from omniagent.engine.providers.clients.sse import ServerSentEvent, iter_sse
from omniagent.engine.providers.failures import (
    FailureKind,
    StreamErrorReported,
    classify_status,
    classify_transport,
    provider_error,
    provider_words,
)
from omniagent.engine.providers.neutral import ModelRequest, ProviderError, StreamEnd, StreamEvent, Usage
from omniagent.wire.redact import named_secrets

CONNECT_TIMEOUT = 10.0  # seconds to open a TCP/TLS connection; local endpoints answer in milliseconds
# Seconds of silence (no byte at all, headers included) before a call is a retryable `timeout`. Providers keep
# long answers alive with pings or deltas; a silent reasoning model can still think for a minute or two, hence
# not less. Overridden by IDLE_TIMEOUT_ENV.
IDLE_TIMEOUT = 120.0
IDLE_TIMEOUT_ENV = "OMNIAGENT_PROVIDER_IDLE_TIMEOUT"
WRITE_TIMEOUT = 30.0  # seconds to send the request body (large conversations with images)
POOL_TIMEOUT = 10.0  # seconds to wait for a free pooled connection
MAX_ERROR_BODY = 64 * 1024  # bytes of an error answer read to classify it; the rest is dropped


_EVENT_STREAM = "text/event-stream"
# What of a content type may appear in an error sentence: a media type's characters, nothing a server could
# smuggle text through.
_MEDIA_TYPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,63}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,63}")


def idle_timeout() -> float:
    """The idle timeout in seconds: `OMNIAGENT_PROVIDER_IDLE_TIMEOUT` when it is a positive number, else 120."""
    raw = os.environ.get(IDLE_TIMEOUT_ENV, "")
    try:
        value = float(raw)
    except ValueError:
        return IDLE_TIMEOUT
    return value if math.isfinite(value) and value > 0 else IDLE_TIMEOUT


def new_client() -> httpx.AsyncClient:
    """An AsyncClient with the provider timeouts (the read timeout is the idle timeout: httpx applies it to each
    wait for bytes). Environment proxies are honoured (trust_env)."""
    timeout = httpx.Timeout(connect=CONNECT_TIMEOUT, read=idle_timeout(), write=WRITE_TIMEOUT, pool=POOL_TIMEOUT)
    return httpx.AsyncClient(timeout=timeout)


async def post_sse(
    client: httpx.AsyncClient,
    url: str,
    headers: Mapping[str, str],
    body: Mapping[str, object],
    auth: httpx.Auth | None = None,
    sent: set[str] | None = None,
) -> AsyncGenerator[ServerSentEvent, None]:
    """POST `body` as JSON to `url` and yield the SSE events of a 2xx answer. `auth` sets the credential header
    per request (a device-login grant, `grants.GrantAuth`), when the headers do not carry a key. The credentials
    the request carried, as sent, are added to `sent`: what an error reported inside the stream is redacted of.

    Raises:
        ProviderError: for a non-2xx answer (classified from status and error body) or any httpx failure.
    """
    try:
        async with client.stream("POST", url, headers=dict(headers), json=body, auth=auth) as response:
            if sent is not None:
                sent.update(named_secrets(response.request.headers))
            if not 200 <= response.status_code < 300:
                raise await _status_error(response)
            _require_event_stream(url, response)
            async with aclosing(iter_sse(response.aiter_lines())) as events:
                async for event in events:
                    yield event
    except httpx.HTTPError as exc:
        kind = classify_transport(exc)
        # Where we could not connect is the first thing a person checks (a base URL typo, a server not running).
        detail = _safe_url(url) if kind is FailureKind.CONNECT_FAILED else None
        raise provider_error(kind, detail=detail) from exc


class SseEndpoint:
    """What every provider client shares: one endpoint URL, its headers, one httpx client, content tracking.

    Subclasses build the body and decode the answer in `_stream`, reading the answer through `_post`.
    """

    def __init__(
        self, url: str, headers: Mapping[str, str], client: httpx.AsyncClient | None, auth: httpx.Auth | None = None
    ) -> None:
        self._url = url
        self._headers = {"accept": "text/event-stream", **headers}
        self._client = client or new_client()
        self._auth = auth
        # Every credential a request of this endpoint carried (an auth flow's renewed tokens too): all are this
        # endpoint's secrets, whichever of its streams reports an error.
        self._sent: set[str] = set()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(url={self._url!r})"  # never the headers: they hold the key

    def stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        """See `neutral.Provider.stream`."""
        return track_content(self._stream(request), self._sent)

    async def aclose(self) -> None:
        """Release the HTTP connection pool."""
        await self._client.aclose()

    def _post(self, body: Mapping[str, object], url: str | None = None) -> AsyncGenerator[ServerSentEvent, None]:
        """POST `body` to the endpoint (or to `url`, for a wire that names the model in the path)."""
        return post_sse(self._client, url or self._url, self._headers, body, self._auth, self._sent)

    def _stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        raise NotImplementedError


def bearer(api_key: str | None) -> dict[str, str]:
    """The `authorization` header for a bearer key, or none for a keyless local endpoint."""
    return {"authorization": f"Bearer {api_key}"} if api_key else {}


async def track_content(
    events: AsyncGenerator[StreamEvent, None], sent: Collection[str] = ()
) -> AsyncGenerator[StreamEvent, None]:
    """Pass `events` through, marking a `ProviderError` as `content_streamed` once a block event went out; an error
    the provider reported inside the stream becomes one, its words redacted of the credentials in `sent`."""
    streamed = False
    async with aclosing(events):
        try:
            async for event in events:
                if not isinstance(event, Usage | StreamEnd):
                    streamed = True
                yield event
        except StreamErrorReported as reported:
            error = reported.failure(sent)
            error.content_streamed = streamed
            raise error from None
        except ProviderError as exc:
            exc.content_streamed = exc.content_streamed or streamed
            raise


def _require_event_stream(url: str, response: httpx.Response) -> None:
    """A 2xx answer must be an event stream: a captive portal's login page or a proxy's error page is not a model's
    answer, and retrying will not change it. A missing content type is let through (some minimal local servers
    send none); the SSE reader then judges the body."""
    content_type = response.headers.get("content-type")
    if content_type is None:
        return
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type == _EVENT_STREAM:
        return
    shown = media_type if _MEDIA_TYPE.fullmatch(media_type) else "an unreadable content type"
    detail = f"{response.status_code} {shown} from {_safe_url(url)}"
    raise provider_error(FailureKind.NOT_EVENT_STREAM, status=response.status_code, detail=detail)


def _safe_url(url: str) -> str:
    """The URL without credentials or query (a key can hide in either), for error sentences."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


async def _status_error(response: httpx.Response) -> ProviderError:
    raw = b""
    async for chunk in response.aiter_bytes():
        raw += chunk
        if len(raw) >= MAX_ERROR_BODY:
            break
    try:
        parsed: object = json.loads(raw[:MAX_ERROR_BODY])
    except ValueError:
        parsed = None
    error_type, error_code, message = error_fields(parsed)
    kind = classify_status(response.status_code, error_type, error_code, message)
    # The request's own headers hold the key as sent (an auth flow's token included): the values to redact.
    said = provider_words(message, named_secrets(response.request.headers))
    return provider_error(kind, status=response.status_code, headers=response.headers, body=parsed, said=said)
