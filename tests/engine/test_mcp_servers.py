"""Each session's MCP servers, on the engine part alone (`engine/mcp/servers.py`) with real server processes: a server
that never answers is given up on, a cancelled start leaves the session to start them again, and detaching a
session ends its processes (a call after that is an error result)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from omniagent.engine.broadcast import Broadcaster
from omniagent.engine.mcp.config import McpLimits, ServerSpec
from omniagent.engine.mcp.servers import McpServers
from omniagent.engine.tools import ToolContext, default_tools
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.notices import Notice
from tests.mcp_support import START, STDIO

SID = "0123456789abcdef0123456789abcdef"


def _hub(notices: list[Notice], limits: McpLimits | None = None) -> McpServers:
    broadcaster = Broadcaster()

    def record(_name: str, data: YukeModel) -> None:
        assert isinstance(data, Notice)
        notices.append(data)

    broadcaster.subscribe(record)
    return McpServers(broadcaster, None, limits)


def _fixture(**env: str) -> ServerSpec:
    return ServerSpec("fixture", "the test", command=STDIO[0], args=STDIO[1:], env=env)


async def test_a_server_that_never_answers_is_given_up_on_and_stopped(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    silent = ServerSpec(
        "silent",
        "the test",
        command=sys.executable,
        args=("-c", "import os, sys; open(sys.argv[1], 'w').write(str(os.getpid())); sys.stdin.read()", str(pidfile)),
    )
    notices: list[Notice] = []
    hub = _hub(notices, McpLimits(start_timeout=0.5))
    await hub.attach(SID, [silent])
    async with asyncio.timeout(START):
        await hub.ready(SID, str(tmp_path))
    (notice,) = notices
    assert notice.message == "MCP server `silent` (the test) did not start: it did not answer within 0.5 s"
    assert notice.session_id == SID
    with pytest.raises(ProcessLookupError):
        os.kill(int(pidfile.read_text()), 0)
    await hub.aclose()


async def test_a_cancelled_start_leaves_the_session_to_start_its_servers_again(tmp_path: Path) -> None:
    notices: list[Notice] = []
    hub = _hub(notices)
    await hub.attach(SID, [_fixture()])
    first = asyncio.create_task(hub.ready(SID, str(tmp_path)))
    await asyncio.sleep(0)  # one turn of the loop: the start begins, and no server can be up yet
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    assert [t.name for t in hub.registry(SID, default_tools())] == [t.name for t in default_tools()]
    async with asyncio.timeout(START):
        await hub.ready(SID, str(tmp_path))
    assert "mcp__fixture__echo" in [t.name for t in hub.registry(SID, default_tools())]
    assert notices == []
    await hub.aclose()


async def test_detach_ends_the_processes_and_calls_after_it_are_error_results(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    notices: list[Notice] = []
    hub = _hub(notices)
    await hub.attach(SID, [_fixture(MCP_FIXTURE_PIDFILE=str(pidfile))])
    async with asyncio.timeout(START):
        await hub.ready(SID, str(tmp_path))
        tools = hub.registry(SID, default_tools())
        context = ToolContext.for_workspace(tmp_path)
        echoed = await tools.run_json("mcp__fixture__echo", '{"text": "x"}', context)
        assert echoed.output == "echo: x" and not echoed.is_error
        await hub.detach(SID)
    with pytest.raises(ProcessLookupError):
        os.kill(int(pidfile.read_text()), 0)
    after = await tools.run_json("mcp__fixture__echo", '{"text": "x"}', context)
    assert after.is_error and after.output == "the MCP server `fixture` is not running: it was stopped"
    assert notices == []  # a server stopped on purpose is no news
    await hub.aclose()
