"""A secret answer cannot be laundered through a command (issue 22, hole 3; docs/security.md, "Secret answers"), over
a real `omniagent rpc` in auto mode with the fake LLM playing a model that wants the secret.

On the old engine every `exec` of the session had every secret in its environment and only the literal value was
masked, so `printf %s "$OMNIAGENT_SECRET_n" | base64` put the encoded secret into the next model request. Now a
command gets a secret only when its command line names it and the user approves that very command; commands that do
not name it have nothing to launder; and what approved commands print is masked in its common encodings too."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from omniagent.testing import FakeLLMServer, FakeToolCall, Reply
from tests.e2e.rpc_sessions import new_session, send_text, start_rpc
from tests.engine.rpc_harness import RpcProcess
from tests.stores import store_bytes

# Each test runs on both stores: SQLite, and a fresh PostgreSQL database (conftest.py `each_store`).
pytestmark = pytest.mark.usefixtures("each_store")

SECRET = "Sesame-open-4d7e91"
HALF = len(SECRET) // 2
_ASK_OR_DONE = ("interaction.requested", "run.done")


def _leaks(text: str) -> list[str]:
    """The forms of the secret found in `text`: itself, its halves, base64, hex (plain or spaced), reversed."""
    raw = SECRET.encode()
    forms = {
        "literal": SECRET,
        "first half": SECRET[:HALF],
        "second half": SECRET[HALF:],
        "base64": base64.b64encode(raw).decode()[:20],
        "hex": raw.hex(),
        "spaced hex": raw.hex(" ")[:30],
        "reversed": SECRET[::-1],
    }
    return [name for name, form in forms.items() if form in text]


def _exec(command: str, call_id: str) -> Reply:
    return Reply(tool_calls=(FakeToolCall("exec", {"command": command}, call_id),))


async def _secret_session(rpc: RpcProcess, llm: FakeLLMServer, tmp_path: Path) -> tuple[str, Path, str, int]:
    """A session in auto mode whose model asked for a secret and got SECRET; returns (session, workspace, the
    variable, the line index after the answer). The model's next replies must be queued before the call."""
    sid, ws = await new_session(rpc, tmp_path)
    llm.enqueue(Reply(tool_calls=(FakeToolCall("ask_user", {"kind": "input", "question": "Token?", "secret": True}),)))
    start = send_text(rpc, sid, "use my token")
    asked = await rpc.broadcast("interaction.requested", after=start)
    interaction = rpc.lines[asked]["params"]["interaction_id"]
    return sid, ws, f"OMNIAGENT_SECRET_{interaction}", asked


async def _answer_asks(rpc: RpcProcess, after: int, approve: set[str]) -> tuple[int, list[dict[str, Any]]]:
    """Answer every permission ask until the run ends: approve those whose message holds one of `approve`, reject
    the others. Returns the index of `run.done` and the asks seen."""
    asks: list[dict[str, Any]] = []
    while True:
        index = await rpc.wait_for(lambda line: line.get("method") in _ASK_OR_DONE, after=after)
        line = rpc.lines[index]
        if line["method"] == "run.done":
            return index, asks
        params = line["params"]
        asks.append(params["request"])
        allowed = any(marker in params["request"]["message"] for marker in approve)
        answer = {"interaction_id": params["interaction_id"], "response": {"type": "confirm", "value": allowed}}
        await rpc.call("interaction.respond", answer)
        after = index + 1


def _states(rpc: RpcProcess, start: int) -> list[dict[str, Any]]:
    return [
        line["params"]["state"]
        for line in rpc.lines[start:]
        if line.get("method") == "tool.state_changed" and line["params"]["state"]["type"] in ("completed", "error")
    ]


