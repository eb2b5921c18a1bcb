"""The model's questions to the user over a real `omniagent rpc` subprocess (docs/engine.md "Questions to the user";
issue 12 part 4): `ask_user` broadcasts `interaction.requested` (confirm / select / input) and the run waits until
`interaction.respond`; the answer is the tool's result. A secret answer reaches commands as an environment variable
and never the store, the log, the wire or any model request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.testing import FakeLLMServer, FakeToolCall, Reply
from tests.e2e.rpc_sessions import new_session, send_text, start_rpc
from tests.engine.rpc_harness import RpcProcess
from tests.stores import store_bytes

# Each test runs on both stores: SQLite, and a fresh PostgreSQL database (conftest.py `each_store`).
pytestmark = pytest.mark.usefixtures("each_store")

SECRET = "hunter2-Sesame-7c1d"


def _ask(**arguments: Any) -> Reply:
    return Reply(tool_calls=(FakeToolCall("ask_user", arguments, "call_ask"),))


async def _asked(rpc: RpcProcess, start: int) -> tuple[int, dict[str, Any]]:
    index = await rpc.broadcast("interaction.requested", after=start)
    return index, rpc.lines[index]["params"]


def _respond(interaction_id: int, response: dict[str, Any]) -> dict[str, Any]:
    return {"interaction_id": interaction_id, "response": response}


def _tool_states(rpc: RpcProcess, start: int) -> list[dict[str, Any]]:
    return [line["params"]["state"] for line in rpc.lines[start:] if line.get("method") == "tool.state_changed"]


async def test_a_confirm_is_asked_waits_in_running_tool_and_the_answer_is_what_the_model_reads(
    rpc: RpcProcess, llm: FakeLLMServer, tmp_path: Path
) -> None:
    llm.enqueue(_ask(kind="confirm", question="Delete the cache?", detail="rm -rf .cache"), Reply(text="ok"))
    sid, _ = await new_session(rpc, tmp_path)
    start = send_text(rpc, sid, "clean up")
    asked, params = await _asked(rpc, start)
    assert params["session_id"] == sid
    assert params["request"] == {"type": "confirm", "title": "Delete the cache?", "message": "rm -rf .cache"}
    activity = [line for line in rpc.lines[start:asked] if line.get("method") == "session.activity_changed"][-1]
    assert activity["params"]["activity"]["state"]["tool_name"] == "ask_user"
    assert (
        _tool_states(rpc, start) == [_tool_states(rpc, start)[0]] and _tool_states(rpc, start)[0]["type"] == "running"
    )

    wrong = _respond(params["interaction_id"], {"type": "select", "value": "yes"})
    assert await rpc.call_error("interaction.respond", wrong) == ErrorCode.BAD_REQUEST
    await rpc.call("interaction.respond", _respond(params["interaction_id"], {"type": "confirm", "value": True}))
    done = await rpc.broadcast("run.done", after=asked)
    assert rpc.lines[done]["params"]["outcome"] == {"type": "turn", "finish": "stop", "rounds": 2}
    final = _tool_states(rpc, asked)[-1]
    assert final["type"] == "completed" and final["output"] == "The user answered yes."
    second = (await llm.wait_for_requests_async(2))[1].body
    assert "The user answered yes." in json.dumps(second)
    stale = _respond(params["interaction_id"], {"type": "confirm", "value": False})
    assert await rpc.call_error("interaction.respond", stale) == ErrorCode.UNKNOWN_INTERACTION


async def test_a_select_takes_only_one_of_its_options_and_a_dismissal_is_an_error_the_model_reads(
    rpc: RpcProcess, llm: FakeLLMServer, tmp_path: Path
) -> None:
    llm.enqueue(
        _ask(kind="select", question="Which database?", options=["sqlite", "postgres"]),
        _ask(kind="input", question="Project name?", placeholder="my-app"),
        Reply(text="Thanks."),
    )
    sid, _ = await new_session(rpc, tmp_path)
    start = send_text(rpc, sid, "set it up")
    asked, params = await _asked(rpc, start)
    assert params["request"] == {"type": "select", "title": "Which database?", "options": ["sqlite", "postgres"]}
    outside = _respond(params["interaction_id"], {"type": "select", "value": "mysql"})
    assert await rpc.call_error("interaction.respond", outside) == ErrorCode.BAD_REQUEST
    await rpc.call("interaction.respond", _respond(params["interaction_id"], {"type": "select", "value": "postgres"}))

    second, params = await _asked(rpc, asked + 1)
    assert params["request"] == {"type": "input", "title": "Project name?", "placeholder": "my-app"}
    await rpc.call("interaction.respond", _respond(params["interaction_id"], {"type": "canceled"}))
    await rpc.broadcast("run.done", after=second)
    outputs = [s.get("output") or s.get("error") for s in _tool_states(rpc, start) if s["type"] != "running"]
    assert outputs == ["The user chose: postgres", "the user dismissed the question without answering"]
    assert [s["type"] for s in _tool_states(rpc, start) if s["type"] != "running"] == ["completed", "error"]


async def test_cancelling_the_run_closes_the_question_and_a_late_answer_is_unknown(
    rpc: RpcProcess, llm: FakeLLMServer, tmp_path: Path
) -> None:
    llm.enqueue(_ask(kind="input", question="Name?"))
    sid, _ = await new_session(rpc, tmp_path)
    start = send_text(rpc, sid, "ask me")
    asked, params = await _asked(rpc, start)
    await rpc.call("session.cancel_run", {"session_id": sid})
    done = await rpc.broadcast("run.done", after=asked)
    assert rpc.lines[done]["params"]["outcome"] == {"type": "canceled"}
    assert _tool_states(rpc, asked)[-1]["type"] == "canceled"
    late = _respond(params["interaction_id"], {"type": "input", "value": "Ada"})
    assert await rpc.call_error("interaction.respond", late) == ErrorCode.UNKNOWN_INTERACTION
    never = _respond(12345, {"type": "canceled"})
    assert await rpc.call_error("interaction.respond", never) == ErrorCode.UNKNOWN_INTERACTION


async def test_a_secret_answer_reaches_commands_but_never_the_store_the_log_the_wire_or_a_model_request(
    llm: FakeLLMServer, tmp_path: Path
) -> None:
    """Issue 12 acceptance: the model asks for a secret input; the answer becomes `$OMNIAGENT_SECRET_<id>` for
    `exec` (a command writes it to a file, and prints it: the output shows `[secret]`). The secret is nowhere in
    the store's files, the debug log, the engine's output lines or any request the model received; a file edited
    while it holds the secret is not checkpointed."""
    rpc = await start_rpc(tmp_path, llm, {"OMNIAGENT_LOG": "debug"})
    try:
        sid, ws = await new_session(rpc, tmp_path)
        llm.enqueue(_ask(kind="input", question="Your API token?", secret=True))
        start = send_text(rpc, sid, "configure the token")
        asked, params = await _asked(rpc, start)
        assert params["request"] == {"type": "input", "title": "Your API token?", "secret": True}
        variable = f"OMNIAGENT_SECRET_{params['interaction_id']}"
        command = f'printf "TOKEN=%s\\n" "${variable}" > .env; echo "token is ${variable}!"'
        rename = {"path": ".env", "old_string": "TOKEN=", "new_string": "API_TOKEN="}
        llm.enqueue(
            Reply(tool_calls=(FakeToolCall("exec", {"command": command}, "call_exec"),)),
            Reply(tool_calls=(FakeToolCall("edit", rename),)),
            Reply(text="Configured."),
        )
        answer = _respond(params["interaction_id"], {"type": "input", "value": SECRET})
        await rpc.call("interaction.respond", answer)
        # The command names the secret's variable: it asks, in auto mode too, and runs with it once approved.
        approval, params = await _asked(rpc, asked + 1)
        assert params["request"]["title"] == "Give a secret to a command?" and command in params["request"]["message"]
        await rpc.call("interaction.respond", _respond(params["interaction_id"], {"type": "confirm", "value": True}))
        await rpc.broadcast("run.done", after=approval, within=15.0)
        states = [s for s in _tool_states(rpc, asked) if s["type"] != "running"]
        assert [s["type"] for s in states] == ["completed", "completed", "completed"], states
        assert f"${variable}" in states[0]["output"] and SECRET not in states[0]["output"]
        assert "token is [secret]!" in states[1]["output"]
        outputs = "".join(
            line["params"]["delta"] for line in rpc.lines[asked:] if line.get("method") == "tool.output_delta"
        )
        assert "[secret]" in outputs
        assert (ws / ".env").read_text() == f"API_TOKEN={SECRET}\n"  # the command had the real value
        diff = states[2]["view"][0]["files"][0]["hunks"][0]["lines"]
        assert diff == ["-TOKEN=[secret]", "+API_TOKEN=[secret]"]
        # The file held the secret when `edit` changed it: its content is withheld, so a rewind leaves it alone.
        await rpc.call("session.rewind", {"session_id": sid, "before_message_id": 1, "restore_files": True})
        assert (ws / ".env").read_text() == f"API_TOKEN={SECRET}\n"
    finally:
        await rpc.close()
    stderr = await rpc.stderr()
    needle = SECRET.encode()
    assert needle not in store_bytes(tmp_path / "data")
    assert needle not in stderr.encode()
    wire = json.dumps(rpc.lines).encode()
    assert needle not in wire and b"hunter2" not in wire
    bodies = [json.dumps(r.body).encode() for r in llm.requests]
    assert len(bodies) == 4 and all(needle not in body and b"hunter2" not in body for body in bodies)
