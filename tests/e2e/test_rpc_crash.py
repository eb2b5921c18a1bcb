"""Crash recovery: `kill -9` during a streaming run, restart on the same store (docs/engine.md "Where the data
lives")."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniagent.testing import FakeLLMServer, Reply, Scenario
from tests.engine.rpc_harness import RpcProcess, write_providers
from tests.stores import store_rows

# Each test runs on both stores: SQLite, and a fresh PostgreSQL database (conftest.py `each_store`).
pytestmark = pytest.mark.usefixtures("each_store")


def _input(text: str) -> dict[str, object]:
    return {"type": "content", "content": [{"type": "text", "text": text}]}


async def test_a_run_open_at_kill_9_reads_failed_interrupted_and_the_queue_survives(tmp_path: Path) -> None:
    """The open-run marker makes the next start emit `run.done{failed:"interrupted"}`; the transcript
    before the crash is intact, the queued input is still queued, and the session accepts input again."""
    async with FakeLLMServer(Scenario()) as llm:
        llm.enqueue(
            Reply(text="y" * 2000, chunk_size=2, gate="never", hold_after_events=4), Reply(text="after restart")
        )
        data = tmp_path / "data"
        write_providers(data, llm)
        workspace = tmp_path / "ws"
        workspace.mkdir()
        rpc = await RpcProcess.start(data)
        sid = (
            await rpc.call("session.create", {"workspace_path": str(workspace), "model": "fake-anthropic/fake-model"})
        )["session"]["id"]
        await rpc.call("session.send_input", {"session_id": sid, "input": _input("first question")})
        await rpc.broadcast("message.part_delta")
        queued = await rpc.call("session.send_input", {"session_id": sid, "input": _input("queued question")})
        assert queued["type"] == "queued"
        assert await llm.wait_held_async("never")  # the first run is still streaming when the process dies
        await rpc.kill()

        again = await RpcProcess.start(data)
        again.send("session.list")  # the engine opens at the first request after `initialize`
        done = again.lines[await again.broadcast("run.done")]["params"]
        assert (done["session_id"], done["run_id"]) == (sid, 1)
        assert done["outcome"] == {"type": "failed", "code": "interrupted", "message": done["outcome"]["message"]}
        history = await again.call("session.history", {"session_id": sid, "before_message_id": 2**53 - 1})
        assert [m["type"] for m in history["messages"]] == ["user"]
        assert history["messages"][0]["content"][0]["text"] == "first question"
        queue = await again.call("session.queue", {"session_id": sid})
        assert [item["content"][0]["text"] for item in queue["items"]] == ["queued question"]
        item = await again.call("session.get", {"session_id": sid})
        assert item["activity"]["state"] == {"type": "idle"} and item["activity"]["queued"] == 1

        started = await again.call("session.send_input", {"session_id": sid, "input": _input("new question")})
        assert started["type"] == "started" and started["run_id"] == 2
        second = again.lines[await again.broadcast("run.done", where=lambda p: p["run_id"] == 2)]["params"]
        assert second["outcome"]["type"] == "turn"
        texts = [
            m["content"][0]["text"]
            for m in (await again.call("session.history", {"session_id": sid, "before_message_id": 2**53 - 1}))[
                "messages"
            ]
        ]
        assert texts == ["first question", "queued question", "new question", "after restart"]
        assert await again.close() == 0

    # The event log holds one run.done per run and strictly increasing seqs.
    rows = store_rows(data, "SELECT seq, name FROM events WHERE session_id = ? ORDER BY seq", (sid,))
    seqs, names = [row[0] for row in rows], [row[1] for row in rows]
    assert seqs == list(range(1, len(seqs) + 1))
    assert names.count("run.done") == 2 and names.count("run.started") == 2


async def test_closing_stdin_during_a_run_ends_it_as_interrupted_and_exits_cleanly(tmp_path: Path) -> None:
    """On EOF yuke flushes pending notifications and exits; our choice: the open run ends `failed/interrupted`."""
    async with FakeLLMServer(Scenario()) as llm:
        llm.enqueue(Reply(text="z" * 2000, chunk_size=2, gate="never", hold_after_events=2))  # OpenAI Chat: role, delta
        data = tmp_path / "data"
        write_providers(data, llm)
        workspace = tmp_path / "ws"
        workspace.mkdir()
        rpc = await RpcProcess.start(data)
        sid = (await rpc.call("session.create", {"workspace_path": str(workspace), "model": "fake-chat/fake-model"}))[
            "session"
        ]["id"]
        await rpc.call("session.send_input", {"session_id": sid, "input": _input("go")})
        await rpc.broadcast("message.part_delta")
        assert await rpc.close() == 0
        done = rpc.lines[await rpc.broadcast("run.done")]["params"]
        assert done["outcome"]["code"] == "interrupted"
        assert rpc.names()[-1] == "session.activity_changed"
        again = await RpcProcess.start(data)
        history = await again.call("session.history", {"session_id": sid, "before_message_id": 2**53 - 1})
        assert history["messages"][-1]["finish"] == "canceled"
        assert "run.done" not in again.names()
        assert await again.close() == 0