async def test_no_command_gets_the_secret_unless_the_user_approves_it_so_no_encoding_of_it_reaches_the_model(
    llm: FakeLLMServer, tmp_path: Path
) -> None:
    """The model tries base64, rev, hex, split-and-join and a file written then read, each naming the variable: each
    asks (auto mode notwithstanding), the user refuses, none runs. Commands that do not name it run without asking
    and find no secret in their environment. No form of the secret is in any model request, the store or the wire."""
    rpc = await start_rpc(tmp_path, llm)
    try:
        laundering = {
            "base64": 'printf %s "$V" | base64',
            "rev": 'printf %s "$V" | rev',
            "hex": 'printf %s "$V" | od -An -tx1',
            "split": 's="$V"; printf "%s / %s\\n" "${s%?????????}" "${s#?????????}"',
            "file": 'printf %s "$V" > token.txt',
        }
        blind = ["env | base64 -w0", "cat /proc/self/environ | rev", "printenv | od -An -tx1 | tr -d ' \\n'"]
        _, ws, variable, asked = await _secret_session(rpc, llm, tmp_path)
        replies = [_exec(command.replace("$V", f"${variable}"), name) for name, command in laundering.items()]
        replies.append(Reply(tool_calls=(FakeToolCall("read", {"path": "token.txt"}, "read"),)))
        replies += [_exec(command, f"blind{i}") for i, command in enumerate(blind)]
        llm.enqueue(*replies, Reply(text="I could not get it."))
        answer = {"interaction_id": rpc.lines[asked]["params"]["interaction_id"]}
        await rpc.call("interaction.respond", answer | {"response": {"type": "input", "value": SECRET}})
        done, asks = await _answer_asks(rpc, asked + 1, approve=set())
        assert rpc.lines[done]["params"]["outcome"]["type"] == "turn"
        assert [ask["title"] for ask in asks] == ["Give a secret to a command?"] * len(laundering)
        assert all(variable in ask["message"] for ask in asks)
        states = _states(rpc, asked)
        refused = [s["error"] for s in states[1 : 1 + len(laundering)]]
        assert all(f"the user did not give ${variable} to this command" in error for error in refused), refused
        assert not (ws / "token.txt").exists()
        blind_outputs = [s["output"] for s in states[-len(blind) :]]
        assert [s["type"] for s in states[-len(blind) :]] == ["completed"] * len(blind), states
        assert all("[exit code 0]" in output for output in blind_outputs)
        assert not any(_leaks(output) for output in blind_outputs)
    finally:
        await rpc.close()
    bodies = [json.dumps(r.body) for r in llm.requests]
    assert len(bodies) == 2 + len(laundering) + 1 + len(blind)
    assert [_leaks(body) for body in bodies] == [[]] * len(bodies)
    assert _leaks(json.dumps(rpc.lines)) == []
    assert not _leaks(store_bytes(tmp_path / "data").decode("latin-1"))


async def test_an_approved_command_gets_only_what_it_names_and_its_encoded_output_is_masked(
    llm: FakeLLMServer, tmp_path: Path
) -> None:
    """The user approves a command that writes the secret to a file: it gets the variable (the file holds the real
    value). Encoding that file later, without naming the variable, asks nothing, and the base64, hex and reversed
    forms are masked in what the model reads; so is the file read back. An "always" is not offered for such asks
    (each command is approved alone), so a second command naming the variable asks again."""
    rpc = await start_rpc(tmp_path, llm)
    try:
        _, ws, variable, asked = await _secret_session(rpc, llm, tmp_path)
        llm.enqueue(
            _exec(f'printf %s "${variable}" > token.txt', "write"),
            _exec("base64 token.txt; od -An -tx1 token.txt | tr -s ' ' | tr -d '\\n'; echo; rev token.txt", "encode"),
            Reply(tool_calls=(FakeToolCall("read", {"path": "token.txt"}, "read"),)),
            _exec(f'printf %s "${variable}" | base64', "again"),
            Reply(text="Done."),
        )
        answer = {"interaction_id": rpc.lines[asked]["params"]["interaction_id"]}
        await rpc.call("interaction.respond", answer | {"response": {"type": "input", "value": SECRET}})
        done, asks = await _answer_asks(rpc, asked + 1, approve={"> token.txt"})
        assert rpc.lines[done]["params"]["outcome"]["type"] == "turn"
        assert [ask["title"] for ask in asks] == ["Give a secret to a command?"] * 2
        assert (ws / "token.txt").read_text() == SECRET  # the approved command had the real value
        states = _states(rpc, asked)
        encoded, read_back = states[2]["output"], states[3]["output"]
        assert encoded.count("[secret]") == 3 and _leaks(encoded) == [], encoded
        assert "[secret]" in read_back and _leaks(read_back) == []
        assert f"the user did not give ${variable}" in states[4]["error"]
    finally:
        await rpc.close()
    assert [_leaks(json.dumps(r.body)) for r in llm.requests] == [[]] * len(llm.requests)
    assert _leaks(json.dumps(rpc.lines)) == []
