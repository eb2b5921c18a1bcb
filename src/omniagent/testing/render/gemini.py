"""Gemini answers for the fake LLM server (`…:streamGenerateContent?alt=sse`, `…:generateContent`)."""

from __future__ import annotations

import json

from omniagent.testing.frames import pieces, sse
from omniagent.testing.scenario import ErrorReply, Reply

_FINISH = {
    "stop": "STOP",
    "tool_calls": "STOP",
    "length": "MAX_TOKENS",
    "content_filter": "SAFETY",
    "refusal": "SAFETY",
}
_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


class GeminiRenderer:
    """See `frames.Renderer`. The model id comes from the URL, passed in as `request["model"]` by the server."""

    def stream(self, reply: Reply, request: dict[str, object]) -> list[str]:
        parts = _parts(reply, reply.chunk_size)
        events = [sse(_answer(request, [part])) for part in parts[:-1]]
        last = _answer(request, parts[-1:], finish=_FINISH.get(reply.stop_reason(), "STOP"), reply=reply)
        return [*events, sse(last)]

    def stream_error(self, error_type: str, message: str) -> str:
        return sse({"error": {"code": 500, "message": message, "status": error_type or "INTERNAL"}})

    def whole(self, reply: Reply, request: dict[str, object]) -> dict[str, object]:
        merged = _parts(reply, max(len(reply.text), len(reply.reasoning), 1))
        return _answer(request, merged, finish=_FINISH.get(reply.stop_reason(), "STOP"), reply=reply)

    def error_body(self, error: ErrorReply) -> dict[str, object]:
        """google.rpc's shape; a `retry_after` goes in a `RetryInfo` detail, where Gemini says how long to wait."""
        status = error.error_type or _STATUS_NAMES.get(error.status, "UNKNOWN")
        body: dict[str, object] = {"code": error.status, "message": error.message, "status": status}
        if error.retry_after is not None:
            retry = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{error.retry_after:g}s"}
            body["details"] = [retry]
        return {"error": body}


def _parts(reply: Reply, size: int) -> list[dict[str, object]]:
    """Thought parts, text parts, function calls; the reply's `signature` rides on the first function call, else on
    the last part, as Gemini places its thought signatures."""
    parts: list[dict[str, object]] = [{"text": p, "thought": True} for p in pieces(reply.reasoning, size) if p]
    parts += [{"text": p} for p in pieces(reply.text, size) if p]
    first_call = len(parts)
    for call in reply.tool_calls:
        try:
            args = json.loads(call.arguments_json())
        except ValueError:
            args = {}
        function: dict[str, object] = {"name": call.name, "args": args}
        if call.call_id:  # the Gemini API sends ids only sometimes: a scripted one is sent, none made up
            function["id"] = call.call_id
        parts.append({"functionCall": function})
    if not parts:
        return [{"text": ""}]
    if reply.signature:
        parts[first_call if reply.tool_calls else -1]["thoughtSignature"] = reply.signature
    return parts


def _answer(
    request: dict[str, object], parts: list[dict[str, object]], finish: str | None = None, reply: Reply | None = None
) -> dict[str, object]:
    candidate: dict[str, object] = {"content": {"role": "model", "parts": parts}, "index": 0}
    answer: dict[str, object] = {
        "candidates": [candidate],
        "modelVersion": request.get("model", "fake-model"),
        "responseId": "fake-response",
    }
    if finish is not None and reply is not None:
        candidate["finishReason"] = finish
        u = reply.usage
        answer["usageMetadata"] = {
            "promptTokenCount": u.input,
            "candidatesTokenCount": u.output,
            "totalTokenCount": u.input + u.output,
            "cachedContentTokenCount": u.cache_read,
            "thoughtsTokenCount": u.reasoning,
        }
    return answer
