"""`omniagent acp --agent ID`: real Claude Code and Codex CLIs served as ACP agents through the hub, driven by the same
outside clients as the engine face (npm `acpx@0.19.1`, v1; npm `@agentclientprotocol/sdk@1.3.0`'s v2 client), each
agent in a loopback-only network namespace against the fake LLM (tests/e2e/agents/harness.py). Our tap validates
every line the face wrote against the negotiated version's JSON schema. acpx also drives an ACP agent through
`--agent` (`claude-code-acp`: Claude Code's ACP adapter, so the hub relays ACP to ACP); the scripted `mock` shows the
stdio face's sequences and its end of input."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agents.harness import agent_world, tool_scenario
from tests.e2e.agents.peers import PEERS, TEXT
from tests.faces.acp.agent_harness import check_transcript, hub_agent_argv, npm_peer, read_log, run_peer

SDK_SCRIPT = Path(__file__).resolve().parent / "sdk_v2_client.mjs"
WAIT = 180.0  # seconds: node start, the agent's start and several turns on 2 busy cores
AGENTS = ["claude", "codex"]
pytestmark = pytest.mark.timeout(300)


def _frames(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("agent", [*AGENTS, "claude-code-acp"])
async def test_acpx_runs_a_v1_turn_with_an_approved_command(agent: str, tmp_path: Path) -> None:
    """acpx negotiates 1 and runs one `exec` turn: the agent's shell call is asked (`execute`), acpx approves, the
    command runs, the text streams and the prompt answers `end_turn`; acpx exits 0."""
    node, cli = npm_peer("acpx")
    async with agent_world(agent, tmp_path / "world", tool_scenario(agent)) as world:
        log = tmp_path / "acp.log"
        argv = [node, str(cli), "--agent", shlex.join(hub_agent_argv(agent, log)), "--approve-all"]
        argv += ["--format", "json", "--timeout", "150", "exec", "create the marker file"]
        out, err, code = await run_peer(argv, within=WAIT, cwd=world.work, env=world.runtime_env)
        assert code == 0, err[-3000:]
        frames = _frames(out)
        init = next(f for f in frames if f.get("id") == 0 and "result" in f)
        assert init["result"]["protocolVersion"] == 1 and init["result"]["agentInfo"]["name"] == "omniagent"
        asked = [f for f in frames if f.get("method") == "session/request_permission"]
        assert len(asked) == 1 and asked[0]["params"]["toolCall"]["kind"] == "execute"
        updates = [f["params"]["update"] for f in frames if f.get("method") == "session/update"]
        text = "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")
        assert text == "tool done"
        assert [u["status"] for u in updates if u["sessionUpdate"] == "tool_call_update"][-1] == "completed"
        assert frames[-1]["result"] == {"stopReason": "end_turn"}
        assert world.touched.exists()
    assert check_transcript(log) > 8


def _sdk_scenario(agent: str) -> dict[str, Any]:
    """The SDK client's four model turns, in order, on the agent's main calls: text; the shell call (allowed) and
    its follow-up text; the shell call again (held, then cancelled)."""
    peer = PEERS[agent]
    call = {"name": peer.shell_tool, "arguments": peer.shell_arguments}
    main = peer.main_marker
    steps = [
        {"kind": "reply", "text": TEXT, "match": main},
        {"kind": "reply", "tool_calls": [call], "match": main},
        {"kind": "reply", "text": "tool done", "match": main},
        {"kind": "reply", "tool_calls": [call], "match": main},
    ]
    return {"steps": steps, "fallback": {"kind": "reply", "text": TEXT}}


@pytest.mark.parametrize("agent", AGENTS)
async def test_the_sdk_v2_client_runs_prompt_permission_cancel_list_and_replay(agent: str, tmp_path: Path) -> None:
    """The reference v2 client (which zod-validates every message it gets): `{}` then idle end_turn with the text;
    allow once runs the command; a cancel while asked ends `cancelled`; list finds the session with its cwd;
    resume with `replayFrom: start` replays it."""
    node, example = npm_peer("acp-sdk")
    sdk = example.parents[2]
    async with agent_world(agent, tmp_path / "world", _sdk_scenario(agent)) as world:
        log = tmp_path / "acp.log"
        argv = [node, str(SDK_SCRIPT), str(sdk), str(world.work), "--", *hub_agent_argv(agent, log)]
        out, err, code = await run_peer(argv, within=WAIT, env=world.runtime_env)
        report = json.loads(out.strip().splitlines()[-1])
        assert report["ok"], (report, err[-3000:])
        assert report["protocolVersion"] == 2 and report["agentName"] == "omniagent"
        assert report["promptAnswer"]["_meta"]["omniagent"]["delivery"] == "started"
        assert report["firstStop"] == "end_turn" and report["text"] == TEXT
        assert report["permissionStop"] == "end_turn"
        kinds = report["permissionKinds"]
        assert kinds.index("tool_call_update") < kinds.index("_permission_asked") < kinds.index("agent_message_chunk")
        assert report["cancelStop"] == "cancelled"
        assert report["listed"] == [True]
        assert "agent_message_chunk" in report["replayed"] and "tool_call_update" in report["replayed"]
        assert world.touched.exists()
        assert code == 0
    assert check_transcript(log) > 20


async def test_the_stdio_face_numbers_its_updates_and_ends_at_eof(tmp_path: Path) -> None:
    """`--agent mock` (scripted) through the stdio face. The permission
    is asked with the agent's request id, every update carries its event's sequence, and closing stdin while a
    prompt waits cancels its turn, answers it and exits 0."""
    log = tmp_path / "acp.log"
    argv = [*hub_agent_argv("mock", log), "--mock", "turn"]
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def until_id(request_id: int) -> dict[str, Any]:
        assert proc.stdout is not None
        while True:
            message = json.loads(await proc.stdout.readline())
            if message.get("id") == request_id and "method" not in message:
                return message
            if message.get("method") == "session/request_permission":
                send({"id": message["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}})

    async with asyncio.timeout(60):
        send({"id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
        await until_id(0)
        send({"id": 1, "method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}})
        session_id = (await until_id(1))["result"]["sessionId"]
        send(
            {
                "id": 2,
                "method": "session/prompt",
                "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]},
            }
        )
        assert (await until_id(2))["result"] == {"stopReason": "end_turn"}
        # The script has no second turn: it would hang until cancelled, which EOF does.
        send(
            {
                "id": 3,
                "method": "session/prompt",
                "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "again"}]},
            }
        )
        proc.stdin.close()
        out, err = await proc.communicate()
    last = json.loads(out.splitlines()[-1])
    assert last["id"] == 3 and last["result"] == {"stopReason": "cancelled"}, err.decode()[-2000:]
    assert proc.returncode == 0
    sent = [m for d, m in read_log(log) if d == "out"]
    sequences = [m["params"]["_meta"]["omniagent"]["sequence"] for m in sent if m.get("method") == "session/update"]
    assert sequences == sorted(set(sequences)) and sequences
    [asked] = [m for m in sent if m.get("method") == "session/request_permission"]
    assert asked["params"]["_meta"]["omniagent"]["requestId"] == "r1"
    assert check_transcript(log) > 5


def test_without_agent_omniagent_acp_stays_the_engine_face() -> None:
    """`omniagent acp --help` names --agent; without it the engine face's lazy start is untouched (its own tests)."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "omniagent", "acp", "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0 and "--agent ID" in done.stdout
