"""OpenAI Chat Completions client against the fake LLM server over loopback."""

from __future__ import annotations

import pytest

from omniagent.engine.providers.clients.openai_chat import OpenAIChatProvider
from omniagent.engine.providers.neutral import (
    ImagePart,
    Message,
    ModelRequest,
    ReasoningDelta,
    RunErrorCode,
    StreamEnd,
    TextPart,
    ToolCallPart,
    ToolCallStarted,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from omniagent.testing import ErrorReply, FakeLLMServer, FakeToolCall, FakeUsage, Reply, fingerprint
from tests.engine.providers.helpers import arguments, check_contract, collect, failure, reasoning, texts

KEY = "sk-proj-test-key-abcdef"


def provider(llm: FakeLLMServer, key: str | None = KEY) -> OpenAIChatProvider:
    return OpenAIChatProvider(llm.openai_base_url, key)


async def test_text_answer_asks_for_usage_and_maps_cached_and_reasoning_tokens(llm: FakeLLMServer) -> None:
    """stream_options.include_usage gives a choices:[] usage chunk; input already includes cached."""
    llm.enqueue(Reply(text="Hi from chat", usage=FakeUsage(input=50, output=8, cache_read=20, reasoning=3)))
    events = await collect(provider(llm))
    check_contract(events)
    assert texts(events) == "Hi from chat"
    assert events[-2] == Usage(input_tokens=50, output_tokens=8, reasoning_tokens=3, cache_read_tokens=20)
    assert events[-1] == StreamEnd("stop")
    sent = llm.requests[0]
    assert sent.path == "/v1/chat/completions" and sent.credential == fingerprint(KEY)
    body = sent.body
    assert isinstance(body, dict)
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"][0] == {"role": "system", "content": "be brief"}
    assert body["max_completion_tokens"] == 8192


async def test_reasoning_content_of_compatible_vendors_streams_as_a_reasoning_block(llm: FakeLLMServer) -> None:
    """Compatible vendors: delta.reasoning_content → reasoning block before the text block."""
    llm.enqueue(Reply(text="result", reasoning="step one, step two"))
    events = await collect(provider(llm))
    check_contract(events)
    assert reasoning(events) == "step one, step two"
    first_text = next(i for i, e in enumerate(events) if e.__class__.__name__ == "TextDelta")
    assert all(isinstance(e, ReasoningDelta) for e in events[: first_text - 1])


async def test_tool_calls_accumulate_by_index_and_finish_as_tool_calls(llm: FakeLLMServer) -> None:
    """The id and name come only in the first piece; arguments accumulate by tool_calls[].index."""
    calls = (FakeToolCall("read", {"path": "a.py"}, "call_a"), FakeToolCall("grep", {"pattern": "x"}, "call_b"))
    llm.enqueue(Reply(tool_calls=calls, chunk_size=4))
    events = await collect(provider(llm))
    check_contract(events)
    starts = [e for e in events if isinstance(e, ToolCallStarted)]
    assert starts == [ToolCallStarted(0, "call_a", "read"), ToolCallStarted(1, "call_b", "grep")]
    assert arguments([e for e in events if getattr(e, "index", None) == 1]) == calls[1].arguments_json()
    assert events[-1] == StreamEnd("tool_calls")


async def test_history_becomes_assistant_tool_calls_then_tool_messages(llm: FakeLLMServer) -> None:
    """History: assistant{tool_calls}, then tool{tool_call_id}; images as data URLs."""
    llm.enqueue(Reply(text="ok"))
    history = (
        Message("user", (TextPart("look"), ImagePart("image/png", "iVBORw0KGgo="))),
        Message("assistant", (TextPart("reading"), ToolCallPart("call_1", "read", '{"path":"a"}'))),
        Message("user", (ToolResultPart("call_1", "contents"),)),
    )
    tools = (ToolSpec("read", "Read", {"type": "object"}),)
    request = ModelRequest(model="m", system="", messages=history, tools=tools, reasoning_effort="low")
    await collect(provider(llm), request)
    body = llm.requests[0].body
    assert isinstance(body, dict)
    messages = body["messages"]
    assert messages[0]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
    }
    assert messages[1]["tool_calls"] == [
        {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": '{"path":"a"}'}}
    ]
    assert messages[2] == {"role": "tool", "tool_call_id": "call_1", "content": "contents"}
    assert body["tools"][0]["function"]["name"] == "read" and body["reasoning_effort"] == "low"


async def test_local_endpoint_without_key_sends_no_authorization(llm: FakeLLMServer) -> None:
    """Ollama-style endpoints take no key; none is sent."""
    llm.enqueue(Reply(text="ok"))
    await collect(provider(llm, key=None))
    assert llm.requests[0].credential is None


@pytest.mark.parametrize(
    ("status", "code_field", "message", "code", "retryable"),
    [
        (429, "rate_limit_exceeded", "Rate limit reached", "rate_limited", True),
        (429, "insufficient_quota", "You exceeded your current quota", "quota_exhausted", False),
        (400, "context_length_exceeded", "This model's maximum context length is 128000", "context_overflow", False),
        (401, "invalid_api_key", "Incorrect API key provided: sk-proj-***", "auth", False),
        (404, "model_not_found", "The model does not exist", "unknown_model", False),
        (408, "", "timeout", "provider", True),
        (409, "", "conflict", "provider", True),
        (503, "", "unavailable", "provider", True),
    ],
)
async def test_error_answer_maps_to_run_error_code(
    llm: FakeLLMServer, status: int, code_field: str, message: str, code: str, retryable: bool
) -> None:
    """Errors (docs/providers.md "Errors and retries"): insufficient_quota is never retried; 408/409/5xx are."""
    llm.enqueue(ErrorReply(status, "error", code=code_field, message=message))
    error = await failure(provider(llm))
    assert (error.code, error.retryable) == (RunErrorCode(code), retryable)


async def test_a_bearer_key_echoed_in_the_error_message_is_redacted(llm: FakeLLMServer) -> None:
    """Issue 26: OpenAI's 401 quotes the key it refused (masked, `sk-proj-****cdef`); neither that nor the whole
    key sent as `Bearer` reaches our message, the rest of the provider's words do."""
    said = f"Incorrect API key provided: sk-proj-****cdef (sent {KEY}). You can find your API key at the dashboard."
    llm.enqueue(ErrorReply(401, "invalid_request_error", code="invalid_api_key", message=said))
    error = await failure(provider(llm))
    assert str(error).endswith(
        'The provider said: "Incorrect API key provided: [redacted] (sent [redacted]). You can find your API key at '
        'the dashboard."'
    )


async def test_retry_after_ms_is_preferred_and_read_in_milliseconds(llm: FakeLLMServer) -> None:
    """retry-after-ms (honoured by the SDKs) over retry-after."""
    llm.enqueue(ErrorReply(429, code="rate_limit_exceeded", retry_after=9, retry_after_ms=1500))
    assert (await failure(provider(llm))).retry_after == 1.5


async def test_error_data_line_mid_stream_fails_the_call(llm: FakeLLMServer) -> None:
    """Some vendors send an {"error": …} data line mid-stream."""
    llm.enqueue(Reply(text="some text", error_event="server_error"))
    error = await failure(provider(llm))
    assert error.code is RunErrorCode.PROVIDER and error.content_streamed


async def test_stream_without_finish_reason_is_truncated(llm: FakeLLMServer) -> None:
    """A Chat stream needs its finish chunk or [DONE]."""
    llm.enqueue(Reply(text="abcdefghij", end_after_events=2))
    error = await failure(provider(llm))
    assert error.code is RunErrorCode.PROTOCOL and error.content_streamed


async def test_the_prompt_cache_key_is_sent_only_where_the_endpoint_takes_it(llm: FakeLLMServer) -> None:
    """Prompt caching: an endpoint declared `openai_breakpoint` gets the session's `prompt_cache_key`; any other
    compatible server never sees the field (a strict one would refuse it)."""
    llm.enqueue(Reply(text="a"), Reply(text="b"))
    request = ModelRequest(model="m", system="", messages=(Message("user", (TextPart("hi"),)),), cache_key="s1")
    await collect(OpenAIChatProvider(llm.openai_base_url, KEY, prompt_cache_key=True), request)
    await collect(provider(llm), request)
    keyed, plain = (r.body for r in llm.requests)
    assert isinstance(keyed, dict) and isinstance(plain, dict)
    assert keyed["prompt_cache_key"] == "s1" and "prompt_cache_key" not in plain
