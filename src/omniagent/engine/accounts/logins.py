"""Device logins of one engine: `auth.login` starts one, a task polls until it ends, `auth.cancel_login` stops it.

`auth.login` asks the provider's login server for a code and answers the verification URL and the code: that
answer goes only to the connection that asked (it is a response, never a broadcast). The task then polls the
token endpoint (`providers/auth/oauth.py`); once the person approved, the grant (after the token exchange, for GitHub
Copilot) is stored 0600 and the engine broadcasts `auth.changed` (and `catalog.changed` when the provider's state
moved), then `auth.login_finished{succeeded}`. A denial, an expired code or a refusal ends it `failed{message}`
with the stored credentials unchanged; `auth.cancel_login` (or the engine stopping) ends it `canceled`. One login
per provider runs at a time. No token, device code or user code is ever logged.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from omniagent.engine.broadcast import Broadcaster
from omniagent.engine.errors import EngineError
from omniagent.engine.model_access import ModelAccess
from omniagent.engine.providers.auth import oauth
from omniagent.engine.providers.auth.credentials import CredentialError
from omniagent.engine.providers.catalog.file import OAuthEntry
from omniagent.protocols.yuke.auth import (
    AuthLoginFinishedData,
    AuthLoginOutcome,
    AuthLoginResult,
    LoginCanceled,
    LoginFailed,
    LoginSucceeded,
)
from omniagent.protocols.yuke.base import Empty
from omniagent.protocols.yuke.envelope import ErrorCode

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Login:
    login_id: str
    provider_id: str
    task: asyncio.Task[None] | None = field(default=None)


class Logins:
    """The running device logins. `on_stored(provider_id, catalog_rev_before)` announces a stored grant."""

    def __init__(
        self, model_access: ModelAccess, broadcaster: Broadcaster, on_stored: Callable[[str, str], None]
    ) -> None:
        self._model_access = model_access
        self._broadcaster = broadcaster
        self._on_stored = on_stored
        self._running: dict[str, _Login] = {}
        self._http: httpx.AsyncClient | None = None  # made on the first login: most engines never sign in

    @property
    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = oauth.new_client()
        return self._http

    async def start(self, provider_id: str, entry: OAuthEntry) -> AuthLoginResult:
        """Ask for a device code and start polling; the URL and code to show the person who asked."""
        if any(login.provider_id == provider_id for login in self._running.values()):
            raise EngineError.bad_request("a login is already running for this provider")
        login = _Login(secrets.token_hex(32), provider_id)
        self._running[login.login_id] = login  # held while the code is asked for, so a second start is refused
        try:
            code = await oauth.request_code(self._client, entry)
        except oauth.OAuthError as exc:
            del self._running[login.login_id]
            raise EngineError(ErrorCode.RUNTIME_FAILED, exc.message) from None
        login.task = asyncio.create_task(self._finish(login, entry, code), name=f"login-{provider_id}")
        return AuthLoginResult(
            login_id=login.login_id, verification_url=code.verification_url, user_code=code.user_code
        )

    async def cancel(self, login_id: str) -> Empty:
        """Stop a running login: `auth.login_finished{canceled}`, credentials unchanged."""
        login = self._running.get(login_id)
        if login is None or login.task is None:
            raise EngineError.bad_request("no such login is running")
        await self._stop(login)
        return Empty()

    async def aclose(self) -> None:
        """Cancel every running login (the engine stops) and release the HTTP client."""
        for login in list(self._running.values()):
            if login.task is not None:
                await self._stop(login)
        if self._http is not None:
            await self._http.aclose()

    async def _stop(self, login: _Login) -> None:
        del self._running[login.login_id]
        assert login.task is not None
        login.task.cancel()
        await asyncio.gather(login.task, return_exceptions=True)
        self._finished(login, LoginCanceled())

    async def _finish(self, login: _Login, entry: OAuthEntry, code: oauth.DeviceCode) -> None:
        outcome: AuthLoginOutcome
        try:
            grant = await oauth.poll(self._client, entry, code)
            if entry.exchange_url is not None:
                grant = await oauth.exchange(self._client, entry, grant)
        except oauth.OAuthError as exc:
            outcome = LoginFailed(message=exc.message)
        except Exception as exc:  # a bug must end the login, not leave it running forever
            log.error("the login failed: %s", type(exc).__name__)
            outcome = LoginFailed(message="The login failed.")
        else:
            # No await from here on: a cancel either came before (and stopped the polling) or finds it ended.
            rev_before = self._model_access.catalog_rev
            try:
                self._model_access.credentials.set_grant(login.provider_id, grant)
            except CredentialError:
                outcome = LoginFailed(message="The credentials could not be stored.")
            else:
                outcome = LoginSucceeded()
                self._on_stored(login.provider_id, rev_before)
        del self._running[login.login_id]
        self._finished(login, outcome)

    def _finished(self, login: _Login, outcome: AuthLoginOutcome) -> None:
        data = AuthLoginFinishedData(login_id=login.login_id, provider_id=login.provider_id, outcome=outcome)
        self._broadcaster.emit("auth.login_finished", data)
