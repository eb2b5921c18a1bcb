"""MCP servers from the config files, over a real `omniagent rpc` subprocess (docs/engine.md, "MCP servers"): a server
written with the `mcp` SDK, over stdio and over streamable HTTP on 127.0.0.1. Its tools are offered to the model as
`mcp__<server>__<tool>`, a call is asked first (ask mode), and its result reaches the model's next request; a server
that cannot start or that exits mid-session is a `notice` and the session goes on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from omniagent.testing import FakeLLMServer, Reply
from tests.engine.rpc_harness import RpcProcess, write_providers
from tests.mcp_support import START, STDIO, call, http_server, tool_names, tool_results

KEY = "mcp-secret-4711"  # an HTTP server's key, read from the environment by the project file


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The workspace of the test's sessions."""
    path = tmp_path / "ws"
    path.mkdir()
    return path


def _user_config(data: Path, document: dict[str, Any]) -> None:
    (data / "mcp.json").write_text(json.dumps(document))


def _stdio_server() -> dict[str, Any]:
    return {"command": STDIO[0], "args": list(STDIO[1:])}


async def _session(rpc: RpcProcess, workspace: Path) -> str:
    result = await rpc.call("session.create", {"workspace_path": str(workspace), "model": "fake-anthropic/fake-model"})
    return str(result["session"]["id"])


def _send(rpc: RpcProcess, sid: str, text: str) -> None:
    rpc.send(
        "session.send_input",
        {"session_id": sid, "input": {"type": "content", "content": [{"type": "text", "text": text}]}},
    )


async def _allow(rpc: RpcProcess, start: int) -> dict[str, Any]:
    """Wait for the permission ask (servers start first), allow it once; returns the ask."""
    index = await rpc.broadcast("interaction.requested", after=start, within=START)
    params: dict[str, Any] = rpc.lines[index]["params"]
    response = {"type": "confirm", "value": True}
    assert (
        await rpc.call("interaction.respond", {"interaction_id": params["interaction_id"], "response": response}) == {}
    )
    return params


async def _done(rpc: RpcProcess, start: int) -> dict[str, Any]:
    index = await rpc.broadcast("run.done", after=start, within=START)
    return dict(rpc.lines[index]["params"])


def _notices(rpc: RpcProcess, start: int = 0) -> list[dict[str, Any]]:
    return [line["params"] for line in rpc.lines[start:] if line.get("method") == "notice"]


async def test_a_user_config_stdio_server_is_listed_asked_called_and_its_result_reaches_the_model(
    tmp_path: Path, llm: FakeLLMServer, ws: Path
) -> None:
    data = tmp_path / "data"
    write_providers(data, llm)
    _user_config(data, {"mcpServers": {"fixture": _stdio_server()}})
    llm.enqueue(call("mcp__fixture__echo", text="hi"), Reply(text="The server said hi."))
    rpc = await RpcProcess.start(data)
    try:
        sid = await _session(rpc, ws)
        start = len(rpc.lines)
        _send(rpc, sid, "echo hi")
        asked = await _allow(rpc, start)
        assert asked["request"] == {
            "type": "confirm",
            "title": "Call echo of the MCP server fixture?",
            "message": 'Call `echo` of the MCP server `fixture` with {"text": "hi"}.',
        }
        done = await _done(rpc, start)
        assert done["outcome"]["type"] == "turn", done
        states = [line["params"]["state"] for line in rpc.lines[start:] if line.get("method") == "tool.state_changed"]
        assert [s["type"] for s in states] == ["running", "completed"] and states[-1]["output"] == "echo: hi"
    finally:
        assert await rpc.close() == 0
    first, second = (r.body for r in llm.requests)
    assert {"mcp__fixture__echo", "mcp__fixture__crash"} <= set(tool_names(first))
    echo = next(t for t in first["tools"] if t["name"] == "mcp__fixture__echo")  # type: ignore[index]
    assert echo["description"] == "Echo the text back." and echo["input_schema"]["required"] == ["text"]
    assert [r["content"] for r in tool_results(second)] == ["echo: hi"]
    assert _notices(rpc) == []


async def test_a_project_http_server_counts_once_the_user_file_allows_project_servers(
    tmp_path: Path, llm: FakeLLMServer, ws: Path
) -> None:
    """A workspace's `.mcp.json` names programs to run: it is read only when the user's mcp.json says
    `"projectServers": true`. `${VAR}` reads the engine's environment; the key never reaches a wire."""
    data = tmp_path / "data"
    write_providers(data, llm)
    project = {"type": "http", "url": "${MCP_URL}", "headers": {"Authorization": "Bearer ${MCP_KEY}"}}
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"web": project}}))
    async with http_server() as url:
        rpc = await RpcProcess.start(data, env={"MCP_URL": url, "MCP_KEY": KEY})
        try:
            llm.enqueue(Reply(text="No servers here."))
            plain = await _session(rpc, ws)
            start = len(rpc.lines)
            _send(rpc, plain, "hello")
            await _done(rpc, start)
            _user_config(data, {"projectServers": True})
            llm.enqueue(call("mcp__web__echo", text="over http"), Reply(text="Done."))
            sid = await _session(rpc, ws)
            start = len(rpc.lines)
            _send(rpc, sid, "echo over http")
            await _allow(rpc, start)
            assert (await _done(rpc, start))["outcome"]["type"] == "turn"
        finally:
            assert await rpc.close() == 0
            stderr = await rpc.stderr()
    bodies = [r.body for r in llm.requests]
    assert not any(name.startswith("mcp__") for name in tool_names(bodies[0]))
    assert "mcp__web__echo" in tool_names(bodies[1])
    assert [r["content"] for r in tool_results(bodies[2])] == ["echo: over http"]
    assert KEY not in json.dumps(rpc.lines) + stderr


