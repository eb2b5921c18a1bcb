"""One data dir, two real `omniagent rpc` processes (store/ownership.py): each sees the other's sessions, a starting
process leaves the other's open run alone, both runs complete; after `kill -9` of one, the other's run is untouched
and the dead one's run is ended `interrupted` by the survivor; a process that stops renewing its lease (SIGSTOP)
loses its open run to the other only once the lease lapsed."""

from __future__ import annotations

import os
import signal
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from omniagent.engine.store import STORE_ENV
from omniagent.testing import FakeLLMServer, Reply, Scenario
from tests.engine.rpc_harness import RpcProcess, write_providers
from tests.stores import store_rows

# Each test runs on both stores: SQLite, and a fresh PostgreSQL database (conftest.py `each_store`).
pytestmark = pytest.mark.usefixtures("each_store")


MODEL = "fake-anthropic/fake-model"
# Seconds: short so the test does not wait long, long enough that a loaded machine renews in time (every third).
LEASE = "3"
# An answer held at its gate after one delta (Anthropic: start, ping, block start, delta) until the test releases
# it: still running, for as long as it takes, while the other process starts, is killed or is stopped.
SLOW = {"text": "s" * 300, "chunk_size": 2, "hold_after_events": 4}


def _input(text: str) -> dict[str, Any]:
    return {"type": "content", "content": [{"type": "text", "text": text}]}


def _shared(tmp_path: Path, llm: FakeLLMServer) -> tuple[Path, Path]:
    """The data dir both processes open (its providers.json pointing at `llm`) and a workspace for their sessions."""
    data, workspace = tmp_path / "data", tmp_path / "ws"
    write_providers(data, llm)
    workspace.mkdir()
    return data, workspace


async def _start(data: Path) -> RpcProcess:
    """A process whose engine is open (it opens at the first request after `initialize`)."""
    rpc = await RpcProcess.start(data, {"OMNIAGENT_LEASE_SECONDS": LEASE})
    await rpc.call("session.list")
    return rpc


async def _session_running(rpc: RpcProcess, workspace: Path, text: str) -> str:
    """A new session with a run streaming (its first delta seen)."""
    sid = str((await rpc.call("session.create", {"workspace_path": str(workspace), "model": MODEL}))["session"]["id"])
    started = await rpc.call("session.send_input", {"session_id": sid, "input": _input(text)})
    assert started["type"] == "started", started
    await rpc.broadcast("message.part_delta", where=lambda p: p["session_id"] == sid)
    return sid


def _run_done(rpc: RpcProcess, sid: str) -> list[dict[str, Any]]:
    return [
        line["params"] for line in rpc.lines if line.get("method") == "run.done" and line["params"]["session_id"] == sid
    ]


async def _seen_elsewhere(other: RpcProcess, owner: RpcProcess, sid: str) -> bool:
    """The other process never ended the owner's run itself: on SQLite its client saw no run.done of the session;
    on a shared store it sees exactly the owner's, relayed (engine/event_log.py)."""
    if not os.environ.get(STORE_ENV):
        return _run_done(other, sid) == []
    for done in _run_done(owner, sid):
        await other.broadcast("run.done", where=lambda p, r=done["run_id"]: p["session_id"] == sid and p["run_id"] == r)
    return _run_done(other, sid) == _run_done(owner, sid)


async def test_two_processes_share_sessions_and_both_runs_complete(tmp_path: Path) -> None:
    async with FakeLLMServer(Scenario()) as llm:
        llm.enqueue(Reply(match="from one", gate="one", **SLOW), Reply(match="from two", gate="two", **SLOW))
        data, workspace = _shared(tmp_path, llm)
        one = await _start(data)
        sid_one = await _session_running(one, workspace, "from one")
        two = await _start(data)  # starts while one's run is open: it must not end it
        sid_two = await _session_running(two, workspace, "from two")
        llm.release("one")
        llm.release("two")

        done_one = one.lines[await one.broadcast("run.done", within=30, where=lambda p: p["session_id"] == sid_one)]
        done_two = two.lines[await two.broadcast("run.done", within=30, where=lambda p: p["session_id"] == sid_two)]
        assert done_one["params"]["outcome"]["type"] == "turn", done_one
        assert done_two["params"]["outcome"]["type"] == "turn", done_two
        assert await _seen_elsewhere(two, one, sid_one) and await _seen_elsewhere(one, two, sid_two)

        for rpc in (one, two):
            listed = {item["session"]["id"] for item in (await rpc.call("session.list", {}))["items"]}
            assert {sid_one, sid_two} <= listed
        history = await two.call("session.history", {"session_id": sid_one, "before_message_id": 2**53 - 1})
        assert [m["type"] for m in history["messages"]] == ["user", "assistant"]
        assert history["messages"][1]["content"][0]["text"] == SLOW["text"]
        assert await one.close() == 0 and await two.close() == 0
    if not os.environ.get(STORE_ENV):
        with sqlite3.connect(data / "engine.sqlite3") as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert store_rows(data, "SELECT count(*) FROM owners") == [(0,)]  # both released at exit


