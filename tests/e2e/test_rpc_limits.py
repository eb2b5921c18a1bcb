"""The `exec` limits through a real `omniagent rpc` in auto mode, the fake LLM playing a runaway model (issue 22;
docs/security.md, "Limits"): engine-wide limits from sandbox.json, a session's own through `session.set_sandbox`, a
runaway stopped by each with the sentence the model reads in its next request, and the session going on."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from omniagent.engine.sandboxes import SET_SANDBOX_METHOD
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply
from tests.e2e.rpc_sessions import new_session, send_text, start_rpc
from tests.engine.rpc_harness import RpcProcess

PYTHON = os.path.realpath(sys.executable)
HOW = "the user can change it in sandbox.json or with session.set_sandbox; see docs/security.md"


async def _turn(rpc: RpcProcess, llm: FakeLLMServer, sid: str, *commands: str) -> list[tuple[str, bool]]:
    """One turn in which the model runs `commands` with `exec`; what it is told of each: (text, is_error)."""
    calls = tuple(FakeToolCall("exec", {"command": c, "timeout": 30}, f"call_{i}") for i, c in enumerate(commands))
    llm.enqueue(Reply(tool_calls=calls), Reply(text="done"))
    seen = len(llm.requests)
    start = send_text(rpc, sid, "go")
    await rpc.broadcast("run.done", after=start, within=60.0)
    body = llm.requests[seen + 1].body
    assert isinstance(body, dict)
    results = {
        block["tool_use_id"]: (str(block["content"]), bool(block.get("is_error", False)))
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    }
    return [results[f"call_{i}"] for i in range(len(commands))]


def _says(told: tuple[str, bool], sentence: str) -> None:
    text, is_error = told
    assert is_error, text
    assert sentence in text, text


async def test_limits_stop_a_runaway_model_and_the_session_goes_on(tmp_path: Path, llm: FakeLLMServer) -> None:
    """sandbox.json sets `processes` 64 and `output_mb` 1 for the engine; the session adds `memory_mb` 256 and
    `cpu_seconds` 1 (answered with every limit now in force; a bad value is -32602). The model then starts 300
    processes, allocates 768 MiB, spins, and writes `yes` forever, all at once: each is stopped with the sentence
    naming its limit, and the model's next command in the same session runs."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "sandbox.json").write_text(json.dumps({"limits": {"processes": 64, "output_mb": 1}}))
    rpc = await start_rpc(tmp_path, llm)
    try:
        sid, _workspace = await new_session(rpc, tmp_path)
        for bad in ({"memory_mb": 0}, {"memory": 256}, {"cpu_seconds": "1"}):
            params = {"session_id": sid, "limits": bad}
            assert await rpc.call_error(SET_SANDBOX_METHOD, params) == ErrorCode.BAD_REQUEST
        answer = await rpc.call(SET_SANDBOX_METHOD, {"session_id": sid, "limits": {"memory_mb": 256, "cpu_seconds": 1}})
        limits = answer["limits"]
        assert (limits["processes"], limits["output_mb"], limits["memory_mb"], limits["cpu_seconds"]) == (64, 1, 256, 1)
        assert limits["tmp_mb"] == 1024 and limits["file_mb"] == 16384 and "disk_mb" not in limits  # the defaults
        told = await _turn(
            rpc,
            llm,
            sid,
            "for i in $(seq 300); do sleep 30 & done; wait",
            f"{PYTHON} -c 'b = bytearray(768 << 20); print(\"allocated\")'",
            f"{PYTHON} -c 'while True: pass'",
            "yes",
        )
        _says(told[0], f"[stopped: the command tried to run more than 64 processes and threads at once (the limit "
                       f"`processes`; {HOW})]")  # fmt: skip
        _says(told[1], f"[killed: the command used more than 256 MiB of memory (the limit `memory_mb`; {HOW})]")
        _says(told[2], "[killed: a process of the command used more than 1 s of CPU time (SIGXCPU, exit code 152; "
                       f"the limit `cpu_seconds`; {HOW})]")  # fmt: skip
        _says(told[3], f"[stopped: the command wrote more than 1 MiB of output (the limit `output_mb`; {HOW})]")
        assert await _turn(rpc, llm, sid, "echo still here") == [("still here\n[exit code 0]", False)]
    finally:
        await rpc.close()


async def test_a_bad_sandbox_json_refuses_every_exec_and_the_engine_goes_on(tmp_path: Path, llm: FakeLLMServer) -> None:
    """A typo in sandbox.json never means "no limits": the engine starts, every exec fails with the file's problem
    (nothing runs), and the session's other tools work."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "sandbox.json").write_text(json.dumps({"limits": {"memory": 512}}))
    rpc = await start_rpc(tmp_path, llm)
    try:
        sid, workspace = await new_session(rpc, tmp_path)
        (workspace / "notes.txt").write_text("kept\n")
        told = await _turn(rpc, llm, sid, "touch ran")
        assert told == [
            (
                f"the command was not run: {data.resolve() / 'sandbox.json'} is invalid (Object contains unknown field "
                "`memory` - at `$.limits`); the user must fix or remove it and restart the engine",
                True,
            )
        ]
        assert not (workspace / "ran").exists()
        llm.enqueue(Reply(tool_calls=(FakeToolCall("read", {"path": "notes.txt"}, "call_0"),)), Reply(text="done"))
        seen = len(llm.requests)
        await rpc.broadcast("run.done", after=send_text(rpc, sid, "read"), within=60.0)
        assert "kept" in json.dumps(llm.requests[seen + 1].body)
    finally:
        await rpc.close()
