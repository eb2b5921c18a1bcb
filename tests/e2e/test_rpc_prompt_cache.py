"""Prompt caching over a real `omniagent rpc` (issue 13, part 6), against the fake LLM computing cache hits from the
requests it receives: each committed message reports its `cache_read` / `cache_write` tokens and is priced with
them; Anthropic requests carry breakpoints, the built-in OpenAI provider sends the session's `prompt_cache_key`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.engine.rpc_harness import RpcProcess, write_providers

WAIT = 15.0
# Prices of write_providers' fake models, USD per million tokens.
INPUT, OUTPUT, CACHE_READ, CACHE_WRITE = 3.0, 15.0, 0.3, 3.75


def _turns(count: int) -> list[Reply]:
    steps = []
    for turn in range(count):
        steps += [Reply(tool_calls=(FakeToolCall("read", {"path": "notes.txt"}, f"c{turn}"),)), Reply(text="Read.")]
    return steps


async def _run(rpc: RpcProcess, ws: Path, model: str, turns: int) -> tuple[str, list[dict[str, Any]]]:
    """A session on `model`, `turns` turns; its id and the committed assistant messages."""
    sid = (await rpc.call("session.create", {"workspace_path": str(ws), "model": model}))["session"]["id"]
    for _ in range(turns):
        start = len(rpc.lines)
        content = [{"type": "text", "text": "What do the notes say?"}]
        await rpc.call("session.send_input", {"session_id": sid, "input": {"type": "content", "content": content}})
        await rpc.broadcast("run.done", after=start, within=WAIT)
    messages = [
        line["params"]["message"]
        for line in rpc.lines
        if line.get("method") == "message.committed" and line["params"]["message"]["type"] == "assistant"
    ]
    return sid, messages


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("a line of notes\n" * 200)
    return ws


async def test_anthropic_usage_reports_cache_writes_then_reads_and_prices_them(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    async with FakeLLMServer(Scenario(_turns(2), prompt_cache=True)) as llm:
        write_providers(tmp_path / "data", llm)
        rpc = await RpcProcess.start(tmp_path / "data")
        try:
            _, messages = await _run(rpc, ws, "fake-anthropic/fake-model", 2)
        finally:
            assert await rpc.close() == 0
    tokens = [m["tokens"] for m in messages]
    assert tokens[0]["cache_read"] == 0 and tokens[0]["cache_write"] == tokens[0]["input"]
    for later in tokens[1:]:
        assert later["cache_read"] > 0 and later["cache_read"] + later["cache_write"] <= later["input"]
    last = messages[-1]
    t = last["tokens"]
    fresh = t["input"] - t["cache_read"] - t["cache_write"]
    expected = fresh * INPUT + t["cache_read"] * CACHE_READ + t["cache_write"] * CACHE_WRITE + t["output"] * OUTPUT
    assert last["cost"] == round(expected / 1e6, 9) and last["cost"] < t["input"] * INPUT / 1e6
    body = llm.requests[-1].body
    assert isinstance(body, dict)
    marked = [block for message in body["messages"] for block in message["content"] if "cache_control" in block]
    assert len(marked) == 2 and "cache_control" in body["system"][0]


async def test_the_builtin_openai_provider_sends_the_session_as_prompt_cache_key(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    async with FakeLLMServer(Scenario(_turns(2), prompt_cache=True)) as llm:
        env = {"OPENAI_API_KEY": "sk-test-openai-cache", "OPENAI_BASE_URL": llm.openai_base_url}
        rpc = await RpcProcess.start(tmp_path / "data", env)
        try:
            sid, messages = await _run(rpc, ws, "openai/gpt-5-mini", 2)
        finally:
            assert await rpc.close() == 0
    bodies = [r.body for r in llm.requests]
    assert all(isinstance(b, dict) and b["prompt_cache_key"] == sid for b in bodies)
    reads = [m["tokens"]["cache_read"] for m in messages]
    assert reads[0] == 0 and all(read > 0 for read in reads[1:])
    assert all(m["tokens"]["cache_write"] == 0 for m in messages)
