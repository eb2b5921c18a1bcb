"""catalog.* and auth.* methods: the merged catalog and the local credentials, keys never echoed; device logins
are `logins.py`'s."""

from __future__ import annotations

import logging
import re

from omniagent.engine.accounts.logins import Logins
from omniagent.engine.broadcast import Broadcaster
from omniagent.engine.errors import EngineError
from omniagent.engine.model_access import ModelAccess
from omniagent.engine.providers.auth.credentials import CredentialError
from omniagent.engine.providers.catalog.file import CatalogError
from omniagent.protocols.yuke.auth import (
    AuthCancelLoginParams,
    AuthChangedData,
    AuthListResult,
    AuthLoginParams,
    AuthLoginResult,
    AuthProvider,
    AuthRemoveParams,
    AuthSetApiKeyParams,
)
from omniagent.protocols.yuke.base import Empty
from omniagent.protocols.yuke.catalog import (
    CatalogChangedData,
    CatalogListParams,
    CatalogListResultFull,
    CatalogListResultUnchanged,
    CatalogReloadResult,
)
from omniagent.protocols.yuke.envelope import ErrorCode

log = logging.getLogger(__name__)

_PROVIDER_ID = re.compile(r"^[^/\s]{1,128}$")


class Accounts:
    """The catalog.* and auth.* methods, built with the engine's model access and the broadcaster. Close with
    `aclose()` (it cancels the running device logins)."""

    def __init__(self, model_access: ModelAccess, broadcaster: Broadcaster) -> None:
        self._model_access = model_access
        self._broadcaster = broadcaster
        self._logins = Logins(model_access, broadcaster, self._changed)

    async def aclose(self) -> None:
        await self._logins.aclose()

    async def catalog_list(self, params: CatalogListParams) -> CatalogListResultFull | CatalogListResultUnchanged:
        """catalog.list: `unchanged` when the client holds the current revision, else the full catalog."""
        return self._model_access.catalog.listing(params.since_rev)

    async def catalog_reload(self, _params: Empty) -> CatalogReloadResult:
        """catalog.reload: a bad providers.json keeps the current catalog and fails with `internal`."""
        try:
            changed = self._model_access.reload()
        except CatalogError as exc:
            log.warning("%s", exc)
            raise EngineError(ErrorCode.INTERNAL, "providers.json did not load") from None
        if changed:
            self._broadcaster.emit("catalog.changed", CatalogChangedData(catalog_rev=self._model_access.catalog_rev))
        return CatalogReloadResult(catalog_rev=self._model_access.catalog_rev, changed=changed)

    def _auth_provider(self, provider_id: str) -> AuthProvider:
        provider = self._model_access.catalog.provider(provider_id)
        assert provider is not None
        return self._model_access.catalog.auth_of(provider)

    async def auth_list(self, _params: Empty) -> AuthListResult:
        """auth.list: each provider's public credential state (never a key)."""
        return AuthListResult(providers=self._model_access.catalog.auth_list())

    def _known(self, provider_id: str) -> None:
        if not _PROVIDER_ID.match(provider_id):
            raise EngineError.bad_request("the provider id is not valid")
        if not self._model_access.knows_provider(provider_id):
            raise EngineError(ErrorCode.UNKNOWN_PROVIDER, "unknown provider")

    async def auth_set_api_key(self, params: AuthSetApiKeyParams) -> Empty:
        """auth.set_api_key: store the key (0600 file); emits auth.changed and catalog.changed if a state moved."""
        if not params.api_key.strip():
            raise EngineError.bad_request("the API key is empty")
        self._known(params.provider_id)
        before = self._model_access.catalog_rev
        try:
            self._model_access.credentials.set_api_key(params.provider_id, params.api_key)
        except CredentialError as exc:
            raise EngineError(ErrorCode.RUNTIME_FAILED, str(exc)) from None
        self._changed(params.provider_id, before)
        return Empty()

    async def auth_remove(self, params: AuthRemoveParams) -> Empty:
        """auth.remove: forget the stored key and login grant (an environment variable cannot be unset from here)."""
        self._known(params.provider_id)
        before = self._model_access.catalog_rev
        try:
            self._model_access.credentials.remove(params.provider_id)
        except CredentialError as exc:
            raise EngineError(ErrorCode.RUNTIME_FAILED, str(exc)) from None
        self._changed(params.provider_id, before)
        return Empty()

    def _changed(self, provider_id: str, rev_before: str) -> None:
        moved = self._model_access.catalog_rev != rev_before
        self._broadcaster.emit("auth.changed", AuthChangedData(provider=self._auth_provider(provider_id)))
        if moved:
            self._broadcaster.emit("catalog.changed", CatalogChangedData(catalog_rev=self._model_access.catalog_rev))

    async def auth_login(self, params: AuthLoginParams) -> AuthLoginResult:
        """auth.login: start the provider's device login; the verification URL and code answer only the caller."""
        self._known(params.provider_id)
        provider = self._model_access.catalog.provider(params.provider_id)
        entry = provider.auth.oauth if provider is not None and provider.auth is not None else None
        if entry is None:
            raise EngineError.bad_request("the provider offers no login")
        return await self._logins.start(params.provider_id, entry)

    async def auth_cancel_login(self, params: AuthCancelLoginParams) -> Empty:
        """auth.cancel_login: stop a running login (`auth.login_finished{canceled}`)."""
        return await self._logins.cancel(params.login_id)
