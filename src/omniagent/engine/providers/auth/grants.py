"""`GrantAuth`: the bearer of a provider signed in with a device login, fresh on every model request.

Before each request it reads the stored grant; when the API token is due (GitHub Copilot's lasts about half an
hour) it fetches a new one through the token exchange, or renews an expiring OAuth token with its refresh token,
and stores the result (0600) before the request leaves. A request answered 401 is sent once more with a token
fetched anew (the old one was revoked or lapsed early). The token goes into the `authorization` header and nowhere
else; a refresh that fails ends the model call with a `ProviderError` (`auth` when the server refused).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Generator

import httpx

from omniagent.engine.providers.auth import oauth
from omniagent.engine.providers.auth.credentials import CredentialError, CredentialStore, Grant, Secret
from omniagent.engine.providers.catalog.file import OAuthEntry
from omniagent.engine.providers.failures import FailureKind, provider_error


class GrantAuth(httpx.Auth):
    """httpx auth for one provider's device-login grant (see the module doc)."""

    def __init__(self, provider_id: str, entry: OAuthEntry, credentials: CredentialStore) -> None:
        self._provider_id = provider_id
        self._entry = entry
        self._credentials = credentials

    def __repr__(self) -> str:
        return f"GrantAuth({self._provider_id!r})"

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError("GrantAuth is for async clients")

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        request.headers["authorization"] = f"Bearer {(await self._bearer(renew=False)).reveal()}"
        response = yield request
        if response.status_code == 401 and self._renewable():
            request.headers["authorization"] = f"Bearer {(await self._bearer(renew=True)).reveal()}"
            yield request

    def _renewable(self) -> bool:
        if self._entry.exchange_url is not None:
            return True
        grant = self._read()
        return grant is not None and grant.refresh_token is not None

    async def _bearer(self, *, renew: bool) -> Secret:
        """The token to send: the stored one while it is good (and `renew` is false), else a fresh one, stored."""
        grant = self._read()
        if grant is None:
            raise provider_error(FailureKind.AUTH)
        now = oauth.now_ms()
        oauth_due = grant.expires_at_ms is not None and now >= grant.expires_at_ms - oauth.REFRESH_MARGIN_MS
        if self._entry.exchange_url is None:
            if not (renew or oauth_due):
                return grant.access_token
            fresh = await self._renew(grant, oauth_renewal=True)
            return fresh.access_token
        api_due = grant.api_token is None or grant.api_refresh_at_ms is None or now >= grant.api_refresh_at_ms
        if grant.api_token is not None and not (renew or api_due):
            return grant.api_token
        fresh = await self._renew(grant, oauth_renewal=oauth_due)
        assert fresh.api_token is not None
        return fresh.api_token

    async def _renew(self, grant: Grant, *, oauth_renewal: bool) -> Grant:
        try:
            async with oauth.new_client() as client:
                if oauth_renewal:
                    grant = await oauth.refresh(client, self._entry, grant)
                if self._entry.exchange_url is not None:
                    grant = await oauth.exchange(client, self._entry, grant)
        except oauth.OAuthError as exc:
            raise provider_error(exc.kind) from None
        # A grant that cannot be stored still serves this request; the next one fetches again.
        with contextlib.suppress(CredentialError):
            self._credentials.set_grant(self._provider_id, grant)
        return grant

    def _read(self) -> Grant | None:
        try:
            return self._credentials.grant(self._provider_id)
        except CredentialError:
            raise provider_error(FailureKind.AUTH) from None
