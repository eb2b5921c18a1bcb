"""Our own stdin and stdout as asyncio streams (with an explicit size limit), for `serve`, `rpc` and `acp`.

Pipes, sockets and terminals use asyncio's pipe transports. A regular file (`omniagent serve < frames.jsonl`) or a
device the event loop cannot watch (`< /dev/null`: epoll refuses it) is read and written by a helper thread instead.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from omniagent.wire.first_request import Prelude, write_all
from omniagent.wire.jsonl import READ_CHUNK, ByteSink


class _ThreadedSink:
    """Blocking writes to a file descriptor, run off the event loop."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        self._pending.append(data)

    async def drain(self) -> None:
        data, self._pending = b"".join(self._pending), []
        await asyncio.to_thread(write_all, self._fd, data)


def _feed_from_thread(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, fd: int) -> None:
    try:
        while chunk := os.read(fd, READ_CHUNK):
            loop.call_soon_threadsafe(reader.feed_data, chunk)
    except OSError:
        pass
    loop.call_soon_threadsafe(reader.feed_eof)


def _watchable(fd: int) -> bool:
    """Whether the event loop can wait for `fd` to be readable: a pipe, a socket or a terminal. asyncio's read pipe
    also takes any other character device, but fails to register one epoll refuses, in a callback, and then the
    reader never hears of EOF."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


@asynccontextmanager
async def open_stdio(
    *, limit: int, prelude: Prelude | None = None
) -> AsyncIterator[tuple[asyncio.StreamReader, ByteSink]]:
    """Open stdin for reading and stdout for writing as asyncio streams. With a `prelude` (what reading the first
    request before the event loop left, `wire/first_request.py`), the reader gets its unread bytes first."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    stdin_fd, stdout_fd = sys.stdin.fileno(), sys.stdout.fileno()
    if prelude is not None and prelude.unread:
        reader.feed_data(prelude.unread)
    if prelude is not None and prelude.eof:
        reader.feed_eof()  # not read again: a terminal would wait for a second end of input
    elif _watchable(stdin_fd):
        stdin = os.fdopen(stdin_fd, "rb", 0, closefd=False)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    else:
        threading.Thread(target=_feed_from_thread, args=(loop, reader, stdin_fd), daemon=True).start()
    sink: ByteSink
    try:
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(stdout_fd, "wb", 0, closefd=False)
        )
        sink = asyncio.StreamWriter(transport, protocol, None, loop)
    except ValueError:
        sink = _ThreadedSink(stdout_fd)
    yield reader, sink
