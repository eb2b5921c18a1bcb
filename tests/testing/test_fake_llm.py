"""The fake LLM server: real HTTP on loopback, scripted by data, recording requests (docs/testing.md)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from omniagent.testing import Drop, ErrorReply, FakeLLMServer, FakeToolCall, Reply, Scenario, fingerprint

SUBPROCESS_TIMEOUT = 10.0  # seconds for the fake server process to start or stop


def sse_data(text: str) -> list[dict[str, object]]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ") and line != "data: [DONE]"]


def test_gemini_stream_sends_parts_then_a_stop_chunk_with_usage() -> None:
    """Gemini: data-only SSE of GenerateContentResponse; the last has finishReason and usageMetadata."""
    with FakeLLMServer(Scenario([Reply(text="hello gemini", chunk_size=6)])) as llm:
        answer = httpx.post(
            f"{llm.url}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
            json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
            headers={"x-goog-api-key": "AIza-secret"},
        )
        recorded = llm.requests[0]
    chunks = sse_data(answer.text)
    text = "".join(c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks)  # type: ignore[index]
    assert text == "hello gemini"
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP" and "usageMetadata" in chunks[-1]  # type: ignore[index]
    assert chunks[-1]["modelVersion"] == "gemini-2.5-pro"
    assert recorded.api == "gemini" and recorded.query == "alt=sse"
    assert recorded.credential == fingerprint("AIza-secret") and "x-goog-api-key" not in recorded.headers


def test_gemini_generate_content_returns_one_object_with_function_calls() -> None:
    """Gemini's :generateContent answers the same object, not a stream; tool calls are functionCall parts,
    the first one carrying the thought signature (a scripted call id is sent, none is made up)."""
    calls = (FakeToolCall("run_shell_command", {"command": "ls"}), FakeToolCall("read", {"path": "a"}, "c2"))
    with FakeLLMServer(Scenario([Reply(text="calling", tool_calls=calls, signature="sig")])) as llm:
        answer = httpx.post(f"{llm.url}/v1beta/models/gemini-2.5-flash:generateContent", json={"contents": []}).json()
    parts = answer["candidates"][0]["content"]["parts"]
    assert parts == [
        {"text": "calling"},
        {"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}, "thoughtSignature": "sig"},
        {"functionCall": {"name": "read", "args": {"path": "a"}, "id": "c2"}},
    ]


@pytest.mark.parametrize(
    ("path", "extra", "field"),
    [
        ("/v1/messages", {"max_tokens": 10}, "content"),
        ("/v1/chat/completions", {}, "choices"),
        ("/v1/responses", {}, "output"),
    ],
)
def test_non_streaming_requests_get_the_whole_json_answer(path: str, extra: dict[str, object], field: str) -> None:
    """Non-streaming (docs/testing.md): one JSON object per API when stream is false or absent."""
    with FakeLLMServer(Scenario([Reply(text="whole")])) as llm:
        answer = httpx.post(llm.url + path, json={"model": "m", **extra})
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    assert "whole" in json.dumps(answer.json()[field])


def test_model_lists_and_token_counts_answer_in_each_api_shape() -> None:
    """GET /v1/models, GET /v1beta/models, count_tokens and countTokens let agents start."""
    with FakeLLMServer(Scenario(models=("alpha", "beta"))) as llm:
        openai = httpx.get(llm.url + "/v1/models").json()
        anthropic = httpx.get(llm.url + "/v1/models", headers={"anthropic-version": "2023-06-01"}).json()
        gemini = httpx.get(llm.url + "/v1beta/models").json()
        count = httpx.post(llm.url + "/v1/messages/count_tokens?beta=true", json={"messages": []}).json()
        gemini_count = httpx.post(llm.url + "/v1beta/models/alpha:countTokens", json={}).json()
    assert [m["id"] for m in openai["data"]] == ["alpha", "beta"] and openai["object"] == "list"
    assert anthropic["data"][0]["type"] == "model" and anthropic["has_more"] is False
    assert gemini["models"][1]["name"] == "models/beta"
    assert count["input_tokens"] >= 1 and gemini_count["totalTokens"] >= 1


def test_error_step_sends_status_body_and_retry_headers() -> None:
    """Error body shape per API, retry-after and retry-after-ms headers."""
    step = ErrorReply(429, "rate_limit_error", "rate_limit_exceeded", "slow", retry_after=2, retry_after_ms=2000)
    with FakeLLMServer(Scenario([step, step])) as llm:
        anthropic = httpx.post(llm.url + "/v1/messages", json={})
        chat = httpx.post(llm.url + "/v1/chat/completions", json={})
    assert anthropic.status_code == 429 and anthropic.headers["retry-after"] == "2"
    assert anthropic.json() == {"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}}
    assert chat.json()["error"]["code"] == "rate_limit_exceeded" and chat.headers["retry-after-ms"] == "2000"


def test_steps_are_consumed_in_order_then_the_fallback_answers_500() -> None:
    """Our choice: an exhausted scenario is loud (HTTP 500 scenario_exhausted), never a silent default."""
    with FakeLLMServer(Scenario([Reply(text="one")])) as llm:
        first = httpx.post(llm.url + "/v1/chat/completions", json={})
        second = httpx.post(llm.url + "/v1/chat/completions", json={})
    assert first.json()["choices"][0]["message"]["content"] == "one"
    assert second.status_code == 500 and second.json()["error"]["code"] == "scenario_exhausted"


def test_matching_sticky_step_answers_every_matching_request_and_leaves_the_queue_alone() -> None:
    """Scenario rule: the first step whose `match` is in the body answers; sticky steps stay."""
    classifier = Reply(text='{"complexity_score": 1}', match="responseJsonSchema", sticky=True)
    with FakeLLMServer(Scenario([classifier, Reply(text="main answer")])) as llm:
        url = llm.url + "/v1beta/models/g:generateContent"
        side = [httpx.post(url, json={"generationConfig": {"responseJsonSchema": {}}}).json() for _ in range(2)]
        main = httpx.post(url, json={"contents": []}).json()
    texts = [a["candidates"][0]["content"]["parts"][0]["text"] for a in [*side, main]]
    assert texts == ['{"complexity_score": 1}', '{"complexity_score": 1}', "main answer"]


def test_drop_closes_the_connection_without_a_response() -> None:
    """No response at all: the connection closes before any status line."""
    with FakeLLMServer(Scenario([Drop()])) as llm, pytest.raises(httpx.RemoteProtocolError):
        httpx.post(llm.url + "/v1/messages", json={})


def test_scenario_json_builds_steps_and_rejects_unknown_fields() -> None:
    """Scenarios are data: JSON with a `kind` per step; a typo is an error, not a silent default."""
    scenario = Scenario.from_json(
        {
            "steps": [
                {
                    "kind": "reply",
                    "text": "t",
                    "tool_calls": [{"name": "read", "arguments": {"p": 1}}],
                    "usage": {"input": 3},
                },
                {"kind": "error", "status": 529, "error_type": "overloaded_error"},
                {"kind": "drop"},
            ],
            "models": ["m1"],
        }
    )
    first = scenario.steps[0]
    assert isinstance(first, Reply) and first.tool_calls[0].arguments_json() == '{"p": 1}' and first.usage.input == 3
    assert isinstance(scenario.steps[1], ErrorReply) and isinstance(scenario.steps[2], Drop)
    with pytest.raises(ValueError, match="texts"):
        Scenario.from_json({"steps": [{"kind": "reply", "texts": "typo"}]})
    with pytest.raises(ValueError, match="kind"):
        Scenario.from_json({"steps": [{"kind": "nope"}]})


def test_subprocess_mode_writes_port_file_and_request_log_and_exits_0_on_sigterm(tmp_path: Path) -> None:
    """Real agent CLIs need a server in its own process: --scenario, --port-file, --log; SIGTERM → exit 0."""
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"steps": [{"kind": "reply", "text": "from a process"}]}))
    port_file, log = tmp_path / "port", tmp_path / "requests.jsonl"
    command = [sys.executable, "-m", "omniagent.testing.fake_llm", "--scenario", str(scenario)]
    process = subprocess.Popen(
        [*command, "--port-file", str(port_file), "--log", str(log)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()  # printed once listening; bounded by the test timeout
        assert url == f"http://127.0.0.1:{port_file.read_text()}"
        answer = httpx.post(url + "/v1/chat/completions", json={"model": "m"}, headers={"authorization": "Bearer sk-p"})
        assert answer.json()["choices"][0]["message"]["content"] == "from a process"
    finally:
        process.terminate()
        code = process.wait(SUBPROCESS_TIMEOUT)
    assert code == 0
    (line,) = log.read_text().splitlines()
    record = json.loads(line)
    assert record["path"] == "/v1/chat/completions" and record["credential"] == fingerprint("sk-p")
    assert "sk-p" not in line


def test_bad_scenario_file_exits_2_with_a_message_on_stderr(tmp_path: Path) -> None:
    """A bad scenario is a clear error, not a traceback."""
    bad = tmp_path / "bad.json"
    bad.write_text('{"steps": [{"kind": "nope"}]}')
    done = subprocess.run(
        [sys.executable, "-m", "omniagent.testing.fake_llm", "--scenario", str(bad)],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr and "scenario" in done.stderr


async def test_server_is_usable_with_async_with_and_waits_for_requests() -> None:
    """Async-friendly: `async with`, and a bounded wait for requests instead of sleeps."""
    async with FakeLLMServer(Scenario([Reply(text="a")])) as llm, httpx.AsyncClient() as client:
        await client.post(llm.url + "/v1/responses", json={"model": "m", "stream": True})
        assert [r.api for r in await llm.wait_for_requests_async(1, within=1.0)] == ["openai_responses"]


def test_chatgpt_usage_route_reports_the_scenario_plan_quota_or_404() -> None:
    """The account route codex app-server reads for its rate limits (docs/testing.md, "ChatGPT account usage")."""
    quota = Scenario.from_json(
        {"plan_quota": {"plan": "pro", "windows": [{"used_percent": 42, "minutes": 300, "resets_in": 600}]}}
    )
    with FakeLLMServer(quota) as llm:
        before = int(time.time())
        answer = httpx.get(llm.url + "/backend-api/wham/usage", headers={"authorization": "Bearer tok"}).json()
        after = int(time.time())
        assert llm.requests[0].api == "chatgpt_usage" and llm.requests[0].credential == fingerprint("tok")
    assert answer["plan_type"] == "pro"
    window = answer["rate_limit"]["primary_window"]
    assert window["used_percent"] == 42 and window["limit_window_seconds"] == 18000
    assert before + 600 <= window["reset_at"] <= after + 600
    assert "secondary_window" not in answer["rate_limit"]
    with FakeLLMServer(Scenario()) as llm:
        assert httpx.get(llm.url + "/api/codex/usage").status_code == 404
    with pytest.raises(TypeError):
        Scenario.from_json({"plan_quota": {"windows": [{"used_percent": 1, "minutes": 5, "resets_in": 1, "x": 0}]}})


async def test_a_gated_reply_streams_up_to_its_gate_and_the_rest_only_after_release() -> None:
    """docs/testing.md: `gate` replaces timing windows; the held stream has sent exactly `hold_after_events`."""
    reply = Reply(text="abcdefghij", chunk_size=2, gate="g", hold_after_events=2)
    async with FakeLLMServer(Scenario([reply])) as llm, httpx.AsyncClient(timeout=10.0) as client:
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        async with client.stream("POST", f"{llm.url}/v1/messages", json=body) as response:
            lines = response.aiter_lines()
            assert await llm.wait_held_async("g")
            seen: list[str] = []
            while len([line for line in seen if line.startswith("data: ")]) < 2:
                seen.append(await anext(lines))
            llm.release("g")
            rest = [line async for line in lines]
    text = "".join(
        event["delta"].get("text", "")
        for event in (json.loads(line[6:]) for line in seen + rest if line.startswith("data: "))
        if event.get("type") == "content_block_delta"
    )
    assert text == "abcdefghij"
    assert not await llm.wait_held_async("g", within=0.0)


def test_stopping_the_server_ends_a_held_stream() -> None:
    with (
        FakeLLMServer(Scenario([Reply(text="abc", gate="never")])) as llm,
        httpx.Client(timeout=10.0) as client,
        client.stream(
            "POST", f"{llm.url}/v1/messages", json={"model": "m", "stream": True, "messages": []}
        ) as response,
    ):
        assert llm.wait_held("never")
        llm.stop()
        with pytest.raises(httpx.HTTPError):
            response.read()
