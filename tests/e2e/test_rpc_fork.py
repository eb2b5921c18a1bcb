"""session.fork over a real `omniagent rpc` subprocess (docs/engine.md "Forks";
issue "One system": the engine serves fork)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.engine.rpc_harness import RpcProcess, write_providers

# Each test runs on both stores: SQLite, and a fresh PostgreSQL database (conftest.py `each_store`).
pytestmark = pytest.mark.usefixtures("each_store")


MODEL = "fake-anthropic/fake-model"
NEWEST = 2**53 - 1


async def _engine(tmp_path: Path, llm: FakeLLMServer) -> tuple[RpcProcess, Path]:
    write_providers(tmp_path / "data", llm)
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return await RpcProcess.start(tmp_path / "data"), workspace


async def _turn(rpc: RpcProcess, sid: str, text: str) -> None:
    start = len(rpc.lines)
    result = await rpc.call(
        "session.send_input",
        {"session_id": sid, "input": {"type": "content", "content": [{"type": "text", "text": text}]}},
    )
    await rpc.broadcast(
        "run.done", after=start, where=lambda p: p["session_id"] == sid and p["run_id"] == result["run_id"]
    )


async def _history(rpc: RpcProcess, sid: str, before: int = NEWEST) -> dict[str, Any]:
    result: dict[str, Any] = await rpc.call("session.history", {"session_id": sid, "before_message_id": before})
    return result


async def test_a_fork_copies_the_history_up_to_the_cut_and_lives_on_its_own(tmp_path: Path) -> None:
    """session.fork: a new session with origin `fork{source_id}` holding the transcript before
    `before_message_id` (all of it when absent), announced by session.summary_changed before the answer; a turn in
    the fork reaches the model with the copied turns and leaves the source untouched; the fork outlives the
    process."""
    async with FakeLLMServer(Scenario(fallback=Reply(text="ok"))) as llm:
        rpc, workspace = await _engine(tmp_path, llm)
        source = (await rpc.call("session.create", {"workspace_path": str(workspace), "model": MODEL}))["session"]
        sid = source["id"]
        await _turn(rpc, sid, "first question")
        await _turn(rpc, sid, "second question")
        source = (await rpc.call("session.get", {"session_id": sid}))["session"]
        source_history = await _history(rpc, sid)
        assert [m["id"] for m in source_history["messages"]] == [1, 2, 3, 4]

        start = len(rpc.lines)
        rid = rpc.send("session.fork", {"session_id": sid})
        answered = await rpc.wait_for(lambda line: line.get("id") == rid, after=start)
        whole = rpc.lines[answered]["result"]["session"]
        assert rpc.names(start, answered + 1) == ["session.summary_changed", "response:session.fork"]
        assert rpc.lines[start]["params"]["session"] == whole
        assert whole["id"] != sid and whole["origin"] == {"type": "fork", "source_id": sid}
        for key in ("root", "model", "reasoning", "config_rev", "title", "message_count", "usage_total", "profile"):
            assert whole[key] == source[key], key
        assert await _history(rpc, whole["id"]) == {**source_history, "session_id": whole["id"]}

        cut = (await rpc.call("session.fork", {"session_id": sid, "before_message_id": 3}))["session"]
        assert cut["message_count"] == 2 and cut["title"] == "first question"
        assert cut["usage_total"] == source_history["messages"][1]["tokens"]
        expected = await _history(rpc, sid, before=3)
        assert await _history(rpc, cut["id"]) == {**expected, "session_id": cut["id"]}

        await _turn(rpc, cut["id"], "fork question")
        sent = json.dumps(llm.requests[-1].body)
        assert "first question" in sent and "fork question" in sent and "second question" not in sent
        forked = await _history(rpc, cut["id"])
        assert [m["id"] for m in forked["messages"]] == [1, 2, 5, 6]  # new ids follow every id the source gave
        assert await _history(rpc, sid) == source_history
        listed = await rpc.call("session.list", {})
        assert listed["total"] == 3  # forks are top-level sessions
        await rpc.call("session.remove", {"session_id": whole["id"]})
        assert await _history(rpc, sid) == source_history  # removing a fork leaves its source alone
        assert await rpc.close() == 0

        again = await RpcProcess.start(tmp_path / "data")
        stored = (await again.call("session.get", {"session_id": cut["id"]}))["session"]
        assert stored["origin"] == {"type": "fork", "source_id": sid} and stored["message_count"] == 4
        assert await _history(again, cut["id"]) == forked
        await again.call("session.remove", {"session_id": sid})
        assert await _history(again, cut["id"]) == forked  # and removing the source leaves its forks alone
        assert await again.close() == 0


async def test_a_fork_of_an_unknown_session_or_message_is_refused_and_makes_nothing(tmp_path: Path) -> None:
    """An unknown session is unknown_session (-31000), a cut at a message the source does not have is
    unknown_message (-31003), a malformed id is bad_request; no session is made by a refused fork."""
    async with FakeLLMServer(Scenario(fallback=Reply(text="ok"))) as llm:
        rpc, workspace = await _engine(tmp_path, llm)
        sid = (await rpc.call("session.create", {"workspace_path": str(workspace), "model": MODEL}))["session"]["id"]
        await _turn(rpc, sid, "hello")
        codes = [
            await rpc.call_error("session.fork", {"session_id": "0" * 32}),
            await rpc.call_error("session.fork", {"session_id": sid, "before_message_id": 99}),
            await rpc.call_error("session.fork", {"session_id": "not-an-id"}),
        ]
        assert codes == [ErrorCode.UNKNOWN_SESSION, ErrorCode.UNKNOWN_MESSAGE, ErrorCode.BAD_REQUEST]
        assert (await rpc.call("session.list", {"population": {"type": "all"}}))["total"] == 1
        assert not any(
            line.get("method") == "session.summary_changed" and line["params"]["session"]["id"] != sid
            for line in rpc.lines
        )
        assert await rpc.close() == 0


async def test_a_fork_during_a_run_copies_only_committed_messages(tmp_path: Path) -> None:
    """docs/engine.md "Forks": forking a running session is allowed (the spec does not refuse it) and copies the
    committed messages only; the assistant draft still waiting on a permission stays with the source."""
    write_call = Reply(tool_calls=(FakeToolCall("write", {"path": "out.txt", "content": "x"}, "call_w"),))
    async with FakeLLMServer(Scenario(steps=[write_call], fallback=Reply(text="ok"))) as llm:
        rpc, workspace = await _engine(tmp_path, llm)
        sid = (await rpc.call("session.create", {"workspace_path": str(workspace), "model": MODEL}))["session"]["id"]
        start = len(rpc.lines)
        await rpc.call(
            "session.send_input",
            {"session_id": sid, "input": {"type": "content", "content": [{"type": "text", "text": "write it"}]}},
        )
        asked = rpc.lines[await rpc.broadcast("interaction.requested", after=start)]["params"]
        fork = (await rpc.call("session.fork", {"session_id": sid}))["session"]
        messages = (await _history(rpc, fork["id"]))["messages"]
        assert [(m["type"], m["id"]) for m in messages] == [("user", 1)]
        assert (await rpc.call("session.get", {"session_id": fork["id"]}))["activity"]["state"] == {"type": "idle"}
        await rpc.call(
            "interaction.respond",
            {"interaction_id": asked["interaction_id"], "response": {"type": "confirm", "value": False}},
        )
        await rpc.broadcast("run.done", after=start, where=lambda p: p["session_id"] == sid)
        assert len((await _history(rpc, sid))["messages"]) == 3
        assert len((await _history(rpc, fork["id"]))["messages"]) == 1
        assert await rpc.close() == 0
