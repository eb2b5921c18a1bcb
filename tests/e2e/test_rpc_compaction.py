"""Compaction over a real `omniagent rpc` subprocess against the fake LLM (docs/engine.md "Compaction":
session.compact, the activity `compacting`, the outcomes `compacted` / `skipped`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.testing import ErrorReply, FakeLLMServer, FakeUsage, Reply
from tests.engine.rpc_harness import RpcProcess, write_providers

# Each test runs on both stores: SQLite, and a fresh PostgreSQL database (conftest.py `each_store`).
pytestmark = pytest.mark.usefixtures("each_store")


NEWEST = 2**53 - 1
# A model whose window is small enough for tests: the recent tail kept is min(20000, 20000 / 10) = 2000 tokens
# (8000 characters), and a turn compacts once its projected context passes 20000 - 1000 tokens.
SMALL = "fake-anthropic/small-model"
RECENT = "RECENT-MARKER " + "r" * 9000  # about 2250 tokens: holds the kept tail on its own
OLD = "OLD-MARKER " + "o" * 2000  # about 500 tokens: the covered turn outweighs the summary that replaces it
SUMMARY = "## Goal\nSUMMARY-MARKER: answer the questions."


async def _engine(tmp_path: Path, llm: FakeLLMServer) -> RpcProcess:
    data = tmp_path / "data"
    write_providers(data, llm)
    path = data / "providers.json"
    document = json.loads(path.read_text())
    anthropic = document["providers"][0]
    small = {
        **anthropic["models"][0],
        "id": "small-model",
        "limits": {"context_window": 20000, "max_output_tokens": 1000},
    }
    anthropic["models"].append(small)
    path.write_text(json.dumps(document))
    return await RpcProcess.start(data)


async def _session(rpc: RpcProcess, tmp_path: Path, model: str = SMALL) -> str:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return str((await rpc.call("session.create", {"workspace_path": str(workspace), "model": model}))["session"]["id"])


def _send(rpc: RpcProcess, sid: str, text: str) -> str:
    content = [{"type": "text", "text": text}]
    return rpc.send("session.send_input", {"session_id": sid, "input": {"type": "content", "content": content}})


async def _turn(rpc: RpcProcess, sid: str, text: str) -> dict[str, Any]:
    """One prompt's run, up to the session idle again (it says so after `run.done`: a test reading what follows
    from here on must not find this turn's last activity); its `run.done` params."""
    start = len(rpc.lines)
    run_id = (await rpc.response(_send(rpc, sid, text)))["result"]["run_id"]
    done = await rpc.broadcast("run.done", after=start, where=lambda p: p["run_id"] == run_id)
    await _idle(rpc, done)
    return dict(rpc.lines[done]["params"])


async def _idle(rpc: RpcProcess, after: int) -> None:
    await rpc.wait_for(
        lambda line: (
            line.get("method") == "session.activity_changed" and line["params"]["activity"]["state"]["type"] == "idle"
        ),
        after=after,
    )


async def _history(rpc: RpcProcess, sid: str) -> list[dict[str, Any]]:
    return list((await rpc.call("session.history", {"session_id": sid, "before_message_id": NEWEST}))["messages"])


async def _body(llm: FakeLLMServer, index: int) -> dict[str, Any]:
    """The JSON body of model request `index` (bounded wait for it)."""
    body = (await llm.wait_for_requests_async(index + 1))[index].body
    assert isinstance(body, dict)
    return body


def _states(rpc: RpcProcess, start: int, end: int | None = None) -> list[dict[str, Any]]:
    return [
        line["params"]["activity"]["state"]
        for line in rpc.lines[start:end]
        if line.get("method") == "session.activity_changed"
    ]


