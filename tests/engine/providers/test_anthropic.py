"""Anthropic Messages client against the fake LLM server over loopback."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from omniagent.engine.providers.clients.anthropic import AnthropicProvider
from omniagent.engine.providers.neutral import (
    Message,
    ModelRequest,
    ReasoningPart,
    ReasoningSignature,
    RedactedReasoning,
    RunErrorCode,
    StreamEnd,
    TextDelta,
    TextPart,
    ToolCallPart,
    ToolCallStarted,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from omniagent.testing import Drop, ErrorReply, FakeLLMServer, FakeToolCall, FakeUsage, Reply, fingerprint
from tests.engine.providers.helpers import (
    SIMPLE_REQUEST,
    arguments,
    check_contract,
    collect,
    failure,
    reasoning,
    texts,
)

KEY = "sk-ant-test-key-0123456789"
CANCEL_BOUND = 2.0  # seconds; the scripted stream would take 10 s to finish on its own


def provider(llm: FakeLLMServer) -> AnthropicProvider:
    return AnthropicProvider(llm.url + "/v1", KEY)


async def test_text_answer_streams_as_one_text_block_with_usage_including_cache(llm: FakeLLMServer) -> None:
    """Usage: input = input_tokens + cache_read + cache_creation; end_turn → stop."""
    llm.enqueue(Reply(text="Hello there, world", usage=FakeUsage(input=100, output=9, cache_read=60, cache_write=30)))
    events = await collect(provider(llm))
    check_contract(events)
    assert texts(events) == "Hello there, world"
    assert events[-2] == Usage(input_tokens=100, output_tokens=9, cache_read_tokens=60, cache_write_tokens=30)
    assert events[-1] == StreamEnd("stop")


async def test_request_carries_key_version_system_cache_breakpoint_and_thinking_budget(llm: FakeLLMServer) -> None:
    """x-api-key, anthropic-version, system blocks, thinking budget below max_tokens."""
    llm.enqueue(Reply(text="ok"))
    request = ModelRequest(
        model="claude-x",
        system="sys",
        messages=(Message("user", (TextPart("hi"),)),),
        tools=(ToolSpec("read", "Read a file", {"type": "object"}),),
        max_output_tokens=4096,
        reasoning_effort="high",
    )
    await collect(provider(llm), request)
    sent = llm.requests[0]
    assert sent.path == "/v1/messages" and sent.credential == fingerprint(KEY)
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert KEY not in str(sent.headers)
    body = sent.body
    assert isinstance(body, dict)
    assert body["stream"] is True and body["max_tokens"] == 4096
    assert body["system"] == [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}]
    assert body["tools"] == [{"name": "read", "description": "Read a file", "input_schema": {"type": "object"}}]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 3072}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


async def test_thinking_streams_with_its_signature_and_redacted_thinking_keeps_its_data(llm: FakeLLMServer) -> None:
    """Extended thinking: thinking + signature_delta → reasoning + signature; redacted_thinking → opaque data."""
    llm.enqueue(Reply(text="answer", reasoning="let me think", signature="sig-abc", redacted_reasoning="opaque=="))
    events = await collect(provider(llm))
    check_contract(events)
    assert [e for e in events if isinstance(e, RedactedReasoning)] == [RedactedReasoning(0, "opaque==")]
    assert reasoning(events) == "let me think"
    assert [e for e in events if isinstance(e, ReasoningSignature)] == [ReasoningSignature(1, "sig-abc")]
    assert texts(events) == "answer"


async def test_tool_call_arguments_split_over_many_deltas_join_into_one_call(llm: FakeLLMServer) -> None:
    """input_json_delta pieces (an empty one included) concatenate; tool_use → tool_calls."""
    call = FakeToolCall("read", {"path": "src/main.py", "limit": 20}, call_id="toolu_1")
    llm.enqueue(Reply(tool_calls=(call,), chunk_size=3))
    events = await collect(provider(llm))
    check_contract(events)
    assert [e for e in events if isinstance(e, ToolCallStarted)] == [ToolCallStarted(0, "toolu_1", "read")]
    assert arguments(events) == call.arguments_json()
    assert events[-1] == StreamEnd("tool_calls")


async def test_replayed_assistant_turn_keeps_thinking_blocks_and_tool_results_come_first(llm: FakeLLMServer) -> None:
    """Thinking (with signature) and redacted_thinking replay unchanged; tool_result in a user turn."""
    llm.enqueue(Reply(text="done"))
    history = (
        Message("user", (TextPart("read it"),)),
        Message(
            "assistant",
            (
                ReasoningPart("", redacted="opaque=="),
                ReasoningPart("thinking...", signature="sig-1"),
                ReasoningPart("unsigned thoughts cannot be replayed"),
                ToolCallPart("toolu_1", "read", '{"path": "a"}'),
            ),
        ),
        Message("user", (TextPart("and then?"), ToolResultPart("toolu_1", "file text", is_error=True))),
    )
    await collect(provider(llm), ModelRequest(model="m", system="", messages=history))
    body = llm.requests[0].body
    assert isinstance(body, dict) and "system" not in body
    assistant, user = body["messages"][1]["content"], body["messages"][2]["content"]
    assert assistant == [
        {"type": "redacted_thinking", "data": "opaque=="},
        {"type": "thinking", "thinking": "thinking...", "signature": "sig-1"},
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "read",
            "input": {"path": "a"},
            "cache_control": {"type": "ephemeral"},
        },
    ]
    assert user[0] == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "file text", "is_error": True}
    assert user[1]["type"] == "text"


async def test_cache_breakpoints_mark_the_frame_and_the_two_newest_messages_never_thinking(
    llm: FakeLLMServer,
) -> None:
    """Module doc: tools + system end (the last tool without a system prompt), then the last block of each of the
    two newest messages that is not thinking; three breakpoints, within the API's four. Off: none at all."""
    llm.enqueue(Reply(text="a"), Reply(text="b"))
    history = (
        Message("user", (TextPart("first"),)),
        Message("assistant", (TextPart("answer"),)),
        Message("user", (TextPart("second"),)),
        Message("assistant", (TextPart("calling"), ToolCallPart("t1", "read", "{}"), ReasoningPart("x", "sig"))),
        Message("user", (ToolResultPart("t1", "r1"), TextPart("more"))),
    )
    tools = (ToolSpec("read", "Read", {"type": "object"}), ToolSpec("write", "Write", {"type": "object"}))
    request = ModelRequest(model="m", system="", messages=history, tools=tools)
    await collect(provider(llm), request)
    await collect(AnthropicProvider(llm.url + "/v1", KEY, cache_breakpoints=False), request)
    marked, unmarked = (r.body for r in llm.requests)
    assert isinstance(marked, dict) and isinstance(unmarked, dict)

    def marks(body: dict[str, Any]) -> list[str]:
        found = [f"tool {t['name']}" for t in body["tools"] if "cache_control" in t]
        for number, message in enumerate(body["messages"]):
            found += [f"{number}:{b['type']}" for b in message["content"] if "cache_control" in b]
        return found

    assert marks(marked) == ["tool write", "3:tool_use", "4:text"]
    assert marks(unmarked) == []


