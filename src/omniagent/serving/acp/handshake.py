"""The ACP agent's `initialize` answer and its auth methods: what `omniagent acp` says before the engine exists.

Negotiation: 2 when the client asks for 2 or more, else 1. The answer needs only which providers lack a key
(`engine/providers/catalog/missing_keys.py`) and the version's shapes, so `faces/acp/serve.py` sends it before asyncio
is imported and without the engine's store, providers or HTTP client, or the ACP models (docs/performance.md). Nothing
here imports asyncio or logging, nor msgspec and the catalog unless a providers.json exists.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omniagent._version import __version__
from omniagent.engine.config import missing_keys_before_the_engine
from omniagent.protocols.acp.versions import SPECS, VersionSpec
from omniagent.serving.acp.shapes import SHAPES, Shapes
from omniagent.wire.messages import INVALID_PARAMS, RpcError

if TYPE_CHECKING:
    from omniagent.engine.api import Catalog
    from omniagent.engine.providers.catalog.missing_keys import MissingKey

AGENT_NAME = "omniagent"
# The operations the agent serves (names per version in `protocols.acp.versions`); `session/cancel` is a notification.
OPERATIONS = frozenset(
    {"authenticate", "logout", "new", "load", "resume", "close", "list", "delete", "prompt", "set_mode"}
    | {"set_config_option", "fork"}
)
# The engine's method table always has `session.fork`; the agent checks `Engine.serves` again when it is built.
ENGINE_FORKS = True


class Handshake:
    """One connection's `initialize` answers. The first one answered fixes the connection's protocol version and
    whether the client takes elicitation forms; a later one is answered in that version."""

    def __init__(self, data_dir: Path | None) -> None:
        self._data_dir = data_dir
        self.spec: VersionSpec | None = None
        self.elicits = False

    def initialize(self, params: Any, catalog: Catalog | None = None) -> dict[str, Any]:
        """The `initialize` result for `params`; `catalog` is the open engine's (None: read it from the files).
        Raises RpcError (-32602) when no version is asked."""
        version = requested_version(params)
        if self.spec is None:
            self.elicits = client_elicits(params)
            self.spec = SPECS[version]
        shapes = SHAPES[self.spec.version]
        return initialize_result(shapes, auth_methods(self._missing_keys(catalog), shapes), ENGINE_FORKS)

    def _missing_keys(self, catalog: Catalog | None) -> list[MissingKey]:
        if catalog is not None:
            return catalog.missing_keys()
        return missing_keys_before_the_engine(self._data_dir)


def requested_version(params: Any) -> int:
    """The version to speak for an `initialize` request's params. Raises RpcError (-32602) when none is asked."""
    requested = params.get("protocolVersion") if isinstance(params, dict) else None
    if not isinstance(requested, int) or isinstance(requested, bool) or requested < 0:
        raise RpcError(INVALID_PARAMS, "initialize needs an integer protocolVersion")
    return 2 if requested >= 2 else 1


def client_elicits(params: Any) -> bool:
    """Whether the client advertised elicitation forms in its `initialize` (v2 `capabilities`, v1
    `clientCapabilities`): only then may the agent send `elicitation/create`."""
    if not isinstance(params, dict):
        return False
    for key in ("capabilities", "clientCapabilities"):
        capabilities = params.get(key)
        elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
        if isinstance(elicitation, dict) and isinstance(elicitation.get("form"), dict):
            return True
    return False


def initialize_result(shapes: Shapes, auth: list[dict[str, Any]], fork: bool) -> dict[str, Any]:
    """The `initialize` result in the version's shape."""
    info = {"name": AGENT_NAME, "title": AGENT_NAME, "version": __version__}
    if shapes.state_updates:
        session: dict[str, Any] = {"prompt": {"embeddedContext": {}}, "mcp": {"stdio": {}, "http": {}}, "delete": {}}
        if fork:
            session["fork"] = {}
        return {"protocolVersion": 2, "info": info, "capabilities": {"session": session}, "authMethods": auth}
    forks: dict[str, Any] = {"fork": {}} if fork else {}
    capabilities: dict[str, Any] = {
        "loadSession": True,
        "promptCapabilities": {"embeddedContext": True},
        "mcpCapabilities": {"http": True, "sse": False},  # stdio goes without saying in v1
        "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "delete": {}, **forks},
        "auth": {"logout": {}} if auth else {},
    }
    return {"protocolVersion": 1, "agentInfo": info, "agentCapabilities": capabilities, "authMethods": auth}


def auth_methods(missing: Iterable[MissingKey], shapes: Shapes) -> list[dict[str, Any]]:
    """One auth method per provider that needs a key and has none (names only, never values).

    v1: an `env_var` method naming the variable. v2: the draft knows only `agent`, `terminal` and `_`-prefixed
    types, so an `agent` method (`auth/login` answers whether the key is there now) whose description names the
    variable; alpha.2 clients take `agent` methods too.
    """
    if shapes.state_updates:
        return [
            {
                "type": "agent",
                "methodId": key.provider_id,
                "name": f"{key.name} API key",
                "description": f"Set {key.env} in the agent's environment, then restart it",
            }
            for key in missing
        ]
    return [
        {
            "type": "env_var",
            shapes.auth_id_key: key.provider_id,
            "name": f"{key.name} API key",
            "vars": [{"name": key.env, "label": f"{key.name} API key"}],
        }
        for key in missing
    ]
