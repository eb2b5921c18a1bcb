"""catalog.* and auth.* methods: the merged catalog and the local credentials, keys never echoed."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from omniagent.engine.errors import EngineError
from omniagent.engine.providers.catalog_file import CatalogError
from omniagent.engine.providers.credentials import CredentialError
from omniagent.protocols.yuke.auth import (
    AuthChangedData,
    AuthListResult,
    AuthLoginParams,
    AuthLoginResult,
    AuthProvider,
    AuthRemoveParams,
    AuthSetApiKeyParams,
)
from omniagent.protocols.yuke.catalog import (
    CatalogChangedData,
    CatalogListParams,
    CatalogListResultFull,
    CatalogListResultUnchanged,
    CatalogReloadResult,
)
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.misc import Empty

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from omniagent.engine.engine import Engine

_PROVIDER_ID = re.compile(r"^[^/\s]{1,128}$")


async def catalog_list(engine: Engine, params: CatalogListParams) -> CatalogListResultFull | CatalogListResultUnchanged:
    """catalog.list: `unchanged` when the client holds the current revision, else the full catalog."""
    return engine.routes.catalog.listing(params.since_rev)


async def catalog_reload(engine: Engine, _params: Empty) -> CatalogReloadResult:
    """catalog.reload: a bad providers.json keeps the current catalog and fails with `internal`."""
    try:
        changed = engine.routes.reload()
    except CatalogError as exc:
        log.warning("%s", exc)
        raise EngineError(ErrorCode.INTERNAL, "providers.json did not load") from None
    if changed:
        engine.broadcaster.emit("catalog.changed", CatalogChangedData(catalog_rev=engine.routes.catalog_rev))
    return CatalogReloadResult(catalog_rev=engine.routes.catalog_rev, changed=changed)


def _auth_provider(engine: Engine, provider_id: str) -> AuthProvider:
    return next(p for p in engine.routes.catalog.auth_list() if p.provider_id == provider_id)


async def auth_list(engine: Engine, _params: Empty) -> AuthListResult:
    """auth.list: each provider's public credential state (never a key)."""
    return AuthListResult(providers=engine.routes.catalog.auth_list())


def _known(engine: Engine, provider_id: str) -> None:
    if not _PROVIDER_ID.match(provider_id):
        raise EngineError.bad_request("the provider id is not valid")
    if not engine.routes.knows_provider(provider_id):
        raise EngineError(ErrorCode.UNKNOWN_PROVIDER, "unknown provider")


async def auth_set_api_key(engine: Engine, params: AuthSetApiKeyParams) -> Empty:
    """auth.set_api_key: store the key (0600 file); emits auth.changed and catalog.changed if a state moved."""
    if not params.api_key.strip():
        raise EngineError.bad_request("the API key is empty")
    _known(engine, params.provider_id)
    before = engine.routes.catalog_rev
    try:
        engine.routes.credentials.set_api_key(params.provider_id, params.api_key)
    except CredentialError as exc:
        raise EngineError(ErrorCode.RUNTIME_FAILED, str(exc)) from None
    _changed(engine, params.provider_id, before)
    return Empty()


async def auth_remove(engine: Engine, params: AuthRemoveParams) -> Empty:
    """auth.remove: forget the stored key (an environment variable cannot be unset from here)."""
    _known(engine, params.provider_id)
    before = engine.routes.catalog_rev
    try:
        engine.routes.credentials.remove(params.provider_id)
    except CredentialError as exc:
        raise EngineError(ErrorCode.RUNTIME_FAILED, str(exc)) from None
    _changed(engine, params.provider_id, before)
    return Empty()


def _changed(engine: Engine, provider_id: str, rev_before: str) -> None:
    moved = engine.routes.catalog_rev != rev_before
    engine.broadcaster.emit("auth.changed", AuthChangedData(provider=_auth_provider(engine, provider_id)))
    if moved:
        engine.broadcaster.emit("catalog.changed", CatalogChangedData(catalog_rev=engine.routes.catalog_rev))


async def auth_login(engine: Engine, params: AuthLoginParams) -> AuthLoginResult:
    """auth.login / auth.cancel_login: no provider offers a device login yet."""
    raise EngineError(ErrorCode.NOT_IMPLEMENTED, "OAuth device login is not implemented")
