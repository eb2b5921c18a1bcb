"""Runs over a real `omniagent rpc` subprocess against the fake LLM server (docs/engine.md "What a turn looks like
on the wire"; docs/providers.md "Errors and retries")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.testing import ErrorReply, FakeLLMServer, FakeToolCall, FakeUsage, Reply
from tests.engine.rpc_harness import RpcProcess, write_providers

# Each test runs on both stores: SQLite, and a fresh PostgreSQL database (conftest.py `each_store`).
pytestmark = pytest.mark.usefixtures("each_store")


PROTOCOLS = {"anthropic_messages": "fake-anthropic", "openai_chat": "fake-chat", "openai_responses": "fake-responses"}


async def _engine(tmp_path: Path, llm: FakeLLMServer, env: dict[str, str] | None = None) -> RpcProcess:
    write_providers(tmp_path / "data", llm)
    return await RpcProcess.start(tmp_path / "data", env)


async def _session(rpc: RpcProcess, tmp_path: Path, provider: str = "fake-anthropic", **extra: object) -> str:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    result = await rpc.call(
        "session.create", {"workspace_path": str(workspace), "model": f"{provider}/fake-model", **extra}
    )
    return str(result["session"]["id"])


def _send(rpc: RpcProcess, sid: str, text: str) -> str:
    return rpc.send(
        "session.send_input",
        {"session_id": sid, "input": {"type": "content", "content": [{"type": "text", "text": text}]}},
    )


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
async def test_a_turn_with_a_tool_round_streams_the_documented_broadcast_order(
    tmp_path: Path, llm: FakeLLMServer, protocol: str
) -> None:
    """User commit → run.started → response, then per round the draft, the tool lifecycle and the
    assistant commit, then run.done and idle activity."""
    llm.enqueue(
        Reply(
            text="Let me read it.",
            tool_calls=(FakeToolCall("read", {"path": "hello.txt"}, "call_1"),),
            usage=FakeUsage(input=100, output=20),
        ),
        Reply(text="It says hello.", usage=FakeUsage(input=150, output=10)),
    )
    rpc = await _engine(tmp_path, llm)
    sid = await _session(rpc, tmp_path, PROTOCOLS[protocol])
    (tmp_path / "ws" / "hello.txt").write_text("hello world\n")
    start = len(rpc.lines)
    rid = _send(rpc, sid, "What does hello.txt say?\nPlease answer.")
    done = await rpc.broadcast("run.done", after=start)
    idle = await rpc.wait_for(
        lambda line: (
            line.get("method") == "session.activity_changed" and line["params"]["activity"]["state"]["type"] == "idle"
        ),
        after=done,
    )
    names = rpc.names(start, idle + 1)
    response = names.index("response:session.send_input")
    assert names[: response + 1] == [
        "message.committed",
        "session.summary_changed",
        "run.started",
        "response:session.send_input",
    ]
    activity = [
        rpc.lines[start + i]["params"]["activity"]["state"]["type"]
        for i, name in enumerate(names)
        if name == "session.activity_changed"
    ]
    assert activity[:2] == ["building", "running"] and activity[-1] == "idle" and "running_tool" in activity
    body = [n for n in names[response + 1 :] if n != "session.activity_changed"]
    assert body == [
        "message.started",
        "message.part_added",
        *["message.part_delta"] * 3,
        "message.part_added",
        "tool.state_changed",
        "tool.state_changed",
        "message.committed",
        "session.summary_changed",
        "message.started",
        "message.part_added",
        *["message.part_delta"] * 3,
        "message.committed",
        "session.summary_changed",
        "run.done",
    ]
    assert (await rpc.response(rid))["result"]["type"] == "started"
    run_done = rpc.lines[done]["params"]
    assert run_done["outcome"] == {"type": "turn", "finish": "stop", "rounds": 2}
    # The text streamed with byte offsets and the tool read the workspace file.
    deltas = [line["params"] for line in rpc.lines[start:done] if line.get("method") == "message.part_delta"]
    assert [d["offset"] for d in deltas[:3]] == [0, 5, 10]
    states = [line["params"]["state"] for line in rpc.lines[start:done] if line.get("method") == "tool.state_changed"]
    assert [s["type"] for s in states] == ["running", "completed"]
    assert "hello world" in states[1]["output"]
    history = await rpc.call("session.history", {"session_id": sid, "before_message_id": 2**53 - 1})
    user, first, second = history["messages"]
    assert user["type"] == "user" and first["finish"] == "tool_calls" and second["finish"] == "stop"
    assert first["content"][1]["state"]["type"] == "completed"
    assert first["tokens"]["input"] == 100 and first["provenance"]["protocol"] == protocol
    assert first["cost"] == pytest.approx((100 * 3.0 + 20 * 15.0) / 1e6)
    assert history["configs"] == [{"config_rev": 0, "model": f"{PROTOCOLS[protocol]}/fake-model", "reasoning": "off"}]
    # The second request replayed the tool call and its result to the provider.
    second_body = json.dumps(llm.requests[1].body)
    assert "call_1" in second_body and "hello world" in second_body
    session = (await rpc.call("session.get", {"session_id": sid}))["session"]
    assert session["title"] == "What does hello.txt say?" and session["message_count"] == 3
    assert session["usage_total"]["input"] == 250
    assert await rpc.close() == 0


async def test_input_sent_while_busy_is_queued_and_drains_into_one_next_turn(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """Busy → durable `input.queued` and `queued{session_busy}`; at run end the queue drains into one
    new turn whose user messages are committed consecutively."""
    llm.enqueue(Reply(text="slow answer", chunk_size=2, gate="first", hold_after_events=4), Reply(text="second"))
    rpc = await _engine(tmp_path, llm)
    sid = await _session(rpc, tmp_path)
    first = _send(rpc, sid, "one")
    await rpc.broadcast("message.part_delta")
    second = _send(rpc, sid, "two")
    third = _send(rpc, sid, "three")
    assert (await rpc.response(second))["result"]["type"] == "queued"
    assert (await rpc.response(third))["result"] == {"type": "queued", "input_id": 3, "reason": "session_busy"}
    assert (await rpc.response(first))["result"]["type"] == "started"
    queue = await rpc.call("session.queue", {"session_id": sid})
    assert [item["input_id"] for item in queue["items"]] == [2, 3]
    llm.release("first")
    first_done = await rpc.broadcast("run.done")
    second_done = await rpc.broadcast("run.done", after=first_done + 1)
    names = rpc.names(first_done, second_done + 1)
    assert names[1:5] == ["message.committed", "message.committed", "session.summary_changed", "run.started"]
    assert rpc.lines[second_done]["params"]["run_id"] == 2
    assert (await rpc.call("session.queue", {"session_id": sid}))["items"] == []
    texts = [
        m["content"][0]["text"]
        for m in (await rpc.call("session.history", {"session_id": sid, "before_message_id": 2**53 - 1}))["messages"]
        if m["type"] == "user"
    ]
    assert texts == ["one", "two", "three"]
    assert await rpc.close() == 0


async def test_cancel_run_commits_the_partial_draft_as_canceled_and_clears_the_queue(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """cancel_run (docs/engine.md "Decisions on the protocol's open points" #10): the partial draft is committed
    with finish `canceled`, `clear_queue` cancels each queued input, and `run.done{canceled}` follows."""
    llm.enqueue(Reply(text="x" * 400, chunk_size=2, gate="never", hold_after_events=4))
    rpc = await _engine(tmp_path, llm)
    sid = await _session(rpc, tmp_path)
    _send(rpc, sid, "long please")
    await rpc.broadcast("message.part_delta")
    await rpc.response(_send(rpc, sid, "queued one"))
    result = await rpc.call("session.cancel_run", {"session_id": sid, "run_id": 1, "clear_queue": True})
    assert result == {"canceled_run": 1, "cleared_inputs": [2]}
    done = await rpc.broadcast("run.done")
    assert rpc.lines[done]["params"]["outcome"] == {"type": "canceled"}
    assert "input.canceled" in rpc.names(0, done)
    history = await rpc.call("session.history", {"session_id": sid, "before_message_id": 2**53 - 1})
    assert history["messages"][-1]["finish"] == "canceled"
    assert await rpc.call_error("session.cancel_run", {"session_id": sid, "run_id": 1}) == ErrorCode.RUN_MISMATCH
    assert await rpc.call("session.cancel_run", {"session_id": sid}) == {"cleared_inputs": []}
    assert await rpc.close() == 0


async def test_a_429_with_retry_after_is_retried_after_at_least_that_wait_then_succeeds(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """A retryable failure shows `retrying{attempt, max_attempts, next_at_ms, code}` and waits at least
    the server's retry-after before the next attempt."""
    llm.enqueue(ErrorReply(429, "rate_limit_error", "rate_limit_exceeded", retry_after=1), Reply(text="after the wait"))
    rpc = await _engine(tmp_path, llm)
    sid = await _session(rpc, tmp_path)
    _send(rpc, sid, "hi")
    retrying = await rpc.wait_for(
        lambda line: (
            line.get("method") == "session.activity_changed"
            and line["params"]["activity"]["state"]["type"] == "retrying"
        )
    )
    state = rpc.lines[retrying]["params"]["activity"]["state"]
    assert (state["attempt"], state["max_attempts"], state["code"]) == (1, 5, "rate_limited")
    done = await rpc.broadcast("run.done")
    assert rpc.lines[done]["params"]["outcome"] == {"type": "turn", "finish": "stop", "rounds": 1}
    assert len(llm.requests) == 2
    assert state["next_at_ms"] - rpc.lines[done]["params"]["timing"]["started_at_ms"] >= 1000
    assert await rpc.close() == 0


async def test_a_run_fails_with_the_error_code_after_the_attempts_run_out(tmp_path: Path, llm: FakeLLMServer) -> None:
    """Five attempts, then `run.done{failed{code}}` (waits shrunk by OMNIAGENT_RETRY_SCALE)."""
    llm.enqueue(*[ErrorReply(529, "overloaded_error", message="Overloaded") for _ in range(5)])
    rpc = await _engine(tmp_path, llm, {"OMNIAGENT_RETRY_SCALE": "0.01"})
    sid = await _session(rpc, tmp_path)
    _send(rpc, sid, "hi")
    done = await rpc.broadcast("run.done")
    assert rpc.lines[done]["params"]["outcome"]["type"] == "failed"
    assert rpc.lines[done]["params"]["outcome"]["code"] == "provider"
    attempts = [
        line["params"]["activity"]["state"]["attempt"]
        for line in rpc.lines[:done]
        if line.get("method") == "session.activity_changed"
        and line["params"]["activity"]["state"]["type"] == "retrying"
    ]
    assert attempts == [1, 2, 3, 4]
    assert len(llm.requests) == 5
    assert await rpc.close() == 0


async def test_a_stream_cut_after_content_fails_without_retry_and_keeps_the_partial_message(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """No retry once content has streamed; the draft is committed with finish `error`."""
    llm.enqueue(Reply(text="partial answer that is cut", chunk_size=3, cut_after_events=6))
    rpc = await _engine(tmp_path, llm)
    sid = await _session(rpc, tmp_path)
    _send(rpc, sid, "hi")
    done = await rpc.broadcast("run.done")
    outcome = rpc.lines[done]["params"]["outcome"]
    assert outcome["type"] == "failed" and outcome["code"] in ("network", "protocol")
    assert len(llm.requests) == 1
    history = await rpc.call("session.history", {"session_id": sid, "before_message_id": 2**53 - 1})
    last = history["messages"][-1]
    assert last["finish"] == "error" and last["error"]["type"] == outcome["code"]
    assert await rpc.close() == 0


async def test_max_rounds_fails_the_run_with_max_rounds(tmp_path: Path, llm: FakeLLMServer) -> None:
    """Hitting max_rounds ends the run `failed{code:"max_rounds"}`."""
    llm.enqueue(Reply(tool_calls=(FakeToolCall("read", {"path": "a.txt"}),)))
    rpc = await _engine(tmp_path, llm)
    sid = await _session(rpc, tmp_path, max_rounds=1)
    _send(rpc, sid, "loop")
    done = await rpc.broadcast("run.done")
    assert rpc.lines[done]["params"]["outcome"]["code"] == "max_rounds"
    assert await rpc.close() == 0


async def test_omniagent_max_rounds_is_the_cap_of_a_session_created_without_one(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """docs/engine.md: OMNIAGENT_MAX_ROUNDS is the max_rounds of a root session whose `session.create` gives none
    (how the faces' sessions get one); a session's own max_rounds wins."""
    llm.enqueue(Reply(tool_calls=(FakeToolCall("read", {"path": "a.txt"}),)))
    rpc = await _engine(tmp_path, llm, {"OMNIAGENT_MAX_ROUNDS": "1"})
    workspace = tmp_path / "ws"
    workspace.mkdir()
    created = await rpc.call("session.create", {"workspace_path": str(workspace), "model": "fake-anthropic/fake-model"})
    assert created["session"]["max_rounds"] == 1
    own = await _session(rpc, tmp_path, max_rounds=5)
    assert (await rpc.call("session.get", {"session_id": own}))["session"]["max_rounds"] == 5
    _send(rpc, created["session"]["id"], "loop")
    done = await rpc.broadcast("run.done")
    assert rpc.lines[done]["params"]["outcome"]["code"] == "max_rounds"
    assert await rpc.close() == 0


async def test_reasoning_streams_as_a_part_finalized_with_its_signature(tmp_path: Path, llm: FakeLLMServer) -> None:
    """Reasoning parts get their signature at block stop via `message.part_finalized`; the activity
    is `reasoning` while it streams."""
    llm.enqueue(Reply(reasoning="thinking it over", text="answer", signature="sig-1"))
    rpc = await _engine(tmp_path, llm)
    sid = await _session(rpc, tmp_path, reasoning="high")
    _send(rpc, sid, "think")
    done = await rpc.broadcast("run.done")
    final = rpc.lines[await rpc.broadcast("message.part_finalized")]["params"]
    assert final["final"] == {"type": "reasoning", "signature": "sig-1"} and final["part_id"] == 0
    states = [
        line["params"]["activity"]["state"]["type"]
        for line in rpc.lines[:done]
        if line.get("method") == "session.activity_changed"
    ]
    assert "reasoning" in states
    history = await rpc.call("session.history", {"session_id": sid, "before_message_id": 2**53 - 1})
    assert history["messages"][-1]["content"][0] == {
        "type": "reasoning",
        "id": 0,
        "text": "thinking it over",
        "signature": "sig-1",
    }
    assert await rpc.close() == 0


async def test_an_auth_failure_is_not_retried_and_fails_with_auth(tmp_path: Path, llm: FakeLLMServer) -> None:
    """Permanent classes (auth) are never retried; run.done carries the mapped RunErrorCode."""
    llm.enqueue(ErrorReply(401, "authentication_error", message="invalid x-api-key"))
    rpc = await _engine(tmp_path, llm)
    sid = await _session(rpc, tmp_path)
    _send(rpc, sid, "hi")
    done = await rpc.broadcast("run.done")
    assert rpc.lines[done]["params"]["outcome"]["code"] == "auth"
    assert len(llm.requests) == 1
    assert "message.started" not in rpc.names(0, done)
    assert await rpc.close() == 0
