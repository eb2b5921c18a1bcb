"""What an ACP client's request params say, read once for every handler: prompt blocks as text, `mcpServers` as the
runtime's, the working directory, our `_meta` extension, and a listed session's `SessionInfo`. Pure; a param that
cannot be taken is a -32602 `RpcError` saying why."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from msgspec import UNSET

from omniagent.protocols.acp import v2
from omniagent.protocols.sidecar.commands import HttpMcp, McpServer, SseMcp, StdioMcp
from omniagent.serving.acp import builders as b
from omniagent.wire.messages import INVALID_PARAMS, RpcError


def prompt_text(blocks: Any) -> str:
    """A prompt's blocks as one text (resource links and embedded text resources as mentions). Raises RpcError
    (-32602) for content the agents cannot take."""
    parts = b.prompt_parts(list(blocks or []))
    if isinstance(parts, str):
        raise RpcError(INVALID_PARAMS, parts)
    return "\n\n".join(part.text for part in parts if hasattr(part, "text"))


def mcp_servers(servers: Any) -> list[McpServer]:
    """ACP `mcpServers` as the runtime's (v1 spells stdio without `type`). Raises RpcError (-32602) for one that is
    not stdio, http or sse."""
    out: list[McpServer] = []
    for server in servers or []:
        if not isinstance(server, dict):
            raise RpcError(INVALID_PARAMS, "an MCP server must be an object")
        name, kind = str(server.get("name", "")), server.get("type", "stdio")
        if kind == "stdio" and isinstance(server.get("command"), str):
            args = [str(a) for a in server.get("args") or []]
            out.append(
                McpServer(
                    name=name, connection=StdioMcp(command=server["command"], args=args, env=pairs(server.get("env")))
                )
            )
        elif kind in ("http", "sse") and isinstance(server.get("url"), str):
            made = HttpMcp if kind == "http" else SseMcp
            out.append(McpServer(name=name, connection=made(url=server["url"], headers=pairs(server.get("headers")))))
        else:
            raise RpcError(INVALID_PARAMS, f"MCP server {name!r}: only stdio, http and sse servers are supported")
    return out


def pairs(items: Any) -> dict[str, str]:
    """ACP's `[{name, value}]` (env and headers) as a mapping."""
    return {str(i["name"]): str(i.get("value", "")) for i in items or [] if isinstance(i, dict) and "name" in i}


def directory(params: dict[str, Any]) -> str:
    """The request's `cwd`: an absolute path to a directory that exists."""
    cwd = params.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise RpcError(INVALID_PARAMS, "cwd must be an absolute path")
    if not os.path.isdir(cwd):
        raise RpcError(INVALID_PARAMS, "cwd is not a directory")
    return cwd


def agent_of(params: dict[str, Any]) -> str | None:
    """The agent `_meta.omniagent.agent` names (an id of `omniagent agents`), if any."""
    meta = params.get("_meta")
    ours = meta.get("omniagent") if isinstance(meta, dict) else None
    agent = ours.get("agent") if isinstance(ours, dict) else None
    if agent is not None and not isinstance(agent, str):
        raise RpcError(INVALID_PARAMS, "_meta.omniagent.agent names an agent (see `omniagent agents`)")
    return agent


def listed(
    session_id: str, cwd: str, title: str | None, agent: str, when: float, extra: dict[str, Any]
) -> dict[str, Any]:
    """A session as `session/list` shows it: ACP's `SessionInfo`, and our facts in `_meta.omniagent`."""
    updated = datetime.fromtimestamp(when, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    info = v2.SessionInfo(session_id=session_id, cwd=cwd, title=title or UNSET, updated_at=updated)
    listed = b.wire(info)
    listed["_meta"] = {"omniagent": {"agent": agent, **extra}}
    return listed
