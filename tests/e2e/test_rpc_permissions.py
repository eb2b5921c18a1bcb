"""Tool permissions over a real `omniagent rpc` subprocess: ask mode asks through `interaction.requested` (a yuke
confirm) and waits in `running_tool`; `interaction.respond` answers; auto mode never asks (docs/engine.md,
"Tool permissions"; issue "One system" part 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from omniagent.engine.interactions.permissions import SET_MODE_METHOD
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply
from tests.engine.rpc_harness import Line, RpcProcess


async def _session(rpc: RpcProcess, tmp_path: Path) -> tuple[str, Path]:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    result = await rpc.call("session.create", {"workspace_path": str(workspace), "model": "fake-anthropic/fake-model"})
    return str(result["session"]["id"]), workspace


def _send(rpc: RpcProcess, sid: str, text: str) -> str:
    return rpc.send(
        "session.send_input",
        {"session_id": sid, "input": {"type": "content", "content": [{"type": "text", "text": text}]}},
    )


def _write_call(path: str = "out.txt", content: str = "written\n") -> Reply:
    return Reply(tool_calls=(FakeToolCall("write", {"path": path, "content": content}, "call_w"),))


def _activity(line: Line) -> str | None:
    if line.get("method") != "session.activity_changed":
        return None
    return str(line["params"]["activity"]["state"]["type"])


async def _asked(rpc: RpcProcess, start: int) -> tuple[int, dict[str, Any]]:
    index = await rpc.broadcast("interaction.requested", after=start)
    return index, rpc.lines[index]["params"]


async def test_ask_mode_confirms_a_write_before_it_runs_and_waits_in_running_tool(
    rpc: RpcProcess, llm: FakeLLMServer, tmp_path: Path
) -> None:
    """Part 2: in ask mode (the default) a write is asked as a confirm; until answered the activity stays
    `running_tool`, the tool part stays pending and the file is untouched; `true` lets it run."""
    llm.enqueue(_write_call(), Reply(text="Wrote it."))
    sid, workspace = await _session(rpc, tmp_path)
    start = len(rpc.lines)
    _send(rpc, sid, "write the file")
    asked, params = await _asked(rpc, start)
    assert params["session_id"] == sid
    assert params["request"] == {
        "type": "confirm",
        "title": "Write a file?",
        "message": "Write out.txt in the workspace.",
    }
    before = rpc.lines[start:asked]
    assert [_activity(line) for line in before if _activity(line)][-1] == "running_tool"
    assert not any(line.get("method") == "tool.state_changed" for line in before)
    assert not (workspace / "out.txt").exists()

    assert (
        await rpc.call(
            "interaction.respond",
            {"interaction_id": params["interaction_id"], "response": {"type": "confirm", "value": True}},
        )
        == {}
    )
    done = await rpc.broadcast("run.done", after=asked)
    assert rpc.lines[done]["params"]["outcome"] == {"type": "turn", "finish": "stop", "rounds": 2}
    assert (workspace / "out.txt").read_text() == "written\n"
    states = [
        line["params"]["state"]["type"] for line in rpc.lines[asked:done] if line.get("method") == "tool.state_changed"
    ]
    assert states == ["running", "completed"]
    # Answered once: the same interaction cannot be answered again.
    code = await rpc.call_error(
        "interaction.respond",
        {"interaction_id": params["interaction_id"], "response": {"type": "confirm", "value": True}},
    )
    assert code == ErrorCode.UNKNOWN_INTERACTION


async def test_a_rejected_call_does_not_run_and_the_model_reads_the_refusal(
    rpc: RpcProcess, llm: FakeLLMServer, tmp_path: Path
) -> None:
    """Part 2: `false` rejects: the tool goes pending → error without running, and the run goes on with the
    refusal as the tool result the model sees."""
    llm.enqueue(Reply(tool_calls=(FakeToolCall("exec", {"command": "touch made.txt"}, "call_x"),)), Reply(text="ok"))
    sid, workspace = await _session(rpc, tmp_path)
    start = len(rpc.lines)
    _send(rpc, sid, "make a file")
    asked, params = await _asked(rpc, start)
    assert params["request"]["message"] == "Run `touch made.txt` in the workspace."
    await rpc.call(
        "interaction.respond",
        {"interaction_id": params["interaction_id"], "response": {"type": "confirm", "value": False}},
    )
    done = await rpc.broadcast("run.done", after=asked)
    assert rpc.lines[done]["params"]["outcome"]["type"] == "turn"
    states = [line["params"]["state"] for line in rpc.lines[asked:done] if line.get("method") == "tool.state_changed"]
    assert [s["type"] for s in states] == ["error"] and "rejected" in states[0]["error"]
    assert not (workspace / "made.txt").exists()
    second = (await llm.wait_for_requests_async(2))[1].body
    assert isinstance(second, dict) and "rejected" in json.dumps(second["messages"][-1])


async def test_cancelling_the_run_answers_the_open_ask_canceled(
    rpc: RpcProcess, llm: FakeLLMServer, tmp_path: Path
) -> None:
    """Part 2: a cancelled run answers its pending ask as canceled: the run ends `canceled`, the tool part is
    `canceled`, nothing ran, and a late answer is unknown_interaction."""
    llm.enqueue(_write_call())
    sid, workspace = await _session(rpc, tmp_path)
    start = len(rpc.lines)
    _send(rpc, sid, "write it")
    asked, params = await _asked(rpc, start)
    await rpc.call("session.cancel_run", {"session_id": sid})
    done = await rpc.broadcast("run.done", after=asked)
    assert rpc.lines[done]["params"]["outcome"] == {"type": "canceled"}
    states = [
        line["params"]["state"]["type"] for line in rpc.lines[asked:done] if line.get("method") == "tool.state_changed"
    ]
    assert states == ["canceled"]
    assert not (workspace / "out.txt").exists()
    code = await rpc.call_error(
        "interaction.respond", {"interaction_id": params["interaction_id"], "response": {"type": "canceled"}}
    )
    assert code == ErrorCode.UNKNOWN_INTERACTION


async def test_auto_mode_runs_guarded_tools_without_asking(rpc: RpcProcess, llm: FakeLLMServer, tmp_path: Path) -> None:
    """Part 2 and docs/engine.md: `session.set_permission_mode` (engine extension) switches a session to auto;
    then a write runs at once, with no interaction.requested."""
    llm.enqueue(_write_call(), Reply(text="done"))
    sid, workspace = await _session(rpc, tmp_path)
    assert await rpc.call(SET_MODE_METHOD, {"session_id": sid, "mode": "auto"}) == {"session_id": sid, "mode": "auto"}
    start = len(rpc.lines)
    _send(rpc, sid, "write it")
    done = await rpc.broadcast("run.done", after=start)
    assert "interaction.requested" not in rpc.names(start, done)
    assert (workspace / "out.txt").read_text() == "written\n"


async def test_bad_permission_requests_get_the_wire_errors(rpc: RpcProcess, tmp_path: Path) -> None:
    """Unknown interaction → unknown_interaction; a bad mode → bad_request; the extension method on an
    unknown session → unknown_session."""
    sid, _ = await _session(rpc, tmp_path)
    unknown = {"interaction_id": 99, "response": {"type": "confirm", "value": True}}
    assert await rpc.call_error("interaction.respond", unknown) == ErrorCode.UNKNOWN_INTERACTION
    assert await rpc.call_error(SET_MODE_METHOD, {"session_id": sid, "mode": "yolo"}) == ErrorCode.BAD_REQUEST
    assert await rpc.call_error(SET_MODE_METHOD, {"session_id": "0" * 32, "mode": "auto"}) == ErrorCode.UNKNOWN_SESSION


async def test_a_response_of_the_wrong_kind_is_refused_and_the_ask_stays_open(
    rpc: RpcProcess, llm: FakeLLMServer, tmp_path: Path
) -> None:
    """The response arm must match the request (a confirm) or be canceled; a `select` answer is
    bad_request and leaves the ask open; `canceled` then counts as a refusal."""
    llm.enqueue(_write_call(), Reply(text="fine"))
    sid, workspace = await _session(rpc, tmp_path)
    start = len(rpc.lines)
    _send(rpc, sid, "write it")
    asked, params = await _asked(rpc, start)
    iid = params["interaction_id"]
    wrong = {"interaction_id": iid, "response": {"type": "select", "value": "yes"}}
    assert await rpc.call_error("interaction.respond", wrong) == ErrorCode.BAD_REQUEST
    await rpc.call("interaction.respond", {"interaction_id": iid, "response": {"type": "canceled"}})
    done = await rpc.broadcast("run.done", after=asked)
    assert rpc.lines[done]["params"]["outcome"]["type"] == "turn"
    assert not (workspace / "out.txt").exists()
