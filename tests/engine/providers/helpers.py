"""Helpers for provider tests: drain a provider stream, read it back, check the neutral stream contract."""

from __future__ import annotations

import pytest

from omniagent.engine.providers.neutral import (
    BlockEnded,
    Message,
    ModelRequest,
    Provider,
    ProviderError,
    ReasoningDelta,
    ReasoningSignature,
    RedactedReasoning,
    StreamEnd,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCallArgumentsDelta,
    ToolCallStarted,
    Usage,
)

SIMPLE_REQUEST = ModelRequest(model="fake-model", system="be brief", messages=(Message("user", (TextPart("hi"),)),))


async def collect(provider: Provider, request: ModelRequest = SIMPLE_REQUEST) -> list[StreamEvent]:
    """Every event of one call; the provider is closed afterwards."""
    try:
        return [event async for event in provider.stream(request)]
    finally:
        await provider.aclose()


async def failure(provider: Provider, request: ModelRequest = SIMPLE_REQUEST) -> ProviderError:
    """The ProviderError one call raises (fails the test if it succeeds)."""
    with pytest.raises(ProviderError) as caught:
        await collect(provider, request)
    return caught.value


def texts(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def reasoning(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, ReasoningDelta))


def arguments(events: list[StreamEvent]) -> str:
    return "".join(e.delta for e in events if isinstance(e, ToolCallArgumentsDelta))


def check_contract(events: list[StreamEvent]) -> None:
    """The stream contract of neutral.py: ordered indices, one open block, Usage then StreamEnd last."""
    assert isinstance(events[-1], StreamEnd) and isinstance(events[-2], Usage)
    assert not any(isinstance(e, StreamEnd | Usage) for e in events[:-2])
    open_index: int | None = None
    next_index = 0
    openers = (TextDelta, ReasoningDelta, RedactedReasoning, ToolCallStarted)
    for event in events[:-2]:
        if isinstance(event, BlockEnded):
            assert event.index == open_index
            open_index = None
            continue
        index = event.index  # type: ignore[union-attr]
        if open_index is None:
            assert isinstance(event, openers) and index == next_index
            open_index, next_index = index, next_index + 1
        else:
            assert index == open_index
            assert not isinstance(event, ToolCallStarted | RedactedReasoning)
        if isinstance(event, ReasoningSignature):
            assert open_index == index
    assert open_index is None
