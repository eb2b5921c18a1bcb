"""`omniagent acp` with the client's MCP servers (docs/acp.md, "MCP servers"), driven by our own ACP client: the
fixture server written with the `mcp` SDK, over stdio and over streamable HTTP on 127.0.0.1, passed in
`session/new`. Its tools are offered to the model as `mcp__<server>__<tool>`, each call is asked with
`session/request_permission` and shown as a tool call; its result reaches the model. A server that exits
mid-session is agent text, and the turn ends normally; `session/close` stops the servers. Every message the agent
wrote is validated against the ACP schema."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from omniagent.protocols.acp import v1, v2
from omniagent.runtime.adapters.acp.client import (
    ClientHandlers,
    McpServerConfig,
    PermissionRequest,
    SessionEvent,
    open_acp_client,
)
from omniagent.testing import FakeLLMServer, Reply, Scenario
from omniagent.wire.messages import INVALID_PARAMS, RpcError
from tests.faces.acp.agent_harness import agent_argv, agent_env, check_transcript, prepare
from tests.mcp_support import STDIO, call, http_server, tool_names, tool_results

WAIT = 90.0  # seconds: the agent, two MCP servers and three model calls


class Recorder:
    """Records updates and permission asks; allows every ask once."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.asked: list[PermissionRequest] = []

    async def on_update(self, event: SessionEvent) -> None:
        self.events.append(dict(event.raw))

    async def on_permission(self, request: PermissionRequest) -> str | None:
        self.asked.append(request)
        return "allow_once"

    def handlers(self) -> ClientHandlers:
        return ClientHandlers(on_update=self.on_update, on_permission=self.on_permission)

    def tool_updates(self, tool_call_id: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("toolCallId") == tool_call_id]


def _stdio(**env: str) -> McpServerConfig:
    return McpServerConfig("fixture", command=STDIO[0], args=STDIO[1:], env=env)


@pytest.mark.parametrize("version", [1, 2])
async def test_stdio_and_http_servers_from_session_new_are_asked_called_and_reach_the_model(
    tmp_path: Path, version: int
) -> None:
    async with FakeLLMServer(Scenario()) as llm, http_server() as url:
        llm.enqueue(
            call("mcp__fixture__echo", "call_1", text="over stdio"),
            call("mcp__web__echo", "call_2", text="over http"),
            Reply(text="Both answered."),
        )
        data, ws, log = prepare(tmp_path, llm)
        recorder = Recorder()
        servers = [_stdio(), McpServerConfig("web", url=url, headers={"X-Test": "yes"})]
        async with (
            asyncio.timeout(WAIT),
            open_acp_client(
                agent_argv(data, log), handlers=recorder.handlers(), env=agent_env(), protocol_version=version
            ) as acp,
        ):
            if version == 1:
                assert acp.init_result["agentCapabilities"]["mcpCapabilities"] == {"http": True, "sse": False}
            else:
                assert acp.init_result["capabilities"]["session"]["mcp"] == {"stdio": {}, "http": {}}
            session = await acp.new_session(str(ws), mcp_servers=servers)
            text = v2.ContentBlockText(text="echo twice") if version == 2 else v1.ContentBlockText(text="echo twice")
            end = await acp.prompt(session.session_id, [text])
        first, second, third = (r.body for r in llm.requests)
    assert end.stop_reason == "end_turn"
    assert {"mcp__fixture__echo", "mcp__web__echo"} <= set(tool_names(first))
    assert [r["content"] for r in tool_results(second)] == ["echo: over stdio"]
    assert [r["content"] for r in tool_results(third)] == ["echo: over stdio", "echo: over http"]
    assert len(recorder.asked) == 2
    stdio_call = recorder.tool_updates("t2.0")
    assert stdio_call[0]["title"] == "fixture: echo" and stdio_call[0]["kind"] == "other"
    assert stdio_call[0]["rawInput"] == {"text": "over stdio"}
    assert [u.get("status") for u in stdio_call] == ["pending", "in_progress", "completed"]
    assert recorder.tool_updates("t3.0")[0]["title"] == "web: echo"
    assert check_transcript(log) > 8


async def test_a_server_that_exits_mid_turn_is_agent_text_and_the_turn_goes_on(tmp_path: Path) -> None:
    """The call it dies in fails with a sentence the model reads; the notice comes first, as agent text."""
    async with FakeLLMServer(Scenario()) as llm:
        llm.enqueue(call("mcp__fixture__crash"), Reply(text="It went away."))
        data, ws, log = prepare(tmp_path, llm)
        recorder = Recorder()
        async with (
            asyncio.timeout(WAIT),
            open_acp_client(agent_argv(data, log), handlers=recorder.handlers(), env=agent_env()) as acp,
        ):
            session = await acp.new_session(str(ws), mcp_servers=[_stdio()])
            end = await acp.prompt(session.session_id, [v2.ContentBlockText(text="crash it")])
        (result,) = tool_results(llm.requests[1].body)
    assert end.stop_reason == "end_turn"
    assert result["is_error"] is True and "`fixture` closed the connection" in result["content"]
    assert [u.get("status") for u in recorder.tool_updates("t2.0")][-1] == "failed"
    notices = [e for e in recorder.events if str(e.get("messageId", "")).startswith("notice.")]
    assert len(notices) == 1 and notices[0]["sessionUpdate"] == "agent_message_chunk"
    assert "MCP server `fixture` stopped: it exited (exit status: 3)" in notices[0]["content"]["text"]
    # Told before the failed call it explains.
    assert recorder.events.index(notices[0]) < recorder.events.index(recorder.tool_updates("t2.0")[-1])
    assert check_transcript(log) > 5


async def test_session_close_stops_the_servers_resume_passes_them_again_and_sse_is_refused(tmp_path: Path) -> None:
    """Server processes end with their session; `session/resume` passes servers again and their tools work; a
    transport the agent does not advertise is -32602 at once."""
    first_pid, second_pid = tmp_path / "first.pid", tmp_path / "second.pid"
    async with FakeLLMServer(Scenario()) as llm:
        llm.enqueue(Reply(text="Hello."), call("mcp__fixture__echo", text="again"), Reply(text="Back."))
        data, ws, log = prepare(tmp_path, llm)
        recorder = Recorder()
        async with (
            asyncio.timeout(WAIT),
            open_acp_client(agent_argv(data, log), handlers=recorder.handlers(), env=agent_env()) as acp,
        ):
            sse = McpServerConfig("old", url="http://127.0.0.1:1/sse", sse=True)
            with pytest.raises(RpcError) as refused:
                await acp.new_session(str(ws), mcp_servers=[sse])
            session = await acp.new_session(str(ws), mcp_servers=[_stdio(MCP_FIXTURE_PIDFILE=str(first_pid))])
            await acp.prompt(session.session_id, [v2.ContentBlockText(text="hi")])
            pid = int(first_pid.read_text())
            os.kill(pid, 0)  # running while the session is open
            await acp.close_session(session.session_id)
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
            servers = [_stdio(MCP_FIXTURE_PIDFILE=str(second_pid))]
            await acp.resume_session(session.session_id, str(ws), mcp_servers=servers)
            end = await acp.prompt(session.session_id, [v2.ContentBlockText(text="echo again")])
        bodies = [r.body for r in llm.requests]
    assert refused.value.code == INVALID_PARAMS
    assert end.stop_reason == "end_turn" and int(second_pid.read_text()) != pid
    assert "mcp__fixture__echo" in tool_names(bodies[0])
    assert [r["content"] for r in tool_results(bodies[2])] == ["echo: again"]
    assert check_transcript(log) > 3
