"""Provider answers that are not the protocol, over a real `omniagent rpc` against the fake LLM server: a `200`
that is not an event stream (a captive portal) fails at once, naming the URL and the content type; a stream that
goes silent after its headers is a retryable `timeout` after the idle timeout; an error answer's own message is
kept in the run's failure, bounded and without the key, and so are the words of an error reported inside a 200 stream
(docs/providers.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniagent.testing import ErrorReply, FakeLLMServer, RawReply, Reply
from tests.engine.rpc_harness import RpcProcess, write_providers

PROVIDERS = {"anthropic_messages": "fake-anthropic", "openai_chat": "fake-chat", "openai_responses": "fake-responses"}
PATHS = {"fake-anthropic": "/v1/messages", "fake-chat": "/v1/chat/completions", "fake-responses": "/v1/responses"}
# Short enough for a test, long enough that a loaded machine never mistakes a live local answer for silence.
IDLE = "1.5"


# A key shaped like the real ones, so a provider echoing it back is a leak the test can see.
KEY = "sk-test-provider-key-0123456789abcdef"


async def _run(
    tmp_path: Path, llm: FakeLLMServer, provider: str, env: dict[str, str], key: str = KEY
) -> tuple[RpcProcess, str]:
    write_providers(tmp_path / "data", llm, key=key)
    rpc = await RpcProcess.start(tmp_path / "data", env)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    created = await rpc.call("session.create", {"workspace_path": str(workspace), "model": f"{provider}/fake-model"})
    sid = str(created["session"]["id"])
    content = [{"type": "text", "text": "hi"}]
    await rpc.call("session.send_input", {"session_id": sid, "input": {"type": "content", "content": content}})
    return rpc, sid


def _retrying(rpc: RpcProcess, end: int) -> list[dict[str, object]]:
    return [
        line["params"]["activity"]["state"]
        for line in rpc.lines[:end]
        if line.get("method") == "session.activity_changed"
        and line["params"]["activity"]["state"]["type"] == "retrying"
    ]


@pytest.mark.parametrize("provider", list(PROVIDERS.values()))
async def test_a_200_html_page_fails_at_once_naming_the_url_and_the_content_type(
    tmp_path: Path, llm: FakeLLMServer, provider: str
) -> None:
    llm.enqueue(RawReply(200, "text/html; charset=utf-8", "<html>Sign in to the guest Wi-Fi</html>"))
    rpc, _ = await _run(tmp_path, llm, provider, {})
    done = await rpc.broadcast("run.done")
    outcome = rpc.lines[done]["params"]["outcome"]
    assert outcome["type"] == "failed" and outcome["code"] == "protocol", outcome
    assert f"{llm.url}{PATHS[provider]}" in outcome["message"] and "text/html" in outcome["message"], outcome
    assert "Wi-Fi" not in outcome["message"] and "charset" not in outcome["message"]
    assert _retrying(rpc, done) == [] and len(llm.requests) == 1
    assert await rpc.close() == 0


@pytest.mark.parametrize("provider", list(PROVIDERS.values()))
async def test_a_stream_silent_after_its_headers_is_a_retried_timeout(
    tmp_path: Path, llm: FakeLLMServer, provider: str
) -> None:
    llm.enqueue(Reply(text="never sent", stall_after_events=0), Reply(text="the second attempt answers"))
    env = {"OMNIAGENT_PROVIDER_IDLE_TIMEOUT": IDLE, "OMNIAGENT_RETRY_SCALE": "0.01"}
    rpc, sid = await _run(tmp_path, llm, provider, env)
    done = await rpc.broadcast("run.done", within=30)
    outcome = rpc.lines[done]["params"]["outcome"]
    assert outcome == {"type": "turn", "finish": "stop", "rounds": 1}, outcome
    [state] = _retrying(rpc, done)
    assert (state["attempt"], state["code"]) == (1, "timeout"), state
    # Not before the idle timeout: the retry happened because of silence, not at once.
    assert state["next_at_ms"] - rpc.lines[done]["params"]["timing"]["started_at_ms"] >= 1500
    assert len(llm.requests) == 2
    history = await rpc.call("session.history", {"session_id": sid, "before_message_id": 2**53 - 1})
    assert history["messages"][-1]["content"][0]["text"] == "the second attempt answers"
    assert await rpc.close() == 0


@pytest.mark.parametrize("provider", list(PROVIDERS.values()))
async def test_a_400_fails_the_run_with_the_providers_own_message_without_the_key(
    tmp_path: Path, llm: FakeLLMServer, provider: str
) -> None:
    """Issue 26: a 400's own message (what was wrong with the request) is kept in `run.done`'s failure message,
    after our sentence; a key the provider echoes back is redacted, and a long message is cut."""
    said = f"tools.0.input_schema: Field required (sent with key {KEY})"
    llm.enqueue(ErrorReply(400, "invalid_request_error", message=said + " " + "y" * 5000))
    rpc, _ = await _run(tmp_path, llm, provider, {})
    done = await rpc.broadcast("run.done")
    outcome = rpc.lines[done]["params"]["outcome"]
    assert outcome["type"] == "failed" and outcome["code"] == "provider", outcome
    message = outcome["message"]
    assert message.startswith("The provider rejected the request as invalid."), message
    assert "tools.0.input_schema: Field required (sent with key [redacted])" in message, message
    assert KEY not in message and KEY not in "\n".join(str(line) for line in rpc.lines)
    assert len(message) < 1000 and "y" * 5000 not in message
    assert await rpc.close() == 0
    assert KEY not in await rpc.stderr()


async def _gemini_run(tmp_path: Path, llm: FakeLLMServer, key: str) -> RpcProcess:
    """One prompt to Gemini (the built-in provider, its key in GOOGLE_API_KEY) at the fake LLM."""
    rpc = await RpcProcess.start(tmp_path / "data", {"GOOGLE_API_KEY": key, "GOOGLE_GEMINI_BASE_URL": llm.url})
    workspace = tmp_path / "ws"
    workspace.mkdir()
    params = {"workspace_path": str(workspace), "model": "gemini/gemini-2.5-flash"}
    sid = (await rpc.call("session.create", params))["session"]["id"]
    content = [{"type": "text", "text": "hi"}]
    await rpc.call("session.send_input", {"session_id": sid, "input": {"type": "content", "content": content}})
    return rpc


async def test_a_gemini_400_keeps_its_message_without_the_key(tmp_path: Path, llm: FakeLLMServer) -> None:
    """Gemini's `{"error": {"message"}}` too: its key went in `x-goog-api-key`, and is redacted when echoed."""
    key = "AIzaSyFakeGoogleKeyForTests0123456789"
    llm.enqueue(ErrorReply(400, message=f'Invalid JSON payload received. Unknown name "tool" (key {key})'))
    rpc = await _gemini_run(tmp_path, llm, key)
    done = await rpc.broadcast("run.done")
    message = rpc.lines[done]["params"]["outcome"]["message"]
    assert 'Invalid JSON payload received. Unknown name "tool" (key [redacted])' in message, message
    assert key not in message
    assert await rpc.close() == 0


