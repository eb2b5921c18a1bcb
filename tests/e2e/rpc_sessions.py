"""What the `omniagent rpc` tests of the engine's own features share: starting it against the fake LLM, a session in
a given permission mode, and sending text."""

from __future__ import annotations

from pathlib import Path

from omniagent.engine.interactions.permissions import SET_MODE_METHOD
from omniagent.testing import FakeLLMServer
from tests.engine.rpc_harness import RpcProcess, write_providers


async def start_rpc(tmp_path: Path, llm: FakeLLMServer, env: dict[str, str] | None = None) -> RpcProcess:
    """`omniagent rpc` on the data dir `tmp_path/data`, whose providers point at `llm` (the harness checks the
    extension methods' results too)."""
    write_providers(tmp_path / "data", llm)
    return await RpcProcess.start(tmp_path / "data", env)


async def new_session(rpc: RpcProcess, tmp_path: Path, mode: str = "auto") -> tuple[str, Path]:
    """A session on the fake Anthropic model in the workspace `tmp_path/ws`, in permission mode `mode`."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    result = await rpc.call("session.create", {"workspace_path": str(workspace), "model": "fake-anthropic/fake-model"})
    sid = str(result["session"]["id"])
    await rpc.call(SET_MODE_METHOD, {"session_id": sid, "mode": mode})
    return sid, workspace


def send_text(rpc: RpcProcess, sid: str, text: str) -> int:
    """Send one text input; returns the index of the first line after it."""
    start = len(rpc.lines)
    rpc.send(
        "session.send_input",
        {"session_id": sid, "input": {"type": "content", "content": [{"type": "text", "text": text}]}},
    )
    return start
