"""Gemini API client: neutral request → `POST {base}/models/{model}:streamGenerateContent?alt=sse`, SSE → events.

The stream is `data:` lines only, each a whole `GenerateContentResponse` holding the next parts of the answer: text
parts, thought parts (`thought: true`, the model's thought summaries: reasoning), and `functionCall` parts whose
arguments arrive whole. The chunk with a `finishReason` ends the answer.

Thought signatures. Gemini attaches an opaque `thoughtSignature` to some parts (the first function call of a
step, the last text part) and wants it back on the same part when the conversation is sent again (Gemini 3 refuses
a function call without it). A signature on an answer part travels as a reasoning block of its own right after
that part (empty text, the signature in `ReasoningSignature`); a signature on a thought part stays in its reasoning
block. Replaying, a signature goes back on the answer part it came with: an empty reasoning part's on the part
before it, a thought summary's on the first answer part after it (else the last one before it). Thought summaries
themselves are not sent back.

Function calls carry no id on this API (or an id the API chose); the engine needs one to pair results with calls,
so a missing id is made up with the `SYNTHETIC_ID` prefix and never sent back. A function response names its
function: the name is found from the call with the same id earlier in the request.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing

import httpx

from omniagent.engine.providers.clients.blocks import BlockTracker
from omniagent.engine.providers.clients.payload import count, items, json_object, load_json, obj, text
from omniagent.engine.providers.clients.transport import SseEndpoint
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

# Thinking budget (tokens) per reasoning level. 0 turns thinking off (Flash models); Pro models think at least 128.
THINKING_BUDGETS = {"minimal": 0, "low": 1024, "medium": 8192, "high": 24576, "xhigh": 32768, "max": 32768}
SYNTHETIC_ID = "gemini-call-"
_SAFETY = frozenset({"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE"})
# Stream error statuses (google.rpc codes) in the words `classify_stream_error` reads.
_STREAM_ERRORS = {"RESOURCE_EXHAUSTED": "rate_limit", "UNAVAILABLE": "overloaded"}


class GeminiProvider(SseEndpoint):
    """Streams answers from one Gemini API endpoint. `base_url` ends before `/models` (e.g. `…/v1beta`); the key
    goes in `x-goog-api-key`."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        extra_headers: dict[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        headers = {**({"x-goog-api-key": api_key} if api_key else {}), **(extra_headers or {})}
        super().__init__(base_url.rstrip("/") + "/models/", headers, client)

    def _url_for(self, model: str) -> str:
        return f"{self._url}{model.removeprefix('models/')}:streamGenerateContent?alt=sse"

    async def _stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        decoder = _Decoder()
        async with aclosing(self._post(build_body(request), url=self._url_for(request.model))) as answer:
            async for sse in answer:
                for event in decoder.feed(load_json(sse.data)):
                    yield event
                if decoder.done:
                    return
        raise provider_error(FailureKind.TRUNCATED)


def build_body(request: ModelRequest) -> dict[str, object]:
    """The generateContent request body for `request`."""
    names: dict[str, str] = {}  # call id → function name, for the responses
    contents = [c for c in (_content(message, names) for message in request.messages) if c["parts"]]
    config: dict[str, object] = {"maxOutputTokens": request.max_output_tokens}
    if request.reasoning_effort in THINKING_BUDGETS:
        budget = THINKING_BUDGETS[request.reasoning_effort]
        config["thinkingConfig"] = {"thinkingBudget": budget, "includeThoughts": budget > 0}
    body: dict[str, object] = {"contents": contents, "generationConfig": config}
    if request.system:
        body["systemInstruction"] = {"parts": [{"text": request.system}]}
    if request.tools:
        declarations = [
            {"name": t.name, "description": t.description, "parametersJsonSchema": t.input_schema}
            for t in request.tools
        ]
        body["tools"] = [{"functionDeclarations": declarations}]
    return body


