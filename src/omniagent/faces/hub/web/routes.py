"""The page's routes: its files (`/`, `/page/…`, public), its login and logout, `/auth` (is this browser logged in,
and what the hub serves its page), and `/batch/…` when the hub was given a batch job's folder.

Every file of the page goes out with a Content-Security-Policy that lets it run only its own scripts and talk only
to its own origin (`POLICY`), and with no caching that could outlive an upgrade (`no-cache`: revalidated by ETag).
The files are read once, from the package (`static/`): no path from a request ever reaches the file system here.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from omniagent._version import __version__
from omniagent.faces.hub.streamable import refusal
from omniagent.faces.hub.web.door import PageDoor, PageKeys
from omniagent.faces.hub.web.results import REPORT, BatchFiles
from omniagent.wire.messages import AUTH_REQUIRED

log = logging.getLogger("omniagent.hub.page")

STATIC = Path(__file__).resolve().parent / "static"
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self';"
    " base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
}
LOGIN_BODY_BYTES = 8192


@dataclass(frozen=True, slots=True)
class Asset:
    body: bytes
    media_type: str
    etag: str


def load_assets(folder: Path = STATIC) -> dict[str, Asset]:
    """Every file of the page by its path under `/page/` (`index.html` is also `/`)."""
    assets = {}
    for path in sorted(folder.rglob("*")):
        media_type = TYPES.get(path.suffix)
        if path.is_file() and media_type is not None:
            body = path.read_bytes()
            etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
            assets[path.relative_to(folder).as_posix()] = Asset(body, media_type, etag)
    return assets


class Page:
    """The page's handlers over its keys, its files and, when given, a batch job's folder."""

    def __init__(self, keys: PageKeys, batch: BatchFiles | None = None, assets: dict[str, Asset] | None = None):
        self.keys = keys
        self.door = PageDoor(keys)
        self.batch = batch
        self._assets = assets if assets is not None else load_assets()

    def routes(self) -> list[BaseRoute]:
        routes: list[BaseRoute] = [
            Route("/", self.index, methods=["GET"]),
            Route("/page/{name:path}", self.asset, methods=["GET"]),
            Route("/login", self.login, methods=["POST"]),
            Route("/logout", self.logout, methods=["POST"]),
            Route("/auth", self.auth, methods=["GET"]),
        ]
        if self.batch is not None:
            routes += [
                Route("/batch", self.batch.serve, methods=["GET"]),
                Route("/batch/{path:path}", self.batch.serve, methods=["GET"]),
            ]
        return routes

    async def index(self, request: Request) -> Response:
        return self._send(request, "index.html")

    async def asset(self, request: Request) -> Response:
        return self._send(request, request.path_params["name"])

    def _send(self, request: Request, name: str) -> Response:
        asset = self._assets.get(name)
        if asset is None:
            return refusal(404, "no such file")
        headers = {**SECURITY_HEADERS, "ETag": asset.etag, "Cache-Control": "no-cache"}
        if request.headers.get("if-none-match") == asset.etag:
            return Response(status_code=304, headers=headers)
        return Response(asset.body, media_type=asset.media_type, headers=headers)

    async def login(self, request: Request) -> Response:
        """`POST /login` with `{"token": …}` or `{"code": …}` (JSON): 204 with the cookie, or 401."""
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return refusal(415, "send the login as application/json")
        body = b""
        async for chunk in request.stream():  # read no further than a login can be
            body += chunk
            if len(body) > LOGIN_BODY_BYTES:
                return refusal(413, "a login is a token or a code, nothing longer")
        try:
            given = json.loads(body)
        except ValueError:
            given = None
        token, code = (given.get("token"), given.get("code")) if isinstance(given, dict) else (None, None)
        admitted = (isinstance(token, str) and self.keys.token_matches(token)) or (
            isinstance(code, str) and self.keys.redeem(code)
        )
        cookie = self.keys.login_cookie() if admitted else None
        if cookie is None:
            log.info("page login refused: %s", "wrong token" if token is not None else "unknown or used code")
            return refusal(401, "that is not the hub's token, or the login link is used or expired", code=AUTH_REQUIRED)
        return Response(status_code=204, headers={"Set-Cookie": cookie, "Cache-Control": "no-store"})

    async def logout(self, request: Request) -> Response:
        """`POST /logout`: the cookie removed from this browser (it stays valid until it expires or the token
        rotates: `omniagent hub token --rotate` logs every page out)."""
        return Response(status_code=204, headers={"Set-Cookie": self.keys.logout_cookie()})

    async def auth(self, request: Request) -> Response:
        """`GET /auth` (public): whether this browser is logged in, and then what the hub serves the page."""
        served: dict[str, object] = {"logged_in": False}
        if self.door.logged_in(_headers(request)):
            batch = f"/batch/{REPORT}" if self.batch is not None else None
            served = {"logged_in": True, "version": __version__, "batch": batch}
        return Response(json.dumps(served), media_type="application/json", headers={"Cache-Control": "no-store"})


def _headers(request: Request) -> dict[bytes, list[bytes]]:
    headers: dict[bytes, list[bytes]] = {}
    for name, value in request.scope["headers"]:
        headers.setdefault(name, []).append(value)
    return headers
