"""One JSON-RPC message as the network transports receive it (a POST body, a WebSocket text frame): made one line
for the connection's `Peer`, and read just enough to route it (is it `initialize`, which session is it about).

A batch (a JSON array of messages, JSON-RPC 2.0 §6, which ACP v2 adopts) is handed on whole: the peer answers it as
a stdio peer does, with one array of the answers to its requests and nothing at all when it holds only notifications.
A batch is about no one session (its answers are one array), so it is routed as a message about none.

Bodies are not trusted: `read_frame` never raises, and what it refuses comes with the status and the JSON-RPC error
line to answer with (a parse error, an empty batch, something that is not a message).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omniagent.wire.decode import BadJson, NumberOutOfRange, decode_line
from omniagent.wire.dialects import STRICT, RequestId
from omniagent.wire.messages import INVALID_REQUEST, PARSE_ERROR, error_line


@dataclass(frozen=True, slots=True)
class Frame:
    """A message fit for the peer: `line` (no newline inside), and what routing needs of it."""

    line: bytes
    method: str | None  # None for a response (the client answering one of our requests) and for a batch
    request_id: RequestId | None  # the id of a request, else None
    session_id: str | None  # `params.sessionId`, when the message has one
    exact: bool = True  # False: it holds a number out of range (the peer answers it, by its id when it can)

    @property
    def is_initialize(self) -> bool:
        """A request to `initialize` whose answer can be told by its id (so a POST can return it)."""
        return self.method == "initialize" and self.request_id is not None and self.exact


@dataclass(frozen=True, slots=True)
class Refused:
    """A message the transport answers itself: HTTP `status` with `line` (a JSON-RPC error) as the body."""

    status: int
    line: bytes


def read_frame(body: bytes) -> Frame | Refused:
    """Judge one message. JSON whitespace may hold newlines, and a newline inside a JSON string is escaped, so turning
    every CR and LF into a space makes any JSON text one line and leaves its meaning alone."""
    line = body.replace(b"\r", b" ").replace(b"\n", b" ")
    exact = True
    try:
        value: Any = decode_line(line)
    except NumberOutOfRange as exc:
        value, exact = exc.value, False  # the peer answers it (with its own id when it is a request)
    except BadJson as exc:
        return Refused(400, error_line(STRICT, None, PARSE_ERROR, f"parse error: {exc.reason}"))
    if isinstance(value, list):
        if not value:  # JSON-RPC: an empty array is one Invalid Request, never an (empty) array of answers
            return Refused(400, error_line(STRICT, None, INVALID_REQUEST, "invalid request: an empty batch"))
        return Frame(line=line, method=None, request_id=None, session_id=None, exact=exact)
    if not isinstance(value, dict):
        return Refused(400, error_line(STRICT, None, INVALID_REQUEST, "invalid request: not a JSON-RPC message"))
    method = value.get("method")
    raw_id = value.get("id")
    request_id = raw_id if STRICT.valid_id(raw_id) else None
    params = value.get("params")
    session = params.get("sessionId") if isinstance(params, dict) else None
    return Frame(
        line=line,
        method=method if isinstance(method, str) else None,
        request_id=request_id if "method" in value else None,
        session_id=session if isinstance(session, str) else None,
        exact=exact,
    )
