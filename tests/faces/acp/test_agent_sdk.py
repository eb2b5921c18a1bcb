"""`omniagent acp` driven by an outside v2 client: npm `@agentclientprotocol/sdk@1.3.0` (`experimental/v2`), whose
client zod-validates every message it receives. The node script `sdk_v2_client.mjs` negotiates 2,
runs a prompt, a permission turn, a turn cancelled while its permission is asked, list and resume with replay
(issue "One system", acceptance). Our tap validates the same traffic against the v2 JSON schema."""

from __future__ import annotations

import json
from pathlib import Path

from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.faces.acp.agent_harness import agent_argv, check_transcript, npm_peer, prepare, run_peer
from tests.mcp_support import STDIO, call, tool_names, tool_results

SCRIPT = Path(__file__).resolve().parent / "sdk_v2_client.mjs"
MCP_SCRIPT = Path(__file__).resolve().parent / "sdk_v2_mcp_client.mjs"
WAIT = 60.0  # seconds: node start plus five turns against the fake LLM


def _write(path: str, call_id: str) -> Reply:
    return Reply(tool_calls=(FakeToolCall("write", {"path": path, "content": "x\n"}, call_id),))


async def test_the_sdk_v2_client_runs_prompt_permission_cancel_list_and_replay(tmp_path: Path) -> None:
    """The v2 turn against the reference client: `{}` then idle end_turn; allow once runs the write; cancel while
    asked ends `cancelled` with the call `cancelled`; list finds the session; resume replays it."""
    node, example = npm_peer("acp-sdk")
    sdk = example.parents[2]  # …/sdk/dist/examples/dual-version-agent.js → …/sdk
    async with FakeLLMServer(Scenario()) as llm:
        llm.enqueue(
            Reply(text="Hello from omniagent."),
            _write("a.txt", "call_1"),
            Reply(text="Wrote a.txt."),
            _write("b.txt", "call_2"),
        )
        data, ws, log = prepare(tmp_path, llm)
        out, err, code = await run_peer(
            [node, str(SCRIPT), str(sdk), str(ws), "--", *agent_argv(data, log)], within=WAIT
        )
    report = json.loads(out.strip().splitlines()[-1])
    assert report["ok"], (report, err[-2000:])
    assert report["protocolVersion"] == 2 and report["agentName"] == "omniagent"
    # The draft's receipt (the user message's id) is additive: this alpha.2-era client takes it.
    assert report["promptAnswer"]["messageId"] == "m1" and report["firstStop"] == "end_turn"
    assert report["text"] == "Hello from omniagent."
    assert report["permissionStop"] == "end_turn"
    kinds = report["permissionKinds"]
    assert kinds.index("tool_call_update") < kinds.index("_permission_asked") < kinds.index("agent_message_chunk")
    assert report["cancelStop"] == "cancelled" and report["cancelledStatuses"] == ["pending", "cancelled"]
    assert report["listed"] == [True]
    messages = [kind for kind in report["replayed"] if kind in ("user_message", "agent_message")]
    assert messages[:2] == ["user_message", "agent_message"]
    assert (ws / "a.txt").exists() and not (ws / "b.txt").exists()
    assert code == 0
    assert check_transcript(log) > 20


async def test_the_sdk_v2_client_passes_an_mcp_server_whose_tool_is_asked_and_reaches_the_model(
    tmp_path: Path,
) -> None:
    """Issue 13: the reference client sees `session.mcp` advertised, passes the fixture server (written with the
    `mcp` SDK, over stdio) in `session/new`; the model's call of its tool is asked, runs, and its result reaches the
    model's next request."""
    node, example = npm_peer("acp-sdk")
    sdk = example.parents[2]
    async with FakeLLMServer(Scenario()) as llm:
        llm.enqueue(call("mcp__fixture__echo", text="from the sdk"), Reply(text="Echoed."))
        data, ws, log = prepare(tmp_path, llm)
        argv = [node, str(MCP_SCRIPT), str(sdk), str(ws), *STDIO, "--", *agent_argv(data, log)]
        out, err, code = await run_peer(argv, within=WAIT)
        bodies = [r.body for r in llm.requests]
    report = json.loads(out.strip().splitlines()[-1])
    assert report["ok"], (report, err[-2000:])
    assert report["mcp"] == {"stdio": {}, "http": {}}
    assert report["promptAnswer"]["messageId"] == "m1"
    assert report["stop"] == "end_turn" and report["text"] == "Echoed."
    assert report["asked"] == ['Call `echo` of the MCP server `fixture` with {"text": "from the sdk"}.']
    assert report["titles"] == ["fixture: echo"] and report["statuses"][-1] == "completed"
    assert "mcp__fixture__echo" in tool_names(bodies[0])
    assert [r["content"] for r in tool_results(bodies[1])] == ["echo: from the sdk"]
    assert code == 0
    assert check_transcript(log) > 5