async def test_a_manual_compaction_commits_a_checkpoint_and_the_next_request_sends_the_summary(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """session.compact: idle → `started`; activity `compacting{manual}`; the summary call carries the
    covered messages and the summary instruction; the CompactionMessage (summary, first_kept_id, tokens) is
    committed and the run ends `compacted`; later requests send the summary and the kept messages only."""
    llm.enqueue(
        Reply(text="first answer", usage=FakeUsage(input=60, output=5)),
        Reply(text="second answer", usage=FakeUsage(input=2300, output=5)),
        Reply(text=SUMMARY, usage=FakeUsage(input=2400, output=30)),
        Reply(text="third answer"),
    )
    rpc = await _engine(tmp_path, llm)
    sid = await _session(rpc, tmp_path)
    await _turn(rpc, sid, OLD)
    await _turn(rpc, sid, RECENT)
    before = await _history(rpc, sid)

    start = len(rpc.lines)
    rid = rpc.send("session.compact", {"session_id": sid})
    done = await rpc.broadcast("run.done", after=start)
    assert (await rpc.response(rid))["result"] == {"status": "started", "run_id": 3}
    names = [n for n in rpc.names(start, done + 1) if n != "session.activity_changed"]
    assert names == [
        "run.started",
        "response:session.compact",
        "message.committed",
        "session.summary_changed",
        "run.done",
    ]
    started = rpc.lines[await rpc.broadcast("run.started", after=start)]["params"]
    assert (started["kind"], started["reason"], started["run_id"]) == ("compaction", "manual", 3)
    states = _states(rpc, start, done)
    assert [s["type"] for s in states] == ["building", "compacting"]
    assert states[1]["reason"] == "manual" and states[1]["run_id"] == 3
    await _idle(rpc, done)
    checkpoint = rpc.lines[start + rpc.names(start).index("message.committed")]["params"]["message"]
    assert rpc.lines[done]["params"]["outcome"] == {"type": "compacted", "message_id": checkpoint["id"]}
    assert checkpoint["type"] == "compaction" and checkpoint["reason"] == "manual" and checkpoint["run_id"] == 3
    assert checkpoint["summary"] == SUMMARY
    assert checkpoint["first_kept_id"] == before[2]["id"]  # the second turn's user message
    assert 0 < checkpoint["tokens_after"] < checkpoint["tokens_before"]
    assert await _history(rpc, sid) == [*before, checkpoint]

    # The summary call: same system prompt and tools, the covered turn, then the instruction as the last message.
    turn_body, summary_body = await _body(llm, 1), await _body(llm, 2)
    assert summary_body["system"] == turn_body["system"] and summary_body["tools"] == turn_body["tools"]
    covered = json.dumps(summary_body["messages"][:-1])
    assert "OLD-MARKER" in covered and "first answer" in covered and "RECENT-MARKER" not in covered
    instruction = summary_body["messages"][-1]
    assert instruction["role"] == "user" and "checkpoint summary" in json.dumps(instruction)

    await _turn(rpc, sid, "NEW question")
    sent = json.dumps((await _body(llm, 3))["messages"])
    assert "SUMMARY-MARKER" in sent and "RECENT-MARKER" in sent and "second answer" in sent and "NEW question" in sent
    assert "OLD-MARKER" not in sent and "first answer" not in sent
    assert await rpc.close() == 0


async def test_compacting_an_empty_or_short_session_is_skipped_without_a_model_call(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """An empty covered range → `skipped{nothing_to_summarize}`; a transcript that fits the kept tail has
    nothing before the cut → `skipped{too_few_messages}`. Neither calls the model or writes a message."""
    llm.enqueue(Reply(text="short answer"))
    rpc = await _engine(tmp_path, llm)
    sid = await _session(rpc, tmp_path)
    assert await rpc.call_error("session.compact", {"session_id": "0" * 32}) == ErrorCode.UNKNOWN_SESSION
    result = await rpc.call("session.compact", {"session_id": sid})
    assert result == {"status": "started", "run_id": 1}
    done = rpc.lines[await rpc.broadcast("run.done")]["params"]
    assert done["outcome"] == {"type": "skipped", "reason": "nothing_to_summarize"}
    await _turn(rpc, sid, "a short question")
    start = len(rpc.lines)
    assert (await rpc.call("session.compact", {"session_id": sid}))["run_id"] == 3
    done = rpc.lines[await rpc.broadcast("run.done", after=start)]["params"]
    assert done["outcome"] == {"type": "skipped", "reason": "too_few_messages"}
    assert len(llm.requests) == 1
    assert [m["type"] for m in await _history(rpc, sid)] == ["user", "assistant"]
    assert await rpc.close() == 0


async def test_a_provider_error_or_a_cancel_during_compaction_leaves_the_transcript_unchanged(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """A summary call that fails ends the run `failed` with the provider's code; one canceled ends
    it `canceled`; either way no message is committed and the next request still sends the whole transcript."""
    llm.enqueue(
        Reply(text="first answer"),
        Reply(text="second answer"),
        ErrorReply(400, "invalid_request_error", message="bad"),
        Reply(text="s" * 400, chunk_size=2, gate="never", hold_after_events=4),
        Reply(text="third answer"),
    )
    rpc = await _engine(tmp_path, llm)
    sid = await _session(rpc, tmp_path)
    await _turn(rpc, sid, OLD)
    await _turn(rpc, sid, RECENT)
    before = await _history(rpc, sid)

    start = len(rpc.lines)
    await rpc.call("session.compact", {"session_id": sid})
    failed = rpc.lines[await rpc.broadcast("run.done", after=start)]["params"]
    assert failed["kind"] == "compaction" and failed["outcome"]["type"] == "failed"
    assert failed["outcome"]["code"] == "provider"
    assert "message.committed" not in rpc.names(start)

    start = len(rpc.lines)
    run_id = (await rpc.call("session.compact", {"session_id": sid}))["run_id"]
    await rpc.wait_for(
        lambda line: (
            line.get("method") == "session.activity_changed"
            and line["params"]["activity"]["state"]["type"] == "compacting"
        ),
        after=start,
    )
    await llm.wait_for_requests_async(4)
    assert await rpc.call("session.cancel_run", {"session_id": sid, "run_id": run_id}) == {
        "canceled_run": run_id,
        "cleared_inputs": [],
    }
    canceled = rpc.lines[await rpc.broadcast("run.done", after=start)]["params"]
    assert canceled["outcome"] == {"type": "canceled"}
    assert "message.committed" not in rpc.names(start)
    assert await _history(rpc, sid) == before

    await _turn(rpc, sid, "NEW question")
    sent = json.dumps((await _body(llm, 4))["messages"])
    assert "OLD-MARKER" in sent and "RECENT-MARKER" in sent
    assert await rpc.close() == 0


async def test_a_compaction_asked_during_a_run_is_queued_and_runs_when_the_run_ends(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """session.compact: busy → a reserved run id answered `queued`, shown as `pending_compaction` in the
    activity; when the active run ends, the compaction run starts with that id (before any queued input)."""
    llm.enqueue(Reply(text="x" * 400, chunk_size=2, gate="turn", hold_after_events=4))
    rpc = await _engine(tmp_path, llm)
    sid = await _session(rpc, tmp_path)
    _send(rpc, sid, "a question")
    await rpc.broadcast("message.part_delta")
    start = len(rpc.lines)
    assert await rpc.call("session.compact", {"session_id": sid}) == {"status": "queued", "run_id": 2}
    assert await rpc.call("session.compact", {"session_id": sid}) == {"status": "queued", "run_id": 2}
    pending = await rpc.broadcast(
        "session.activity_changed", after=start, where=lambda p: p["activity"].get("pending_compaction") == 2
    )
    item = await rpc.call("session.get", {"session_id": sid})
    assert item["activity"]["pending_compaction"] == 2
    llm.release("turn")
    turn_done = await rpc.broadcast("run.done", after=pending, where=lambda p: p["run_id"] == 1)
    started = rpc.lines[await rpc.broadcast("run.started", after=turn_done)]["params"]
    assert (started["run_id"], started["kind"], started["reason"]) == (2, "compaction", "manual")
    done = rpc.lines[await rpc.broadcast("run.done", after=turn_done, where=lambda p: p["run_id"] == 2)]["params"]
    assert done["outcome"] == {"type": "skipped", "reason": "too_few_messages"}
    assert "pending_compaction" not in (await rpc.call("session.get", {"session_id": sid}))["activity"]
    assert await rpc.close() == 0


async def test_clearing_the_queue_cancels_a_queued_compaction_that_never_started(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """session.cancel_run: `clear_queue` cancels a pending compaction (`cleared_compaction`), whose run.done is
    `canceled` with no start time (RunCanceledTiming); no compaction runs after the canceled turn."""
    llm.enqueue(Reply(text="x" * 400, chunk_size=2, gate="never", hold_after_events=4))
    rpc = await _engine(tmp_path, llm)
    sid = await _session(rpc, tmp_path)
    _send(rpc, sid, "a question")
    await rpc.broadcast("message.part_delta")
    assert (await rpc.call("session.compact", {"session_id": sid}))["status"] == "queued"
    start = len(rpc.lines)
    result = await rpc.call("session.cancel_run", {"session_id": sid, "clear_queue": True})
    assert result == {"canceled_run": 1, "cleared_inputs": [], "cleared_compaction": 2}
    cleared = rpc.lines[await rpc.broadcast("run.done", after=start, where=lambda p: p["run_id"] == 2)]["params"]
    assert cleared["outcome"] == {"type": "canceled"} and cleared["kind"] == "compaction"
    assert "started_at_ms" not in cleared["timing"]
    turn = await rpc.broadcast("run.done", after=start, where=lambda p: p["run_id"] == 1)
    await _idle(rpc, turn)
    assert "run.started" not in rpc.names(start)
    assert await rpc.close() == 0


async def test_a_compaction_queued_when_the_engine_dies_is_canceled_at_the_next_start(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """Crash recovery (yuke keeps a queued compaction in memory only; ours is a durable reserved run): after `kill -9`,
    the next start ends the open turn `failed{interrupted}` and the reserved compaction `canceled`."""
    llm.enqueue(Reply(text="y" * 2000, chunk_size=2, gate="never", hold_after_events=4))
    rpc = await _engine(tmp_path, llm)
    sid = await _session(rpc, tmp_path)
    _send(rpc, sid, "a question")
    await rpc.broadcast("message.part_delta")
    assert (await rpc.call("session.compact", {"session_id": sid}))["status"] == "queued"
    await rpc.kill()
    again = await RpcProcess.start(tmp_path / "data")
    again.send("session.list")  # the engine opens at the first request after `initialize`
    turn = again.lines[await again.broadcast("run.done", where=lambda p: p["run_id"] == 1)]["params"]
    assert turn["outcome"]["type"] == "failed" and turn["outcome"]["code"] == "interrupted"
    queued = again.lines[await again.broadcast("run.done", where=lambda p: p["run_id"] == 2)]["params"]
    assert queued["outcome"] == {"type": "canceled"} and "started_at_ms" not in queued["timing"]
    assert (await again.call("session.compact", {"session_id": sid}))["run_id"] == 3
    assert await again.close() == 0


async def test_a_turn_whose_context_would_overflow_compacts_automatically_then_goes_on(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """Auto: before a request whose projected context (last usage + what came after) passes
    `window - max_output`, the turn compacts (activity `compacting{auto}`, a CompactionMessage with reason `auto`
    and the turn's run id), then sends the summary and the kept messages, and ends as a normal turn."""
    llm.enqueue(
        Reply(text="first answer", usage=FakeUsage(input=18500, output=100)),
        Reply(text=SUMMARY),
        Reply(text="second answer"),
    )
    rpc = await _engine(tmp_path, llm)
    sid = await _session(rpc, tmp_path)
    first = await _turn(rpc, sid, OLD)
    assert first["outcome"]["type"] == "turn" and len(llm.requests) == 1

    start = len(rpc.lines)
    done = await _turn(rpc, sid, RECENT)
    assert done["outcome"] == {"type": "turn", "finish": "stop", "rounds": 1}
    states = _states(rpc, start)
    compacting = next(s for s in states if s["type"] == "compacting")
    assert compacting == {**compacting, "reason": "auto", "run_id": done["run_id"]}
    assert [s["type"] for s in states].index("compacting") < [s["type"] for s in states].index("running")
    history = await _history(rpc, sid)
    assert [m["type"] for m in history] == ["user", "assistant", "user", "compaction", "assistant"]
    checkpoint = history[3]
    assert (checkpoint["reason"], checkpoint["run_id"], checkpoint["first_kept_id"]) == ("auto", done["run_id"], 3)
    assert "OLD-MARKER" in json.dumps((await _body(llm, 1))["messages"])
    sent = json.dumps((await _body(llm, 2))["messages"])
    assert "SUMMARY-MARKER" in sent and "RECENT-MARKER" in sent and "OLD-MARKER" not in sent
    assert await rpc.close() == 0
