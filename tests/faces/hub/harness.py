"""Test support for the hub's server: the hub in-process on a real socket (hypercorn on 127.0.0.1, port 0) over a
small ACP agent side of our own, and the real `omniagent hub` process; SSE reading for httpx.

The agent side here (`ScriptedSide`) stands in for `serving/acp` where a test is about the transport alone: a real
`Peer` with a handler table (`initialize`, `session/new`, `test/emit` numbered session/updates, `test/ask` a
server→client request) and the `reattach` the transport calls for a session stream's `Last-Event-ID`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from hypercorn.asyncio import serve
from hypercorn.config import Config

from omniagent.faces.hub.app import build_app
from omniagent.faces.hub.guard import TokenFile
from omniagent.faces.hub.settings import Limits, Listener
from omniagent.hub.hub import Hub, HubClient
from omniagent.hub.state import TOKEN_FILE, HubState
from omniagent.wire.jsonrpc import Peer

URL_LINE = re.compile(r"omniagent hub listening on (\S+)")


@dataclass
class Sessions:
    """The scripted sessions, shared by every connection of one hub (as the hub's are)."""

    logs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def new(self) -> str:
        session_id = f"t{len(self.logs) + 1}"
        self.logs[session_id] = []
        return session_id


class ScriptedSide:
    """A small ACP agent side on a real peer."""

    def __init__(self, peer: Peer, client: HubClient, agent: str, sessions: Sessions) -> None:
        self.peer = peer
        self.agent = agent
        self.sessions = sessions
        self._replays: set[asyncio.Task[None]] = set()
        for method, handler in {
            "initialize": self._initialize,
            "session/new": self._new,
            "test/emit": self._emit,
            "test/ask": self._ask,
            "test/echo": self._echo,
        }.items():
            peer.on_request(method, handler)

    async def _initialize(self, params: Any) -> dict[str, Any]:
        if isinstance(params, dict) and params.get("refuse"):
            from omniagent.wire.messages import RpcError

            raise RpcError(-32602, "refused as asked")
        return {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": [], "_meta": {"agent": self.agent}}

    async def _new(self, params: Any) -> dict[str, Any]:
        return {"sessionId": self.sessions.new()}

    async def _emit(self, params: Any) -> dict[str, Any]:
        log = self.sessions.logs[params["sessionId"]]
        for _ in range(params["count"]):
            update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"n{len(log) + 1}"}}
            log.append(update)
            self._send(params["sessionId"], len(log), update)
        return {"last": len(log)}

    async def _ask(self, params: Any) -> Any:
        return await self.peer.request("session/request_permission", {"sessionId": params["sessionId"]})

    async def _echo(self, params: Any) -> Any:
        return params

    def _send(self, session_id: str, sequence: int, update: dict[str, Any]) -> None:
        meta = {"omniagent": {"sequence": sequence}}
        self.peer.notify("session/update", {"sessionId": session_id, "update": update, "_meta": meta})

    async def reattach(self, session_id: str, after: int) -> None:
        log = self.sessions.logs[session_id]  # KeyError: unknown session
        self._replays.add(asyncio.ensure_future(self._replay(session_id, log, after)))  # as the real side: a task

    async def _replay(self, session_id: str, log: list[dict[str, Any]], after: int) -> None:
        for number, update in enumerate(log[after:], start=after + 1):
            self._send(session_id, number, update)

    async def aclose(self) -> None:
        pass


