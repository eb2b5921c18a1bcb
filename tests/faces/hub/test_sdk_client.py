"""The hub's `/acp` driven by an outside ACP client over the network: npm `@agentclientprotocol/sdk@2.4.0`, whose
`experimental/http-client` (Streamable HTTP) and `experimental/ws-client` (WebSocket) transports implement the draft
remote transport. The node script `sdk_remote_client.mjs` runs initialize → session/new → a prompt whose turn asks a
permission (allowed) through the real `omniagent hub` with the mock agent."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.faces.acp.agent_harness import npm_peer, run_peer
from tests.faces.hub.harness import hub_process

SCRIPT = Path(__file__).resolve().parent / "sdk_remote_client.mjs"


@pytest.mark.parametrize("transport", ["http", "ws"])
async def test_the_acp_sdk_client_runs_a_turn_through_the_hub(transport: str, tmp_path: Path) -> None:
    node, entry = npm_peer("acp-sdk-remote")
    sdk = entry.parents[2]  # …/sdk/dist/transports/http-stream.js → …/sdk
    _, ws_entry = npm_peer("ws")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "data").mkdir()
    with hub_process(tmp_path / "data", "--mock", "turn") as hub:
        env = {**os.environ, "OMNIAGENT_HUB_TOKEN": hub.token}
        out, err, code = await run_peer(
            [node, str(SCRIPT), str(sdk), str(ws_entry.parent), transport, f"{hub.url}/acp/mock", str(workspace)],
            within=60,
            env=env,
        )
    report = json.loads(out.strip().splitlines()[-1])
    assert code == 0 and report["ok"], (report, err[-2000:], hub.stderr()[-2000:])
    assert report["protocolVersion"] == 1
    assert report["stopReason"] == "end_turn"
    assert report["permissions"] == 1
    assert report["text"] == "Let me check. Done."
    assert set(report["kinds"]) == {"agent_message_chunk"}
