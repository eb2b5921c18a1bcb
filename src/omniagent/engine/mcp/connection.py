"""One MCP server of one session, through the official `mcp` SDK: start it, list its tools, call them, notice when it
ends by itself, stop it.

This is the only module that imports the SDK; `servers.py` imports it only when a session has a server to start, so
an engine without MCP servers never loads it.

- stdio: the server is our own child process (`wire/process.py`: its own process group, a stderr tail, close →
  TERM → KILL), spoken to in JSON lines through the SDK's client. Its environment is the few variables a program
  needs (`STDIO_ENV`) plus the server's own `env`: never the engine's provider keys. It runs in the workspace (or its
  `cwd`, taken from the workspace).
- streamable HTTP: the SDK's transport with the server's headers.

Each server lives in a task of its own (`_hold`), because the SDK's client must be entered and left in one task; tool
calls come from the run's task. A server that exits while in use ends the connection: `on_ended` gets one sentence
(its exit status and last stderr line, with every configured secret masked), and calls after that are error results.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import (
    CONNECTION_CLOSED,
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    Implementation,
    ResourceLink,
    TextContent,
    TextResourceContents,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from omniagent._version import __version__
from omniagent.engine.mcp.config import McpLimits, ServerSpec
from omniagent.engine.tools.context import ToolResult
from omniagent.wire.errors import LineTooLarge
from omniagent.wire.jsonl import read_lines
from omniagent.wire.process import ChildProcess, SpawnError, open_process

# The engine's environment variables a stdio server gets (besides its own `env`): what a program needs to run.
STDIO_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR")
# Seconds an HTTP server may take to accept a connection or a request body.
HTTP_TIMEOUT = 30.0
# Seconds to wait for a server's exit once its output ended (to tell how it ended before a call reports it).
EXIT_WAIT = 5.0
# Seconds a stop may take before the server's task is cancelled (its process group is killed either way).
STOP_WAIT = 10.0
# Pages of `tools/list` read at most, so a server that pages forever cannot hold a start.
MAX_TOOL_PAGES = 20
# Characters of stderr quoted in a diagnostic.
STDERR_QUOTE = 300

State = Literal["starting", "ready", "failed", "ended", "stopped"]


@dataclass(frozen=True, slots=True)
class RemoteTool:
    """A tool as the server lists it: its own name, a description and an object schema of its arguments."""

    name: str
    description: str
    input_schema: dict[str, object]


class Connection:
    """One server: `start()`, then `tools` and `call()` while `state` is ready, then `stop()`.

    `problem` says why a server failed to start or ended. `on_ended(self, sentence)` is called once when a server
    that was ready ends by itself.
    """

    def __init__(
        self, spec: ServerSpec, root: str, limits: McpLimits, on_ended: Callable[[Connection, str], None]
    ) -> None:
        self.spec = spec
        self.state: State = "starting"
        self.problem = ""
        self.tools: tuple[RemoteTool, ...] = ()
        self._root = root
        self._limits = limits
        self._on_ended = on_ended
        self._client: Client | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._gone = asyncio.Event()  # the server has ended (and it was told how)

    async def start(self) -> None:
        """Start the server and wait until it has listed its tools, or failed (`state` failed, `problem` why).
        Raises only CancelledError (the server is stopped first)."""
        ready = self._ready = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._hold(ready), name=f"mcp:{self.spec.name}")
        try:
            async with asyncio.timeout(self._limits.start_timeout):
                await asyncio.shield(ready)
        except TimeoutError:
            self._finish("failed", f"it did not answer within {self._limits.start_timeout:g} s")
            await self.stop()
        except asyncio.CancelledError:
            await asyncio.shield(self.stop())
            raise

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """Call one of the server's tools; every failure is an error result naming the server."""
        name, client = self.spec.name, self._client
        if self.state != "ready" or client is None:
            return ToolResult.error(f"the MCP server `{name}` is not running: {self.problem or 'it was stopped'}")
        try:
            result = await client.call_tool(tool, arguments, read_timeout_seconds=self._limits.call_timeout)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                # Its end is told (a notice) before the model reads of it, when it follows at once.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(EXIT_WAIT):
                        await self._gone.wait()
                return ToolResult.error(f"the MCP server `{name}` closed the connection during the call")
            return ToolResult.error(f"the MCP server `{name}` answered with an error: {self._mask(exc.message)}")
        except Exception as exc:  # a timeout, a broken connection, an off-schema answer: the model reads it
            return ToolResult.error(f"the call to the MCP server `{name}` failed: {self._describe(exc)}")
        return _result(result, self._limits.output_cap)

    async def stop(self) -> None:
        """Stop the server (idempotent, bounded): its process group is closed, its HTTP session ended."""
        if self.state in ("starting", "ready"):
            self.state = "stopped"
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        if self._ready is None or not self._ready.done():
            task.cancel()  # still starting: nothing to close politely (its process group is closed on the way out)
        _, late = await asyncio.wait({task}, timeout=STOP_WAIT)
        if late:
            task.cancel()
            await asyncio.wait({task})

    # --- the server's task ---------------------------------------------------------------------------------------

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        child: ChildProcess | None = None
        try:
            async with contextlib.AsyncExitStack() as stack:
                spec = self.spec
                if spec.command:
                    env = {k: os.environ[k] for k in STDIO_ENV if k in os.environ} | dict(spec.env)
                    cwd = os.path.join(self._root, spec.cwd) if spec.cwd else self._root
                    child = await stack.enter_async_context(open_process([spec.command, *spec.args], cwd=cwd, env=env))
                    transport: Any = _child_transport(child)
                else:
                    # A call's answer may stream for as long as the call may run.
                    timeout = httpx2.Timeout(HTTP_TIMEOUT, read=self._limits.call_timeout)
                    http = httpx2.AsyncClient(headers=dict(spec.headers), timeout=timeout)
                    await stack.enter_async_context(http)
                    transport = streamable_http_client(spec.url, http_client=http)
                info = Implementation(name="omniagent", version=__version__)
                client = await stack.enter_async_context(Client(transport, client_info=info))
                tools = await _list_tools(client)
                if self.state != "starting":
                    return  # stopped, or given up on, while it started
                self.tools, self._client, self.state = tools, client, "ready"
                ready.set_result(None)
                exited = await self._until_stopped(child)
                self._client = None
                if exited and child is not None:
                    self._ended(await self._exit_words(child) or "it exited")
        except SpawnError as exc:
            self._finish("failed", self._mask(str(exc)))
        except Exception as exc:  # any failure of a server is a diagnostic, never the engine's
            words = (await self._exit_words(child) if child is not None else None) or self._describe(exc)
            if self.state == "ready":
                self._ended(words)
            else:
                self._finish("failed", words)
        finally:
            self._client = None
            self._gone.set()
            if not ready.done():
                ready.set_result(None)

    async def _until_stopped(self, child: ChildProcess | None) -> bool:
        """Wait for `stop()` or, for stdio, the process's exit; True when it exited by itself."""
        waits: set[asyncio.Future[Any]] = {asyncio.ensure_future(self._stop.wait())}
        exit_wait = asyncio.ensure_future(child.wait()) if child is not None else None
        if exit_wait is not None:
            waits.add(exit_wait)
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()
        return exit_wait is not None and exit_wait.done() and not exit_wait.cancelled() and not self._stop.is_set()

    async def _exit_words(self, child: ChildProcess) -> str | None:
        """How a stdio server ended, for a person: its exit status and last stderr line; None while it still runs."""
        try:
            async with asyncio.timeout(EXIT_WAIT):
                status = await child.wait()
        except TimeoutError:
            return None
        words = f"it exited ({status})"
        tail = [line for line in child.stderr_tail() if line.strip()]
        if tail:
            words += f"; its last stderr line: {self._mask(tail[-1][:STDERR_QUOTE])}"
        return words

    def _ended(self, problem: str) -> None:
        """A ready server ended by itself: tell it once, then let a call that saw the connection go report it."""
        if self.state == "ready":
            self._finish("ended", problem)
            self._on_ended(self, self.problem)
        self._gone.set()

    def _finish(self, state: State, problem: str) -> None:
        if self.state in ("starting", "ready"):
            self.state, self.problem = state, problem

    def _describe(self, exc: BaseException) -> str:
        leaf = _leaf(exc)
        detail = str(leaf) if not isinstance(leaf, MCPError) else leaf.message
        return self._mask(f"{type(leaf).__name__}: {detail}" if detail else type(leaf).__name__)

    def _mask(self, text: str) -> str:
        for secret in self.spec.secrets():
            text = text.replace(secret, "***")
        return text


