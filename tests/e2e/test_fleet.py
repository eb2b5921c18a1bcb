"""A fleet on one PostgreSQL database (docs/fleet.md): several real `omniagent rpc` processes with their own data
dirs (as on several machines) share one store. Every input runs exactly once whichever process took it; a process
killed with -9 mid-run loses nothing and duplicates nothing, its run is ended by a survivor; a client of one
process sees a run executing in another, live and in order."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from omniagent.engine.store import STORE_ENV
from omniagent.testing import FakeLLMServer, Reply, Scenario
from tests.engine.rpc_harness import RpcProcess, write_providers
from tests.postgres_server import PostgresServer
from tests.stores import store_rows

MODEL = "fake-anthropic/fake-model"
LEASE = "3"  # seconds: survivors look for dead owners every second
HELD = {"text": "h" * 300, "chunk_size": 2, "hold_after_events": 4}


def _input(text: str) -> dict[str, Any]:
    return {"type": "content", "content": [{"type": "text", "text": text}]}


@pytest.fixture
def fleet_store(postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch) -> str:
    """A new database every process the test starts shares (OMNIAGENT_STORE)."""
    url = postgres_server.database()
    monkeypatch.setenv(STORE_ENV, url)
    return url


async def _member(tmp_path: Path, name: str, llm: FakeLLMServer) -> RpcProcess:
    """One process of the fleet with a data dir of its own (its keys, as on its own machine), engine open."""
    data = tmp_path / name
    write_providers(data, llm)
    rpc = await RpcProcess.start(data, {"OMNIAGENT_LEASE_SECONDS": LEASE})
    await rpc.call("session.list")
    return rpc


async def _history(rpc: RpcProcess, sid: str) -> list[tuple[str, str]]:
    history = await rpc.call("session.history", {"session_id": sid, "before_message_id": 2**53 - 1})
    return [(m["type"], m["content"][0]["text"] if m["content"] else "") for m in history["messages"]]


def _outcomes(tmp_path: Path) -> dict[str, int]:
    """How many runs of the store ended each way (a turn, or a failure's code)."""
    outcomes = [json.loads(row[0]) for row in store_rows(tmp_path, "SELECT outcome FROM runs")]
    return dict(Counter(o.get("code", o["type"]) for o in outcomes))


async def _settled(rpc: RpcProcess, sids: list[str], inputs: int) -> None:
    """Read the client's lines until every session committed `inputs` user messages and every run it saw start
    ended (a queued input is taken by a later run, which commits it as a user message)."""
    users = dict.fromkeys(sids, 0)
    open_runs: set[tuple[str, int]] = set()
    index = 0
    while any(count < inputs for count in users.values()) or open_runs:
        index = await rpc.wait_for(lambda line: "method" in line, after=index, within=60)
        method, params = rpc.lines[index]["method"], rpc.lines[index]["params"]
        index += 1
        if method == "message.committed" and params["message"]["type"] == "user":
            users[params["session_id"]] += 1
        elif method == "run.started":
            open_runs.add((params["session_id"], params["run_id"]))
        elif method == "run.done":
            open_runs.discard((params["session_id"], params["run_id"]))


@pytest.mark.usefixtures("fleet_store")
async def test_fifty_sessions_times_four_inputs_through_two_processes_each_run_exactly_once(tmp_path: Path) -> None:
    sessions, inputs = 50, 4
    async with FakeLLMServer(Scenario()) as llm:
        llm.enqueue(*(Reply(text="ok") for _ in range(sessions * inputs)))
        one, two = await _member(tmp_path, "one", llm), await _member(tmp_path, "two", llm)
        workspace = tmp_path / "ws"
        workspace.mkdir()
        sids = []
        for i in range(sessions):
            creator = (one, two)[i % 2]
            created = await creator.call("session.create", {"workspace_path": str(workspace), "model": MODEL})
            sids.append(created["session"]["id"])

        async def send(rpc: RpcProcess, sid: str, text: str) -> str:
            # 200 requests at once queue behind one another: a longer bound than one call's.
            line = await rpc.response(rpc.send("session.send_input", {"session_id": sid, "input": _input(text)}), 60)
            return str(line["result"]["type"])

        sends = [
            send((one, two)[(i + k) % 2], sid, f"{sid} input {k}")
            for k, (i, sid) in itertools.product(range(inputs), enumerate(sids))
        ]
        answers = await asyncio.gather(*sends)
        assert set(answers) <= {"started", "queued"}

        # A client of either process sees every input taken and every run end: its own process's and, relayed,
        # the other's.
        for rpc in (one, two):
            await _settled(rpc, sids, inputs)

        runs = 0
        for sid in sids:
            history = await one.call("session.history", {"session_id": sid, "before_message_id": 2**53 - 1})
            users = sorted(part["text"] for m in history["messages"] if m["type"] == "user" for part in m["content"])
            assert users == [f"{sid} input {k}" for k in range(inputs)]
            runs += [m["type"] for m in history["messages"]].count("assistant")
        assert len(llm.requests) == runs  # one model call per run: no run twice
        assert _outcomes(tmp_path) == {"turn": runs}
        assert store_rows(tmp_path, "SELECT count(*) FROM pending_inputs") == [(0,)]
        assert await one.close() == 0 and await two.close() == 0


@pytest.mark.usefixtures("fleet_store")
async def test_kill_9_of_a_member_mid_run_twenty_times_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    """Each round: a new member starts a run (held mid-stream) with a second input queued behind it and is killed
    with -9; the survivor ends the run `interrupted`, live for its own client; the transcript holds the first input
    once and the queued input is still queued, once."""
    rounds = 20
    async with FakeLLMServer(Scenario()) as llm:
        survivor = await _member(tmp_path, "survivor", llm)
        workspace = tmp_path / "ws"
        workspace.mkdir()
        for n in range(rounds):
            llm.enqueue(Reply(match=f"round {n} first", gate=f"g{n}", **HELD))
            victim = await _member(tmp_path, f"victim{n}", llm)
            created = await victim.call("session.create", {"workspace_path": str(workspace), "model": MODEL})
            sid = created["session"]["id"]
            started = await victim.call("session.send_input", {"session_id": sid, "input": _input(f"round {n} first")})
            assert started["type"] == "started"
            queued = await victim.call("session.send_input", {"session_id": sid, "input": _input(f"round {n} next")})
            assert queued["type"] == "queued"
            assert await llm.wait_held_async(f"g{n}")
            # The survivor's client sees the victim's run start, live.
            await survivor.broadcast("run.started", within=10, where=lambda p, sid=sid: p["session_id"] == sid)
            await victim.kill()

            done = survivor.lines[
                await survivor.broadcast("run.done", within=15, where=lambda p, sid=sid: p["session_id"] == sid)
            ]
            assert done["params"]["outcome"]["code"] == "interrupted"
            assert await _history(survivor, sid) == [("user", f"round {n} first")]
            queue = await survivor.call("session.queue", {"session_id": sid})
            assert [item["content"][0]["text"] for item in queue["items"]] == [f"round {n} next"]
            llm.release(f"g{n}")
        assert _outcomes(tmp_path) == {"interrupted": rounds}
        assert store_rows(tmp_path, "SELECT count(*) FROM sessions WHERE open_run_id IS NOT NULL") == [(0,)]
        assert await survivor.close() == 0


@pytest.mark.usefixtures("fleet_store")
async def test_a_client_of_one_process_follows_a_run_in_another_live_and_in_order(tmp_path: Path) -> None:
    async with FakeLLMServer(Scenario()) as llm:
        llm.enqueue(Reply(match="watched", gate="watched", **HELD))
        runner, watcher = await _member(tmp_path, "runner", llm), await _member(tmp_path, "watcher", llm)
        workspace = tmp_path / "ws"
        workspace.mkdir()
        sid = (await runner.call("session.create", {"workspace_path": str(workspace), "model": MODEL}))["session"]["id"]
        await runner.call("session.send_input", {"session_id": sid, "input": _input("watched")})
        assert await llm.wait_held_async("watched")
        # While the run is still held on the runner, the watcher's client already has its start.
        started = watcher.lines[
            await watcher.broadcast("run.started", within=10, where=lambda p: p["session_id"] == sid)
        ]
        llm.release("watched")
        await runner.broadcast("run.done", within=30, where=lambda p: p["session_id"] == sid)
        await watcher.broadcast("run.done", within=10, where=lambda p: p["session_id"] == sid)

        def durable(rpc: RpcProcess) -> list[tuple[str, int]]:
            return [
                (line["method"], line["params"]["seq"])
                for line in rpc.lines
                if line.get("method") in ("run.started", "message.committed", "run.done")
                and line["params"].get("session_id") == sid
            ]

        assert durable(watcher) == durable(runner)
        names = [name for name, _ in durable(watcher)]
        assert sorted(names) == ["message.committed", "message.committed", "run.done", "run.started"]
        assert names[-1] == "run.done"
        assert started["params"]["run_id"] == 1
        seqs = [seq for _, seq in durable(watcher)]
        assert seqs == sorted(seqs)
        assert await runner.close() == 0 and await watcher.close() == 0


@pytest.mark.usefixtures("fleet_store")
async def test_a_client_reattaching_through_another_process_replays_exactly_what_it_missed(tmp_path: Path) -> None:
    """A client follows a session from process A, leaves after the first turn (its last `seq` kept), the runner
    runs a second turn, and the client comes back through a new process C: `session.events` after that `seq` gives
    exactly the events the runner's own client saw meanwhile, and C then follows the third turn live."""
    async with FakeLLMServer(Scenario(fallback=Reply(text="ok"))) as llm:
        runner, first = await _member(tmp_path, "runner", llm), await _member(tmp_path, "a", llm)
        workspace = tmp_path / "ws"
        workspace.mkdir()
        sid = (await runner.call("session.create", {"workspace_path": str(workspace), "model": MODEL}))["session"]["id"]

        async def turn(run_id: int) -> None:
            await runner.call("session.send_input", {"session_id": sid, "input": _input(f"turn {run_id}")})
            await runner.broadcast(
                "run.done", within=30, where=lambda p: p["session_id"] == sid and p["run_id"] == run_id
            )

        await turn(1)
        done = first.lines[await first.broadcast("run.done", within=10, where=lambda p: p["session_id"] == sid)]
        cursor = done["params"]["seq"]
        assert await first.close() == 0
        await turn(2)

        again = await _member(tmp_path, "c", llm)
        missed = await again.call("session.events", {"session_id": sid, "after_seq": cursor})
        assert not missed["has_more"]
        assert missed["events"] == _logged(runner, sid, after=cursor)
        assert [e["method"] for e in missed["events"]][-1] == "run.done"
        await turn(3)
        await again.broadcast("run.done", within=10, where=lambda p: p["session_id"] == sid and p["run_id"] == 3)
        last = missed["events"][-1]["params"]["seq"]
        assert _logged(again, sid, after=last) == _logged(runner, sid, after=last)
        assert await runner.close() == 0 and await again.close() == 0


def _logged(rpc: RpcProcess, sid: str, *, after: int) -> list[dict[str, Any]]:
    """The durable broadcasts (those with a `seq`) of a session a client read, after a `seq`, as the log has them."""
    return [
        {"method": line["method"], "params": line["params"]}
        for line in rpc.lines
        if line.get("params", {}).get("session_id") == sid and line["params"].get("seq", 0) > after
    ]
