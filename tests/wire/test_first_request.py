"""A face's first reply before the event loop: real pipes in, real pipes out; what it answers is what the JSON-RPC
peer answers for the same line, and every byte it does not answer is handed on."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import struct
import termios
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import pytest

from omniagent.wire.dialects import LITE, STRICT, Dialect
from omniagent.wire.first_request import Prelude, answer_first_request
from omniagent.wire.jsonrpc import Peer
from omniagent.wire.messages import INVALID_PARAMS, RpcError

WAIT = 5.0  # seconds: bound on every wait


def _hello(params: Any) -> Any:
    if not isinstance(params, dict) or "name" not in params:
        raise RpcError(INVALID_PARAMS, "hello needs a name", {"field": "name"})
    if params["name"] == "boom":
        raise RuntimeError("a bug in the handler")
    return {"hello": params["name"]}


HANDLERS = {"hello": _hello}


@contextmanager
def _pipes() -> Iterator[tuple[int, int, int, int]]:
    """(stdin read end, stdin write end, stdout read end, stdout write end)."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    try:
        yield in_r, in_w, out_r, out_w
    finally:
        for fd in (in_r, in_w, out_r, out_w):
            with suppress(OSError):
                os.close(fd)


def _early(data: bytes, dialect: Dialect = STRICT, *, close: bool = False, **kwargs: Any) -> tuple[Prelude, bytes]:
    """Write `data` to a pipe (closing it when `close`), answer from it; the prelude and what went to stdout."""
    with _pipes() as (in_r, in_w, out_r, out_w):
        os.write(in_w, data)
        if close:
            os.close(in_w)
        prelude = answer_first_request(dialect, HANDLERS, stdin_fd=in_r, stdout_fd=out_w, **kwargs)
        os.close(out_w)
        written = b""
        while chunk := os.read(out_r, 65536):
            written += chunk
        return prelude, written


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


async def _peer_answer(line: bytes, dialect: Dialect) -> bytes:
    """What the peer writes for `line`, with the same handlers made async."""
    reader = asyncio.StreamReader()
    reader.feed_data(line)
    reader.feed_eof()
    written = bytearray()

    class Sink:
        def write(self, data: bytes) -> None:
            written.extend(data)

        async def drain(self) -> None:
            return None

    async def hello(params: Any) -> Any:
        return _hello(params)

    async with Peer(reader, Sink(), dialect=dialect, requests={"hello": hello}, answer_after_eof=True) as peer:
        await asyncio.wait_for(peer.wait_closed(), WAIT)
        while peer.unanswered():
            await asyncio.wait_for(asyncio.wait(peer.unanswered()), WAIT)
    return bytes(written)


REQUESTS = [
    (STRICT, {"jsonrpc": "2.0", "id": 1, "method": "hello", "params": {"name": "ada"}}),
    (STRICT, {"jsonrpc": "2.0", "id": "x", "method": "hello", "params": {}}),
    (LITE, {"id": "9", "method": "hello", "params": {"name": "ada"}}),
    (LITE, {"id": "9", "method": "hello"}),
]


@pytest.mark.parametrize(("dialect", "request_body"), REQUESTS)
async def test_an_answered_first_request_gets_the_bytes_the_peer_would_write(
    dialect: Dialect, request_body: dict[str, Any]
) -> None:
    prelude, written = _early(_line(request_body), dialect)
    assert prelude == Prelude(b"", False, "hello")
    assert written == await _peer_answer(_line(request_body), dialect)


def test_the_lines_after_the_first_are_handed_on_unread() -> None:
    first = _line({"jsonrpc": "2.0", "id": 1, "method": "hello", "params": {"name": "ada"}})
    rest = b'{"jsonrpc":"2.0","id":2,"method":"other"}\n{"partial'
    prelude, written = _early(first + rest)
    assert json.loads(written) == {"jsonrpc": "2.0", "id": 1, "result": {"hello": "ada"}}
    assert prelude == Prelude(rest, False, "hello")


def test_a_last_line_without_newline_is_answered_and_the_end_of_input_is_kept() -> None:
    body = _line({"jsonrpc": "2.0", "id": 3, "method": "hello", "params": {"name": "ada"}}).rstrip(b"\n")
    prelude, written = _early(body + b"\r", close=True)
    assert json.loads(written)["result"] == {"hello": "ada"}
    assert prelude == Prelude(b"", True, "hello")


@pytest.mark.parametrize(
    "data",
    [
        b"not json\n",
        b"\n",
        b'[{"jsonrpc":"2.0","id":1,"method":"hello","params":{"name":"ada"}}]\n',  # a batch: the peer's to answer
        b'{"jsonrpc":"2.0","method":"hello","params":{"name":"ada"}}\n',  # a notification
        b'{"jsonrpc":"2.0","id":1,"method":"other"}\n',  # no early handler
        b'{"id":1,"method":"hello","params":{"name":"ada"}}\n',  # strict JSON-RPC needs the marker
        b'{"jsonrpc":"2.0","id":true,"method":"hello","params":{"name":"ada"}}\n',  # not an id
        b'{"jsonrpc":"2.0","id":1,"method":"hello","params":{"name":"boom"}}\n',  # the handler fails otherwise
    ],
)
def test_what_the_early_path_does_not_answer_is_handed_on_whole(data: bytes) -> None:
    prelude, written = _early(data + b'{"next":1}\n')
    assert written == b""
    assert prelude == Prelude(data + b'{"next":1}\n', False, None)


def test_empty_input_is_the_end_of_input() -> None:
    assert _early(b"", close=True) == (Prelude(b"", True, None), b"")


def test_a_first_line_over_the_bound_is_left_to_the_reader_and_its_size_cap() -> None:
    big = b'{"jsonrpc":"2.0","id":1,"method":"hello","params":{"name":"' + b"a" * 5000 + b'"}}'
    prelude, written = _early(big + b"\n", max_bytes=1000)
    assert written == b""
    assert prelude == Prelude(big + b"\n", False, None)


def _unread_bytes(fd: int) -> int:
    """Bytes waiting in the pipe whose read end is `fd`."""
    count: int = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
    return count


def test_a_line_written_in_pieces_is_read_to_its_newline() -> None:
    line = _line({"jsonrpc": "2.0", "id": 5, "method": "hello", "params": {"name": "ada"}})
    with _pipes() as (in_r, in_w, out_r, out_w):
        result: list[Prelude] = []
        reader = threading.Thread(
            target=lambda: result.append(answer_first_request(STRICT, HANDLERS, stdin_fd=in_r, stdout_fd=out_w))
        )
        reader.start()
        os.write(in_w, line[:10])
        deadline = time.monotonic() + WAIT
        while _unread_bytes(in_r) and time.monotonic() < deadline:  # until the first piece is read
            time.sleep(0.001)
        os.write(in_w, line[10:])
        reader.join(WAIT)
        assert result == [Prelude(b"", False, "hello")]
        assert json.loads(os.read(out_r, 65536))["id"] == 5


def test_a_closed_stdout_loses_the_reply_but_not_the_input() -> None:
    first = _line({"jsonrpc": "2.0", "id": 1, "method": "hello", "params": {"name": "ada"}})
    with _pipes() as (in_r, in_w, out_r, out_w):
        os.write(in_w, first + b"rest\n")
        os.close(out_r)  # nobody reads stdout: the write fails with EPIPE
        prelude = answer_first_request(STRICT, HANDLERS, stdin_fd=in_r, stdout_fd=out_w)
    assert prelude == Prelude(b"rest\n", False, "hello")
