"""Anthropic Messages API client: neutral request → `POST {base}/messages` body, SSE answer → neutral events.

Prompt caching (when the endpoint allows it): the API caches a prefix only up to a block marked `cache_control`
(a breakpoint; at most 4), looking back at most 20 blocks before each for an earlier cached prefix. Three
breakpoints: the end of tools + system (the prefix every call shares), the end of the newest message (what the
next call will read), and the end of the message before it (the previous call's prefix, so a turn that added more
than 20 blocks, say many tool results, still finds it). Thinking blocks cannot carry one.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Literal

import httpx

from omniagent.engine.providers.clients.blocks import BlockTracker
from omniagent.engine.providers.clients.payload import count, error_fields, json_object, load_json, obj, text
from omniagent.engine.providers.clients.sse import ServerSentEvent
from omniagent.engine.providers.clients.transport import SseEndpoint, bearer
from omniagent.engine.providers.failures import FailureKind, StreamErrorReported, provider_error
from omniagent.engine.providers.neutral import (
    ImagePart,
    Message,
    ModelRequest,
    ReasoningDelta,
    ReasoningPart,
    ReasoningSignature,
    RedactedReasoning,
    StopReason,
    StreamEnd,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCallArgumentsDelta,
    ToolCallPart,
    ToolCallStarted,
    ToolResultPart,
    Usage,
)

ANTHROPIC_VERSION = "2023-06-01"  # the stable Messages API version header every client sends
# Thinking budget (tokens) per reasoning level; Anthropic needs budget_tokens >= 1024 and < max_tokens.
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 24576, "max": 32000}
MIN_THINKING_BUDGET = 1024  # tokens; the API's floor
_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "refusal",
}

KeyHeader = Literal["x_api_key", "authorization_bearer"]


class AnthropicProvider(SseEndpoint):
    """Streams answers from one Anthropic Messages endpoint. `base_url` ends before `/messages` (e.g. `…/v1`)."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        key_header: KeyHeader = "x_api_key",
        extra_headers: dict[str, str] | None = None,
        cache_breakpoints: bool = True,
        client: httpx.AsyncClient | None = None,
        auth: httpx.Auth | None = None,
    ) -> None:
        key = {"x-api-key": api_key} if key_header == "x_api_key" else bearer(api_key)
        headers = {"anthropic-version": ANTHROPIC_VERSION, **key, **(extra_headers or {})}
        super().__init__(base_url.rstrip("/") + "/messages", headers, client, auth)
        self._cache_breakpoints = cache_breakpoints

    async def _stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        decoder = _Decoder()
        body = build_body(request, self._cache_breakpoints)
        async with aclosing(self._post(body)) as answer:
            async for sse in answer:
                for event in decoder.feed(sse):
                    yield event
                if decoder.done:
                    return
        raise provider_error(FailureKind.TRUNCATED)


