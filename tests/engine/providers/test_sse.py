"""SSE decoder rules the providers rely on (the HTML standard's server-sent events)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from omniagent.engine.providers.clients.sse import ServerSentEvent, iter_sse


async def _lines(*lines: str) -> AsyncIterator[str]:
    for line in lines:
        yield line


async def decode(*lines: str) -> list[ServerSentEvent]:
    return [event async for event in iter_sse(_lines(*lines))]


async def test_named_events_dispatch_at_blank_lines_and_unnamed_ones_are_message() -> None:
    """`event:` names the event; data-only events are "message"."""
    events = await decode("event: ping", "data: {}", "", "data: [DONE]", "")
    assert events == [ServerSentEvent("ping", "{}"), ServerSentEvent("message", "[DONE]")]


async def test_multiple_data_lines_join_with_newlines_and_comments_are_skipped() -> None:
    """Several data lines join with \\n; `:` lines are comments; id/retry are ignored."""
    events = await decode(": keep-alive", "id: 7", "retry: 100", "data: a", "data:b", "data:  c", "")
    assert events == [ServerSentEvent("message", "a\nb\n c")]


async def test_crlf_line_endings_and_an_unterminated_last_event_are_accepted() -> None:
    """Accept CRLF; the last event is still dispatched at end of input."""
    events = await decode("event: x\r\n", "data: 1\r\n", "\r\n", "data: 2")
    assert events == [ServerSentEvent("x", "1"), ServerSentEvent("message", "2")]


async def test_blank_lines_without_data_dispatch_nothing() -> None:
    """WHATWG rule: an event with an empty data buffer is not dispatched."""
    assert await decode("event: lonely", "", "", "") == []
