"""OpenAI Chat Completions client (OpenAI and compatible servers: Ollama, vLLM, DeepSeek, OpenRouter, …).

Neutral request → `POST {base}/chat/completions` body; `data:`-only SSE chunks → neutral events. Chat has no block
delimiters, so blocks are cut where the delta kind changes (reasoning, text, tool call k).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Literal

import httpx

from omniagent.engine.providers.clients.blocks import BlockTracker
from omniagent.engine.providers.clients.payload import count, error_fields, items, load_json, obj, text
from omniagent.engine.providers.clients.transport import SseEndpoint, bearer
from omniagent.engine.providers.failures import FailureKind, StreamErrorReported, provider_error
from omniagent.engine.providers.neutral import (
    ImagePart,
    Message,
    ModelRequest,
    ReasoningDelta,
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

DONE_SENTINEL = "[DONE]"  # the last data line of a Chat stream
_STOP_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}

MaxTokensField = Literal["max_completion_tokens", "max_tokens"]


class OpenAIChatProvider(SseEndpoint):
    """Streams answers from one Chat Completions endpoint. `base_url` ends before `/chat/completions` (`…/v1`)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        max_tokens_field: MaxTokensField = "max_completion_tokens",
        prompt_cache_key: bool = False,
        extra_headers: dict[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
        auth: httpx.Auth | None = None,
    ) -> None:
        headers = {**bearer(api_key), **(extra_headers or {})}
        super().__init__(base_url.rstrip("/") + "/chat/completions", headers, client, auth)
        self._max_tokens_field = max_tokens_field
        self._prompt_cache_key = prompt_cache_key

    async def _stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        decoder = _Decoder()
        body = build_body(request, self._max_tokens_field, prompt_cache_key=self._prompt_cache_key)
        async with aclosing(self._post(body)) as answer:
            async for sse in answer:
                if sse.data.strip() == DONE_SENTINEL:
                    break
                for event in decoder.feed(load_json(sse.data)):
                    yield event
        for event in decoder.finish():
            yield event


def build_body(
    request: ModelRequest, max_tokens_field: MaxTokensField = "max_completion_tokens", *, prompt_cache_key: bool = False
) -> dict[str, object]:
    """The Chat Completions request body for `request` (streaming, usage included; with `prompt_cache_key`, the
    request's cache key as OpenAI's `prompt_cache_key`)."""
    messages: list[dict[str, object]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        messages.extend(_messages(message))
    body: dict[str, object] = {
        "model": request.model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        max_tokens_field: request.max_output_tokens,
    }
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {"name": tool.name, "description": tool.description, "parameters": tool.input_schema},
            }
            for tool in request.tools
        ]
    if request.reasoning_effort is not None:
        body["reasoning_effort"] = request.reasoning_effort
    if prompt_cache_key and request.cache_key:
        body["prompt_cache_key"] = request.cache_key
    return body


def _messages(message: Message) -> list[dict[str, object]]:
    if message.role == "assistant":
        content = "".join(part.text for part in message.parts if isinstance(part, TextPart))
        calls = [
            {"id": p.call_id, "type": "function", "function": {"name": p.name, "arguments": p.arguments_json or "{}"}}
            for p in message.parts
            if isinstance(p, ToolCallPart)
        ]
        assistant: dict[str, object] = {"role": "assistant", "content": content or None}
        if calls:
            assistant["tool_calls"] = calls
        return [assistant]
    # Tool results become `tool` messages, which must directly follow the assistant message that made the calls.
    out: list[dict[str, object]] = [
        {"role": "tool", "tool_call_id": part.call_id, "content": part.output}
        for part in message.parts
        if isinstance(part, ToolResultPart)
    ]
    content_parts: list[dict[str, object]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            content_parts.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            url = f"data:{part.media_type};base64,{part.data_base64}"
            content_parts.append({"type": "image_url", "image_url": {"url": url}})
    if content_parts:
        # Plain string content when there is no image: the form every compatible server accepts.
        only_text = all(p["type"] == "text" for p in content_parts)
        user_content: object = "".join(str(p["text"]) for p in content_parts) if only_text else content_parts
        out.append({"role": "user", "content": user_content})
    return out


class _Decoder:
    """Turns Chat chunks into neutral events."""

    def __init__(self) -> None:
        self._blocks = BlockTracker()
        self._tools: dict[int, tuple[str, str]] = {}  # chat tool index → (call_id, name)
        self._usage = Usage()
        self._finish: str | None = None

    def feed(self, chunk: dict[str, object]) -> list[StreamEvent]:
        if "error" in chunk and chunk["error"] is not None:
            raise StreamErrorReported(*error_fields(chunk))
        if obj(chunk, "usage"):
            self._usage = _usage(obj(chunk, "usage"))
        events: list[StreamEvent] = []
        for choice in items(chunk, "choices")[:1]:
            delta = obj(choice, "delta")
            # OpenAI streams no reasoning; compatible vendors use `reasoning_content` or `reasoning`.
            reasoning = text(delta, "reasoning_content") or text(delta, "reasoning")
            if reasoning:
                events += self._blocks.ensure("reasoning", lambda i: ReasoningDelta(i, ""))
                events.append(ReasoningDelta(self._index("reasoning"), reasoning))
            content = text(delta, "content") or text(delta, "refusal")
            if content:
                events += self._blocks.ensure("text", lambda i: TextDelta(i, ""))
                events.append(TextDelta(self._index("text"), content))
            for call in items(delta, "tool_calls"):
                events += self._tool_delta(call)
            finish = text(choice, "finish_reason")
            if finish:
                self._finish = finish
                events += self._blocks.close()
        return events

    def finish(self) -> list[StreamEvent]:
        """Events after the stream ended. Raises `ProviderError` (TRUNCATED) when no finish reason ever arrived."""
        if self._finish is None:
            raise provider_error(FailureKind.TRUNCATED)
        stop = _STOP_REASONS.get(self._finish, "unknown")
        # Some compatible servers report "stop" even when the answer is tool calls.
        if self._tools and stop == "stop":
            stop = "tool_calls"
        return [*self._blocks.close(), self._usage, StreamEnd(stop)]

    def _index(self, key: object) -> int:
        index = self._blocks.index_of(key)
        assert index is not None, "ensure() opened this block just before"
        return index

    def _tool_delta(self, call: object) -> list[StreamEvent]:
        position = count(call, "index")
        key = ("tool", position)
        function = obj(call, "function")
        events: list[StreamEvent] = []
        if self._blocks.index_of(key) is None:
            if position in self._tools:
                # Arguments of a call whose block was already cut off cannot be attached to it any more.
                raise provider_error(FailureKind.MALFORMED)
            call_id = text(call, "id") or f"call_{position}"
            self._tools[position] = (call_id, text(function, "name"))
            events += self._blocks.ensure(key, lambda i: ToolCallStarted(i, call_id, text(function, "name")))
        arguments = text(function, "arguments")
        if arguments:
            events.append(ToolCallArgumentsDelta(self._index(key), self._tools[position][0], arguments))
        return events


def _usage(usage: dict[str, object]) -> Usage:
    return Usage(
        input_tokens=count(usage, "prompt_tokens"),
        output_tokens=count(usage, "completion_tokens"),
        reasoning_tokens=count(obj(usage, "completion_tokens_details"), "reasoning_tokens"),
        cache_read_tokens=count(obj(usage, "prompt_tokens_details"), "cached_tokens"),
    )
