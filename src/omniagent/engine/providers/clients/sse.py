"""Server-sent events decoder over an async iterator of text lines (httpx `Response.aiter_lines()`).

Follows the WHATWG event-stream rules the providers rely on: `event:`, multi-line `data:` joined by `\\n`, `:`
comments, `id:`/`retry:` ignored, an event dispatched at each blank line. httpx already splits on LF, CRLF and CR.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One dispatched event; `event` is `"message"` when the stream named none."""

    event: str
    data: str


async def iter_sse(lines: AsyncIterable[str]) -> AsyncGenerator[ServerSentEvent, None]:
    """Yield the events of an SSE stream. An event left unterminated at the end of input is still dispatched."""
    event = ""
    data: list[str] = []
    async for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield ServerSentEvent(event or "message", "\n".join(data))
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        # The spec strips exactly one space after the colon.
        value = value.removeprefix(" ")
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
    if data:
        yield ServerSentEvent(event or "message", "\n".join(data))
