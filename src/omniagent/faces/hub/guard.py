"""The hub's front door, before any route: the `Host` check (DNS rebinding), the `Origin` check (a web page elsewhere
driving the hub), then the bearer token, or, for the web page's routes, what the page's door admits (its public
files, its login cookie: `faces/hub/web/door.py`). A refused request gets its status and a JSON-RPC-shaped error
body that names what was wrong, never the token; a refused WebSocket gets the same as an HTTP answer instead of the
upgrade.

The token is read from its file (mode 0600) and read again when the file changes, so `omniagent hub token --rotate`
takes effect on the next request without a restart; connections already open stay open.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from omniagent.faces.hub.settings import Listener
from omniagent.wire.dialects import STRICT
from omniagent.wire.messages import AUTH_REQUIRED, INVALID_REQUEST, error_line

log = logging.getLogger(__name__)


class TokenFile:
    """The hub's bearer token, as its file holds it now."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._seen: tuple[int, int, int] | None = None
        self._token = b""

    def matches(self, presented: bytes) -> bool:
        """Whether `presented` is the token (compared in constant time). An unreadable token file matches nothing."""
        token = self._current()
        return bool(token) and hmac.compare_digest(presented, token)

    def sign(self, message: bytes) -> bytes | None:
        """HMAC-SHA256 of `message` keyed by the token (what a login cookie or code proves: that its maker had the
        token, without holding it); None when the token file cannot be read."""
        token = self._current()
        return hmac.new(token, message, hashlib.sha256).digest() if token else None

    def _current(self) -> bytes:
        try:
            stat = os.stat(self._path)
        except OSError:
            return b""
        seen = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if seen != self._seen:
            try:
                self._token = self._path.read_bytes().strip()
            except OSError:
                return b""
            self._seen = seen
        return self._token


# A request's headers by lower-case name, each with every value it came with.
Headers = Mapping[bytes, list[bytes]]


class Door(Protocol):
    """Who else comes in without the bearer token: the web page (`faces/hub/web/door.py`)."""

    def admits(self, scope: Scope, headers: Headers) -> bool:
        """Whether the request may pass without `Authorization` (its Host and Origin already checked)."""
        ...


class Guard:
    """ASGI middleware refusing a wrong `Host` (421), a foreign `Origin` (403) and a missing or wrong token (401),
    unless `door` admits the request otherwise."""

    def __init__(self, app: ASGIApp, *, listener: Listener, token: TokenFile, door: Door | None = None) -> None:
        self._app = app
        self._listener = listener
        self._token = token
        self._door = door

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self._app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is None:
            await self._app(scope, receive, send)
            return
        status, reason = refusal
        log.info("refused %s %s: %s", scope.get("method", "WEBSOCKET"), scope.get("path", ""), reason)
        await refuse(scope, receive, send, status, reason, code=AUTH_REQUIRED if status == 401 else INVALID_REQUEST)

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        headers: dict[bytes, list[bytes]] = {}
        for name, value in scope["headers"]:
            headers.setdefault(name, []).append(value)
        hosts = headers.get(b"host", [])
        if len(hosts) != 1 or not self._listener.allows_host(hosts[0].decode("latin-1")):
            return 421, "this hub does not answer to that Host"
        origins = headers.get(b"origin", [])
        if len(origins) > 1 or (origins and not self._listener.allows_origin(origins[0].decode("latin-1"))):
            return 403, "cross-origin requests are refused"
        if self._door is not None and self._door.admits(scope, headers):
            return None
        authorizations = headers.get(b"authorization", [])
        if len(authorizations) != 1:
            return 401, "the hub's bearer token is required (Authorization: Bearer …)"
        scheme, _, presented = authorizations[0].strip().partition(b" ")
        if scheme.lower() != b"bearer" or not self._token.matches(presented.strip()):
            return 401, "the bearer token is wrong"
        return None


async def refuse(scope: Scope, receive: Receive, send: Send, status: int, reason: str, *, code: int) -> None:
    """Answer a request, or refuse a WebSocket upgrade, with `status` and a JSON-RPC error body (id null)."""
    body = error_line(STRICT, None, code, reason)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="omniagent hub"'))
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return
    message: Message = await receive()  # the ASGI order: the upgrade request first, then our answer to it
    if message["type"] != "websocket.connect":
        return
    if "websocket.http.response" in scope.get("extensions", {}):
        await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008})
