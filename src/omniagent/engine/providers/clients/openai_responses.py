"""OpenAI Responses API client: neutral request → `POST {base}/responses` body, SSE answer → neutral events.

Requests are stateless (`store: false`); reasoning is replayed from `encrypted_content`, which travels in the
neutral `ReasoningSignature` as a small JSON object `{"id", "encrypted_content"}` opaque to the run loop.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import aclosing

import httpx

from omniagent.engine.providers.clients.blocks import BlockTracker
from omniagent.engine.providers.clients.payload import count, error_fields, load_json, obj, text
from omniagent.engine.providers.clients.transport import SseEndpoint, bearer
from omniagent.engine.providers.failures import FailureKind, StreamErrorReported, provider_error
from omniagent.engine.providers.neutral import (
    ImagePart,
    Message,
    ModelRequest,
    ReasoningDelta,
    ReasoningPart,
    ReasoningSignature,
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

_INCOMPLETE_REASONS: dict[str, StopReason] = {"max_output_tokens": "length", "content_filter": "content_filter"}


class OpenAIResponsesProvider(SseEndpoint):
    """Streams answers from one Responses endpoint. `base_url` ends before `/responses` (e.g. `…/v1`)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        prompt_cache_key: bool = False,
        extra_headers: dict[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
        auth: httpx.Auth | None = None,
    ) -> None:
        headers = {**bearer(api_key), **(extra_headers or {})}
        super().__init__(base_url.rstrip("/") + "/responses", headers, client, auth)
        self._prompt_cache_key = prompt_cache_key

    async def _stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        decoder = _Decoder()
        async with aclosing(self._post(build_body(request, prompt_cache_key=self._prompt_cache_key))) as answer:
            async for sse in answer:
                for event in decoder.feed(load_json(sse.data)):
                    yield event
                if decoder.done:
                    return
        raise provider_error(FailureKind.TRUNCATED)


def build_body(request: ModelRequest, *, prompt_cache_key: bool = False) -> dict[str, object]:
    """The Responses request body for `request` (streaming, stateless; with `prompt_cache_key`, the request's cache
    key as OpenAI's `prompt_cache_key`)."""
    body: dict[str, object] = {
        "model": request.model,
        "input": [item for message in request.messages for item in _items(message)],
        "stream": True,
        "store": False,
        "max_output_tokens": request.max_output_tokens,
    }
    if request.system:
        body["instructions"] = request.system
    if request.tools:
        body["tools"] = [
            {"type": "function", "name": t.name, "description": t.description, "parameters": t.input_schema}
            for t in request.tools
        ]
    if request.reasoning_effort is not None:
        body["reasoning"] = {"effort": request.reasoning_effort, "summary": "auto"}
        body["include"] = ["reasoning.encrypted_content"]
    if prompt_cache_key and request.cache_key:
        body["prompt_cache_key"] = request.cache_key
    return body


def _items(message: Message) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    content: list[dict[str, object]] = []
    text_type = "output_text" if message.role == "assistant" else "input_text"

    def flush() -> None:
        if content:
            out.append({"type": "message", "role": message.role, "content": list(content)})
            content.clear()

    for part in message.parts:
        if isinstance(part, TextPart):
            content.append({"type": text_type, "text": part.text})
        elif isinstance(part, ImagePart):
            content.append({"type": "input_image", "image_url": f"data:{part.media_type};base64,{part.data_base64}"})
        else:
            # Non-message items keep their place in the conversation order.
            flush()
            item = _item(part)
            if item is not None:
                out.append(item)
    flush()
    return out


def _item(part: object) -> dict[str, object] | None:
    if isinstance(part, ToolCallPart):
        return {"type": "function_call", "call_id": part.call_id, "name": part.name, "arguments": part.arguments_json}
    if isinstance(part, ToolResultPart):
        return {"type": "function_call_output", "call_id": part.call_id, "output": part.output}
    if isinstance(part, ReasoningPart) and part.signature:
        try:
            sealed = json.loads(part.signature)
        except ValueError:
            return None  # a signature from another protocol cannot be replayed here
        if not text(sealed, "id"):
            return None
        summary = [{"type": "summary_text", "text": part.text}] if part.text else []
        item: dict[str, object] = {"type": "reasoning", "id": text(sealed, "id"), "summary": summary}
        if text(sealed, "encrypted_content"):
            item["encrypted_content"] = text(sealed, "encrypted_content")
        return item
    return None