async def _list_tools(client: Client) -> tuple[RemoteTool, ...]:
    tools: list[RemoteTool] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            schema: dict[str, object] = dict(tool.input_schema)
            schema.setdefault("type", "object")
            tools.append(RemoteTool(tool.name, tool.description or tool.title or tool.name, schema))
        cursor = page.next_cursor
        if cursor is None:
            break
    return tuple(tools)


@contextlib.asynccontextmanager
async def _child_transport(child: ChildProcess) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's transport streams over a child's stdin/stdout: one JSON-RPC message per line each way. The server's
    end of output closes the read stream, which fails the calls still waiting with CONNECTION_CLOSED."""
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)

    async def inbound() -> None:
        async with read_send:
            try:
                async for line in read_lines(child.stdout):
                    if isinstance(line, LineTooLarge):
                        await read_send.send(ValueError(str(line)))
                    elif line.strip():
                        await read_send.send(_parse(line))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the client is gone: nothing reads any more

    async def outbound() -> None:
        async with write_receive:
            try:
                async for message in write_receive:
                    child.stdin.write(message.message.model_dump_json(by_alias=True, exclude_unset=True).encode())
                    child.stdin.write(b"\n")
                    await child.stdin.drain()
            except OSError:
                await read_send.aclose()  # the server stopped reading: the client sees the connection end

    async with anyio.create_task_group() as group:
        group.start_soon(inbound)
        group.start_soon(outbound)
        try:
            yield read_receive, write_send
        finally:
            group.cancel_scope.cancel()


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValidationError as exc:
        return exc


def _result(result: CallToolResult, cap: int) -> ToolResult:
    """The text the model reads of a call's result (text blocks as they are, other blocks named, structured content
    as JSON when there is no text), cut at `cap` characters."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent | AudioContent):
            parts.append(f"[{block.type} {block.mime_type}, {len(block.data)} base64 characters]")
        elif isinstance(block, EmbeddedResource):
            inner = block.resource
            parts.append(inner.text if isinstance(inner, TextResourceContents) else f"[resource {inner.uri}]")
        elif isinstance(block, ResourceLink):
            parts.append(f"[resource link {block.uri}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n".join(parts)
    if len(text) > cap:
        text = f"{text[:cap]}\n[{len(text) - cap} more characters cut]"
    return ToolResult(output=text or "(no output)", is_error=bool(result.is_error))


def _leaf(exc: BaseException) -> BaseException:
    """The first real failure inside exception groups (anyio task groups wrap what failed)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