def build_body(request: ModelRequest, cache_breakpoints: bool = True) -> dict[str, object]:
    """The Messages request body for `request` (streaming)."""
    messages = [m for m in (_message(message) for message in request.messages) if m["content"]]
    body: dict[str, object] = {
        "model": request.model,
        "max_tokens": request.max_output_tokens,
        "stream": True,
        "messages": messages,
    }
    system: list[dict[str, object]] = [{"type": "text", "text": request.system}] if request.system else []
    if system:
        body["system"] = system
    tools: list[dict[str, object]] = [
        {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
        for tool in request.tools
    ]
    if tools:
        body["tools"] = tools
    budget = _thinking_budget(request)
    if budget is not None:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    if cache_breakpoints:
        _mark_breakpoints(system or tools, messages)
    return body


def _thinking_budget(request: ModelRequest) -> int | None:
    if request.reasoning_effort is None or request.reasoning_effort not in THINKING_BUDGETS:
        return None
    budget = min(THINKING_BUDGETS[request.reasoning_effort], request.max_output_tokens - MIN_THINKING_BUDGET)
    return budget if budget >= MIN_THINKING_BUDGET else None


def _mark_breakpoints(frame: list[dict[str, object]], messages: list[dict[str, list[dict[str, object]]]]) -> None:
    """The breakpoints of the module doc: the last block of the frame (system, else tools), and the last cacheable
    block of each of the two newest messages."""
    ephemeral = {"type": "ephemeral"}
    if frame:
        frame[-1]["cache_control"] = ephemeral
    for message in messages[-2:]:
        blocks = [b for b in message["content"] if b.get("type") not in ("thinking", "redacted_thinking")]
        if blocks:
            blocks[-1]["cache_control"] = ephemeral


def _message(message: Message) -> dict[str, list[dict[str, object]]]:
    blocks: list[dict[str, object]] = []
    for part in message.parts:
        if isinstance(part, TextPart) and part.text:
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            source = {"type": "base64", "media_type": part.media_type, "data": part.data_base64}
            blocks.append({"type": "image", "source": source})
        elif isinstance(part, ReasoningPart) and part.redacted is not None:
            blocks.append({"type": "redacted_thinking", "data": part.redacted})
        elif isinstance(part, ReasoningPart) and part.signature:
            blocks.append({"type": "thinking", "thinking": part.text, "signature": part.signature})
        elif isinstance(part, ToolCallPart):
            blocks.append(
                {"type": "tool_use", "id": part.call_id, "name": part.name, "input": json_object(part.arguments_json)}
            )
        elif isinstance(part, ToolResultPart):
            result: dict[str, object] = {"type": "tool_result", "tool_use_id": part.call_id, "content": part.output}
            if part.is_error:
                result["is_error"] = True
            blocks.append(result)
    # The API wants tool results first in their user message.
    blocks.sort(key=lambda block: block["type"] != "tool_result")
    return {"role": message.role, "content": blocks}  # type: ignore[dict-item]


class _Decoder:
    """Turns Messages SSE events into neutral events; `done` once `message_stop` arrived."""

    def __init__(self) -> None:
        self.done = False
        self._blocks = BlockTracker()
        self._tool_ids: dict[int, str] = {}
        self._usage = Usage()
        self._stop: StopReason = "unknown"

    def feed(self, sse: ServerSentEvent) -> list[StreamEvent]:
        data = load_json(sse.data)
        kind = text(data, "type") or sse.event
        if kind == "message_start":
            self._read_usage(obj(obj(data, "message"), "usage"))
        elif kind == "content_block_start":
            return self._start(count(data, "index"), obj(data, "content_block"))
        elif kind == "content_block_delta":
            return self._delta(count(data, "index"), obj(data, "delta"))
        elif kind == "content_block_stop":
            return self._blocks.close() if self._blocks.index_of(count(data, "index")) is not None else []
        elif kind == "message_delta":
            reason = text(obj(data, "delta"), "stop_reason")
            self._stop = _STOP_REASONS.get(reason, "unknown") if reason else self._stop
            self._read_usage(obj(data, "usage"))
        elif kind == "message_stop":
            self.done = True
            return [*self._blocks.close(), self._usage, StreamEnd(self._stop)]
        elif kind == "error":
            raise StreamErrorReported(*error_fields(data))
        return []

    def _start(self, key: int, block: dict[str, object]) -> list[StreamEvent]:
        block_type = text(block, "type")
        if block_type == "text":
            return self._blocks.ensure(key, lambda i: TextDelta(i, text(block, "text")))
        if block_type == "thinking":
            return self._blocks.ensure(key, lambda i: ReasoningDelta(i, text(block, "thinking")))
        if block_type == "redacted_thinking":
            return self._blocks.ensure(key, lambda i: RedactedReasoning(i, text(block, "data")))
        if block_type == "tool_use":
            call_id = text(block, "id")
            self._tool_ids[key] = call_id
            return self._blocks.ensure(key, lambda i: ToolCallStarted(i, call_id, text(block, "name")))
        return self._blocks.close()  # server-side tool blocks and future types are not ours to show

    def _delta(self, key: int, delta: dict[str, object]) -> list[StreamEvent]:
        index = self._blocks.index_of(key)
        if index is None:
            return []
        delta_type = text(delta, "type")
        if delta_type == "text_delta":
            return [TextDelta(index, text(delta, "text"))]
        if delta_type == "thinking_delta":
            return [ReasoningDelta(index, text(delta, "thinking"))]
        if delta_type == "signature_delta":
            return [ReasoningSignature(index, text(delta, "signature"))]
        if delta_type == "input_json_delta" and text(delta, "partial_json"):
            return [ToolCallArgumentsDelta(index, self._tool_ids[key], text(delta, "partial_json"))]
        return []

    def _read_usage(self, usage: dict[str, object]) -> None:
        # message_start carries the input side, message_delta the cumulative output (and sometimes input again).
        u = self._usage
        cache_read = count(usage, "cache_read_input_tokens") if "cache_read_input_tokens" in usage else None
        cache_write = count(usage, "cache_creation_input_tokens") if "cache_creation_input_tokens" in usage else None
        fresh = count(usage, "input_tokens") if "input_tokens" in usage else None
        cache_read = u.cache_read_tokens if cache_read is None else cache_read
        cache_write = u.cache_write_tokens if cache_write is None else cache_write
        if fresh is None:
            fresh = u.input_tokens - u.cache_read_tokens - u.cache_write_tokens
        output = count(usage, "output_tokens") if "output_tokens" in usage else u.output_tokens
        self._usage = Usage(
            input_tokens=fresh + cache_read + cache_write,
            output_tokens=output,
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
        )
