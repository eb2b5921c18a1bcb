"""What the `omniagent rpc` tests of the engine's own features share: the harness that also checks the permission
mode extension's results, starting it against the fake LLM, a session in a given permission mode, and sending text."""

from __future__ import annotations

import json
from pathlib import Path

from omniagent.engine.permissions import SET_MODE_METHOD, PermissionModeResult
from omniagent.testing import FakeLLMServer
from tests.engine.rpc_harness import RpcProcess, check_line, write_providers


class PermissionRpc(RpcProcess):
    """The harness, also checking the engine's one extension method against its own result model."""

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while raw := await self.proc.stdout.readline():
            value = json.loads(raw)
            if self.methods_by_id.get(value.get("id")) == SET_MODE_METHOD and "result" in value:
                assert PermissionModeResult.model_validate(value["result"]).dump() == value["result"]
            else:
                check_line(value, self.methods_by_id)
            async with self._changed:
                self.lines.append(value)
                self._changed.notify_all()
        async with self._changed:
            self._changed.notify_all()


async def start_rpc(tmp_path: Path, llm: FakeLLMServer, env: dict[str, str] | None = None) -> PermissionRpc:
    """`omniagent rpc` on the data dir `tmp_path/data`, whose providers point at `llm`."""
    write_providers(tmp_path / "data", llm)
    return await PermissionRpc.start(tmp_path / "data", env)  # type: ignore[return-value]


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
