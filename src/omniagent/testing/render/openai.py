"""OpenAI Chat Completions and Responses answers for the fake LLM server."""

from __future__ import annotations

from collections.abc import Callable

from omniagent.testing.frames import pieces, sse
from omniagent.testing.scenario import ErrorReply, Reply

CREATED = 1_700_000_000  # fixed unix time: answers are reproducible byte for byte
DONE = "data: [DONE]\n\n"
_CHAT_STOPS = {"stop": "stop", "length": "length", "tool_calls": "tool_calls", "content_filter": "content_filter"}


def openai_error_body(error: ErrorReply) -> dict[str, object]:
    """`{"error": {message, type, param, code}}`, the shape both OpenAI APIs use."""
    body = {
        "message": error.message,
        "type": error.error_type or "api_error",
        "param": None,
        "code": error.code or None,
    }
    return {"error": body}


class ChatRenderer:
    """See `frames.Renderer`. Reasoning streams as `delta.reasoning_content` (DeepSeek/Qwen/vLLM style)."""

    def stream(self, reply: Reply, request: dict[str, object]) -> list[str]:
        model = request.get("model", "fake-model")

        def chunk(delta: dict[str, object], finish: str | None = None) -> str:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return sse(
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": CREATED,
                    "model": model,
                    "choices": [choice],
                }
            )

        events = [chunk({"role": "assistant", "content": ""})]
        events += [chunk({"reasoning_content": p}) for p in pieces(reply.reasoning, reply.chunk_size) if p]
        events += [chunk({"content": p}) for p in pieces(reply.text, reply.chunk_size) if p]
        for number, call in enumerate(reply.tool_calls):
            first = {
                "index": number,
                "id": call.call_id or f"call_fake_{number}",
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            events.append(chunk({"tool_calls": [first]}))
            for piece in pieces(call.arguments_json(), reply.chunk_size):
                events.append(chunk({"tool_calls": [{"index": number, "function": {"arguments": piece}}]}))
        events.append(chunk({}, _CHAT_STOPS.get(reply.stop_reason(), "stop")))
        options = request.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            events.append(
                sse(
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion.chunk",
                        "created": CREATED,
                        "model": model,
                        "choices": [],
                        "usage": _chat_usage(reply),
                    }
                )
            )
        events.append(DONE)
        return events

    def stream_error(self, error_type: str, message: str) -> str:
        return sse({"error": {"message": message, "type": error_type, "param": None, "code": error_type}})

    def whole(self, reply: Reply, request: dict[str, object]) -> dict[str, object]:
        message: dict[str, object] = {"role": "assistant", "content": reply.text or None}
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.call_id or f"call_fake_{n}",
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments_json()},
                }
                for n, c in enumerate(reply.tool_calls)
            ]
        choice = {"index": 0, "message": message, "finish_reason": _CHAT_STOPS.get(reply.stop_reason(), "stop")}
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": CREATED,
            "model": request.get("model", "fake-model"),
            "choices": [choice],
            "usage": _chat_usage(reply),
        }

    def error_body(self, error: ErrorReply) -> dict[str, object]:
        return openai_error_body(error)


def _chat_usage(reply: Reply) -> dict[str, object]:
    u = reply.usage
    return {
        "prompt_tokens": u.input,
        "completion_tokens": u.output,
        "total_tokens": u.input + u.output,
        "prompt_tokens_details": {"cached_tokens": u.cache_read},
        "completion_tokens_details": {"reasoning_tokens": u.reasoning},
    }


class ResponsesRenderer:
    """See `frames.Renderer`. Reasoning streams as summary text; `signature` is sent as `encrypted_content`."""

    def stream(self, reply: Reply, request: dict[str, object]) -> list[str]:
        out: list[str] = []

        def emit(kind: str, **fields: object) -> None:
            out.append(sse({"type": kind, "sequence_number": len(out), **fields}, kind))

        shell = _response(reply, request, "in_progress", [])
        emit("response.created", response=shell)
        emit("response.in_progress", response=shell)
        items = _items(reply)
        for at, item in enumerate(items):
            _stream_item(emit, at, item, reply.chunk_size)
        status = _status(reply)
        final = _response(reply, request, status, items)
        emit("response.completed" if status == "completed" else "response.incomplete", response=final)
        return out

    def stream_error(self, error_type: str, message: str) -> str:
        return sse({"type": "error", "code": error_type, "message": message, "param": None}, "error")

    def whole(self, reply: Reply, request: dict[str, object]) -> dict[str, object]:
        return _response(reply, request, _status(reply), _items(reply))

    def error_body(self, error: ErrorReply) -> dict[str, object]:
        return openai_error_body(error)


