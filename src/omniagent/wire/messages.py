"""JSON-RPC messages without a connection: the error codes, `RpcError`, what makes a call valid, reply lines.

`wire/jsonrpc.py` (the peer) and `wire/first_request.py` (a face's first reply, before the event loop exists)
judge and answer calls through these functions, so both answer alike. No asyncio and no logging on the answering
path: it runs before either is imported.
"""

from __future__ import annotations

from typing import Any

from omniagent.wire.dialects import Dialect, RequestId
from omniagent.wire.encode import dumps
from omniagent.wire.errors import WireError

# JSON-RPC 2.0 codes.
PARSE_ERROR = -32700  # the line is not JSON
INVALID_REQUEST = -32600  # JSON, but not a valid call (or an empty batch, or an oversize line)
METHOD_NOT_FOUND = -32601  # no handler for this method
INVALID_PARAMS = -32602  # params do not fit the method
INTERNAL_ERROR = -32603  # the handler failed; details are in our stderr log only
# ACP codes (acp-v2.schema.json `ErrorCode`).
REQUEST_CANCELLED = -32800  # answered after `$/cancel_request`
AUTH_REQUIRED = -32000  # the agent needs `authenticate` / `auth/login` first
RESOURCE_NOT_FOUND = -32002  # e.g. an unknown session id

# What an unexpected failure answers: no exception text and no traceback reach the wire.
INTERNAL_SENTENCE = "internal error"


class RpcError(WireError):
    """A JSON-RPC error: raised by handlers to answer one, and by `Peer.request` when the other side answers one."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data

    def body(self, dialect: Dialect) -> dict[str, Any]:
        """The `error` object for `dialect`."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None and dialect.error_data:
            error["data"] = self.data
        return error


def valid_call(message: dict[str, Any], dialect: Dialect) -> bool:
    """Whether a message with a `method` member is a call `dialect` accepts: a string method, the protocol marker
    when the dialect needs it, a valid id when it has one, and params that are an object, an array or absent."""
    return (
        isinstance(message["method"], str)
        and dialect.version_ok(message)
        and ("id" not in message or dialect.valid_id(message["id"]))
        and isinstance(message.get("params"), dict | list | None)
    )


def reply_id(message: dict[str, Any], dialect: Dialect) -> RequestId | None:
    """The id an error reply to `message` carries: its own when valid, else the dialect's unknown id."""
    request_id = message.get("id")
    return request_id if dialect.valid_id(request_id) else dialect.unknown_id


def result_line(dialect: Dialect, request_id: RequestId, result: Any) -> bytes:
    """The reply line (no newline) answering `request_id` with `result`. Raises TypeError/ValueError when `result`
    is not JSON."""
    return dumps(dialect.envelope({"id": request_id, "result": result}))


def error_line(dialect: Dialect, request_id: RequestId | None, code: int, message: str, data: Any = None) -> bytes:
    """The error reply line (no newline). `data` that is not JSON is dropped (and logged); an id that is not
    JSON becomes the dialect's unknown id."""
    body = {"id": request_id, "error": RpcError(code, message, data).body(dialect)}
    try:
        return dumps(dialect.envelope(body))
    except (TypeError, ValueError):
        if data is None:  # nothing left to drop: the id itself cannot be written
            error = {"code": code, "message": message}
            return dumps(dialect.envelope({"id": dialect.unknown_id, "error": error}))
        import logging  # here, not at the top: a face's first reply is written before logging is imported

        logging.getLogger(__name__).warning("error data for %r is not JSON; sent without it", request_id)
        return error_line(dialect, request_id, code, message)