async def test_a_server_that_exits_mid_session_is_a_notice_and_the_session_goes_on(
    tmp_path: Path, llm: FakeLLMServer, ws: Path
) -> None:
    """The call it dies in is an error result the model reads; a `notice` (with the session id) names the server,
    its exit status and last stderr line; the turn ends normally, and the next one goes on without its tools."""
    data = tmp_path / "data"
    write_providers(data, llm)
    _user_config(data, {"mcpServers": {"fixture": _stdio_server()}})
    llm.enqueue(call("mcp__fixture__crash"), Reply(text="It crashed."), Reply(text="Still here."))
    rpc = await RpcProcess.start(data)
    try:
        sid = await _session(rpc, ws)
        start = len(rpc.lines)
        _send(rpc, sid, "crash it")
        await _allow(rpc, start)
        assert (await _done(rpc, start))["outcome"]["type"] == "turn"
        await rpc.broadcast("notice", after=start, within=START)
        (notice,) = _notices(rpc, start)
        assert notice["session_id"] == sid and notice["source"] == "mcp" and notice["level"] == "warn"
        assert "MCP server `fixture` stopped: it exited (exit status: 3)" in notice["message"]
        assert "sdk-fixture: crashing as asked" in notice["message"]
        start = len(rpc.lines)
        _send(rpc, sid, "are you there?")
        assert (await _done(rpc, start))["outcome"]["type"] == "turn"
    finally:
        assert await rpc.close() == 0
    first, second, third = (r.body for r in llm.requests)
    assert "mcp__fixture__crash" in tool_names(first)
    (result,) = tool_results(second)
    assert result["is_error"] is True and "closed the connection" in result["content"]
    assert not any(name.startswith("mcp__") for name in tool_names(third))


async def test_servers_that_cannot_start_or_are_misconfigured_are_notices_and_the_turn_runs_without_them(
    tmp_path: Path, llm: FakeLLMServer, ws: Path
) -> None:
    data = tmp_path / "data"
    write_providers(data, llm)
    servers = {
        "missing": {"command": str(tmp_path / "no-such-server")},
        "typo": {"command": 5},
        "keyless": {"command": "server", "env": {"TOKEN": "${OMNIAGENT_TEST_UNSET_TOKEN}"}},
        "old": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
    }
    _user_config(data, {"mcpServers": servers})
    llm.enqueue(Reply(text="Working without them."))
    rpc = await RpcProcess.start(data)
    try:
        sid = await _session(rpc, ws)
        start = len(rpc.lines)
        _send(rpc, sid, "hello")
        assert (await _done(rpc, start))["outcome"]["type"] == "turn"
    finally:
        assert await rpc.close() == 0
    messages = [n["message"] for n in _notices(rpc)]
    config = str(data / "mcp.json")
    assert messages == [
        f"MCP server `typo` in {config} is left out: `command` must be a non-empty string",
        f"MCP server `keyless` in {config} is left out: the environment variable OMNIAGENT_TEST_UNSET_TOKEN is not set",
        f"MCP server `old` in {config} is left out: SSE servers are not supported (use streamable HTTP)",
        f"MCP server `missing` ({config}) did not start: cannot start {str(tmp_path / 'no-such-server')!r}: "
        "No such file or directory",
    ]
    assert not any(name.startswith("mcp__") for name in tool_names(llm.requests[0].body))


async def test_an_engine_without_mcp_servers_never_imports_the_sdk(
    tmp_path: Path, llm: FakeLLMServer, ws: Path
) -> None:
    """The SDK (and its HTTP client) load only when a session has a server to start."""
    data = tmp_path / "data"
    write_providers(data, llm)
    llm.enqueue(Reply(text="Hello."))
    rpc = await RpcProcess.start(data, env={"PYTHONPROFILEIMPORTTIME": "1"})
    try:
        sid = await _session(rpc, ws)
        start = len(rpc.lines)
        _send(rpc, sid, "hello")
        await _done(rpc, start)
    finally:
        assert await rpc.close() == 0
    lines = (await rpc.stderr()).splitlines()
    imported = {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}
    assert "omniagent.engine.mcp.servers" in imported  # the probe reads what it thinks it reads
    assert not {"mcp", "mcp_types", "httpx2"} & imported
