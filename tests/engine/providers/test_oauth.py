"""The HTTP of a device login (engine/providers/auth/oauth.py) against the fake device-auth server on 127.0.0.1: the
grant it builds, and refusals as fixed sentences that name at most an OAuth error code or a status."""

from __future__ import annotations

import msgspec
import pytest

from omniagent.engine.providers.auth import oauth
from omniagent.engine.providers.auth.credentials import Grant, Secret
from omniagent.engine.providers.catalog.file import OAuthEntry
from omniagent.engine.providers.failures import FailureKind
from omniagent.testing import FakeDeviceAuthServer


async def test_a_login_polls_until_approved_then_exchanges_for_an_api_token() -> None:
    async with FakeDeviceAuthServer(api_base="http://127.0.0.1:9/api/") as server, oauth.new_client() as client:
        entry = msgspec.convert(server.oauth_entry(), OAuthEntry)
        code = await oauth.request_code(client, entry)
        assert (code.user_code, code.verification_url) == (server.user_code, server.url + "/login/device")
        assert server.device_code not in repr(code)
        server.approve()
        grant = await oauth.exchange(client, entry, await oauth.poll(client, entry, code))
    assert grant.access_token.reveal() == server.oauth_tokens[0]
    assert grant.api_token is not None and grant.api_token.reveal() == server.api_tokens[0]
    assert grant.api_base == "http://127.0.0.1:9/api" and grant.api_refresh_at_ms is not None
    assert server.oauth_tokens[0] not in repr(grant)


async def test_refusals_are_fixed_sentences() -> None:
    async with FakeDeviceAuthServer() as server, oauth.new_client() as client:
        wrong_client = msgspec.convert(server.oauth_entry() | {"client_id": "someone-else"}, OAuthEntry)
        with pytest.raises(oauth.OAuthError, match=r"refused the login \(unauthorized_client\)"):
            await oauth.request_code(client, wrong_client)
        entry = msgspec.convert(server.oauth_entry(), OAuthEntry)
        with pytest.raises(oauth.OAuthError, match=r"no access to this provider's API \(HTTP 401\)") as refused:
            await oauth.exchange(client, entry, Grant(access_token=Secret("gho_never_issued")))
        assert refused.value.kind is FailureKind.AUTH
        nowhere = msgspec.convert(server.oauth_entry() | {"device_code_url": server.url + "/elsewhere"}, OAuthEntry)
        with pytest.raises(oauth.OAuthError, match=r"refused the request \(HTTP 404\)"):
            await oauth.request_code(client, nowhere)
        with pytest.raises(oauth.OAuthError, match="sign in again"):
            await oauth.refresh(client, entry, Grant(access_token=Secret("t")))
