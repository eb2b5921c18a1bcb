"""Gemini API client against the fake LLM server over loopback (docs/providers.md "Gemini")."""

from __future__ import annotations

import pytest

from omniagent.engine.providers.clients.gemini import SYNTHETIC_ID, GeminiProvider
from omniagent.engine.providers.neutral import (
    ImagePart,
    Message,
    ModelRequest,
    ReasoningDelta,
    ReasoningPart,
    ReasoningSignature,
    RunErrorCode,
    StreamEnd,
    TextPart,
    ToolCallPart,
    ToolCallStarted,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from omniagent.testing import Drop, ErrorReply, FakeLLMServer, FakeToolCall, FakeUsage, Reply, fingerprint
from tests.engine.providers.helpers import arguments, check_contract, collect, failure, reasoning, texts

KEY = "AIza-gemini-test-key-0123456789"


def provider(llm: FakeLLMServer) -> GeminiProvider:
    return GeminiProvider(llm.url + "/v1beta", KEY)


async def test_text_streams_with_usage_thoughts_and_cached_tokens(llm: FakeLLMServer) -> None:
    """Usage: input = promptTokenCount (cached included), output = candidates + thoughts."""
    usage = FakeUsage(input=200, output=9, cache_read=128, reasoning=4)
    llm.enqueue(Reply(text="Hello from Gemini", reasoning="pondering", signature="", usage=usage))
    events = await collect(provider(llm))
    check_contract(events)
    assert reasoning(events) == "pondering" and texts(events) == "Hello from Gemini"
    assert events[-2] == Usage(input_tokens=200, output_tokens=13, reasoning_tokens=4, cache_read_tokens=128)
    assert events[-1] == StreamEnd("stop")
    sent = llm.requests[0]
    assert sent.path == "/v1beta/models/fake-model:streamGenerateContent" and sent.query == "alt=sse"
    assert sent.credential == fingerprint(KEY) and KEY not in str(sent.headers)


async def test_request_body_has_system_tools_config_and_thinking_budget(llm: FakeLLMServer) -> None:
    llm.enqueue(Reply(text="ok"))
    request = ModelRequest(
        model="gemini-2.5-flash",
        system="be brief",
        messages=(Message("user", (TextPart("hi"), ImagePart("image/png", "AAAA"))),),
        tools=(ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),),
        max_output_tokens=4096,
        reasoning_effort="low",
    )
    await collect(provider(llm), request)
    assert llm.requests[0].path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert llm.requests[0].body == {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}, {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]}
        ],
        "generationConfig": {
            "maxOutputTokens": 4096,
            "thinkingConfig": {"thinkingBudget": 1024, "includeThoughts": True},
        },
        "systemInstruction": {"parts": [{"text": "be brief"}]},
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "read",
                        "description": "Read a file",
                        "parametersJsonSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
                    }
                ]
            }
        ],
    }


async def test_function_calls_arrive_whole_with_a_made_up_id_and_the_signature_after_the_call(
    llm: FakeLLMServer,
) -> None:
    """A call without an id gets one of ours; one with an id keeps it; the thought signature on the first call
    becomes a reasoning block of its own right after it; STOP with calls is tool_calls."""
    calls = (FakeToolCall("read", {"path": "a.txt"}), FakeToolCall("search", {"regex": "x"}, "call-7"))
    llm.enqueue(Reply(text="Reading.", tool_calls=calls, signature="sig-1"))
    events = await collect(provider(llm))
    check_contract(events)
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(e.name, e.call_id.startswith(SYNTHETIC_ID)) for e in started] == [("read", True), ("search", False)]
    assert started[1].call_id == "call-7"
    assert arguments(events) == '{"path":"a.txt"}{"regex":"x"}'
    signature = next(e for e in events if isinstance(e, ReasoningSignature))
    assert signature == ReasoningSignature(started[0].index + 1, "sig-1")
    assert ReasoningDelta(signature.index, "") in events
    assert events[-1] == StreamEnd("tool_calls")


