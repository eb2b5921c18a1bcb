"""ACP `mcpServers` → the engine's MCP server specs, which `faces/acp/agent.py` attaches to the session.

v1 spells a stdio server without `type` (`{name, command, args, env: [{name, value}]}`) and an HTTP one with `type:
"http"` (`{name, url, headers: [{name, value}]}`); v2 names every transport in `type`. The agent advertises stdio
and HTTP (`serving/acp/handshake.py`); an SSE, ACP-transport or unknown server is refused with -32602, so the client
learns at once that its server will not be there. Servers passed again (`session/load`, `resume`) replace the
session's earlier ones.
"""

from __future__ import annotations

from typing import Any

from omniagent.engine.api import ServerSpec
from omniagent.wire.messages import INVALID_PARAMS, RpcError

ORIGIN = "the ACP client"


def server_specs(servers: Any) -> list[ServerSpec]:
    """The specs of a request's `mcpServers` (absent = none). Raises RpcError (-32602) for a transport the agent
    does not speak."""
    specs = []
    for server in servers or []:
        if not isinstance(server, dict):
            raise RpcError(INVALID_PARAMS, "an MCP server must be an object")
        name, kind = str(server.get("name", "")), server.get("type", "stdio")
        if kind == "stdio" and isinstance(server.get("command"), str):
            specs.append(
                ServerSpec(
                    name,
                    ORIGIN,
                    command=server["command"],
                    args=tuple(str(a) for a in server.get("args") or []),
                    env=_pairs(server.get("env")),
                )
            )
        elif kind == "http" and isinstance(server.get("url"), str):
            specs.append(ServerSpec(name, ORIGIN, url=server["url"], headers=_pairs(server.get("headers"))))
        else:
            raise RpcError(INVALID_PARAMS, f"MCP server {name!r}: only stdio and http servers are supported")
    return specs


def _pairs(items: Any) -> dict[str, str]:
    """`[{name, value}]` (ACP's env and headers) as a mapping."""
    return {str(i["name"]): str(i.get("value", "")) for i in items or [] if isinstance(i, dict) and "name" in i}
