"""The HTTP of a device login: the OAuth 2.0 device authorization grant (RFC 8628), the refresh of its token, and
GitHub Copilot's token exchange. Functions of an `OAuthEntry` (providers.json) and an httpx client; no state.

Every failure is an `OAuthError` whose message is a fixed sentence (at most an OAuth error code or an HTTP status
is named): a server's text, a device code or a token never reaches a message. `kind` says how a model call that
needed the refresh fails (`auth` when the server refused, a transport kind when it could not be reached).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from omniagent._version import __version__
from omniagent.engine.providers.auth.credentials import Grant, Secret
from omniagent.engine.providers.catalog.file import OAuthEntry
from omniagent.engine.providers.failures import FailureKind, classify_transport
from omniagent.errors import OmniagentError

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
DEFAULT_INTERVAL = 5  # seconds between polls when the server names none (RFC 8628 §3.2)
SLOW_DOWN_STEP = 5  # seconds added to the interval on `slow_down` (RFC 8628 §3.5)
# A token is renewed this long before it lapses, so a request never leaves with one about to expire.
REFRESH_MARGIN_MS = 60_000
TIMEOUT = httpx.Timeout(30.0, connect=10.0)  # one login-server call; polls answer at once
_ERROR_CODE = re.compile(r"^[a-z_]{1,64}$")
_HEADERS = {"accept": "application/json", "user-agent": f"omniagent/{__version__}"}


class OAuthError(OmniagentError):
    """A login step failed. `message` is safe to show; `kind` classifies it for a model call."""

    def __init__(self, message: str, kind: FailureKind = FailureKind.AUTH) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


@dataclass(frozen=True, slots=True)
class DeviceCode:
    """A started device login: what the person is shown, and what the engine polls with."""

    device_code: Secret
    user_code: str
    verification_url: str
    interval: float
    expires_in: float


def new_client() -> httpx.AsyncClient:
    """A client for login-server calls (environment proxies honoured)."""
    return httpx.AsyncClient(timeout=TIMEOUT)


def now_ms() -> int:
    return int(time.time() * 1000)


async def request_code(client: httpx.AsyncClient, oauth: OAuthEntry) -> DeviceCode:
    """Ask the login server for a device code (RFC 8628 §3.1-3.2).

    Raises:
        OAuthError: the server could not be reached, refused, or answered something else than a device code.
    """
    answer = await _post_form(client, oauth.device_code_url, {"client_id": oauth.client_id, "scope": oauth.scope})
    device_code, user_code = answer.get("device_code"), answer.get("user_code")
    url = answer.get("verification_uri") or answer.get("verification_url")
    if not (isinstance(device_code, str) and isinstance(user_code, str) and isinstance(url, str)) or not _web(url):
        raise _refusal(answer) if "error" in answer else _not_understood()
    return DeviceCode(
        Secret(device_code),
        user_code,
        url,
        interval=_seconds(answer.get("interval"), DEFAULT_INTERVAL),
        expires_in=_seconds(answer.get("expires_in"), 900),
    )


async def poll(client: httpx.AsyncClient, oauth: OAuthEntry, code: DeviceCode) -> Grant:
    """Poll the token endpoint until the person approved the code (RFC 8628 §3.4-3.5); the OAuth grant.

    Raises:
        OAuthError: denied, expired (the server says so, or the code's lifetime passed), or any other refusal.
    """
    interval = code.interval
    deadline = time.monotonic() + code.expires_in
    form = {"client_id": oauth.client_id, "device_code": code.device_code.reveal(), "grant_type": DEVICE_GRANT}
    while True:
        await asyncio.sleep(interval)
        if time.monotonic() >= deadline:
            raise OAuthError("The code expired before the login was approved.")
        answer = await _post_form(client, oauth.token_url, form)
        error = answer.get("error")
        if error == "authorization_pending":
            continue
        if error == "slow_down":
            interval = _seconds(answer.get("interval"), interval + SLOW_DOWN_STEP)
            continue
        if error == "access_denied":
            raise OAuthError("The login was denied.")
        if error == "expired_token":
            raise OAuthError("The code expired before the login was approved.")
        return _grant(answer)


async def refresh(client: httpx.AsyncClient, oauth: OAuthEntry, grant: Grant) -> Grant:
    """A new OAuth token from the grant's refresh token (RFC 6749 §6), keeping the refresh token when the server
    sends none.

    Raises:
        OAuthError: the grant has no refresh token, or the server refused it.
    """
    if grant.refresh_token is None:
        raise OAuthError("The login expired; sign in again.")
    form = {"client_id": oauth.client_id, "grant_type": "refresh_token", "refresh_token": grant.refresh_token.reveal()}
    fresh = _grant(await _post_form(client, oauth.token_url, form))
    return Grant(
        access_token=fresh.access_token,
        refresh_token=fresh.refresh_token or grant.refresh_token,
        expires_at_ms=fresh.expires_at_ms,
    )


async def exchange(client: httpx.AsyncClient, oauth: OAuthEntry, grant: Grant) -> Grant:
    """`grant` with a fresh API token from the token exchange (GitHub Copilot's `copilot_internal/v2/token`).

    Raises:
        OAuthError: the account has no access (HTTP 401, 403 or 404), or the answer is not a token.
    """
    assert oauth.exchange_url is not None
    headers = {**_HEADERS, "authorization": f"token {grant.access_token.reveal()}"}
    try:
        response = await client.get(oauth.exchange_url, headers=headers)
    except httpx.HTTPError as exc:
        raise _unreachable(exc) from None
    if response.status_code in (401, 403, 404):
        raise OAuthError(f"The account has no access to this provider's API (HTTP {response.status_code}).")
    answer = _json_object(response)
    token, expires_at = answer.get("token"), answer.get("expires_at")
    if not isinstance(token, str) or not token or not isinstance(expires_at, int | float):
        raise _not_understood()
    lapses_ms = int(expires_at * 1000)
    refresh_at = lapses_ms - REFRESH_MARGIN_MS
    refresh_in = answer.get("refresh_in")
    if isinstance(refresh_in, int | float) and refresh_in >= 0:
        refresh_at = min(refresh_at, now_ms() + int(refresh_in * 1000))
    endpoints = answer.get("endpoints")
    api = endpoints.get("api") if isinstance(endpoints, dict) else None
    return Grant(
        access_token=grant.access_token,
        refresh_token=grant.refresh_token,
        expires_at_ms=grant.expires_at_ms,
        api_token=Secret(token),
        api_refresh_at_ms=refresh_at,
        api_base=api.rstrip("/") if isinstance(api, str) and _web(api) else grant.api_base,
    )


def _grant(answer: dict[str, Any]) -> Grant:
    token = answer.get("access_token")
    if not isinstance(token, str) or not token:
        raise _refusal(answer) if "error" in answer else _not_understood()
    refresh_token = answer.get("refresh_token")
    expires_in = answer.get("expires_in")
    return Grant(
        access_token=Secret(token),
        refresh_token=Secret(refresh_token) if isinstance(refresh_token, str) and refresh_token else None,
        expires_at_ms=now_ms() + int(expires_in * 1000) if isinstance(expires_in, int | float) else None,
    )


async def _post_form(client: httpx.AsyncClient, url: str, form: dict[str, str]) -> dict[str, Any]:
    """POST a form; the JSON object answered. OAuth errors come as 200 (GitHub) or 400 (RFC 6749) with `error`."""
    try:
        response = await client.post(url, data=form, headers=_HEADERS)
    except httpx.HTTPError as exc:
        raise _unreachable(exc) from None
    answer = _json_object(response)
    if response.status_code >= 400 and "error" not in answer:
        raise OAuthError(f"The login server refused the request (HTTP {response.status_code}).")
    return answer


def _json_object(response: httpx.Response) -> dict[str, Any]:
    try:
        value = json.loads(response.content)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        if response.status_code >= 400:
            raise OAuthError(f"The login server refused the request (HTTP {response.status_code}).")
        raise _not_understood()
    return value


def _refusal(answer: dict[str, Any]) -> OAuthError:
    code = answer.get("error")
    named = code if isinstance(code, str) and _ERROR_CODE.match(code) else "unknown"
    return OAuthError(f"The login server refused the login ({named}).")


def _unreachable(exc: httpx.HTTPError) -> OAuthError:
    return OAuthError("The login server could not be reached.", classify_transport(exc))


def _not_understood() -> OAuthError:
    return OAuthError("The login server's answer was not understood.", FailureKind.MALFORMED)


def _web(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _seconds(value: object, default: float) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 else default
