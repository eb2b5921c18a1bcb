"""HTTP for every provider client: one POST answered by SSE, and the one place httpx failures become ProviderError.

Each provider builds its URL, headers and body, then reads `post_sse()`; error answers (non-2xx) and transport
exceptions are classified here through `failures.py`, so no provider text or key can leak into an error message.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing

import httpx

from omniagent.engine.providers.failures import (
    classify_status,
    classify_transport,
    provider_error,
)
from omniagent.engine.providers.neutral import ModelRequest, ProviderError, StreamEnd, StreamEvent, Usage
from omniagent.engine.providers.payload import error_fields
from omniagent.engine.providers.sse import ServerSentEvent, iter_sse

CONNECT_TIMEOUT = 10.0  # seconds to open a TCP/TLS connection; local endpoints answer in milliseconds
READ_TIMEOUT = 300.0  # seconds of silence allowed mid-answer; long reasoning can precede the first byte
WRITE_TIMEOUT = 30.0  # seconds to send the request body (large conversations with images)
POOL_TIMEOUT = 10.0  # seconds to wait for a free pooled connection
MAX_ERROR_BODY = 64 * 1024  # bytes of an error answer read to classify it; the rest is dropped


def new_client() -> httpx.AsyncClient:
    """An AsyncClient with the provider timeouts. Environment proxies are honoured (trust_env)."""
    timeout = httpx.Timeout(connect=CONNECT_TIMEOUT, read=READ_TIMEOUT, write=WRITE_TIMEOUT, pool=POOL_TIMEOUT)
    return httpx.AsyncClient(timeout=timeout)


async def post_sse(
    client: httpx.AsyncClient, url: str, headers: Mapping[str, str], body: Mapping[str, object]
) -> AsyncGenerator[ServerSentEvent, None]:
    """POST `body` as JSON to `url` and yield the SSE events of a 2xx answer.

    Raises:
        ProviderError: for a non-2xx answer (classified from status and error body) or any httpx failure.
    """
    try:
        async with client.stream("POST", url, headers=dict(headers), json=body) as response:
            if not 200 <= response.status_code < 300:
                raise await _status_error(response)
            async with aclosing(iter_sse(response.aiter_lines())) as events:
                async for event in events:
                    yield event
    except httpx.HTTPError as exc:
        raise provider_error(classify_transport(exc)) from exc


class SseEndpoint:
    """What every provider client shares: one endpoint URL, its headers, one httpx client, content tracking.

    Subclasses build the body and decode the answer in `_stream`, reading the answer through `_post`.
    """

    def __init__(self, url: str, headers: Mapping[str, str], client: httpx.AsyncClient | None) -> None:
        self._url = url
        self._headers = {"accept": "text/event-stream", **headers}
        self._client = client or new_client()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(url={self._url!r})"  # never the headers: they hold the key

    def stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        """See `neutral.Provider.stream`."""
        return track_content(self._stream(request))

    async def aclose(self) -> None:
        """Release the HTTP connection pool."""
        await self._client.aclose()

    def _post(self, body: Mapping[str, object]) -> AsyncGenerator[ServerSentEvent, None]:
        return post_sse(self._client, self._url, self._headers, body)

    def _stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        raise NotImplementedError


def bearer(api_key: str | None) -> dict[str, str]:
    """The `authorization` header for a bearer key, or none for a keyless local endpoint."""
    return {"authorization": f"Bearer {api_key}"} if api_key else {}


async def track_content(events: AsyncGenerator[StreamEvent, None]) -> AsyncGenerator[StreamEvent, None]:
    """Pass `events` through, marking a `ProviderError` as `content_streamed` once a block event went out."""
    streamed = False
    async with aclosing(events):
        try:
            async for event in events:
                if not isinstance(event, Usage | StreamEnd):
                    streamed = True
                yield event
        except ProviderError as exc:
            exc.content_streamed = exc.content_streamed or streamed
            raise


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
    kind = classify_status(response.status_code, *error_fields(parsed))
    return provider_error(kind, status=response.status_code, headers=response.headers)
