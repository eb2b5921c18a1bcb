"""`omniagent rpc`: the yuke JSONL RPC on stdin/stdout → Engine methods, via `protocols.yuke.methods`. Thin.

Envelope rules (docs/yuke-rpc.md §1): string ids only; no id = a notification (run, never answered, not even
with an error); absent params = `{}`; every bad line gets `-32602` with `id: ""` and the loop goes on.
Requests run one at a time in arrival order, and broadcasts they produce are queued before their response on
the single writer, so they are written first.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from omniagent.engine.engine import Engine, EngineConfig
from omniagent.engine.errors import EngineError
from omniagent.engine.faceconfig import MAX_LINE_BYTES, STDIN_LIMIT, engine_dirs
from omniagent.engine.limits import ChildLimits
from omniagent.engine.store.ownership import lease_from_env
from omniagent.engine.tools import ToolLimits
from omniagent.engine.tools.context import SEARCH_TIMEOUT
from omniagent.logs import configure
from omniagent.protocols.yuke.base import DecodeError, YukeModel, decode
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.methods import METHODS
from omniagent.wire.decode import BadJson, decode_line
from omniagent.wire.errors import LineTooLarge
from omniagent.wire.jsonl import LineWriter, dumps, read_lines
from omniagent.wire.stdio import open_stdio

log = logging.getLogger("omniagent.rpc")


def run_rpc(data_dir: Path | None) -> int:
    """Serve the engine on stdin/stdout until stdin closes; returns the exit code."""
    configure("rpc")
    try:
        asyncio.run(_serve(engine_config(data_dir)))
    except KeyboardInterrupt:
        return 130
    return 0


def engine_config(data_dir: Path | None) -> EngineConfig:
    """Store and key file in `--data-dir` (else OMNIAGENT_DATA_DIR, else the user data dir); providers.json in
    the same dir when one is given, else the user config dir."""
    chosen, config_dir = engine_dirs(data_dir)
    scale = float(os.environ.get("OMNIAGENT_RETRY_SCALE", "1.0"))
    limits = ToolLimits(search_timeout=float(os.environ.get("OMNIAGENT_SEARCH_TIMEOUT", SEARCH_TIMEOUT)))
    return EngineConfig(
        data_dir=chosen,
        config_dir=config_dir,
        retry_scale=scale,
        lease_seconds=lease_from_env(),
        tool_limits=limits,
        child_limits=ChildLimits.from_env(),
    )


async def _serve(config: EngineConfig) -> None:
    async with open_stdio(limit=STDIN_LIMIT) as (reader, sink), LineWriter(sink) as writer:
        async with Engine.open(config) as engine:
            engine.broadcaster.subscribe(
                lambda name, data: writer.send_nowait(dumps({"method": name, "params": data.dump()}))
            )
            await engine.recover()
            async for line in read_lines(reader, max_bytes=MAX_LINE_BYTES):
                if isinstance(line, LineTooLarge):
                    _error(writer, "", ErrorCode.BAD_REQUEST, "the line exceeds the size limit")
                    continue
                await handle_line(engine, writer, line)
        await writer.wait_flushed()


class MethodTable(Protocol):
    """What the rpc loop needs of the engine: the extension methods' params models and the one error boundary
    that runs a method (`Engine` is one)."""

    @property
    def extensions(self) -> Mapping[str, type[YukeModel]]: ...

    async def handle(self, method: str, params: YukeModel) -> YukeModel: ...


async def handle_line(engine: MethodTable, writer: LineWriter, line: bytes) -> None:
    """Decode one line, run it, and answer it (unless it is a notification)."""
    if not line.strip():
        return
    try:
        message = decode_line(line)
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
        result = await _call(engine, message["method"], message.get("params"))
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
        writer.send_nowait(dumps({"id": request_id, "result": result.dump()}))


async def _call(engine: MethodTable, method: str, raw_params: Any) -> YukeModel:
    spec = METHODS.get(method)
    params_model = spec.params if spec is not None else engine.extensions.get(method)
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
    return await engine.handle(method, params)


def _error(writer: LineWriter, request_id: str, code: ErrorCode, message: str) -> None:
    writer.send_nowait(dumps({"id": request_id, "error": {"code": int(code), "message": message}}))
