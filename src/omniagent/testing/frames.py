"""Shared pieces of the fake LLM renderers: SSE frame text, chunking, the renderer interface."""

from __future__ import annotations

import json
from typing import Protocol

from omniagent.testing.scenario import ErrorReply, Reply


def sse(data: object, event: str | None = None) -> str:
    """One SSE event as text (an `event:` line when named, one `data:` line, a blank line)."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return (f"event: {event}\n" if event else "") + f"data: {payload}\n\n"


def pieces(text: str, size: int) -> list[str]:
    """`text` cut into pieces of `size` characters (at least one piece, possibly empty)."""
    size = max(size, 1)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class Renderer(Protocol):
    """Writes one provider API's answers for the fake server."""

    def stream(self, reply: Reply, request: dict[str, object]) -> list[str]:
        """The SSE events of a streamed answer, ending with the API's terminal event(s)."""
        ...

    def stream_error(self, error_type: str, message: str) -> str:
        """The SSE event of an error reported inside a 200 stream, saying `message`."""
        ...

    def whole(self, reply: Reply, request: dict[str, object]) -> dict[str, object]:
        """The JSON body of a non-streamed answer."""
        ...

    def error_body(self, error: ErrorReply) -> dict[str, object]:
        """The JSON body of an HTTP error answer."""
        ...
