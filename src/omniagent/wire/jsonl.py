"""JSON-lines framing with a size cap, and a single writer per output stream.

Reading: `read_lines` yields each line as bytes (no newline). A line longer than the cap is skipped whole and
reported as a `LineTooLarge` value in the stream, so the caller can answer it with its wire's error and go on.

Writing: `LineWriter` owns one task that writes every queued line, in order, and flushes after each batch of
ready lines, so lines never interleave and a slow consumer sees complete lines.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from types import TracebackType
from typing import Protocol

from omniagent.wire.errors import LineTooLarge, PeerClosed

# Default cap for one input line: 16 MiB fits a large tool output or an inline image, and bounds memory.
MAX_LINE_BYTES = 16 * 1024 * 1024
# Bytes read per chunk; larger chunks mean fewer wakeups when a peer floods us.
READ_CHUNK = 256 * 1024


async def read_lines(
    reader: asyncio.StreamReader, *, max_bytes: int = MAX_LINE_BYTES
) -> AsyncIterator[bytes | LineTooLarge]:
    """Yield lines from `reader` until EOF; an oversize line is yielded as `LineTooLarge` and skipped.

    A final line without a newline is yielded too. Carriage returns before the newline are stripped.
    """
    pending = bytearray()
    skipping = False  # inside an oversize line: drop bytes until the next newline
    while True:
        chunk = await reader.read(READ_CHUNK)
        if not chunk:
            break
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                if not skipping:
                    pending += chunk[start:]
                    if len(pending) > max_bytes:
                        pending.clear()
                        skipping = True
                        yield LineTooLarge(max_bytes)
                break
            if skipping:
                skipping = False
            else:
                pending += chunk[start:nl]
                if len(pending) > max_bytes:
                    yield LineTooLarge(max_bytes)
                else:
                    yield bytes(pending.removesuffix(b"\r"))
            pending.clear()
            start = nl + 1
    if pending and not skipping:
        yield bytes(pending.removesuffix(b"\r"))


class ByteSink(Protocol):
    """Where a `LineWriter` puts bytes: an asyncio StreamWriter or our stdout."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...


class LineWriter:
    """One writer task for one output stream.

    `send_nowait` (and `send_many`) queue lines and never block (the queue is unbounded: callers that can flood,
    like event forwarders, bound themselves upstream). Lines queued while the writer task waits for its turn go out
    together: one write and one drain per loop tick, however many lines. `wait_flushed` waits until everything sent
    so far is written. If the sink fails, `failed` is set and later sends raise `PeerClosed`.
    """

    def __init__(self, sink: ByteSink, *, on_error: Callable[[BaseException], None] | None = None) -> None:
        self._sink = sink
        # Lines waiting for the writer; an entry may hold several lines already joined by newlines (`send_many`).
        self._pending: list[bytes] = []
        self._ready = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self._on_error = on_error
        self.failed: BaseException | None = None
        self._written = 0
        self._sent = 0
        self._progress = asyncio.Event()

    async def __aenter__(self) -> LineWriter:
        self._task = asyncio.create_task(self._run(), name="line-writer")
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def send_nowait(self, line: bytes) -> None:
        """Queue one line (without newline) for writing."""
        if self.failed is not None:
            raise PeerClosed("output stream is closed") from self.failed
        self._sent += 1
        self._pending.append(line)
        self._ready.set()

    def send_many(self, lines: list[bytes]) -> None:
        """Queue several lines (each without newline) for writing, in order."""
        if self.failed is not None:
            raise PeerClosed("output stream is closed") from self.failed
        if lines:
            self._sent += len(lines)
            self._pending.append(b"\n".join(lines))
            self._ready.set()

    @property
    def backlog(self) -> int:
        """Lines sent but not yet written."""
        return self._sent - self._written

    async def wait_backlog_below(self, lines: int) -> None:
        """Wait until fewer than `lines` lines are unwritten (or the sink failed): how producers feel a slow reader."""
        while self._sent - self._written >= lines and self.failed is None:
            self._progress.clear()
            await self._progress.wait()

    async def wait_flushed(self) -> None:
        """Wait until every line sent before this call is written and drained (or the sink failed)."""
        target = self._sent
        while self._written < target and self.failed is None:
            self._progress.clear()
            await self._progress.wait()

    async def aclose(self) -> None:
        """Write what is queued, then stop the writer task."""
        if self._task is None:
            return
        self._closing = True
        self._ready.set()
        try:
            await self._task
        finally:
            self._task = None

    async def _run(self) -> None:
        while True:
            if not self._pending:
                if self._closing:
                    return
                self._ready.clear()
                await self._ready.wait()
                continue
            # Everything sent and not yet written is in this batch (only this task counts lines as written).
            batch, self._pending, count = self._pending, [], self._sent - self._written
            if self.failed is None:
                try:
                    self._sink.write(b"\n".join(batch) + b"\n")
                    await self._sink.drain()
                except (OSError, ConnectionError, RuntimeError) as exc:
                    self.failed = exc
                    if self._on_error is not None:
                        self._on_error(exc)
            self._written += count
            self._progress.set()