def _status(reply: Reply) -> str:
    return "incomplete" if reply.stop_reason() in ("length", "content_filter") else "completed"


def _response(
    reply: Reply, request: dict[str, object], status: str, output: list[dict[str, object]]
) -> dict[str, object]:
    u = reply.usage
    response: dict[str, object] = {
        "id": "resp_fake",
        "object": "response",
        "created_at": CREATED,
        "status": status,
        "model": request.get("model", "fake-model"),
        "output": output,
    }
    if status == "incomplete":
        reason = "max_output_tokens" if reply.stop_reason() == "length" else "content_filter"
        response["incomplete_details"] = {"reason": reason}
    if status != "in_progress":
        response["usage"] = {
            "input_tokens": u.input,
            "input_tokens_details": {"cached_tokens": u.cache_read},
            "output_tokens": u.output,
            "output_tokens_details": {"reasoning_tokens": u.reasoning},
            "total_tokens": u.input + u.output,
        }
    return response


def _items(reply: Reply) -> list[dict[str, object]]:
    items: list[dict[str, object]] = []
    if reply.reasoning:
        items.append(
            {
                "type": "reasoning",
                "id": "rs_fake_0",
                "encrypted_content": reply.signature,
                "summary": [{"type": "summary_text", "text": reply.reasoning}],
            }
        )
    if reply.text:
        items.append(
            {
                "type": "message",
                "id": "msg_fake_0",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    for n, call in enumerate(reply.tool_calls):
        items.append(
            {
                "type": "function_call",
                "id": f"fc_fake_{n}",
                "call_id": call.call_id or f"call_fake_{n}",
                "name": call.name,
                "arguments": call.arguments_json(),
                "status": "completed",
            }
        )
    return items


def _stream_item(emit: Callable[..., None], at: int, item: dict[str, object], size: int) -> None:
    kind, item_id = item["type"], item["id"]
    if kind == "reasoning":
        emit("response.output_item.added", output_index=at, item={**item, "summary": [], "encrypted_content": None})
        summary = str(item["summary"][0]["text"])  # type: ignore[index]
        part = {"type": "summary_text", "text": ""}
        emit("response.reasoning_summary_part.added", item_id=item_id, output_index=at, summary_index=0, part=part)
        for piece in pieces(summary, size):
            emit(
                "response.reasoning_summary_text.delta", item_id=item_id, output_index=at, summary_index=0, delta=piece
            )
        emit("response.reasoning_summary_text.done", item_id=item_id, output_index=at, summary_index=0, text=summary)
        emit(
            "response.reasoning_summary_part.done",
            item_id=item_id,
            output_index=at,
            summary_index=0,
            part={"type": "summary_text", "text": summary},
        )
    elif kind == "message":
        text = str(item["content"][0]["text"])  # type: ignore[index]
        emit("response.output_item.added", output_index=at, item={**item, "content": [], "status": "in_progress"})
        empty = {"type": "output_text", "text": "", "annotations": []}
        emit("response.content_part.added", item_id=item_id, output_index=at, content_index=0, part=empty)
        for piece in pieces(text, size):
            emit("response.output_text.delta", item_id=item_id, output_index=at, content_index=0, delta=piece)
        emit("response.output_text.done", item_id=item_id, output_index=at, content_index=0, text=text)
        emit(
            "response.content_part.done",
            item_id=item_id,
            output_index=at,
            content_index=0,
            part={**empty, "text": text},
        )
    else:
        emit("response.output_item.added", output_index=at, item={**item, "arguments": "", "status": "in_progress"})
        arguments = str(item["arguments"])
        for piece in pieces(arguments, size):
            emit("response.function_call_arguments.delta", item_id=item_id, output_index=at, delta=piece)
        emit("response.function_call_arguments.done", item_id=item_id, output_index=at, arguments=arguments)
    emit("response.output_item.done", output_index=at, item=item)
