"""A fake device-login server: GitHub's OAuth device flow and GitHub Copilot's token exchange, on 127.0.0.1.

Routes, as the real ones answer them:
- `POST /login/device/code` (form `client_id`, `scope`) → `device_code`, `user_code`, `verification_uri`,
  `expires_in`, `interval`. Each call starts a new login (a new code, waiting for the person).
- `POST /login/oauth/access_token` (form `client_id`, `device_code`, `grant_type`) → 200 with
  `{"error": "authorization_pending"}` while the person has not decided, `access_denied`, `expired_token`, or the
  OAuth token (`access_token`, `token_type`, `scope`). A pending poll is held until the test decides (or `hold`
  seconds pass), so a client polling with the fake's interval of 0 does not spin. `grant_type=refresh_token`
  renews a token when the server was made with `refresh_tokens=True`.
- `GET /copilot_internal/v2/token` (`Authorization: token <oauth token>`) → `token`, `expires_at`, `refresh_in`,
  `endpoints.api` (the `api_base` given); 401 for a token it never issued or one revoked, 404 with `no_access`.

The test plays the person with `approve()`, `deny()` and `expire()`; `wait_polled()` returns once the engine polls.
The tokens issued are kept (`oauth_tokens`, `api_tokens`) so a test can look for them where they must not be.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from omniagent.testing.loopback import LoopbackServer, QuietHandler

DEVICE_CODE_PATH = "/login/device/code"
TOKEN_PATH = "/login/oauth/access_token"
EXCHANGE_PATH = "/copilot_internal/v2/token"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


class FakeDeviceAuthServer(LoopbackServer):
    """Use as `with FakeDeviceAuthServer(api_base=llm.url) as auth:` (or `async with`); see the module doc.

    `api_token_ttl` and `api_refresh_in` (seconds) shape each exchanged token's `expires_at` and `refresh_in`.
    """

    thread_name = "fake-device-auth"

    def __init__(
        self,
        *,
        client_id: str = "omniagent-test-client",
        api_base: str | None = None,
        interval: int = 0,
        expires_in: int = 900,
        api_token_ttl: int = 1800,
        api_refresh_in: int = 1500,
        refresh_tokens: bool = False,
        no_access: bool = False,
        hold: float = 5.0,
    ) -> None:
        super().__init__()
        self.client_id = client_id
        self.api_base = api_base
        self.interval = interval
        self.expires_in = expires_in
        self.api_token_ttl = api_token_ttl
        self.api_refresh_in = api_refresh_in
        self.refresh_tokens = refresh_tokens
        self.no_access = no_access
        self.hold = hold
        self.oauth_tokens: list[str] = []
        self.refresh_tokens_issued: list[str] = []
        self.api_tokens: list[str] = []
        self.paths: list[str] = []  # every request's method and path, in order (never a body or a header)
        self.device_code = ""  # of the current login
        self.user_code = ""
        self._decision = "none"  # none | pending | approved | denied | expired | used
        self._polls = 0
        self._revoked: set[str] = set()

    def oauth_entry(self, *, exchange: bool = True) -> dict[str, str]:
        """The providers.json `auth.oauth` object pointing at this server (without the exchange: the OAuth token
        itself is the bearer)."""
        entry = {
            "device_code_url": self.url + DEVICE_CODE_PATH,
            "token_url": self.url + TOKEN_PATH,
            "client_id": self.client_id,
            "scope": "read:user",
        }
        return entry | ({"exchange_url": self.url + EXCHANGE_PATH} if exchange else {})

    # The person ----------------------------------------------------------------------------------------------

    def approve(self) -> None:
        self._decide("approved")

    def deny(self) -> None:
        self._decide("denied")

    def expire(self) -> None:
        self._decide("expired")

    def revoke(self, token: str) -> None:
        """Make an issued token (OAuth or API) invalid from now on."""
        with self._lock:
            self._revoked.add(token)

    def wait_polled(self, count: int = 1, timeout: float = 5.0) -> bool:
        """Block until the token endpoint was polled `count` times for the current login."""
        with self._lock:
            return self._lock.wait_for(lambda: self._polls >= count, timeout)

    async def wait_polled_async(self, count: int = 1, within: float = 5.0) -> bool:
        return await asyncio.to_thread(self.wait_polled, count, within)

    def _decide(self, decision: str) -> None:
        with self._lock:
            self._decision = decision
            self._lock.notify_all()

    def _handler(self) -> Callable[..., BaseHTTPRequestHandler]:
        return _handler(self)

    # Answers (called from handler threads) -------------------------------------------------------------------

    def answer(self, method: str, path: str, form: dict[str, str], authorization: str) -> tuple[int, object]:
        with self._lock:
            self.paths.append(f"{method} {path}")
        if method == "POST" and path == DEVICE_CODE_PATH:
            return self._device(form)
        if method == "POST" and path == TOKEN_PATH:
            return self._token(form)
        if method == "GET" and path == EXCHANGE_PATH:
            return self._exchange(authorization)
        return 404, {"message": "Not Found"}

    def _device(self, form: dict[str, str]) -> tuple[int, object]:
        if form.get("client_id") != self.client_id:
            return 200, {"error": "unauthorized_client"}
        with self._lock:
            self.device_code = secrets.token_hex(20)
            self.user_code = f"{secrets.token_hex(2).upper()}-{secrets.token_hex(2).upper()}"
            self._decision, self._polls = "pending", 0
            code, user = self.device_code, self.user_code
        return 200, {
            "device_code": code,
            "user_code": user,
            "verification_uri": self.url + "/login/device",
            "expires_in": self.expires_in,
            "interval": self.interval,
        }

    def _token(self, form: dict[str, str]) -> tuple[int, object]:
        if form.get("client_id") != self.client_id:
            return 200, {"error": "incorrect_client_credentials"}
        if form.get("grant_type") == "refresh_token":
            return self._refresh(form.get("refresh_token", ""))
        if form.get("grant_type") != DEVICE_GRANT:
            return 200, {"error": "unsupported_grant_type"}
        with self._lock:
            if form.get("device_code") != self.device_code or self._decision in ("none", "used"):
                return 200, {"error": "bad_verification_code"}
            self._polls += 1
            self._lock.notify_all()
            self._lock.wait_for(lambda: self._decision != "pending" or self.stopping.is_set(), self.hold)
            decision = self._decision
            if decision == "approved":
                self._decision = "used"
        if decision == "pending":
            return 200, {"error": "authorization_pending"}
        if decision == "denied":
            return 200, {"error": "access_denied"}
        if decision == "expired":
            return 200, {"error": "expired_token"}
        return 200, self._issue()

    def _issue(self) -> dict[str, object]:
        token = "gho_" + secrets.token_hex(18)
        answer: dict[str, object] = {"access_token": token, "token_type": "bearer", "scope": "read:user"}
        with self._lock:
            self.oauth_tokens.append(token)
            if self.refresh_tokens:
                refresh = "ghr_" + secrets.token_hex(18)
                self.refresh_tokens_issued.append(refresh)
                answer |= {"refresh_token": refresh, "expires_in": 28800}
        return answer

    def _refresh(self, refresh_token: str) -> tuple[int, object]:
        with self._lock:
            known = refresh_token in self.refresh_tokens_issued and refresh_token not in self._revoked
            if known:
                self._revoked.add(refresh_token)  # a refresh token is used once
        return (200, self._issue()) if known else (200, {"error": "bad_refresh_token"})

    def _exchange(self, authorization: str) -> tuple[int, object]:
        scheme, _, token = authorization.partition(" ")
        with self._lock:
            known = scheme.lower() == "token" and token in self.oauth_tokens and token not in self._revoked
        if not known:
            return 401, {"message": "Bad credentials"}
        if self.no_access:
            return 404, {"message": "Not Found"}
        api_token = f"tid={secrets.token_hex(16)};exp={int(time.time()) + self.api_token_ttl}"
        with self._lock:
            self.api_tokens.append(api_token)
        answer: dict[str, object] = {
            "token": api_token,
            "expires_at": int(time.time()) + self.api_token_ttl,
            "refresh_in": self.api_refresh_in,
        }
        if self.api_base is not None:
            answer["endpoints"] = {"api": self.api_base}
        return 200, answer


def _handler(owner: FakeDeviceAuthServer) -> Callable[..., BaseHTTPRequestHandler]:
    class Handler(QuietHandler):  # the test reads `paths`
        def _handle(self, method: str) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0)).decode("utf-8", "replace")
            form = {name: values[0] for name, values in parse_qs(raw).items()}
            path = urlsplit(self.path).path
            status, body = owner.answer(method, path, form, self.headers.get("authorization", ""))
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

    return Handler