async def test_a_replayed_turn_puts_signatures_back_on_their_parts_and_names_each_function_response(
    llm: FakeLLMServer,
) -> None:
    llm.enqueue(Reply(text="done"))
    made_up = f"{SYNTHETIC_ID}abc"
    history = (
        Message("user", (TextPart("read a"),)),
        Message(
            "assistant",
            (
                ReasoningPart("thinking about it", signature="sig-thought"),
                TextPart("Reading."),
                ToolCallPart(made_up, "read", '{"path": "a"}'),
                ReasoningPart("", signature="sig-call"),
                ToolCallPart("call-7", "search", ""),
            ),
        ),
        Message("user", (ToolResultPart(made_up, "text of a"), ToolResultPart("call-7", "no match", is_error=True))),
    )
    await collect(provider(llm), ModelRequest(model="m", system="", messages=history))
    body = llm.requests[0].body
    assert isinstance(body, dict) and "systemInstruction" not in body
    assert body["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                {"text": "Reading.", "thoughtSignature": "sig-thought"},
                {"functionCall": {"name": "read", "args": {"path": "a"}}, "thoughtSignature": "sig-call"},
                {"functionCall": {"name": "search", "args": {}, "id": "call-7"}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "read", "response": {"output": "text of a"}}},
                {"functionResponse": {"name": "search", "response": {"error": "no match"}, "id": "call-7"}},
            ],
        },
    ]


@pytest.mark.parametrize(
    ("status", "message", "code", "retryable"),
    [
        (
            400,
            "The input token count (2000000) exceeds the maximum number of tokens allowed (1048576).",
            "context_overflow",
            False,
        ),
        (400, "API key not valid. Please pass a valid API key.", "auth", False),
        (403, "Permission denied", "auth", False),
        (404, "models/nope is not found", "unknown_model", False),
        (429, "Resource has been exhausted", "rate_limited", True),
        (500, "Internal error", "provider", True),
        (503, "The model is overloaded", "provider", True),
    ],
)
async def test_error_status_maps_to_run_error_code(
    llm: FakeLLMServer, status: int, message: str, code: str, retryable: bool
) -> None:
    llm.enqueue(ErrorReply(status, message=message))
    error = await failure(provider(llm))
    assert (error.code, error.status, error.retryable) == (RunErrorCode(code), status, retryable)
    assert str(error).endswith(f' The provider said: "{message}"') and KEY not in repr(error)


async def test_a_key_echoed_in_the_error_message_is_redacted(llm: FakeLLMServer) -> None:
    """Issue 26: the key went in `x-goog-api-key`; echoed back in Gemini's message, it is redacted."""
    llm.enqueue(ErrorReply(400, message=f"API key not valid: {KEY}. Please pass a valid API key."))
    error = await failure(provider(llm))
    assert str(error).endswith('The provider said: "API key not valid: [redacted]. Please pass a valid API key."')


async def test_a_retry_info_delay_in_the_error_body_is_the_retry_floor(llm: FakeLLMServer) -> None:
    """Gemini says how long to wait in the body (google.rpc.RetryInfo), not in a header."""
    llm.enqueue(ErrorReply(429, message="Resource has been exhausted", retry_after=17))
    error = await failure(provider(llm))
    assert error.code is RunErrorCode.RATE_LIMITED and error.retry_after == 17.0


async def test_stream_errors_and_truncation(llm: FakeLLMServer) -> None:
    """An `error` chunk on a 200 (UNAVAILABLE: overloaded, retryable before content); a stream without a finish
    reason is truncated; a closed connection is a network error."""
    llm.enqueue(Reply(error_event="UNAVAILABLE"), Reply(text="abcdefghij", end_after_events=1), Drop())
    overloaded = await failure(provider(llm))
    assert overloaded.code is RunErrorCode.PROVIDER and overloaded.retryable and not overloaded.content_streamed
    truncated = await failure(provider(llm))
    assert truncated.code is RunErrorCode.PROTOCOL and truncated.content_streamed
    dropped = await failure(provider(llm))
    assert dropped.code is RunErrorCode.NETWORK and dropped.retryable


async def test_finish_reasons_map_to_stop_reasons(llm: FakeLLMServer) -> None:
    llm.enqueue(Reply(text="cut", stop="length"), Reply(text="no", stop="content_filter"))
    assert (await collect(provider(llm)))[-1] == StreamEnd("length")
    assert (await collect(provider(llm)))[-1] == StreamEnd("content_filter")
