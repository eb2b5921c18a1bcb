"""Anthropic Messages answers for the fake LLM server (`POST …/v1/messages`)."""

from __future__ import annotations

import json

from omniagent.testing.frames import pieces, sse
from omniagent.testing.scenario import ErrorReply, Reply

_STOPS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "refusal": "refusal"}


class AnthropicRenderer:
    """See `frames.Renderer`."""

    def stream(self, reply: Reply, request: dict[str, object]) -> list[str]:
        message = {**_envelope(reply, request), "content": [], "stop_reason": None, "stop_sequence": None}
        message["usage"] = {**_input_usage(reply), "output_tokens": 1}
        events = [sse({"type": "message_start", "message": message}, "message_start"), sse({"type": "ping"}, "ping")]
        for index, block in enumerate(_blocks(reply)):
            events += _block_events(index, block, reply.chunk_size)
        delta = {"stop_reason": _STOPS.get(reply.stop_reason(), "end_turn"), "stop_sequence": None}
        usage = {"output_tokens": reply.usage.output}
        events.append(sse({"type": "message_delta", "delta": delta, "usage": usage}, "message_delta"))
        events.append(sse({"type": "message_stop"}, "message_stop"))
        return events

    def stream_error(self, error_type: str, message: str) -> str:
        return sse({"type": "error", "error": {"type": error_type, "message": message}}, "error")

    def whole(self, reply: Reply, request: dict[str, object]) -> dict[str, object]:
        return {
            **_envelope(reply, request),
            "content": [_parsed_input(block) for block in _blocks(reply)],
            "stop_reason": _STOPS.get(reply.stop_reason(), "end_turn"),
            "stop_sequence": None,
            "usage": {**_input_usage(reply), "output_tokens": reply.usage.output},
        }

    def error_body(self, error: ErrorReply) -> dict[str, object]:
        return {"type": "error", "error": {"type": error.error_type or "api_error", "message": error.message}}


def _envelope(reply: Reply, request: dict[str, object]) -> dict[str, object]:
    return {"id": "msg_fake", "type": "message", "role": "assistant", "model": request.get("model", "fake-model")}


def _input_usage(reply: Reply) -> dict[str, int]:
    u = reply.usage
    return {
        "input_tokens": max(u.input - u.cache_read - u.cache_write, 0),
        "cache_creation_input_tokens": u.cache_write,
        "cache_read_input_tokens": u.cache_read,
    }


def _blocks(reply: Reply) -> list[dict[str, object]]:
    blocks: list[dict[str, object]] = []
    if reply.redacted_reasoning is not None:
        blocks.append({"type": "redacted_thinking", "data": reply.redacted_reasoning})
    if reply.reasoning:
        blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": reply.signature})
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for number, call in enumerate(reply.tool_calls):
        call_id = call.call_id or f"toolu_fake_{number}"
        blocks.append({"type": "tool_use", "id": call_id, "name": call.name, "input": call.arguments_json()})
    return blocks


def _parsed_input(block: dict[str, object]) -> dict[str, object]:
    if block["type"] != "tool_use":
        return block
    try:
        value = json.loads(str(block["input"]))
    except ValueError:
        value = {}
    return {**block, "input": value}


def _block_events(index: int, block: dict[str, object], size: int) -> list[str]:
    kind = block["type"]
    if kind == "redacted_thinking":
        starts = block
        deltas: list[dict[str, object]] = []
    elif kind == "thinking":
        starts = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces(str(block["thinking"]), size)]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "text":
        starts = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in pieces(str(block["text"]), size)]
    else:
        starts = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        # Real streams may open with an empty partial_json; clients must tolerate it.
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in ["", *pieces(str(block["input"]), size)]]
    events = [sse({"type": "content_block_start", "index": index, "content_block": starts}, "content_block_start")]
    events += [sse({"type": "content_block_delta", "index": index, "delta": d}, "content_block_delta") for d in deltas]
    events.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    return events
