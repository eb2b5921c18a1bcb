"""`omniagent acp` driven by an outside v1 client: npm `acpx@0.19.1`, a headless ACP client CLI, runs
one `exec` turn with `--format json` (it prints the wire frames) and `--approve-all`, against the fake LLM
(issue "One system", acceptance). Our tap validates the traffic against the v1 JSON schema."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.faces.acp.agent_harness import agent_argv, check_transcript, npm_peer, prepare, run_peer

WAIT = 60.0  # seconds: node start plus one turn with a tool round


async def test_acpx_runs_a_v1_turn_with_an_approved_write_in_json_format(tmp_path: Path) -> None:
    """acpx negotiates 1, creates a session, prompts; our agent asks before the write, acpx
    approves, the file is written, text streams, and the prompt answers `end_turn`; acpx exits 0."""
    node, cli = npm_peer("acpx")
    async with FakeLLMServer(Scenario()) as llm:
        write = FakeToolCall("write", {"path": "hello.txt", "content": "hi\n"}, "call_1")
        llm.enqueue(Reply(tool_calls=(write,)), Reply(text="Hello from omniagent."))
        data, ws, log = prepare(tmp_path, llm)
        agent = shlex.join(agent_argv(data, log))
        argv = [
            node,
            str(cli),
            "--agent",
            agent,
            "--approve-all",
            "--format",
            "json",
            "--timeout",
            "45",
            "exec",
            "say hello",
        ]
        out, err, code = await run_peer(argv, within=WAIT, cwd=ws)
    assert code == 0, err[-2000:]
    frames = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    init = next(f for f in frames if f.get("id") == 0 and "result" in f)
    assert init["result"]["protocolVersion"] == 1 and init["result"]["agentInfo"]["name"] == "omniagent"
    asked = [f for f in frames if f.get("method") == "session/request_permission"]
    assert len(asked) == 1 and asked[0]["params"]["toolCall"]["title"] == "Write hello.txt"
    texts = [
        f["params"]["update"]["content"]["text"]
        for f in frames
        if f.get("method") == "session/update" and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert "".join(texts) == "Hello from omniagent."
    assert frames[-1]["result"] == {"stopReason": "end_turn"}
    assert (ws / "hello.txt").read_text() == "hi\n"
    assert check_transcript(log) > 8