@pytest.mark.parametrize(
    ("status", "error_type", "message", "code", "retryable"),
    [
        (400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", "context_overflow", False),
        (400, "invalid_request_error", "messages: bad", "provider", False),
        (401, "authentication_error", "invalid x-api-key", "auth", False),
        (403, "permission_error", "key lacks scope xyz", "auth", False),
        (404, "not_found_error", "model: nope", "unknown_model", False),
        (413, "request_too_large", "body exceeds 32MB", "provider", False),
        (429, "rate_limit_error", "slow down", "rate_limited", True),
        (500, "api_error", "internal boom", "provider", True),
        (529, "overloaded_error", "Overloaded", "provider", True),
    ],
)
async def test_error_status_maps_to_run_error_code(
    llm: FakeLLMServer, status: int, error_type: str, message: str, code: str, retryable: bool
) -> None:
    """Anthropic's error types → yuke RunErrorCode; the message is our sentence, then the provider's own."""
    llm.enqueue(ErrorReply(status, error_type, message=message))
    error = await failure(provider(llm))
    assert (error.code, error.status, error.retryable, error.content_streamed) == (
        RunErrorCode(code),
        status,
        retryable,
        False,
    )
    assert str(error).endswith(f' The provider said: "{message}"') and KEY not in repr(error)


async def test_a_key_echoed_in_the_providers_message_is_redacted(llm: FakeLLMServer) -> None:
    """Issue 26: the provider's own words are kept, but never the key it was sent (`x-api-key`), nor a stranger
    that looks like one; many lines become one, and a page-long message is cut."""
    said = f"invalid x-api-key: {KEY}\nalso saw sk-other-looking-key-9876543210 " + "z" * 2000
    llm.enqueue(ErrorReply(401, "authentication_error", message=said))
    error = await failure(provider(llm))
    assert 'The provider said: "invalid x-api-key: [redacted] also saw [redacted] zzz' in str(error)
    assert KEY not in str(error) and "sk-other" not in str(error) and "\n" not in str(error)
    assert str(error).endswith('…"') and len(str(error)) < 600


async def test_retry_after_header_is_read_as_seconds(llm: FakeLLMServer) -> None:
    """retry-after (seconds) becomes ProviderError.retry_after."""
    llm.enqueue(ErrorReply(429, "rate_limit_error", retry_after=7))
    error = await failure(provider(llm))
    assert error.code is RunErrorCode.RATE_LIMITED and error.retry_after == 7.0


async def test_x_should_retry_false_makes_a_transient_error_final(llm: FakeLLMServer) -> None:
    """x-should-retry overrides the status guess."""
    llm.enqueue(ErrorReply(500, "api_error", headers={"x-should-retry": "false"}))
    assert (await failure(provider(llm))).retryable is False


async def test_overloaded_error_event_before_any_content_is_retryable(llm: FakeLLMServer) -> None:
    """An `error` event can arrive mid-stream on HTTP 200; nothing semantic streamed yet."""
    llm.enqueue(Reply(error_event="overloaded_error"))
    error = await failure(provider(llm))
    assert error.code is RunErrorCode.PROVIDER and error.retryable and not error.content_streamed


async def test_connection_cut_after_text_reports_network_error_with_content_streamed(llm: FakeLLMServer) -> None:
    """Once content streamed the attempt must not be retried; the error says so."""
    llm.enqueue(Reply(text="partial answer here", cut_after_events=5))
    error = await failure(provider(llm))
    assert error.code is RunErrorCode.NETWORK and error.content_streamed


async def test_stream_ending_without_message_stop_is_a_protocol_error(llm: FakeLLMServer) -> None:
    """A stream without its terminal event (message_stop) is truncated."""
    llm.enqueue(Reply(text="abc", end_after_events=4))
    error = await failure(provider(llm))
    assert error.code is RunErrorCode.PROTOCOL and error.retryable and error.content_streamed


async def test_connection_closed_before_any_response_is_a_retryable_network_error(llm: FakeLLMServer) -> None:
    """No response at all: a retryable network error (docs/providers.md "Errors and retries")."""
    llm.enqueue(Drop())
    error = await failure(provider(llm))
    assert error.code is RunErrorCode.NETWORK and error.retryable and not error.content_streamed


async def test_unreachable_endpoint_is_a_network_error() -> None:
    """Connection refused maps to network (transport class), never an httpx exception."""
    with FakeLLMServer() as llm:
        url = llm.url
    error = await failure(AnthropicProvider(url + "/v1", KEY))
    assert error.code is RunErrorCode.NETWORK and error.retryable


async def test_provider_repr_names_no_key(llm: FakeLLMServer) -> None:
    """brief: keys never reach reprs."""
    p = provider(llm)
    assert KEY not in repr(p)
    await p.aclose()


async def test_closing_the_stream_early_releases_the_call_at_once(llm: FakeLLMServer) -> None:
    """neutral.Provider: closing the generator (how a run cancels) closes the response without waiting it out."""
    llm.enqueue(Reply(text="x" * 200, chunk_size=1, gate="never", hold_after_events=4))
    p = provider(llm)
    stream = p.stream(SIMPLE_REQUEST)
    async with asyncio.timeout(CANCEL_BOUND):
        first = await anext(stream)
        await stream.aclose()
        await p.aclose()
    assert first == TextDelta(0, "")