@dataclass
class Served:
    """A hub being served: its base URL, its token, and the app's connections."""

    url: str
    token: str
    app: Any
    sessions: Sessions

    def headers(self, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", **extra}


@contextlib.asynccontextmanager
async def serving(tmp: Path, limits: Limits | None = None) -> AsyncIterator[Served]:
    """The hub's app over a scripted agent side, served by hypercorn on 127.0.0.1 (a free port)."""
    state = HubState(tmp / "hub")
    token = state.token()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    sessions = Sessions()
    async with Hub.start(state=state) as hub:
        app = build_app(
            hub,
            listener=Listener(port=port),
            token=TokenFile(state.folder / TOKEN_FILE),
            default_agent="scripted",
            acp=lambda peer, client, agent, _attach: ScriptedSide(peer, client, agent, sessions),
            limits=limits,
        )
        config = Config()
        config.bind = [f"fd://{sock.detach()}"]
        config.accesslog = None
        config.graceful_timeout = 1.0
        stop = asyncio.Event()

        async def stopping() -> None:
            await stop.wait()
            await app.registry.aclose()

        server = asyncio.ensure_future(serve(app.asgi, config, shutdown_trigger=stopping))  # type: ignore[arg-type]
        try:
            yield Served(f"http://127.0.0.1:{port}", token, app, sessions)
        finally:
            stop.set()
            await server


class HubProcess:
    """The real `omniagent hub` on 127.0.0.1 (port 0), its stderr collected in a file."""

    def __init__(self, data_dir: Path, *extra: str) -> None:
        self.stderr_path = data_dir / "hub-stderr.log"
        self._stderr = self.stderr_path.open("wb")
        argv = [sys.executable, "-m", "omniagent", "hub", "--port", "0", "--data-dir", str(data_dir), *extra]
        env = {**os.environ, "OMNIAGENT_LOG": "info"}
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self._stderr, env=env)
        assert self.proc.stdout is not None
        self.banner = self.proc.stdout.readline().decode()
        found = URL_LINE.search(self.banner)
        if found is None:
            self.stop()
            raise AssertionError(f"no URL in the hub's first line: {self.banner!r}; stderr: {self.stderr()}")
        self.url = found.group(1)
        while "omniagent hub token" not in self.banner:  # the banner's last line says how to get the token
            line = self.proc.stdout.readline().decode()
            assert line, f"the hub's banner ended early: {self.banner!r}"
            self.banner += line
        self.port = int(self.url.rsplit(":", 1)[1])
        self.token = (data_dir / "hub" / TOKEN_FILE).read_text().strip()

    def headers(self, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", **extra}

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def stderr(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")

    def stop(self) -> int:
        """Stop the hub (SIGTERM); its exit code. The rest of its stdout is added to `banner`."""
        if self.proc.poll() is None:
            self.proc.terminate()
        assert self.proc.stdout is not None
        self.banner += self.proc.stdout.read().decode()
        code = self.proc.wait(timeout=30)
        self._stderr.close()
        return code


@contextlib.contextmanager
def hub_process(data_dir: Path, *extra: str) -> Iterator[HubProcess]:
    hub = HubProcess(data_dir, *extra)
    try:
        yield hub
    finally:
        hub.stop()


def initialize(request_id: int = 1, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": {"protocolVersion": 1, **params}}


def call(request_id: int | str, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


async def sse_events(response: httpx.Response) -> AsyncIterator[tuple[str | None, dict[str, Any]]]:
    """(id, message) of each SSE event of a streaming response; comment lines are skipped."""
    event_id: str | None = None
    data: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith(":"):
            continue
        if line.startswith("id: "):
            event_id = line[4:]
        elif line.startswith("data: "):
            data.append(line[6:])
        elif line == "" and data:
            yield event_id, json.loads("\n".join(data))
            event_id, data = None, []


async def take(events: AsyncIterator[tuple[str | None, dict[str, Any]]], count: int) -> list[tuple[str | None, Any]]:
    """The next `count` events."""
    got = []
    async for event in events:
        got.append(event)
        if len(got) == count:
            break
    return got


# One TLS context for every client a cycle makes: httpx builds one per client otherwise (~25 ms, the client's cost).
_TLS = ssl.create_default_context()


def cycle_http(hub: HubProcess) -> None:
    """One streamable HTTP client's life on its own TCP connection: initialize, open the stream, DELETE, leave."""
    with httpx.Client(timeout=30, verify=_TLS) as client:
        answer = client.post(f"{hub.url}/acp", json=initialize(), headers=hub.headers())
        assert answer.status_code == 200, answer.text
        connection = {"Acp-Connection-Id": answer.headers["acp-connection-id"]}
        with client.stream(
            "GET", f"{hub.url}/acp", headers=hub.headers(Accept="text/event-stream", **connection)
        ) as stream:
            assert stream.status_code == 200
            assert client.delete(f"{hub.url}/acp", headers=hub.headers(**connection)).status_code == 202
            for _ in stream.iter_bytes():  # the stream ends with its connection
                pass


def cycle_websocket(hub: HubProcess) -> None:
    """One WebSocket client's life: upgrade, initialize, close."""
    from websockets.sync.client import connect

    with connect(hub.url.replace("http", "ws") + "/acp", additional_headers=hub.headers()) as ws:
        ws.send(json.dumps(initialize()))
        assert json.loads(ws.recv(timeout=30))["id"] == 1


def settled_fds(hub: HubProcess, at_most: int, within: float = 30.0) -> int:
    """The hub's open descriptors once they are `at_most` (sockets the clients closed are closed by the hub a moment
    later), or what they are after `within` seconds."""
    import time

    deadline = time.monotonic() + within
    while (count := hub.fds()) > at_most and time.monotonic() < deadline:
        time.sleep(0.05)
    return count
