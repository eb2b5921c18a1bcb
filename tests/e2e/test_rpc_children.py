"""Child sessions over a real `omniagent rpc` against the fake LLM (docs/engine.md "Child sessions"): a parent's
model spawns children with `spawn_agent`, their reports come back as protected inputs, the tree's concurrency
limit queues a third child, removal cascades, and a kill -9 during a child run ends it on restart with its report
queued into the parent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply
from tests.engine.rpc_harness import RpcProcess, write_providers

# Each test runs on both stores: SQLite, and a fresh PostgreSQL database (conftest.py `each_store`).
pytestmark = pytest.mark.usefixtures("each_store")


MODEL = "fake-anthropic/fake-model"
NEWEST = 2**53 - 1
# Every request of the parent after a report carries this text; children never see it.
REPORT = "Report from the child agent"


def _text(text: str) -> dict[str, Any]:
    return {"type": "content", "content": [{"type": "text", "text": text}]}


def _spawn(name: str, task: str, **extra: object) -> FakeToolCall:
    return FakeToolCall("spawn_agent", {"name": name, "task": task, **extra}, f"call_{name}")


async def _start(tmp_path: Path, llm: FakeLLMServer, env: dict[str, str] | None = None) -> tuple[RpcProcess, str]:
    """An engine on a fresh data dir and a root session in `tmp_path/ws`."""
    write_providers(tmp_path / "data", llm)
    (tmp_path / "ws").mkdir(exist_ok=True)
    rpc = await RpcProcess.start(tmp_path / "data", env)
    created = await rpc.call("session.create", {"workspace_path": str(tmp_path / "ws"), "model": MODEL})
    return rpc, str(created["session"]["id"])


async def _history(rpc: RpcProcess, sid: str) -> list[dict[str, Any]]:
    return list((await rpc.call("session.history", {"session_id": sid, "before_message_id": NEWEST}))["messages"])


async def _children(rpc: RpcProcess, parent: str) -> dict[str, dict[str, Any]]:
    listing = await rpc.call("session.list", {"population": {"type": "children", "parent_id": parent}})
    return {item["session"]["name"]: item["session"] for item in listing["items"]}


def _reports(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m["type"] == "user" and m.get("source", {}).get("type") == "child_report"]


async def _reported(rpc: RpcProcess, parent: str, count: int) -> int:
    """The index of the parent's `run.done` after its `count`-th report was committed (the turn that read it)."""
    index = 0
    for _ in range(count):
        index = await rpc.broadcast(
            "message.committed",
            after=index + 1 if index else 0,
            where=lambda p: p["session_id"] == parent and p["message"].get("source", {}).get("type") == "child_report",
        )
    return await rpc.broadcast("run.done", after=index, where=lambda p: p["session_id"] == parent)


