"""A face's first reply before the event loop exists: read the first line of stdin blocking, answer it at once when
it is a request the face can answer without asyncio, and hand every byte read on to the face's asyncio reader.

Why: importing asyncio is most of a bare Python start (the start-up benchmark's floor, `python -c "import
asyncio"`), so a face whose first reply needs none of it (`omniagent acp` answering `initialize`) answers first
and imports asyncio afterwards (docs/performance.md). Only standard modules and `wire/` modules without asyncio or
logging are on this path.

What it answers: a first line that is a valid call of `dialect` (`messages.valid_call`, the peer's own rule) with an
id, for a method in `handlers`. A handler is a plain function of the raw params returning the raw result or raising
`RpcError`, answered exactly as the peer answers. Anything else (a notification, another method, a line that is not
JSON or holds a number out of range, a batch, a handler failing otherwise, a first line longer than `max_bytes`) is
not answered here: it stays in `Prelude.unread` and the face's peer answers it as any other line (so a request with
a number out of range gets its id back from the one place that decides how). So a handler may run twice for one
line (once here, failing, once in the peer) and must give the same answer each time.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from omniagent.wire.decode import BadJson, decode_line
from omniagent.wire.dialects import Dialect
from omniagent.wire.messages import RpcError, error_line, result_line, valid_call

# Bytes read per blocking read: a first request is a few hundred bytes; a terminal gives a line per read anyway.
_READ_CHUNK = 64 * 1024
# A first line longer than this is no handshake: it is left to the face's reader and its size cap.
FIRST_LINE_BYTES = 1024 * 1024

# A plain function of a request's raw params that returns its raw result (or raises RpcError).
EarlyHandler = Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class Prelude:
    """What reading the first request left for the face's reader: the bytes read but not answered (to be read
    before stdin itself), whether stdin already ended, and the method answered (None: nothing was)."""

    unread: bytes = b""
    eof: bool = False
    answered: str | None = None


def answer_first_request(
    dialect: Dialect,
    handlers: Mapping[str, EarlyHandler],
    *,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    max_bytes: int = FIRST_LINE_BYTES,
) -> Prelude:
    """Read stdin up to its first newline (or EOF, or `max_bytes`), answer that line on stdout when it is a request
    for one of `handlers`, and return what the face's reader must still see."""
    data, eof = _read_first_line(stdin_fd, max_bytes)
    newline = data.find(b"\n")
    line = data[:newline] if newline >= 0 else data if eof else None
    if line is None or len(line) > max_bytes:
        return Prelude(data, eof)
    request = _request(line.removesuffix(b"\r"), dialect, handlers)
    if request is None:
        return Prelude(data, eof)
    request_id, method, params = request
    try:
        reply = result_line(dialect, request_id, handlers[method](params))
    except RpcError as exc:
        reply = error_line(dialect, request_id, exc.code, exc.message, exc.data)
    except Exception:
        return Prelude(data, eof)  # the peer answers it again, with its one error boundary and the log
    with contextlib.suppress(OSError):  # stdout is gone: the face's writer finds out as it would have
        write_all(stdout_fd, reply + b"\n")
    return Prelude(data[newline + 1 :] if newline >= 0 else b"", eof, method)


def _read_first_line(fd: int, max_bytes: int) -> tuple[bytes, bool]:
    """Blocking reads until a newline, EOF or more than `max_bytes`: (the bytes read, whether EOF was seen)."""
    data = b""
    while b"\n" not in data and len(data) <= max_bytes:
        try:
            chunk = os.read(fd, _READ_CHUNK)
        except OSError:
            return data, False  # not readable this way: the face's reader meets the same stdin and says so
        if not chunk:
            return data, True
        data += chunk
    return data, False


def _request(line: bytes, dialect: Dialect, handlers: Mapping[str, EarlyHandler]) -> tuple[Any, str, Any] | None:
    """(id, method, params) when `line` is a request this module answers, else None."""
    try:
        message = decode_line(line)
    except BadJson:
        return None
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return None
    if not valid_call(message, dialect) or message["method"] not in handlers:
        return None
    return message["id"], message["method"], message.get("params")


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` to the file descriptor `fd`, blocking."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
