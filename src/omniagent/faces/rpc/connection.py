"""`omniagent rpc`: the yuke JSONL RPC on stdin/stdout → Engine methods, via `protocols.yuke.methods`. Thin.

The yuke wire's envelope rules: string ids only; no id = a notification (run, never answered, not even
with an error); absent params = `{}`; every bad line gets `-32602` with `id: ""` and the loop goes on, but for a
request holding a number out of range, which is JSON all the same and keeps its id.
Requests run one at a time in arrival order, and broadcasts they produce are queued before their response on
the single writer, so they are written first.

Start-up is lazy (docs/performance.md): `initialize` is answered from the provider catalog alone
(`engine/handshake.py`; a first one by `faces/rpc/serve.py`, before asyncio is imported); the engine (store,
providers, HTTP client) is imported and opened on the first other request, which waits for it, and it first ends
the runs a previous process left open (`Engine.recover`). A client that only asks `initialize` never pays for it.
Each line is encoded once, models straight to JSON bytes.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from omniagent.engine import handshake
from omniagent.engine.config import MAX_LINE_BYTES, STDIN_LIMIT, engine_dirs
from omniagent.engine.errors import EngineError
from omniagent.faces.pipes import BrokenStdout, unless_reader_gone
from omniagent.protocols.yuke.base import DecodeError, Empty, YukeModel, decode
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.wire.decode import BadJson, NumberOutOfRange, decode_line
from omniagent.wire.encode import dumps
from omniagent.wire.errors import LineTooLarge
from omniagent.wire.first_request import Prelude
from omniagent.wire.jsonl import LineWriter, read_lines
from omniagent.wire.stdio import open_stdio

if TYPE_CHECKING:
    from omniagent.engine.api import EngineApi

log = logging.getLogger("omniagent.rpc")

_encode = msgspec.json.Encoder().encode


def serve_rpc(data_dir: Path | None, prelude: Prelude) -> int:
    """Serve the engine on stdin/stdout until stdin closes (exit code 0) or a write finds stdout broken (141 when its
    reader is gone, else 1), after the bytes `prelude` kept (`faces/rpc/serve.py`). KeyboardInterrupt propagates."""
    return asyncio.run(_serve(data_dir, prelude))


async def _serve(data_dir: Path | None, prelude: Prelude) -> int:
    """Serve; returns the exit code (a broken stdout stops the face at once: nobody reads it)."""
    broken = BrokenStdout(log)
    async with (
        open_stdio(limit=STDIN_LIMIT, prelude=prelude) as (reader, sink),
        LineWriter(sink, on_error=broken) as writer,
    ):
        face = Face(data_dir, writer)
        try:
            await unless_reader_gone(_answer_lines(face, writer, reader), broken.event)
        finally:
            await face.close()
        await writer.wait_flushed()
    return broken.exit_status()


async def _answer_lines(face: Face, writer: LineWriter, reader: asyncio.StreamReader) -> None:
    async for line in read_lines(reader, max_bytes=MAX_LINE_BYTES):
        if isinstance(line, LineTooLarge):
            _error(writer, "", ErrorCode.BAD_REQUEST, "the line exceeds the size limit")
            continue
        await handle_line(face, writer, line)


class Face:
    """The engine behind one rpc connection, opened on the first request that needs it.

    `EngineApi.open`'s task group must be entered and left in one task, so the engine lives in a task of its own
    until `close()`; its broadcasts go to the writer from the moment it opens.
    """

    def __init__(self, data_dir: Path | None, writer: LineWriter) -> None:
        self._data_dir = data_dir
        self._writer = writer
        self._engine: asyncio.Future[EngineApi] | None = None
        self._holder: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()

    async def params_model(self, method: str) -> type[YukeModel] | None:
        """The params model of a yuke method or an engine extension; None for an unknown method. The method table
        (it imports every yuke model) is read from the first method other than `initialize`, whose params are
        empty."""
        if method == "initialize":
            return Empty
        from omniagent.protocols.yuke.methods import METHODS

        spec = METHODS.get(method)
        if spec is not None:
            return spec.params
        return (await self.engine()).extension_params(method)

    async def handle(self, method: str, params: YukeModel) -> YukeModel:
        """Run one method (`EngineApi.handle`); `initialize` needs no engine."""
        if method == "initialize" and self._engine is None:
            return handshake.before_the_engine(*engine_dirs(self._data_dir))
        return await (await self.engine()).handle(method, params)

    def engine(self) -> asyncio.Future[EngineApi]:
        """The engine, opening it on the first call; fails with an internal EngineError if it cannot open."""
        if self._engine is None:
            self._engine = asyncio.get_running_loop().create_future()
            self._holder = asyncio.create_task(self._hold(self._engine), name="engine")
        return self._engine

    async def _hold(self, ready: asyncio.Future[EngineApi]) -> None:
        from omniagent.engine.api import EngineApi

        def notify(name: str, data: YukeModel) -> None:
            _send(self._writer, notification_line(name, data))

        try:
            async with EngineApi.open(EngineApi.config(self._data_dir), broadcasts=notify) as engine:
                ready.set_result(engine)
                await self._stop.wait()
        except Exception as exc:
            if ready.done():
                raise
            log.error("the engine did not open: %s: %s", type(exc).__name__, exc)
            ready.set_exception(EngineError(ErrorCode.INTERNAL, "the engine did not open"))

    async def close(self) -> None:
        """Close the engine, if it was ever opened: its active runs end interrupted, their broadcasts queued."""
        self._stop.set()
        if self._holder is not None:
            await self._holder


async def handle_line(face: Face, writer: LineWriter, line: bytes) -> None:
    """Decode one line, run it, and answer it (unless it is a notification)."""
    if not line.strip():
        return
    out_of_range = None  # JSON holding a number out of range: its request is refused with its own id
    try:
        message = decode_line(line)
    except NumberOutOfRange as exc:
        message, out_of_range = exc.value, exc.reason
    except BadJson as exc:
        _error(writer, "", ErrorCode.BAD_REQUEST, f"the line is not valid JSON: {exc.reason}")
        return
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        _error(writer, "", ErrorCode.BAD_REQUEST, "the line is not a request object")
        return
    has_id = "id" in message
    request_id = message.get("id", "")
    if not isinstance(request_id, str):
        _error(writer, "", ErrorCode.BAD_REQUEST, "the request id must be a string")
        return
    try:
        if out_of_range is not None:
            raise EngineError.bad_request(f"bad parameters: {out_of_range}")
        result = await _call(face, message["method"], message.get("params"))
    except EngineError as exc:
        if has_id:
            _error(writer, request_id, exc.code, exc.message)
        return
    except Exception as exc:  # the one boundary where a bug becomes a wire error instead of a dead engine
        log.error(
            "%s failed: %s: %s", message["method"], type(exc).__name__, exc, exc_info=log.isEnabledFor(logging.DEBUG)
        )
        if has_id:
            _error(writer, request_id, ErrorCode.INTERNAL, "the command failed")
        return
    if has_id:
        _send(writer, result_line(request_id, result))


async def _call(face: Face, method: str, raw_params: Any) -> YukeModel:
    params_model = await face.params_model(method)
    if params_model is None:
        raise EngineError(ErrorCode.UNKNOWN_METHOD, "unknown method")
    if raw_params is None:
        raw_params = {}
    if not isinstance(raw_params, dict):
        raise EngineError.bad_request("bad parameters")
    try:
        params = decode(params_model, raw_params)
    except DecodeError:
        raise EngineError.bad_request("bad parameters") from None
    return await face.handle(method, params)


def result_line(request_id: str, result: YukeModel) -> bytes:
    """One response's line."""
    return b'{"id":' + _json(request_id) + b',"result":' + _json(result) + b"}"


def notification_line(name: str, data: YukeModel) -> bytes:
    """One broadcast's line. The name comes from the broadcast table (plain ASCII), so it is spliced in."""
    return b'{"method":"' + name.encode() + b'","params":' + _json(data) + b"}"


def _json(value: YukeModel | str) -> bytes:
    try:
        return _encode(value)
    except UnicodeEncodeError:  # a lone surrogate (an undecodable file name): the stdlib path writes "?" for it
        return dumps(msgspec.to_builtins(value))


def _error(writer: LineWriter, request_id: str, code: ErrorCode, message: str) -> None:
    _send(writer, dumps({"id": request_id, "error": {"code": int(code), "message": message}}))


def _send(writer: LineWriter, line: bytes) -> None:
    """Queue one line; dropped once stdout broke (the face is stopping: nobody would read it)."""
    if writer.failed is None:
        writer.send_nowait(line)
