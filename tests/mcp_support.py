"""Test support for the engine's MCP client: the fixture server written with the `mcp` SDK (stdio, or streamable HTTP
on 127.0.0.1), and readers of what the fake LLM received over the Anthropic wire (tools, tool results, system)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from omniagent.testing import FakeToolCall, Reply

SERVER = Path(__file__).resolve().parent / "fixtures" / "mcp" / "sdk_server.py"
# The command line of the fixture server over stdio.
STDIO = (sys.executable, str(SERVER), "stdio")
# Seconds a server may take to come up (a Python process importing the SDK, on a busy machine).
START = 60.0


@asynccontextmanager
async def http_server() -> AsyncIterator[str]:
    """The fixture server over streamable HTTP on 127.0.0.1; yields its URL, stops it after."""
    proc = await asyncio.create_subprocess_exec(sys.executable, str(SERVER), "http", stdout=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), START)
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        if proc.returncode is None:
            proc.terminate()
        await proc.wait()


def call(name: str, call_id: str = "call_m", **arguments: Any) -> Reply:
    """A model reply calling one tool."""
    return Reply(tool_calls=(FakeToolCall(name, arguments, call_id),))


def tool_names(body: Any) -> list[str]:
    """The names of the tools offered in an Anthropic request body."""
    return [tool["name"] for tool in body.get("tools", [])]


def tool_results(body: Any) -> list[dict[str, Any]]:
    """The `tool_result` blocks of an Anthropic request body, in order."""
    return [
        block
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def system_text(body: Any) -> str:
    """The system prompt of an Anthropic request body (a string or text blocks)."""
    system = body.get("system", "")
    return system if isinstance(system, str) else "".join(block["text"] for block in system)