async def test_input_for_a_session_running_in_the_other_process_is_queued_and_drained_there(tmp_path: Path) -> None:
    async with FakeLLMServer(Scenario()) as llm:
        llm.enqueue(Reply(match="first", gate="first", **SLOW), Reply(match="second", text="answer to second"))
        data, workspace = _shared(tmp_path, llm)
        one = await _start(data)
        two = await _start(data)
        sid = await _session_running(one, workspace, "first")
        queued = await two.call("session.send_input", {"session_id": sid, "input": _input("second")})
        assert queued["type"] == "queued", queued
        llm.release("first")
        # The owner drains the queue into its next turn when its run ends.
        await one.broadcast("run.done", within=30, where=lambda p: p["session_id"] == sid and p["run_id"] == 2)
        assert [d["outcome"]["type"] for d in _run_done(one, sid)] == ["turn", "turn"]
        assert await _seen_elsewhere(two, one, sid)
        assert await one.close() == 0 and await two.close() == 0


async def test_kill_9_leaves_the_other_run_untouched_and_the_survivor_ends_the_dead_ones_run(tmp_path: Path) -> None:
    async with FakeLLMServer(Scenario()) as llm:
        llm.enqueue(Reply(match="victim", gate="victim", **SLOW), Reply(match="survivor", gate="survivor", **SLOW))
        data, workspace = _shared(tmp_path, llm)
        victim = await _start(data)
        survivor = await _start(data)
        sid_victim = await _session_running(victim, workspace, "victim")
        sid_survivor = await _session_running(survivor, workspace, "survivor")
        await victim.kill()

        ended = survivor.lines[
            await survivor.broadcast("run.done", within=15, where=lambda p: p["session_id"] == sid_victim)
        ]
        assert ended["params"]["outcome"] == {
            "type": "failed",
            "code": "interrupted",
            "message": ended["params"]["outcome"]["message"],
        }
        llm.release("survivor")
        done = survivor.lines[
            await survivor.broadcast("run.done", within=30, where=lambda p: p["session_id"] == sid_survivor)
        ]
        assert done["params"]["outcome"]["type"] == "turn", done
        item = await survivor.call("session.get", {"session_id": sid_victim})
        assert item["activity"]["state"] == {"type": "idle"}
        assert await survivor.close() == 0


async def test_a_process_that_stops_renewing_loses_its_run_only_after_the_lease_lapses(tmp_path: Path) -> None:
    """SIGSTOP keeps the pid alive (no shortcut): only the lapsed lease lets the other process end the run."""
    async with FakeLLMServer(Scenario()) as llm:
        llm.enqueue(Reply(match="frozen", gate="frozen", **SLOW))
        data, workspace = _shared(tmp_path, llm)
        frozen = await _start(data)
        other = await _start(data)
        sid = await _session_running(frozen, workspace, "frozen")
        os.kill(frozen.proc.pid, signal.SIGSTOP)
        try:
            lease_end_ms = store_rows(data, "SELECT max(expires_at_ms) FROM owners WHERE pid = ?", (frozen.proc.pid,))[
                0
            ][0]
            ended = other.lines[await other.broadcast("run.done", within=15, where=lambda p: p["session_id"] == sid)]
            assert ended["params"]["outcome"]["code"] == "interrupted"
            assert ended["params"]["timing"]["ended_at_ms"] >= lease_end_ms
        finally:
            await frozen.kill()
        assert await other.close() == 0


async def test_a_paused_process_that_comes_back_writes_nothing_into_the_run_another_ended(tmp_path: Path) -> None:
    """Never a run continued by two: the process paused past its lease comes back (SIGCONT) and its model answer
    arrives, but the other process already ended the run `interrupted`, so the answer is not committed, no second
    run.done is logged, and the process goes on serving the session with a new run."""
    async with FakeLLMServer(Scenario()) as llm:
        llm.enqueue(Reply(match="paused", gate="paused", **SLOW), Reply(match="after", text="after the pause"))
        data, workspace = _shared(tmp_path, llm)
        paused = await _start(data)
        other = await _start(data)
        sid = await _session_running(paused, workspace, "paused")
        os.kill(paused.proc.pid, signal.SIGSTOP)
        try:
            await other.broadcast("run.done", within=15, where=lambda p: p["session_id"] == sid)
        finally:
            os.kill(paused.proc.pid, signal.SIGCONT)
        back = len(paused.lines)
        llm.release("paused")
        await paused.wait_for(
            lambda line: (
                line.get("method") == "session.activity_changed"
                and line["params"]["session_id"] == sid
                and line["params"]["activity"]["state"] == {"type": "idle"}
            ),
            after=back,
            within=30,
        )
        history = await paused.call("session.history", {"session_id": sid, "before_message_id": 2**53 - 1})
        assert [m["type"] for m in history["messages"]] == ["user"]
        names = [
            row[0] for row in store_rows(data, "SELECT name FROM events WHERE session_id = ? ORDER BY seq", (sid,))
        ]
        assert names.count("run.done") == 1
        started = await paused.call("session.send_input", {"session_id": sid, "input": _input("after")})
        assert started == {"type": "started", "input_id": started["input_id"], "run_id": 2}
        done = paused.lines[await paused.broadcast("run.done", within=30, where=lambda p: p["run_id"] == 2)]
        assert done["params"]["outcome"]["type"] == "turn"
        assert await paused.close() == 0 and await other.close() == 0
    assert "while this one was away" in await paused.stderr()
