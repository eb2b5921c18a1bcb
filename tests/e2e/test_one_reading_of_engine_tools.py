"""One translation of engine events per face family (issue 15): the same engine tool call, run once behind
`omniagent acp` and once behind `omniagent serve` (agent `omniagent`), has the same title and the same arguments
on both wires. A search is the call the two faces once read differently ("search" with a `pattern` argument the
tool never sends, against "Search TODO")."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.acp import v2
from omniagent.runtime.adapters.acp.client import ClientHandlers, PermissionRequest, SessionEvent, open_acp_client
from omniagent.testing import FakeLLMServer
from tests.e2e.sidecar_client import Sidecar, kind_of
from tests.faces.acp.agent_harness import agent_argv, agent_env, prepare
from tests.runtime.adapters.engine.harness import child_env, tool_then_text, workspace

WAIT = 30.0  # seconds: bound on every test body


async def _acp_tool_call(tmp_path: Path, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The update that opened the call on the ACP wire."""
    events: list[SessionEvent] = []

    async def on_update(event: SessionEvent) -> None:
        events.append(event)

    async def on_permission(_request: PermissionRequest) -> str | None:
        return "allow_once"

    async with FakeLLMServer(tool_then_text(name, arguments)) as llm:
        data, ws, log = prepare(tmp_path / "acp", llm)
        (ws / "notes.txt").write_text("TODO: one\n")
        handlers = ClientHandlers(on_update=on_update, on_permission=on_permission)
        async with (
            asyncio.timeout(WAIT),
            open_acp_client(agent_argv(data, log), handlers=handlers, env=agent_env()) as acp,
        ):
            session = await acp.new_session(str(ws))
            reply = await acp.prompt(session.session_id, [v2.ContentBlockText(text="go")])
    assert reply.stop_reason == "end_turn"
    return next(e.raw for e in events if e.raw.get("toolCallId") and "title" in e.raw)


async def _sidecar_tool_call(tmp_path: Path, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The first `ToolUpdated` of the call on the sidecar wire (answering its permission, if it asks)."""
    home = tmp_path / "serve"
    home.mkdir()
    ws = workspace(home)
    (ws / "notes.txt").write_text("TODO: one\n")
    async with (
        FakeLLMServer(tool_then_text(name, arguments)) as llm,
        asyncio.timeout(WAIT),
        Sidecar.running(env=child_env(home, llm)) as sidecar,
    ):
        session = (await sidecar.ok("open", agent="omniagent", dir=str(ws), permission_mode="AutoApprove"))["id"]
        await sidecar.ok("prompt", session=session, text="go")
        await sidecar.wait_event(session, "TurnEnded")
        events = sidecar.events(session)
    return next(e["kind"]["ToolUpdated"] for e in events if kind_of(e) == "ToolUpdated")


@pytest.mark.parametrize(
    ("name", "arguments", "title"),
    [
        ("search", {"regex": "TODO", "path": "."}, "Search TODO"),
        ("read", {"path": "notes.txt"}, "Read notes.txt"),
        ("exec", {"command": "echo hi"}, "echo hi"),
    ],
)
async def test_the_acp_face_and_the_sidecar_show_one_title_and_one_reading_of_the_arguments(
    tmp_path: Path, name: str, arguments: dict[str, Any], title: str
) -> None:
    acp = await _acp_tool_call(tmp_path, name, arguments)
    sidecar = await _sidecar_tool_call(tmp_path, name, arguments)
    assert acp["title"] == sidecar["title"] == title
    assert acp["rawInput"] == sidecar["raw"]["input"] == arguments