def _content(message: Message, names: dict[str, str]) -> dict[str, object]:
    parts: list[dict[str, object]] = []
    signatures: list[tuple[int, str]] = []  # (answer part position the signature belongs next to, signature)
    for part in message.parts:
        if isinstance(part, TextPart) and part.text:
            parts.append({"text": part.text})
        elif isinstance(part, ImagePart):
            parts.append({"inlineData": {"mimeType": part.media_type, "data": part.data_base64}})
        elif isinstance(part, ToolCallPart):
            names[part.call_id] = part.name
            call: dict[str, object] = {"name": part.name, "args": json_object(part.arguments_json)}
            if not part.call_id.startswith(SYNTHETIC_ID):
                call["id"] = part.call_id
            parts.append({"functionCall": call})
        elif isinstance(part, ToolResultPart):
            response: dict[str, object] = {"error" if part.is_error else "output": part.output}
            result: dict[str, object] = {"name": names.get(part.call_id, ""), "response": response}
            if not part.call_id.startswith(SYNTHETIC_ID):
                result["id"] = part.call_id
            parts.append({"functionResponse": result})
        elif isinstance(part, ReasoningPart) and part.signature:
            # A bare signature came with the answer part before it; a thought summary's goes to the next one.
            signatures.append((len(parts) - 1 if not part.text else len(parts), part.signature))
    for position, signature in signatures:
        target = min(max(position, 0), len(parts) - 1)
        if parts and "thoughtSignature" not in parts[target]:
            parts[target]["thoughtSignature"] = signature
    return {"role": "model" if message.role == "assistant" else "user", "parts": parts}


class _Decoder:
    """Turns Gemini stream chunks into neutral events; `done` once a chunk carried a finish reason."""

    def __init__(self) -> None:
        self.done = False
        self._blocks = BlockTracker()
        self._called = False
        self._usage = Usage()

    def feed(self, chunk: dict[str, object]) -> list[StreamEvent]:
        if "error" in chunk:
            error = obj(chunk, "error")
            status = text(error, "status")
            code, message = str(count(error, "code")), text(error, "message")
            raise StreamErrorReported(_STREAM_ERRORS.get(status, status), code, message)
        if obj(chunk, "usageMetadata"):
            self._usage = _usage(obj(chunk, "usageMetadata"))
        candidates = items(chunk, "candidates")
        if not candidates:
            if text(obj(chunk, "promptFeedback"), "blockReason"):
                return self._finish("content_filter")  # the prompt itself was blocked
            return []
        candidate = candidates[0]
        events: list[StreamEvent] = []
        for part in items(obj(candidate, "content"), "parts"):
            if isinstance(part, dict):
                events += self._part(part)
        reason = text(candidate, "finishReason")
        if reason:
            events += self._finish(_stop(reason, self._called))
        return events

    def _part(self, part: dict[str, object]) -> list[StreamEvent]:
        signature = text(part, "thoughtSignature")
        events: list[StreamEvent] = []
        if part.get("thought") is True:
            events += self._blocks.ensure("thought", lambda i: ReasoningDelta(i, ""))
            index = self._index("thought")
            if text(part, "text"):
                events.append(ReasoningDelta(index, text(part, "text")))
            if signature:
                events.append(ReasoningSignature(index, signature))
            return events
        call = obj(part, "functionCall")
        if call:
            self._called = True
            call_id = text(call, "id") or f"{SYNTHETIC_ID}{uuid.uuid4().hex[:16]}"
            arguments = json.dumps(obj(call, "args"), separators=(",", ":"))
            key = ("call", call_id)
            events += self._blocks.ensure(key, lambda i: ToolCallStarted(i, call_id, text(call, "name")))
            events += [ToolCallArgumentsDelta(self._index(key), call_id, arguments), *self._blocks.close()]
        elif text(part, "text"):
            events += self._blocks.ensure("text", lambda i: TextDelta(i, ""))
            events.append(TextDelta(self._index("text"), text(part, "text")))
        if signature:
            # Its own block after the part it came with (see the module doc for the replay rule).
            events += self._blocks.close()
            events += self._blocks.ensure(("signature", signature), lambda i: ReasoningDelta(i, ""))
            events += [ReasoningSignature(self._index(("signature", signature)), signature), *self._blocks.close()]
        return events

    def _index(self, key: object) -> int:
        index = self._blocks.index_of(key)
        assert index is not None, "ensure() opened this block just before"
        return index

    def _finish(self, stop: StopReason) -> list[StreamEvent]:
        self.done = True
        return [*self._blocks.close(), self._usage, StreamEnd(stop)]


def _stop(reason: str, called: bool) -> StopReason:
    if reason == "STOP":
        return "tool_calls" if called else "stop"
    if reason == "MAX_TOKENS":
        return "length"
    if reason in _SAFETY:
        return "content_filter"
    return "unknown"


def _usage(usage: Mapping[str, object]) -> Usage:
    thoughts = count(usage, "thoughtsTokenCount")
    return Usage(
        input_tokens=count(usage, "promptTokenCount") + count(usage, "toolUsePromptTokenCount"),
        output_tokens=count(usage, "candidatesTokenCount") + thoughts,
        reasoning_tokens=thoughts,
        cache_read_tokens=count(usage, "cachedContentTokenCount"),
    )