async def test_a_parent_spawns_two_children_in_parallel_and_reads_both_reports(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """The spawn round ends the parent's turn (finish `tool_calls`); each child runs on its own on the parent's model;
    at each child's end a `child_report` input is queued into the parent, which wakes up on it."""
    llm.enqueue(
        Reply(text="Noted.", match=REPORT, sticky=True),
        Reply(tool_calls=(_spawn("alpha", "TASK-ALPHA"), _spawn("beta", "TASK-BETA")), match="PARENT-GO"),
        Reply(text="ALPHA-DONE", match="TASK-ALPHA"),
        Reply(text="BETA-DONE", match="TASK-BETA"),
    )
    rpc, parent = await _start(tmp_path, llm)
    await rpc.call("session.send_input", {"session_id": parent, "input": _text("PARENT-GO")})
    first = rpc.lines[await rpc.broadcast("run.done", where=lambda p: p["session_id"] == parent)]["params"]
    assert first["outcome"] == {"type": "turn", "finish": "tool_calls", "rounds": 1}

    await _reported(rpc, parent, 2)
    kids = await _children(rpc, parent)
    assert sorted(kids) == ["alpha", "beta"]
    spawn_message = (await _history(rpc, parent))[1]
    for part_id, name in enumerate(["alpha", "beta"]):
        child = kids[name]
        assert child["origin"] == {
            "type": "child",
            "parent_id": parent,
            "parent_message_id": spawn_message["id"],
            "parent_part_id": part_id,
        }
        assert (child["agent"], child["model"]) == (name, MODEL)
        receipt = json.loads(spawn_message["content"][part_id]["state"]["output"])
        assert receipt["session_id"] == child["id"] and receipt["input"]["type"] == "started"
        assert receipt["input"]["capacity"]["limit"] == 8
        task, answer = (await _history(rpc, child["id"]))[:2]
        assert task["source"] == {
            "type": "parent_instruction",
            "session_id": parent,
            "message_id": spawn_message["id"],
            "part_id": part_id,
        }
        assert answer["agent"] == name

    reports = _reports(await _history(rpc, parent))
    by_name = {r["source"]["path"]: r for r in reports}
    assert sorted(by_name) == ["alpha", "beta"]
    for name, text in (("alpha", "ALPHA-DONE"), ("beta", "BETA-DONE")):
        source = by_name[name]["source"]
        assert source["session_id"] == kids[name]["id"] and source["run_id"] == 1
        assert source["outcome"] == {"type": "turn", "finish": "stop", "rounds": 1}
        assert (source["partial"], source["truncated"]) == (False, False)
        assert text in by_name[name]["content"][0]["text"]
    # The parent's model read both reports; the children's requests never offered the agent tools (depth 1).
    parent_bodies = [json.dumps(r.body) for r in llm.requests if REPORT in json.dumps(r.body)]
    assert any("ALPHA-DONE" in b for b in parent_bodies) and any("BETA-DONE" in b for b in parent_bodies)
    child_bodies = [
        r.body for r in llm.requests if "TASK-ALPHA" in json.dumps(r.body) and REPORT not in json.dumps(r.body)
    ]
    tool_names = {tool["name"] for body in child_bodies if isinstance(body, dict) for tool in body.get("tools", [])}
    assert "read" in tool_names and "spawn_agent" not in tool_names

    top = await rpc.call("session.list")
    everything = await rpc.call("session.list", {"population": {"type": "all"}})
    assert [i["session"]["id"] for i in top["items"]] == [parent] and top["total"] == 1
    assert everything["total"] == 3
    assert await rpc.close() == 0


async def test_beyond_the_concurrency_limit_a_child_waits_queued_until_a_sibling_ends(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """With room for two active children per tree, the third spawn's input is queued `concurrency_limit` with the
    tree's capacity; input sent to it meanwhile waits the same way; it starts when a sibling's run ends."""
    llm.enqueue(
        Reply(text="Noted.", match=REPORT, sticky=True),
        Reply(
            tool_calls=(_spawn("alpha", "TASK-ALPHA"), _spawn("beta", "TASK-BETA"), _spawn("gamma", "TASK-GAMMA")),
            match="PARENT-GO",
        ),
        Reply(text="ALPHA-DONE", match="TASK-ALPHA", gate="alpha"),
        Reply(text="BETA-DONE", match="TASK-BETA", gate="beta"),
        Reply(text="GAMMA-DONE", match="TASK-GAMMA"),
    )
    rpc, parent = await _start(tmp_path, llm, {"OMNIAGENT_CHILD_MAX_CONCURRENT": "2"})
    await rpc.call("session.send_input", {"session_id": parent, "input": _text("PARENT-GO")})
    await rpc.broadcast("run.done", where=lambda p: p["session_id"] == parent)
    assert await llm.wait_held_async("alpha") and await llm.wait_held_async("beta")
    receipts = [json.loads(part["state"]["output"]) for part in (await _history(rpc, parent))[1]["content"]]
    capacity = {"active": 2, "limit": 2}
    assert [r["input"]["type"] for r in receipts] == ["started", "started", "queued"]
    assert receipts[2]["input"]["reason"] == "concurrency_limit" and receipts[2]["input"]["capacity"] == capacity
    gamma = (await _children(rpc, parent))["gamma"]["id"]
    more = await rpc.call("session.send_input", {"session_id": gamma, "input": _text("GAMMA-EXTRA")})
    assert more["type"] == "queued" and more["reason"] == "concurrency_limit" and more["capacity"] == capacity
    item = await rpc.call("session.get", {"session_id": gamma})
    assert item["activity"]["state"] == {"type": "idle"} and item["activity"]["queued"] == 2

    start = len(rpc.lines)
    llm.release("alpha")
    alpha_done = await rpc.broadcast("run.done", after=start, where=lambda p: p["session_id"] != parent)
    gamma_started = await rpc.broadcast("run.started", after=start, where=lambda p: p["session_id"] == gamma)
    assert alpha_done < gamma_started
    llm.release("beta")
    await _reported(rpc, parent, 3)
    gamma_task = (await _history(rpc, gamma))[:2]
    assert [m["content"][0]["text"] for m in gamma_task] == ["TASK-GAMMA", "GAMMA-EXTRA"]
    assert gamma_task[0]["source"]["type"] == "parent_instruction" and "source" not in gamma_task[1]
    assert sorted(r["source"]["path"] for r in _reports(await _history(rpc, parent))) == ["alpha", "beta", "gamma"]
    assert await rpc.close() == 0


async def test_removing_a_parent_needs_cascade_children_and_then_removes_the_whole_tree(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    llm.enqueue(
        Reply(text="Noted.", match=REPORT, sticky=True),
        Reply(tool_calls=(_spawn("alpha", "TASK-ALPHA"),), match="PARENT-GO"),
        Reply(text="ALPHA-DONE", match="TASK-ALPHA"),
    )
    rpc, parent = await _start(tmp_path, llm)
    await rpc.call("session.send_input", {"session_id": parent, "input": _text("PARENT-GO")})
    await _reported(rpc, parent, 1)
    alpha = (await _children(rpc, parent))["alpha"]["id"]
    assert await rpc.call_error("session.remove", {"session_id": parent}) == ErrorCode.SESSION_HAS_CHILDREN
    assert (await rpc.call("session.get", {"session_id": alpha}))["session"]["name"] == "alpha"
    start = len(rpc.lines)
    assert await rpc.call("session.remove", {"session_id": parent, "cascade_children": True}) == {}
    removed = [line["params"]["session_id"] for line in rpc.lines[start:] if line.get("method") == "session.removed"]
    assert removed == [alpha, parent]
    for sid in (alpha, parent):
        assert await rpc.call_error("session.get", {"session_id": sid}) == ErrorCode.UNKNOWN_SESSION
    assert (await rpc.call("session.list", {"population": {"type": "all"}}))["total"] == 0
    assert await rpc.close() == 0


async def test_a_kill_9_during_a_child_run_ends_it_on_restart_and_queues_its_report_into_the_parent(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """The next start ends the child's open run `failed/interrupted` and, in the same transaction, queues its
    (partial) report into the parent; nothing starts by itself: the report waits in the parent's queue, cannot
    be canceled, and goes with the next input to the parent."""
    llm.enqueue(
        Reply(text="Carrying on.", match="AFTER-RESTART"),
        Reply(tool_calls=(_spawn("alpha", "TASK-ALPHA"),), match="PARENT-GO"),
        Reply(
            text="half of the answ" + "e" * 2000, chunk_size=4, match="TASK-ALPHA", gate="never", hold_after_events=4
        ),
    )
    rpc, parent = await _start(tmp_path, llm)
    await rpc.call("session.send_input", {"session_id": parent, "input": _text("PARENT-GO")})
    await rpc.broadcast("run.done", where=lambda p: p["session_id"] == parent)
    assert await llm.wait_held_async("never")
    alpha = (await _children(rpc, parent))["alpha"]["id"]
    await rpc.kill()

    again = await RpcProcess.start(tmp_path / "data")
    again.send("session.list")  # the engine opens at the first request after `initialize`
    done = again.lines[await again.broadcast("run.done")]["params"]
    assert (done["session_id"], done["run_id"]) == (alpha, 1)
    assert done["outcome"]["type"] == "failed" and done["outcome"]["code"] == "interrupted"
    queued = again.lines[await again.broadcast("input.queued")]["params"]
    assert queued["session_id"] == parent
    source = queued["input"]["source"]
    assert source == {
        "type": "child_report",
        "session_id": alpha,
        "run_id": 1,
        "path": "alpha",
        "outcome": done["outcome"],
        "partial": True,
        "truncated": False,
    }
    assert "the child wrote no text" in queued["input"]["content"][0]["text"]  # its draft died with the process
    assert [i["source"]["type"] for i in (await again.call("session.queue", {"session_id": parent}))["items"]] == [
        "child_report"
    ]
    for sid, state in ((parent, "idle"), (alpha, "idle")):
        assert (await again.call("session.get", {"session_id": sid}))["activity"]["state"]["type"] == state
    report_id = queued["input"]["input_id"]
    refused = await again.call_error("session.cancel_input", {"session_id": parent, "input_id": report_id})
    assert refused == ErrorCode.BAD_REQUEST

    started = await again.call("session.send_input", {"session_id": parent, "input": _text("AFTER-RESTART")})
    assert started["type"] == "started"
    await again.broadcast("run.done", where=lambda p: p["session_id"] == parent and p["run_id"] == started["run_id"])
    users = [m for m in await _history(again, parent) if m["type"] == "user"]
    assert [m.get("source", {}).get("type") for m in users] == [None, "child_report", None]
    assert await again.close() == 0


async def test_agents_json_is_read_written_and_resolved_and_a_spawn_runs_on_its_slot(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """agents.get (absent file = `{}`), agents.update (compare and swap, validated), agents.resolve, a strict
    parse of the file, `spawn_agent` with `model: small`, and agents.set_model on an idle child only."""
    import hashlib

    llm.enqueue(
        Reply(text="Noted.", match=REPORT, sticky=True),
        Reply(tool_calls=(_spawn("alpha", "TASK-ALPHA", model="small"),), match="PARENT-GO"),
        Reply(text="ALPHA-DONE", match="TASK-ALPHA"),
    )
    rpc, parent = await _start(tmp_path, llm)
    path = tmp_path / "data" / "agents.json"
    empty = await rpc.call("agents.get")
    assert empty == {"path": str(path), "revision": hashlib.sha256(b"{}").hexdigest(), "config": {"models": {}}}
    assert await rpc.call_error("agents.resolve", {"model": "small"}) == ErrorCode.SETUP_REQUIRED

    small = {"model": "fake-chat/fake-model", "reasoning": "low"}
    refusals = [
        ({"revision": "0" * 64, "config": {"models": {"small": small}}}, ErrorCode.CONFIG_CONFLICT),
        (
            {"revision": empty["revision"], "config": {"models": {"small": {"model": "no/such"}}}},
            ErrorCode.UNSUPPORTED_MODEL,
        ),
        (
            {"revision": empty["revision"], "config": {"models": {"small": {**small, "reasoning": "max"}}}},
            ErrorCode.UNSUPPORTED_REASONING,
        ),
    ]
    for params, code in refusals:
        assert await rpc.call_error("agents.update", params) == code
    assert not path.exists()
    updated = await rpc.call("agents.update", {"revision": empty["revision"], "config": {"models": {"small": small}}})
    assert updated["revision"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert updated["config"] == {"models": {"small": small}} and json.loads(path.read_text()) == updated["config"]
    assert await rpc.call("agents.get") == updated
    stale = {"revision": empty["revision"], "config": {"models": {}}}
    assert await rpc.call_error("agents.update", stale) == ErrorCode.CONFIG_CONFLICT
    resolved = await rpc.call("agents.resolve", {"model": "small"})
    assert resolved == {
        "slot": "small",
        "model": "fake-chat/fake-model",
        "reasoning": "low",
        "revision": updated["revision"],
    }

    await rpc.call("session.send_input", {"session_id": parent, "input": _text("PARENT-GO")})
    await _reported(rpc, parent, 1)
    alpha = (await _children(rpc, parent))["alpha"]
    assert (alpha["model"], alpha["reasoning"]) == ("fake-chat/fake-model", "low")

    assert await rpc.call_error("agents.set_model", {"session_id": parent, "model": small}) == ErrorCode.BAD_REQUEST
    start = len(rpc.lines)
    config = await rpc.call("agents.set_model", {"session_id": alpha["id"], "model": {"model": MODEL}})
    assert config["config"] == {"config_rev": 1, "model": MODEL, "reasoning": "off"}
    names = rpc.names(start)
    assert names.index("config.changed") < names.index("session.summary_changed")
    changed = rpc.lines[start + names.index("config.changed")]["params"]
    assert changed["session_id"] == alpha["id"] and changed["config"] == config["config"]

    path.write_text('{"models": {}, "extra": 1}')
    assert await rpc.call_error("agents.get") == ErrorCode.INTERNAL
    path.write_text('{"models": {"small": {"model": "fake-chat/fake-model", "effort": "low"}}}')
    assert await rpc.call_error("agents.resolve", {"model": "small"}) == ErrorCode.INTERNAL
    assert await rpc.close() == 0


async def test_a_parent_instruction_waits_behind_the_child_run_and_its_cancellation_tells_the_parent(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """`send_agent_input` queues a `parent_instruction` into the busy child; it is the one engine-sent input a
    client may cancel, and canceling it queues a `child_input_canceled` notice into the parent, which wakes up."""
    llm.enqueue(
        Reply(text="Noted.", match="was canceled before it ran", sticky=True),
        Reply(text="Noted.", match=REPORT, sticky=True),
        Reply(tool_calls=(_spawn("alpha", "TASK-ALPHA"),), match="PARENT-GO"),
        Reply(text="ALPHA-DONE", match="TASK-ALPHA", gate="alpha"),
        Reply(
            tool_calls=(FakeToolCall("send_agent_input", {"name": "alpha", "message": "FOLLOW-UP"}, "call_f"),),
            match="PARENT-MORE",
        ),
        Reply(text="Sent.", match="PARENT-MORE"),
    )
    rpc, parent = await _start(tmp_path, llm)
    await rpc.call("session.send_input", {"session_id": parent, "input": _text("PARENT-GO")})
    assert await llm.wait_held_async("alpha")
    alpha = (await _children(rpc, parent))["alpha"]["id"]
    busy = await rpc.call_error("agents.set_model", {"session_id": alpha, "model": {"model": MODEL}})
    assert busy == ErrorCode.SESSION_BUSY
    await rpc.broadcast("run.done", where=lambda p: p["session_id"] == parent)
    await rpc.call("session.send_input", {"session_id": parent, "input": _text("PARENT-MORE")})
    second = rpc.lines[await rpc.broadcast("run.done", where=lambda p: p["session_id"] == parent and p["run_id"] == 2)]
    assert second["params"]["outcome"]["type"] == "turn"
    receipt = json.loads((await _history(rpc, parent))[-2]["content"][0]["state"]["output"])
    assert receipt["input"]["type"] == "queued" and receipt["input"]["reason"] == "session_busy"
    queued = (await rpc.call("session.queue", {"session_id": alpha}))["items"]
    assert [i["content"][0]["text"] for i in queued] == ["FOLLOW-UP"]
    assert queued[0]["source"]["type"] == "parent_instruction" and queued[0]["source"]["session_id"] == parent

    start = len(rpc.lines)
    canceled = {"session_id": alpha, "input_id": queued[0]["input_id"]}
    assert await rpc.call("session.cancel_input", canceled) == {"canceled_input": queued[0]["input_id"]}
    notice = rpc.lines[await rpc.broadcast("input.queued", after=start)]["params"]
    assert notice["session_id"] == parent
    assert notice["input"]["source"] == {
        "type": "child_input_canceled",
        "session_id": alpha,
        "path": "alpha",
        "input_ids": [queued[0]["input_id"]],
    }
    assert "FOLLOW-UP" in notice["input"]["content"][0]["text"]
    woke = await rpc.broadcast("run.done", after=start, where=lambda p: p["session_id"] == parent)
    assert rpc.lines[woke]["params"]["run_id"] == 3
    llm.release("alpha")
    await _reported(rpc, parent, 1)
    assert await rpc.close() == 0


async def test_max_rounds_caps_a_child_run_and_its_report_is_partial(tmp_path: Path, llm: FakeLLMServer) -> None:
    llm.enqueue(
        Reply(text="Noted.", match=REPORT, sticky=True),
        Reply(tool_calls=(_spawn("alpha", "TASK-ALPHA"),), match="PARENT-GO"),
        Reply(
            text="PARTIAL-TEXT, reading on",
            tool_calls=(FakeToolCall("read", {"path": "missing.txt"}, "call_r"),),
            match="TASK-ALPHA",
        ),
    )
    rpc, parent = await _start(tmp_path, llm, {"OMNIAGENT_CHILD_MAX_ROUNDS": "1"})
    await rpc.call("session.send_input", {"session_id": parent, "input": _text("PARENT-GO")})
    await _reported(rpc, parent, 1)
    alpha = (await _children(rpc, parent))["alpha"]
    assert alpha["max_rounds"] == 1
    (report,) = _reports(await _history(rpc, parent))
    assert report["source"]["outcome"]["type"] == "failed" and report["source"]["outcome"]["code"] == "max_rounds"
    assert report["source"]["partial"] is True
    assert "PARTIAL-TEXT" in report["content"][0]["text"]
    assert await rpc.close() == 0


async def test_session_create_with_child_refuses_what_the_spec_refuses(tmp_path: Path, llm: FakeLLMServer) -> None:
    """A child needs a live parent tool site, an initial input, a valid unique name, and its parent's workspace."""
    rpc, parent = await _start(tmp_path, llm)
    ws = str(tmp_path / "ws")
    site = {"parent_id": parent, "parent_message_id": 1, "parent_part_id": 0, "name": "alpha"}
    task = _text("do it")
    cases = [
        ({"workspace_path": ws, "child": site, "initial_input": task}, ErrorCode.BAD_REQUEST),  # no live site
        ({"workspace_path": ws, "child": site}, ErrorCode.BAD_REQUEST),  # no task
        ({"workspace_path": ws, "child": {**site, "name": "root"}, "initial_input": task}, ErrorCode.BAD_REQUEST),
        ({"workspace_path": ws, "child": {**site, "name": "Bad Name"}, "initial_input": task}, ErrorCode.BAD_REQUEST),
        (
            {"workspace_path": ws, "child": {**site, "parent_id": "f" * 32}, "initial_input": task},
            ErrorCode.UNKNOWN_SESSION,
        ),
        ({"workspace_path": str(tmp_path), "child": site, "initial_input": task}, ErrorCode.BAD_REQUEST),
    ]
    for params, code in cases:
        assert await rpc.call_error("session.create", params) == code, params
    assert (await rpc.call("session.list", {"population": {"type": "all"}}))["total"] == 1
    assert await rpc.close() == 0


async def test_below_the_depth_limit_a_child_spawns_its_own_child_and_reports_once_that_one_did(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """With a depth limit of 2, a child gets the agent tools (a grandchild does not); the child's spawn turn sends
    no report, the grandchild's report (path `alpha/sub`) wakes the child, and the child's answer then reports to
    the root."""
    llm.enqueue(
        Reply(text="Root noted.", match="agent `alpha` (run", sticky=True),
        Reply(text="ALPHA-DONE", match="agent `alpha/sub` (run"),
        Reply(tool_calls=(_spawn("alpha", "TASK-ALPHA"),), match="ROOT-GO"),
        Reply(tool_calls=(_spawn("sub", "TASK-SUB"),), match="TASK-ALPHA"),
        Reply(text="SUB-DONE", match="TASK-SUB"),
    )
    rpc, root = await _start(tmp_path, llm, {"OMNIAGENT_CHILD_MAX_DEPTH": "2"})
    await rpc.call("session.send_input", {"session_id": root, "input": _text("ROOT-GO")})
    await _reported(rpc, root, 1)
    alpha = (await _children(rpc, root))["alpha"]["id"]
    sub = (await _children(rpc, alpha))["sub"]
    assert sub["origin"]["parent_id"] == alpha
    (from_sub,) = _reports(await _history(rpc, alpha))
    assert from_sub["source"]["path"] == "alpha/sub" and "SUB-DONE" in from_sub["content"][0]["text"]
    (from_alpha,) = _reports(await _history(rpc, root))
    assert from_alpha["source"]["path"] == "alpha" and "ALPHA-DONE" in from_alpha["content"][0]["text"]
    tools = {
        json.dumps(r.body).count('"name": "spawn_agent"') > 0
        for r in llm.requests
        if "TASK-SUB" in json.dumps(r.body) and "TASK-ALPHA" not in json.dumps(r.body)
    }
    assert tools == {False}  # the grandchild, at the limit, was never offered the agent tools
    assert (await rpc.call("session.list", {"population": {"type": "all"}}))["total"] == 3
    assert await rpc.close() == 0


async def test_at_the_depth_limit_a_child_calling_spawn_agent_anyway_gets_an_error_result(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    llm.enqueue(
        Reply(text="Noted.", match=REPORT, sticky=True),
        Reply(tool_calls=(_spawn("alpha", "TASK-ALPHA"),), match="PARENT-GO"),
        Reply(tool_calls=(_spawn("sub", "TASK-SUB"),), match="TASK-ALPHA"),
        Reply(text="I could not delegate.", match="TASK-SUB"),
    )
    rpc, parent = await _start(tmp_path, llm)
    await rpc.call("session.send_input", {"session_id": parent, "input": _text("PARENT-GO")})
    await _reported(rpc, parent, 1)
    alpha = (await _children(rpc, parent))["alpha"]["id"]
    spawned = (await _history(rpc, alpha))[1]["content"][0]["state"]
    assert spawned["type"] == "error" and "no tool named 'spawn_agent'" in spawned["error"]
    assert await _children(rpc, alpha) == {}
    assert await rpc.close() == 0


async def test_rewinding_a_parent_before_a_spawn_removes_that_child_and_its_report_never_arrives(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """docs/engine.md "Rewind": a rewind removes what came after its cut, the children spawned there included. The
    child `alpha` (spawned in message 6, its answer held by a gate) has its run canceled and its session removed
    (`session.removed`); its report, queued into the parent as its run ended, is dropped (`input.canceled`), so no
    turn of the parent reads it, even once the gate opens; its name is free for a new spawn. `keeper`, spawned
    before the cut, stays."""
    llm.enqueue(
        Reply(text="Noted alpha.", match="agent `alpha` (run"),
        Reply(tool_calls=(_spawn("alpha", "TASK-AGAIN"),), match="AFTER-REWIND"),
        Reply(tool_calls=(_spawn("alpha", "TASK-ALPHA"),), match="SECOND-GO"),
        Reply(text="Noted keeper.", match="agent `keeper` (run"),
        Reply(tool_calls=(_spawn("keeper", "TASK-KEEPER"),), match="FIRST-GO"),
        Reply(text="KEEPER-DONE", match="TASK-KEEPER"),
        Reply(text="ALPHA-DONE", match="TASK-ALPHA", gate="alpha"),
        Reply(text="AGAIN-DONE", match="TASK-AGAIN"),
    )
    rpc, parent = await _start(tmp_path, llm)
    await rpc.call("session.send_input", {"session_id": parent, "input": _text("FIRST-GO")})
    await _reported(rpc, parent, 1)
    start = len(rpc.lines)
    await rpc.call("session.send_input", {"session_id": parent, "input": _text("SECOND-GO")})
    await rpc.broadcast("run.done", after=start, where=lambda p: p["session_id"] == parent)
    assert await llm.wait_held_async("alpha")
    kids = await _children(rpc, parent)
    alpha, keeper = kids["alpha"], kids["keeper"]["id"]
    cut = alpha["origin"]["parent_message_id"]
    assert cut == 6

    start = len(rpc.lines)
    assert await rpc.call("session.rewind", {"session_id": parent, "before_message_id": cut}) == {}
    done = rpc.lines[await rpc.broadcast("run.done", after=start, where=lambda p: p["session_id"] == alpha["id"])]
    assert done["params"]["outcome"] == {"type": "canceled"}
    removed = [line["params"]["session_id"] for line in rpc.lines[start:] if line.get("method") == "session.removed"]
    assert removed == [alpha["id"]]
    names = rpc.names(start)
    assert names.index("session.removed") < names.index("response:session.rewind")
    queued = rpc.lines[await rpc.broadcast("input.queued", after=start)]["params"]
    assert queued["session_id"] == parent and queued["input"]["source"]["session_id"] == alpha["id"]
    dropped = rpc.lines[await rpc.broadcast("input.canceled", after=start)]["params"]
    assert (dropped["session_id"], dropped["input_id"]) == (parent, queued["input"]["input_id"])
    assert await rpc.call_error("session.get", {"session_id": alpha["id"]}) == ErrorCode.UNKNOWN_SESSION
    assert sorted(await _children(rpc, parent)) == ["keeper"]
    assert (await rpc.call("session.queue", {"session_id": parent}))["items"] == []
    assert (await rpc.call("session.get", {"session_id": parent}))["activity"]["queued"] == 0

    llm.release("alpha")  # whatever the old stream does now, nothing of it may reach the parent
    start = len(rpc.lines)
    await rpc.call("session.send_input", {"session_id": parent, "input": _text("AFTER-REWIND")})
    again = await rpc.broadcast(
        "message.committed",
        after=start,
        where=lambda p: p["session_id"] == parent and p["message"].get("source", {}).get("type") == "child_report",
    )
    await rpc.broadcast("run.done", after=again, where=lambda p: p["session_id"] == parent)
    kids = await _children(rpc, parent)
    assert sorted(kids) == ["alpha", "keeper"] and kids["keeper"]["id"] == keeper
    assert kids["alpha"]["id"] != alpha["id"]
    reports = [(r["source"]["session_id"], r["content"][0]["text"]) for r in _reports(await _history(rpc, parent))]
    assert [sid for sid, _ in reports] == [keeper, kids["alpha"]["id"]]
    assert "AGAIN-DONE" in reports[1][1]
    after = [json.dumps(r.body) for r in llm.requests if "AFTER-REWIND" in json.dumps(r.body)]
    assert after and not any(alpha["id"] in body or "ALPHA-DONE" in body for body in after)
    assert await rpc.close() == 0


async def test_a_rewind_removes_a_removed_childs_own_children_too_the_deepest_first(
    tmp_path: Path, llm: FakeLLMServer
) -> None:
    """With a depth limit of 2: `alpha` (spawned in message 2) waits for `sub`, whose answer a gate holds. Rewinding
    the root before message 2 cancels `sub`'s run and removes both, `sub` first; `sub`'s report to `alpha` goes
    with `alpha`, and nothing reaches the root."""
    llm.enqueue(
        Reply(tool_calls=(_spawn("alpha", "TASK-ALPHA"),), match="ROOT-GO"),
        Reply(tool_calls=(_spawn("sub", "TASK-SUB"),), match="TASK-ALPHA"),
        Reply(text="SUB-DONE", match="TASK-SUB", gate="sub"),
    )
    rpc, root = await _start(tmp_path, llm, {"OMNIAGENT_CHILD_MAX_DEPTH": "2"})
    await rpc.call("session.send_input", {"session_id": root, "input": _text("ROOT-GO")})
    assert await llm.wait_held_async("sub")
    alpha = (await _children(rpc, root))["alpha"]["id"]
    sub = (await _children(rpc, alpha))["sub"]["id"]
    await rpc.broadcast("run.done", where=lambda p: p["session_id"] == alpha)

    start = len(rpc.lines)
    assert await rpc.call("session.rewind", {"session_id": root, "before_message_id": 2}) == {}
    done = rpc.lines[await rpc.broadcast("run.done", after=start, where=lambda p: p["session_id"] == sub)]
    assert done["params"]["outcome"] == {"type": "canceled"}
    removed = [line["params"]["session_id"] for line in rpc.lines[start:] if line.get("method") == "session.removed"]
    assert removed == [sub, alpha]
    assert (await rpc.call("session.list", {"population": {"type": "all"}}))["total"] == 1
    assert [m["id"] for m in await _history(rpc, root)] == [1]
    assert (await rpc.call("session.queue", {"session_id": root}))["items"] == []
    assert await rpc.close() == 0
