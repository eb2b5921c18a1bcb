"""JSON-RPC envelope rules per wire, as data: which `jsonrpc` member, which ids, batches, cancellation.

Three dialects exist on our wires:
- strict JSON-RPC 2.0 (ACP): every message carries `"jsonrpc":"2.0"`, ids are integers or strings, batches
  (a line holding a JSON array) are accepted, and `$/cancel_request` cancels one request;
- the "JSON-RPC lite" of yuke: no `jsonrpc` member (accepted and ignored when present), string ids only, an
  unknown id is answered as `""`, and error objects carry no `data`;
- the Codex app-server's: JSON-RPC 2.0 semantics without the `jsonrpc` member, integer or string ids (its own
  requests to us are numbered from 0), error `data` allowed, no batches and no cancel notification.

The peer in `wire/jsonrpc.py` reads these flags; it never tests a dialect by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The JSON-RPC protocol marker strict peers send and require.
JSONRPC_VERSION = "2.0"

# A JSON-RPC id: an integer or a string (null only in error replies that cannot name the request).
RequestId = int | str


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one wire spells JSON-RPC envelopes."""

    name: str
    # Send `"jsonrpc":"2.0"` on every message, and reject incoming calls without it.
    version_member: bool
    # Mint outgoing ids as strings ("1", "2", …) instead of integers, and reject non-string incoming ids.
    string_ids: bool
    # The id used in an error reply to a message whose id is unknown (parse error, oversize line).
    unknown_id: RequestId | None
    # Accept a JSON array of messages on one line and answer it with one array.
    batches: bool
    # Error objects may carry `data`.
    error_data: bool
    # Code answering a line that is not a valid call (JSON-RPC says -32600; yuke answers -32602).
    invalid_request_code: int
    # Notification method that cancels one outgoing request, and its params member naming the id.
    cancel_method: str | None
    cancel_id_member: str

    def envelope(self, body: dict[str, Any]) -> dict[str, Any]:
        """Add the dialect's protocol marker to a message body."""
        if self.version_member:
            return {"jsonrpc": JSONRPC_VERSION, **body}
        return body

    def mint_id(self, n: int) -> RequestId:
        """The id for our `n`th outgoing request."""
        return str(n) if self.string_ids else n

    def valid_id(self, value: object) -> bool:
        """Whether `value` is an id this dialect accepts on an incoming request."""
        if isinstance(value, bool):
            return False
        if self.string_ids:
            return isinstance(value, str)
        return isinstance(value, int | str)

    def version_ok(self, message: dict[str, Any]) -> bool:
        """Whether an incoming message carries the protocol marker the dialect requires."""
        return not self.version_member or message.get("jsonrpc") == JSONRPC_VERSION


# ACP (v1 and v2): strict JSON-RPC 2.0; batches are part of the v2 draft.
STRICT = Dialect(
    name="jsonrpc-2.0",
    version_member=True,
    string_ids=False,
    unknown_id=None,
    batches=True,
    error_data=True,
    invalid_request_code=-32600,
    cancel_method="$/cancel_request",
    cancel_id_member="requestId",
)

# yuke JSONL RPC: no `jsonrpc`, string ids, `""` for an unknown id.
LITE = Dialect(
    name="jsonrpc-lite",
    version_member=False,
    string_ids=True,
    unknown_id="",
    batches=False,
    error_data=False,
    invalid_request_code=-32602,
    cancel_method=None,
    cancel_id_member="requestId",
)

# The Codex app-server (`codex app-server`): JSON-RPC 2.0 minus the `jsonrpc` member, in both directions.
CODEX = Dialect(
    name="codex-app-server",
    version_member=False,
    string_ids=False,
    unknown_id=None,
    batches=False,
    error_data=True,
    invalid_request_code=-32600,
    cancel_method=None,
    cancel_id_member="requestId",
)