# A key of no known shape: only knowing what the request sent can keep it out of a message.
PLAIN_KEY = "plain-provider-secret-4242"
_IN_STREAM = "Output blocked by the content filtering policy (request sent with {key})"


@pytest.mark.parametrize("provider", [*PROVIDERS.values(), "gemini"])
async def test_an_error_inside_a_200_stream_fails_the_run_with_the_providers_words_without_the_key(
    tmp_path: Path, llm: FakeLLMServer, provider: str
) -> None:
    """An error the provider reports mid-stream (Anthropic's `error` event, an OpenAI error line or event, a
    Gemini error chunk) after some text: the run fails with our sentence and the provider's own words, the key
    the request carried redacted though it has no known shape; nothing on the wire or stderr holds it."""
    said = _IN_STREAM.format(key=PLAIN_KEY)
    llm.enqueue(Reply(text="partial answer", error_event="api_error", error_message=said))
    if provider == "gemini":
        rpc = await _gemini_run(tmp_path, llm, PLAIN_KEY)
    else:
        rpc, _ = await _run(tmp_path, llm, provider, {}, key=PLAIN_KEY)
    done = await rpc.broadcast("run.done")
    outcome = rpc.lines[done]["params"]["outcome"]
    assert outcome["type"] == "failed" and outcome["code"] == "provider", outcome
    assert outcome["message"] == (
        "The provider reported an error during the answer. The provider said: "
        '"Output blocked by the content filtering policy (request sent with [redacted])"'
    )
    assert PLAIN_KEY not in "\n".join(str(line) for line in rpc.lines)
    assert await rpc.close() == 0
    assert PLAIN_KEY not in await rpc.stderr()


async def test_an_idle_stream_after_content_fails_with_timeout_and_keeps_the_partial_answer(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """Once content streamed, a timeout is not retried (docs/providers.md), but it is still a `timeout`."""
    llm.enqueue(Reply(text="partial answer before silence", chunk_size=4, stall_after_events=4))
    rpc, sid = await _run(tmp_path, llm, "fake-anthropic", {"OMNIAGENT_PROVIDER_IDLE_TIMEOUT": IDLE})
    done = await rpc.broadcast("run.done", within=30)
    outcome = rpc.lines[done]["params"]["outcome"]
    assert outcome["type"] == "failed" and outcome["code"] == "timeout", outcome
    assert len(llm.requests) == 1
    history = await rpc.call("session.history", {"session_id": sid, "before_message_id": 2**53 - 1})
    last = history["messages"][-1]
    assert last["finish"] == "error" and last["error"]["type"] == "timeout", last
    assert last["content"][0]["text"] and "partial answer before silence".startswith(last["content"][0]["text"])
    assert await rpc.close() == 0
