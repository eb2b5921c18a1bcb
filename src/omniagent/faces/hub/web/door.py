"""What lets a browser into the hub without the bearer token in a header (a browser cannot put one on a WebSocket
upgrade, and a token in a URL ends up in histories and logs): the page's public files, a login that trades the token
(or a one-time code from `omniagent hub open`) for a cookie, and that cookie on the page's own routes only.

The cookie is not the token: it is `EXPIRES.MAC`, MAC = HMAC-SHA256(token, "omniagent hub page|EXPIRES"). It tells
nothing of the token, expires by itself (`COOKIE_SECONDS`), and rotating the token logs every page out. It is
HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it) and, over TLS, Secure and `__Host-`.
A login code is `EXPIRES.NONCE.MAC` over "omniagent hub login code|EXPIRES|NONCE": whoever can read the token file
mints one (`mint_code`); the hub takes each once, until it expires (`CODE_SECONDS`).

The cookie opens only the page's routes (`COOKIE_PATHS`): never `/acp`. A WebSocket upgrade or a POST with it must
carry our own `Origin` (browsers always send one there; the guard has refused a foreign one already), and a request
a browser marks as coming from another site (`Sec-Fetch-Site`) is not let in by it.
"""

from __future__ import annotations

import base64
import hmac
import secrets
import time
from collections.abc import Callable

from starlette.types import Scope

from omniagent.faces.hub.guard import Headers, TokenFile

COOKIE_SECONDS = 24 * 3600
CODE_SECONDS = 120.0
# The page's files, open to anyone who can name the hub (they hold no secret; the login form is among them), and
# `/auth`, which says whether the request is logged in (and, only then, what the hub serves the page).
PUBLIC_PREFIX = "/page/"
PUBLIC_PATHS = ("/", "/auth")
LOGIN_PATHS = ("/login", "/logout")
# What the cookie opens besides the bearer token (exact paths, and `/batch/` with anything after it).
COOKIE_PATHS = ("/sidecar", "/batch")
_COOKIE_CONTEXT = "omniagent hub page|"
_CODE_CONTEXT = "omniagent hub login code|"
# What a browser says of where a request comes from when it is ours: our own page, or the user (a typed address,
# a bookmark). Without the header (an older browser, a plain-HTTP name that is not loopback) the Origin rules hold.
_OUR_SITE = (b"same-origin", b"none")


def _text(digest: bytes) -> str:
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def mint_code(token: str, *, now: float | None = None, lifetime: float = CODE_SECONDS) -> str:
    """A one-time login code for the hub whose token is `token` (`omniagent hub open` makes one)."""
    expires = int((time.time() if now is None else now) + lifetime)
    nonce = secrets.token_urlsafe(12)
    digest = hmac.new(token.encode(), f"{_CODE_CONTEXT}{expires}|{nonce}".encode(), "sha256").digest()
    return f"{expires}.{nonce}.{_text(digest)}"


class PageKeys:
    """The page's cookie and login codes, over the hub's token file."""

    def __init__(self, token: TokenFile, *, port: int, secure: bool, clock: Callable[[], float] = time.time) -> None:
        self._token = token
        self._secure = secure
        self._clock = clock
        # Per port: cookies know no ports, so two hubs on one host would otherwise log each other's pages out.
        self.cookie_name = f"__Host-omniagent_hub_{port}" if secure else f"omniagent_hub_{port}"
        self._redeemed: dict[str, float] = {}  # nonce → when its code expires (kept until then)

    def login_cookie(self) -> str | None:
        """A `Set-Cookie` value for a page that just logged in (None when the token file cannot be read)."""
        expires = int(self._clock()) + COOKIE_SECONDS
        mac = self._sign(f"{_COOKIE_CONTEXT}{expires}")
        if mac is None:
            return None
        return self._cookie(f"{expires}.{mac}", COOKIE_SECONDS)

    def logout_cookie(self) -> str:
        """A `Set-Cookie` value that removes the page's cookie from the browser."""
        return self._cookie("", 0)

    def _cookie(self, value: str, max_age: int) -> str:
        secure = "; Secure" if self._secure else ""
        return f"{self.cookie_name}={value}; Max-Age={max_age}; Path=/; HttpOnly; SameSite=Strict{secure}"

    def token_matches(self, presented: str) -> bool:
        """Whether `presented` is the hub's token (constant time)."""
        return self._token.matches(presented.strip().encode())

    def redeem(self, code: str) -> bool:
        """Whether `code` is a login code of this token, not expired and not used before (it is used now)."""
        now = self._clock()
        self._redeemed = {nonce: until for nonce, until in self._redeemed.items() if until >= now}
        expires_text, _, rest = code.partition(".")
        nonce, _, mac = rest.partition(".")
        if not (expires_text.isdigit() and nonce and mac) or int(expires_text) < now or nonce in self._redeemed:
            return False
        expected = self._sign(f"{_CODE_CONTEXT}{expires_text}|{nonce}")
        if expected is None or not hmac.compare_digest(expected.encode(), mac.encode()):
            return False
        self._redeemed[nonce] = float(expires_text)
        return True

    def cookie_valid(self, headers: Headers) -> bool:
        """Whether the request carries an unexpired cookie made with the current token."""
        for value in _cookies(headers, self.cookie_name.encode()):
            expires_text, _, mac = value.decode("latin-1").partition(".")
            if not expires_text.isdigit() or int(expires_text) < self._clock():
                continue
            expected = self._sign(f"{_COOKIE_CONTEXT}{expires_text}")
            if expected is not None and hmac.compare_digest(expected.encode(), mac.encode()):
                return True
        return False

    def _sign(self, message: str) -> str | None:
        digest = self._token.sign(message.encode())
        return None if digest is None else _text(digest)


class PageDoor:
    """The guard's `Door` for the page: its public files, its login routes, its cookie on its own routes."""

    def __init__(self, keys: PageKeys) -> None:
        self._keys = keys

    def admits(self, scope: Scope, headers: Headers) -> bool:
        path: str = scope.get("path", "")
        method = scope.get("method", "GET") if scope["type"] == "http" else "WEBSOCKET"
        if method in ("GET", "HEAD") and (path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIX)):
            return True
        has_origin = bool(headers.get(b"origin"))  # the guard refused any Origin but ours already
        if path in LOGIN_PATHS:
            return method == "POST" and has_origin  # the route checks the token or code itself
        if not (path in COOKIE_PATHS or path.startswith("/batch/")):
            return False
        if method not in ("GET", "HEAD") and not has_origin:
            return False
        return self.logged_in(headers)

    def logged_in(self, headers: Headers) -> bool:
        """Whether the request carries a valid cookie, from our own page or the user (not another site)."""
        sites = headers.get(b"sec-fetch-site", [])
        if any(site.strip().lower() not in _OUR_SITE for site in sites):
            return False
        return self._keys.cookie_valid(headers)


def _cookies(headers: Headers, name: bytes) -> list[bytes]:
    """The values of every cookie called `name` in the request's `Cookie` headers (HTTP/2 may send several)."""
    found = []
    for header in headers.get(b"cookie", []):
        for pair in header.split(b";"):
            key, sep, value = pair.strip().partition(b"=")
            if sep and key == name:
                found.append(value.strip())
    return found
