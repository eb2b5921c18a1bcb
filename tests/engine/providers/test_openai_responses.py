"""OpenAI Responses client against the fake LLM server over loopback."""

from __future__ import annotations

import json

from omniagent.engine.providers.clients.openai_responses import OpenAIResponsesProvider
from omniagent.engine.providers.neutral import (
    Message,
    ModelRequest,
    ReasoningPart,
    ReasoningSignature,
    RunErrorCode,
    StreamEnd,
    TextPart,
    ToolCallPart,
    ToolCallStarted,
    ToolResultPart,
    Usage,
)
from omniagent.testing import ErrorReply, FakeLLMServer, FakeToolCall, FakeUsage, Reply
from tests.engine.providers.helpers import arguments, check_contract, collect, failure, reasoning, texts

KEY = "sk-proj-responses-key"


def provider(llm: FakeLLMServer) -> OpenAIResponsesProvider:
    return OpenAIResponsesProvider(llm.openai_base_url, KEY)


async def test_text_answer_and_usage_map_from_response_completed(llm: FakeLLMServer) -> None:
    """Usage from response.completed; input includes cached."""
    llm.enqueue(Reply(text="Responses say hi", usage=FakeUsage(input=40, output=6, cache_read=32, reasoning=2)))
    events = await collect(provider(llm))
    check_contract(events)
    assert texts(events) == "Responses say hi"
    assert events[-2] == Usage(input_tokens=40, output_tokens=6, reasoning_tokens=2, cache_read_tokens=32)
    assert events[-1] == StreamEnd("stop")
    body = llm.requests[0].body
    assert isinstance(body, dict)
    assert body["store"] is False and body["instructions"] == "be brief"
    assert body["input"] == [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}]


async def test_reasoning_summary_streams_and_its_encrypted_content_replays(llm: FakeLLMServer) -> None:
    """Summary deltas → reasoning; encrypted_content travels in the signature and replays."""
    llm.enqueue(Reply(text="x", reasoning="summary of thought", signature="ENC123"), Reply(text="y"))
    request = ModelRequest(model="m", system="", messages=(Message("user", (TextPart("q"),)),), reasoning_effort="high")
    events = await collect(provider(llm), request)
    check_contract(events)
    assert reasoning(events) == "summary of thought"
    (signature,) = [e for e in events if isinstance(e, ReasoningSignature)]
    first = llm.requests[0].body
    assert isinstance(first, dict)
    assert first["include"] == ["reasoning.encrypted_content"] and first["reasoning"]["effort"] == "high"
    replay = (
        Message("user", (TextPart("q"),)),
        Message("assistant", (ReasoningPart("summary of thought", signature=signature.signature), TextPart("x"))),
        Message("user", (TextPart("more"),)),
    )
    await collect(provider(llm), ModelRequest(model="m", system="", messages=replay))
    second = llm.requests[1].body
    assert isinstance(second, dict)
    item = second["input"][1]
    assert item["type"] == "reasoning" and item["encrypted_content"] == "ENC123" and item["id"] == "rs_fake_0"
    assert second["input"][2]["content"] == [{"type": "output_text", "text": "x"}]


async def test_function_call_arguments_stream_and_result_returns_as_function_call_output(llm: FakeLLMServer) -> None:
    """A function_call item + arguments deltas → tool call; tool result → function_call_output."""
    call = FakeToolCall("exec", {"command": "ls -la"}, "call_9")
    llm.enqueue(Reply(tool_calls=(call,), chunk_size=3), Reply(text="done"))
    events = await collect(provider(llm))
    check_contract(events)
    assert [e for e in events if isinstance(e, ToolCallStarted)] == [ToolCallStarted(0, "call_9", "exec")]
    assert json.loads(arguments(events)) == {"command": "ls -la"}
    assert events[-1] == StreamEnd("tool_calls")
    history = (
        Message("user", (TextPart("list"),)),
        Message("assistant", (ToolCallPart("call_9", "exec", arguments(events)),)),
        Message("user", (ToolResultPart("call_9", "a b c"),)),
    )
    await collect(provider(llm), ModelRequest(model="m", system="", messages=history))
    body = llm.requests[1].body
    assert isinstance(body, dict)
    assert body["input"][1] == {
        "type": "function_call",
        "call_id": "call_9",
        "name": "exec",
        "arguments": arguments(events),
    }
    assert body["input"][2] == {"type": "function_call_output", "call_id": "call_9", "output": "a b c"}


async def test_incomplete_for_max_output_tokens_stops_with_length(llm: FakeLLMServer) -> None:
    """Finish mapping: incomplete max_output_tokens → length."""
    llm.enqueue(Reply(text="cut", stop="length"))
    events = await collect(provider(llm))
    assert events[-1] == StreamEnd("length")


async def test_stream_level_error_event_maps_by_code(llm: FakeLLMServer) -> None:
    """An `error` event with code rate_limit_exceeded → rate_limited."""
    llm.enqueue(Reply(error_event="rate_limit_exceeded"))
    error = await failure(provider(llm))
    assert error.code is RunErrorCode.RATE_LIMITED and not error.content_streamed


async def test_401_is_auth_and_not_retryable(llm: FakeLLMServer) -> None:
    """401 → auth (docs/providers.md "Errors and retries")."""
    llm.enqueue(ErrorReply(401, "invalid_request_error", "invalid_api_key", "Incorrect API key"))
    error = await failure(provider(llm))
    assert error.code is RunErrorCode.AUTH and not error.retryable


async def test_stream_without_response_completed_is_truncated(llm: FakeLLMServer) -> None:
    """No [DONE]; the stream ends with response.completed|incomplete|failed."""
    llm.enqueue(Reply(text="abc", end_after_events=6))
    assert (await failure(provider(llm))).code is RunErrorCode.PROTOCOL


async def test_the_prompt_cache_key_is_sent_only_where_the_endpoint_takes_it(llm: FakeLLMServer) -> None:
    """Prompt caching: an endpoint declared `openai_breakpoint` gets the session's `prompt_cache_key`."""
    llm.enqueue(Reply(text="a"), Reply(text="b"))
    request = ModelRequest(model="m", system="", messages=(Message("user", (TextPart("hi"),)),), cache_key="s1")
    await collect(OpenAIResponsesProvider(llm.openai_base_url, KEY, prompt_cache_key=True), request)
    await collect(provider(llm), request)
    keyed, plain = (r.body for r in llm.requests)
    assert isinstance(keyed, dict) and isinstance(plain, dict)
    assert keyed["prompt_cache_key"] == "s1" and "prompt_cache_key" not in plain
