"""A client of pi's JSONL RPC (`pi --mode rpc`): commands out, responses matched by id, everything else handed on.

pi's wire is not JSON-RPC. A command is `{"id", "type", …fields}`; its answer is `{"type":"response", "id",
"command", "success", "data"|"error"}`; events (`agent_start`, `message_update`, `extension_ui_request`, …) carry no
id. pi handles commands concurrently (each stdin line starts its own task), so a caller that needs an order waits
for one answer before sending the next command.

One reader task reads stdout: a response resolves its waiter, any other frame goes to `on_frame` in arrival order.
`on_frame` may wait (backpressure onto pi's stdout) but must never wait for a response: the reader is the only one
who could deliver it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from omniagent.wire.encode import dumps
from omniagent.wire.errors import LineTooLarge, PeerClosed, WireError
from omniagent.wire.jsonl import LineWriter, read_lines
from omniagent.wire.process import ChildProcess, ExitStatus, open_process

FrameHandler = Callable[[Mapping[str, Any]], Awaitable[None]]


class PiError(WireError):
    """pi answered a command with `success: false`."""

    def __init__(self, command: str, message: str) -> None:
        super().__init__(f"pi refused {command}: {message}")
        self.command = command
        self.message = message


class PiExited(WireError):
    """pi's stdout ended (it exited) while a command waited for its answer."""


class PiClient:
    """One running `pi --mode rpc`; made by `open_pi`."""

    def __init__(self, child: ChildProcess, writer: LineWriter, on_frame: FrameHandler) -> None:
        self.child = child
        self._writer = writer
        self._on_frame = on_frame
        self._waiting: dict[str, asyncio.Future[Any]] = {}
        self._next_id = 0
        self._ended = asyncio.Event()

    async def request(self, command: str, **fields: Any) -> Any:
        """Send one command and return its `data` (None when it has none).

        Raises: `PiError` (refused), `PiExited` (pi ended first).
        """
        self._next_id += 1
        request_id = f"o{self._next_id}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        try:
            self.send({"id": request_id, "type": command, **fields})
            return await future
        finally:
            self._waiting.pop(request_id, None)

    def send(self, frame: Mapping[str, Any]) -> None:
        """Write one frame without waiting for an answer (extension UI responses have none).

        Raises: `PiExited`.
        """
        if self._ended.is_set():
            raise PiExited("pi has exited")
        try:
            self._writer.send_nowait(dumps(frame))
        except PeerClosed as exc:
            raise PiExited("pi closed its stdin") from exc

    async def wait_exited(self) -> ExitStatus:
        """pi's exit status, once its stdout has ended and it has exited."""
        await self._ended.wait()
        return await self.child.wait()

    async def read(self) -> None:
        """The reader loop; runs until pi's stdout ends, then fails every waiting command."""
        try:
            async for line in read_lines(self.child.stdout):
                if isinstance(line, LineTooLarge):
                    continue  # pi's own cap is ours; a frame past it cannot be parsed anyway
                frame = _parse(line)
                if frame is None:
                    continue
                if frame.get("type") == "response":
                    self._resolve(frame)  # an answer nobody waits for (a parse error's has no id) is dropped
                else:
                    await self._on_frame(frame)
        finally:
            self._ended.set()
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(PiExited("pi exited before answering"))

    def _resolve(self, frame: Mapping[str, Any]) -> None:
        future = self._waiting.get(str(frame.get("id")))
        if future is None or future.done():
            return
        if frame.get("success") is True:
            future.set_result(frame.get("data"))
        else:
            command = str(frame.get("command") or "command")
            future.set_exception(PiError(command, str(frame.get("error") or "no reason given")))


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None  # pi writes only JSON on stdout; anything else is a stray print we cannot use
    return value if isinstance(value, dict) else None


@asynccontextmanager
async def open_pi(
    argv: Sequence[str], *, cwd: str, on_frame: FrameHandler, prefix: Sequence[str] = ()
) -> AsyncIterator[PiClient]:
    """Start pi (under `prefix`, `open_process`'s) and its reader; leaving the block closes pi (stdin EOF, then
    TERM, then KILL).

    Raises: `SpawnError`.
    """
    async with AsyncExitStack() as stack:
        child = await stack.enter_async_context(open_process(argv, cwd=cwd, prefix=prefix))
        writer = await stack.enter_async_context(LineWriter(child.stdin))
        client = PiClient(child, writer, on_frame)
        reader = asyncio.create_task(client.read(), name="pi-reader")
        try:
            yield client
        finally:
            await writer.aclose()
            await child.aclose()
            reader.cancel()
            # The reader's end is no news once pi is closed; gather keeps our own cancellation.
            await asyncio.gather(reader, return_exceptions=True)
