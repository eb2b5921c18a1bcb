"""A hub process for the `/sidecar` tests, and a raw WebSocket client of its wire that checks every line.

`running_hub(state, env=…)` starts `omniagent hub` as a subprocess and yields its URL and token; `WireClient`
speaks the sidecar wire's lines over the WebSocket, validates each line against the anyagent schema (where the
schema covers it: the hub's own replies are ours) and waits on them with bounds.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.sidecar_schema import validate_line

WAIT = 20.0  # seconds: the bound on every wait
SERVER = Path(__file__).resolve().parent / "sidecar_server.py"
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class RunningHub:
    url: str
    token: str
    process: asyncio.subprocess.Process


@asynccontextmanager
async def running_hub(
    state: Path, *, env: Mapping[str, str] | None = None, mock: str | None = None, retention: int | None = None
) -> AsyncIterator[RunningHub]:
    """`omniagent hub` on 127.0.0.1 (a port of the kernel's choice) with its state in `state` (`hub/` of its data
    dir), agents run with `env` (else ours); stopped with SIGTERM after. The hub has no retention option: a test of
    the retention gets `sidecar_server.py`, the same endpoint in a small app of its own, with `--retention` (as
    every test does on a branch without `omniagent hub`)."""
    assert state.name == "hub", "the hub keeps its state in hub/ of its data dir"
    if retention is None and importlib.util.find_spec("omniagent.faces.hub.serve") is not None:
        args = ["-m", "omniagent", "hub", "--port", "0", "--data-dir", str(state.parent)]
    else:
        # Until `omniagent hub` is on this branch (helper hub-server's), the stand-in serves the same endpoint.
        args = [str(SERVER), str(state), *(["--retention", str(retention)] if retention is not None else [])]
    args += ["--mock", mock] if mock else []
    environment = dict(env if env is not None else os.environ)
    stderr = state.parent / "hub.stderr"
    async with hub_subprocess(args, environment, stderr) as (process, first):
        url = first.split()[-1] if first.strip() else ""
        assert url.startswith("http://127.0.0.1:"), stderr.read_text()
        yield RunningHub(url, (state / "token").read_text().strip(), process)


@asynccontextmanager
async def hub_subprocess(
    args: list[str], environment: dict[str, str], stderr: Path, *, wait: float = WAIT
) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """This interpreter running `args` with this checkout on its path, its stderr into the file `stderr`: the
    process and the first line it printed (read within `wait` seconds); SIGTERM after, killed if it is not gone
    within `wait` seconds."""
    environment = environment | {"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    process = await asyncio.create_subprocess_exec(
        sys.executable, *args, stdout=asyncio.subprocess.PIPE, stderr=stderr.open("wb"), env=environment
    )
    try:
        assert process.stdout is not None
        async with asyncio.timeout(wait):
            first = (await process.stdout.readline()).decode()
        yield process, first
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            async with asyncio.timeout(wait):
                await process.wait()
        except TimeoutError:
            process.kill()
            await process.wait()


class WireClient:
    """The sidecar wire over the hub's WebSocket (a frame holds one or more lines), every line kept and checked."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.lines: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._ids = iter(range(1, 1 << 62))
        self._reader = asyncio.create_task(self._read())
        self.ended = False

    @classmethod
    @asynccontextmanager
    async def connect(cls, hub: RunningHub, token: str | None = None) -> AsyncIterator[WireClient]:
        headers = {"Authorization": f"Bearer {token if token is not None else hub.token}"}
        async with connect(hub.url.replace("http", "ws") + "/sidecar", additional_headers=headers) as socket:
            client = cls(socket)
            try:
                yield client
            finally:
                await socket.close()
                await client._reader

    async def _read(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for message in self.socket:
                assert isinstance(message, str), "a binary frame from the hub"
                for text in message.split("\n"):  # a frame holds one or more whole lines
                    line = json.loads(text)
                    validate_line(line)
                    self.lines.append(line)
                self._changed.set()
        self.ended = True
        self._changed.set()

    async def until(self, found: Any) -> dict[str, Any]:
        """The first line (from the start) for which `found(line)` is true, waiting for it (bounded)."""
        async with asyncio.timeout(WAIT):
            while True:
                for line in self.lines:
                    if found(line):
                        return line
                if self.ended:
                    raise AssertionError(f"the hub closed the socket first; lines: {self.lines[-5:]}")
                self._changed.clear()
                await self._changed.wait()

    async def send(self, cmd: str, **fields: Any) -> int:
        frame_id = next(self._ids)
        await self.socket.send(json.dumps({"id": frame_id, "cmd": cmd, **fields}))
        return frame_id

    async def reply(self, cmd: str, **fields: Any) -> dict[str, Any]:
        """The whole reply line to a command (`ok` or `error`)."""
        frame_id = await self.send(cmd, **fields)
        return await self.until(lambda line: line.get("id") == frame_id)

    async def ok(self, cmd: str, **fields: Any) -> Any:
        line = await self.reply(cmd, **fields)
        assert "ok" in line, line
        return line["ok"]

    async def error(self, cmd: str, **fields: Any) -> dict[str, Any]:
        line = await self.reply(cmd, **fields)
        assert "error" in line, line
        error: dict[str, Any] = line["error"]
        return error

    def events(self, session: str) -> list[dict[str, Any]]:
        return [line["event"] for line in self.lines if "event" in line and line["event"]["session_id"] == session]

    async def event(self, session: str, kind: str) -> dict[str, Any]:
        line = await self.until(
            lambda line: "event" in line and line["event"]["session_id"] == session and kind_of(line["event"]) == kind
        )
        event: dict[str, Any] = line["event"]
        return event


def kind_of(event: Mapping[str, Any]) -> str:
    kind = event["kind"]
    return kind if isinstance(kind, str) else next(iter(kind))


def log_of(events: list[Mapping[str, Any]]) -> list[tuple[int, str]]:
    """What the acceptance compares: each event's sequence and kind, in the order received."""
    return [(event["sequence"], kind_of(event)) for event in events]
