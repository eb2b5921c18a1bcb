"""Each session's MCP servers: which ones (its face's and the config files'), started when a run of the session needs
them, their tools offered to its runs under namespaced names, stopped when the session ends.

- A face `attach`es the servers its client passed (ACP `session/new`, `load`, `resume`, `fork`; the sidecar's
  `open`); running servers of a different set are stopped, and the new set starts with the session's next run.
- A run's start calls `ready(session, root)`. The first time (since an attach), the config files are read
  (`config.load_files`), a face's server replacing a file's of the same name, and every server is started at once;
  the run waits (interruptibly) until each has listed its tools or failed.
- A server that fails to start, or ends by itself, is a `notice` (level warn, source `mcp`, with the session id)
  and the session goes on without its tools. It is not started again until the session's servers are attached
  again. A bad config file entry is a notice too.
- `detach` (ACP `session/close`, the sidecar's close), `forget` (the session was removed) and `aclose` (the engine
  stops) stop them: server processes never outlive their session.

The SDK (`connection.py`) is imported only when a session has a server to start.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omniagent.engine.broadcast import Broadcaster
from omniagent.engine.mcp import names
from omniagent.engine.mcp.config import McpLimits, ServerSpec, load_files, merge
from omniagent.engine.tools import ToolContext, ToolRegistry, ToolResult
from omniagent.protocols.yuke.notices import Notice

if TYPE_CHECKING:
    from omniagent.engine.mcp.connection import Connection, RemoteTool


class McpTool:
    """One tool of one running server, as the registry offers it (a `Tool`): the namespaced name, the server's own
    description and argument schema; a call goes to the server."""

    def __init__(self, name: str, connection: Connection, remote: RemoteTool) -> None:
        self._name = name
        self._connection = connection
        self._remote = remote

    @property
    def name(self) -> str:
        return self._name

    @property
    def connection(self) -> Connection:
        return self._connection

    @property
    def description(self) -> str:
        return self._remote.description

    @property
    def input_schema(self) -> Mapping[str, object]:
        return self._remote.input_schema

    async def run(self, args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        return await self._connection.call(self._remote.name, dict(args))


@dataclass(slots=True)
class _SessionServers:
    """One session's MCP servers: the ones its face attached, their connections once started, and their tools."""

    attached: list[ServerSpec] = field(default_factory=list)
    connections: list[Connection] | None = None  # None: not started since the last attach
    tools: list[McpTool] = field(default_factory=list)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class McpServers:
    """The MCP servers of every session of one engine. `user_dir` holds the user's `mcp.json` (None: no config
    files at all); notices go out through `broadcaster`."""

    def __init__(
        self,
        broadcaster: Broadcaster,
        user_dir: Path | None,
        limits: McpLimits | None = None,
        environ: Mapping[str, str] = os.environ,
    ) -> None:
        self._broadcaster = broadcaster
        self._user_dir = user_dir
        self._limits = limits or McpLimits()
        self._environ = environ
        self._servers: dict[str, _SessionServers] = {}
        self._background: set[asyncio.Task[None]] = set()

    async def attach(self, session_id: str, specs: Sequence[ServerSpec]) -> None:
        """The servers a face's client passed for this session (replacing what an earlier attach passed)."""
        servers = self._servers.setdefault(session_id, _SessionServers())
        async with servers.lock:
            if list(specs) == servers.attached and servers.connections is not None:
                return  # the same servers, already running
            await self._stop(servers)
            servers.attached = list(specs)

    async def detach(self, session_id: str) -> None:
        """The session ended on its face: stop its servers."""
        servers = self._servers.pop(session_id, None)
        if servers is not None:
            async with servers.lock:
                await self._stop(servers)

    def forget(self, session_id: str) -> None:
        """The session was removed: stop its servers in the background."""
        self._spawn(self.detach(session_id))

    async def ready(self, session_id: str, root: str) -> None:
        """Start the session's servers unless they were started since the last attach; returns once each one is
        ready or has failed (never raises but CancelledError: a cancelled start stops what it started)."""
        servers = self._servers.setdefault(session_id, _SessionServers())
        async with servers.lock:
            if servers.connections is not None:
                return
            files, problems = await asyncio.to_thread(load_files, self._user_dir, root, self._environ)
            for problem in problems:
                self._notice(session_id, problem)
            specs = merge(files, servers.attached)
            if not specs:
                servers.connections = []
                return
            from omniagent.engine.mcp.connection import Connection  # the SDK, only now it is needed

            def ended(connection: Connection, problem: str) -> None:
                self._ended(session_id, servers, connection, problem)

            connections = [Connection(spec, root, self._limits, ended) for spec in specs]
            # A cancelled start stops what it started, and leaves the session to start them again next time.
            await asyncio.gather(*(c.start() for c in connections))
            servers.connections = connections
            for connection in connections:
                if connection.state == "failed":
                    spec = connection.spec
                    self._notice(
                        session_id, f"MCP server `{spec.name}` ({spec.origin}) did not start: {connection.problem}"
                    )
            servers.tools = _tools(connections)

    def registry(self, session_id: str, base: ToolRegistry) -> ToolRegistry:
        """`base` plus the tools of the session's running servers."""
        servers = self._servers.get(session_id)
        if servers is None or not servers.tools:
            return base
        taken = {tool.name for tool in base}
        return ToolRegistry([*base, *(tool for tool in servers.tools if tool.name not in taken)])

    async def aclose(self) -> None:
        """Stop every server of every session (the engine is stopping)."""
        await asyncio.gather(*(self.detach(sid) for sid in list(self._servers)))
        while self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    def _ended(self, session_id: str, servers: _SessionServers, connection: Connection, problem: str) -> None:
        servers.tools = [tool for tool in servers.tools if tool.connection is not connection]
        name = connection.spec.name
        self._notice(session_id, f"MCP server `{name}` stopped: {problem}; its tools are gone from this session")

    async def _stop(self, servers: _SessionServers) -> None:
        connections, servers.connections, servers.tools = servers.connections or [], None, []
        await asyncio.gather(*(c.stop() for c in connections))

    def _notice(self, session_id: str, message: str) -> None:
        notice = Notice(level="warn", source="mcp", message=message, session_id=session_id)
        self._broadcaster.emit("notice", notice)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def _tools(connections: list[Connection]) -> list[McpTool]:
    """The tools of the ready servers under their namespaced names (a name taken twice keeps its first tool)."""
    tools: dict[str, McpTool] = {}
    for connection in connections:
        if connection.state != "ready":
            continue
        for remote in connection.tools:
            name = names.tool_name(connection.spec.name, remote.name)
            tools.setdefault(name, McpTool(name, connection, remote))
    return list(tools.values())