class _Decoder:
    """Turns Responses SSE events into neutral events; `done` once the response completed or ended incomplete."""

    def __init__(self) -> None:
        self.done = False
        self._blocks = BlockTracker()
        self._call_ids: dict[int, str] = {}  # output_index → call_id
        self._streamed_args: set[int] = set()
        self._refused = False

    def feed(self, data: dict[str, object]) -> list[StreamEvent]:
        kind = text(data, "type")
        at = count(data, "output_index")
        if kind == "response.output_item.added":
            return self._item_added(at, obj(data, "item"))
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            self._refused = self._refused or kind == "response.refusal.delta"
            key = ("text", at, count(data, "content_index"))
            return [*self._blocks.ensure(key, lambda i: TextDelta(i, "")), TextDelta(self._index(key), _delta(data))]
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            opened = self._blocks.ensure(("reasoning", at), lambda i: ReasoningDelta(i, ""))
            return [*opened, ReasoningDelta(self._index(("reasoning", at)), _delta(data))]
        if kind == "response.reasoning_summary_part.added" and count(data, "summary_index") > 0:
            index = self._blocks.index_of(("reasoning", at))
            return [ReasoningDelta(index, "\n\n")] if index is not None else []
        if kind == "response.function_call_arguments.delta":
            index = self._blocks.index_of(("tool", at))
            if index is None or not _delta(data):
                return []
            self._streamed_args.add(at)
            return [ToolCallArgumentsDelta(index, self._call_ids[at], _delta(data))]
        if kind == "response.output_item.done":
            return self._item_done(at, obj(data, "item"))
        if kind in ("response.completed", "response.incomplete"):
            return self._finish(obj(data, "response"))
        if kind == "response.failed":
            raise StreamErrorReported(*error_fields(obj(data, "response")))
        if kind == "error":
            raise StreamErrorReported(text(data, "type"), text(data, "code"), text(data, "message"))
        return []

    def _index(self, key: object) -> int:
        index = self._blocks.index_of(key)
        assert index is not None, "ensure() opened this block just before"
        return index

    def _item_added(self, at: int, item: dict[str, object]) -> list[StreamEvent]:
        if text(item, "type") == "reasoning":
            return self._blocks.ensure(("reasoning", at), lambda i: ReasoningDelta(i, ""))
        if text(item, "type") == "function_call":
            call_id = text(item, "call_id") or text(item, "id")
            self._call_ids[at] = call_id
            return self._blocks.ensure(("tool", at), lambda i: ToolCallStarted(i, call_id, text(item, "name")))
        return []

    def _item_done(self, at: int, item: dict[str, object]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        item_type = text(item, "type")
        reasoning_index = self._blocks.index_of(("reasoning", at))
        if item_type == "reasoning" and reasoning_index is not None:
            sealed = {"id": text(item, "id"), "encrypted_content": text(item, "encrypted_content")}
            events.append(ReasoningSignature(reasoning_index, json.dumps(sealed, separators=(",", ":"))))
        tool_index = self._blocks.index_of(("tool", at))
        # Some servers send the arguments only in the finished item.
        if (
            item_type == "function_call"
            and tool_index is not None
            and at not in self._streamed_args
            and text(item, "arguments")
        ):
            events.append(ToolCallArgumentsDelta(tool_index, self._call_ids[at], text(item, "arguments")))
        return [*events, *self._blocks.close()]

    def _finish(self, response: dict[str, object]) -> list[StreamEvent]:
        self.done = True
        stop: StopReason = "stop"
        if text(response, "status") == "incomplete":
            stop = _INCOMPLETE_REASONS.get(text(obj(response, "incomplete_details"), "reason"), "unknown")
        elif self._call_ids:
            stop = "tool_calls"
        elif self._refused:
            stop = "refusal"
        usage = obj(response, "usage")
        return [
            *self._blocks.close(),
            Usage(
                input_tokens=count(usage, "input_tokens"),
                output_tokens=count(usage, "output_tokens"),
                reasoning_tokens=count(obj(usage, "output_tokens_details"), "reasoning_tokens"),
                cache_read_tokens=count(obj(usage, "input_tokens_details"), "cached_tokens"),
            ),
            StreamEnd(stop),
        ]


def _delta(data: dict[str, object]) -> str:
    return text(data, "delta")
