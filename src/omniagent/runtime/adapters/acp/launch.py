"""Starting an ACP agent and reading its failures: the command line, the MCP servers it is given, and how a failed
handshake or an error answer reads as the runtime's errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

from omniagent.protocols.sidecar.agents import AgentInstallation, McpTransport
from omniagent.protocols.sidecar.commands import HttpMcp, SseMcp, StdioMcp
from omniagent.runtime import catalog
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.acp.client import AgentExited, AgentProtocolError, AgentUnsupported, McpServerConfig
from omniagent.runtime.adapters.acp.info import AgentFacts
from omniagent.runtime.adapters.driver_loop import stderr_tail
from omniagent.runtime.errors import HandshakeTimeout, ProtocolFailed, SpawnFailed, UnsupportedFeature
from omniagent.wire.messages import RpcError
from omniagent.wire.process import SpawnError

# Characters of an agent error's `data` kept in our error text.
ERROR_DATA_CHARS = 500


def launch_argv(installation: AgentInstallation) -> list[str]:
    """The command line: the executable, then the inline agent's args or its catalog row's launch args."""
    if installation.acp_args is not None:
        return [installation.executable_path, *installation.acp_args]
    row = catalog.profile(installation.id)
    return [installation.executable_path, *(row.launch_args if row is not None else ())]


@contextmanager
def handshake_errors() -> Iterator[None]:
    """The one place where the client's handshake failures become the runtime's errors."""
    try:
        yield
    except TimeoutError as exc:
        raise HandshakeTimeout() from exc
    except SpawnError as exc:
        raise SpawnFailed(str(exc)) from exc
    except AgentExited as exc:
        raise ProtocolFailed(f"the agent exited during the handshake ({exc.status}){stderr_tail(exc.stderr)}") from exc
    except (AgentProtocolError, AgentUnsupported) as exc:
        raise ProtocolFailed(str(exc)) from exc
    except RpcError as exc:
        raise ProtocolFailed(rpc_message(exc)) from exc


def mcp_servers(request: d.ConnectRequest, facts: AgentFacts) -> list[McpServerConfig]:
    """The caller's MCP servers for the agent; a transport it did not advertise is refused (stdio always works).

    Raises: `UnsupportedFeature`.
    """
    servers: list[McpServerConfig] = []
    for server in request.mcp_servers:
        connection = server.connection
        if isinstance(connection, StdioMcp):
            servers.append(
                McpServerConfig(server.name, command=connection.command, args=connection.args, env=connection.env)
            )
            continue
        transport = McpTransport.HTTP if isinstance(connection, HttpMcp) else McpTransport.SSE
        if transport not in facts.mcp_transports:
            raise UnsupportedFeature(f"{transport.value} MCP servers")
        assert isinstance(connection, HttpMcp | SseMcp)
        servers.append(
            McpServerConfig(
                server.name, url=connection.url, headers=connection.headers, sse=transport is McpTransport.SSE
            )
        )
    return servers


def rpc_message(exc: RpcError) -> str:
    """An agent's error as "message (code)", plus its `data` cut to ERROR_DATA_CHARS."""
    text = f"{exc.message} ({exc.code})"
    if exc.data is not None:
        text += f": {json.dumps(exc.data)[:ERROR_DATA_CHARS]}"
    return text
