"""The ACP agent's `initialize` answer: what every ACP face says of itself and of the agent it serves, before any
session exists, and the auth methods.

Negotiation: 2 when the client asks for 2 or more, else 1. The answer needs only the agent's id, which providers
lack a key when that agent is our engine (`engine/providers/catalog/missing_keys.py`), and the version's shapes, so
`faces/acp/serve.py` sends it before asyncio is imported and without the runtime, the engine's store, providers or
HTTP client, or the ACP models (docs/performance.md). Nothing here imports asyncio or logging, nor msgspec and the
catalog unless a providers.json exists.

What is advertised, per agent (`AgentFacts`): every agent gets the session baseline (list, close, resume), embedded
context, stdio and HTTP MCP servers, `session/delete` and the multi-client attach extension; our engine also forks,
loads an earlier process's session with its whole conversation (it keeps it), and names one auth method per provider
that needs a key and has none. Another agent's sessions are resumed by its own token, and it logs in its own way
(`omniagent agents` tells how): it names no auth method.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omniagent._version import __version__
from omniagent.engine.config import missing_keys_before_the_engine
from omniagent.protocols.acp.versions import SPECS, VersionSpec
from omniagent.serving.acp.shapes import SHAPES, Shapes
from omniagent.wire.messages import INVALID_PARAMS, RpcError

if TYPE_CHECKING:
    from omniagent.engine.providers.catalog.missing_keys import MissingKey

AGENT_NAME = "omniagent"
# The agent id of our own engine (`omniagent agents`).
ENGINE = "omniagent"
# The roles and history policies of the multi-client attach extension (`hub/session.py`'s `Role` and `History`,
# spelled here so the answer needs no hub).
ATTACH_ROLES = ("controller", "observer")
ATTACH_HISTORIES = ("full", "pending_only", "none")


@dataclass(frozen=True, slots=True)
class AgentFacts:
    """What an ACP face advertises of the agent `session/new` opens, before any session of it exists."""

    agent: str
    data_dir: Path | None = None  # the engine's data dir (`--data-dir`), where our engine's keys are looked up
    load: bool = True  # v1 `loadSession`: a session loads with its conversation

    @property
    def engine(self) -> bool:
        return self.agent == ENGINE

    @property
    def forks(self) -> bool:
        """`session/fork`: our engine copies a session's conversation into a new one."""
        return self.engine

    def missing_keys(self) -> list[MissingKey]:
        """The providers that need a key and have none (read from the files now): our engine's auth methods."""
        return missing_keys_before_the_engine(self.data_dir) if self.engine else []


class Handshake:
    """One connection's `initialize` answers. The first one answered fixes the connection's protocol version and
    whether the client takes elicitation forms; a later one is answered in that version."""

    def __init__(self, facts: AgentFacts) -> None:
        self.facts = facts
        self.spec: VersionSpec | None = None
        self.elicits = False

    def initialize(self, params: Any) -> dict[str, Any]:
        """The `initialize` result for `params`. Raises RpcError (-32602) when no version is asked."""
        version = requested_version(params)
        if self.spec is None:
            self.elicits = client_elicits(params)
            self.spec = SPECS[version]
        shapes = SHAPES[self.spec.version]
        return initialize_result(shapes, self.facts, auth_methods(self.facts.missing_keys(), shapes))

    @property
    def shapes(self) -> Shapes:
        assert self.spec is not None, "initialize first"
        return SHAPES[self.spec.version]


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


def initialize_result(shapes: Shapes, facts: AgentFacts, auth: list[dict[str, Any]]) -> dict[str, Any]:
    """The `initialize` result in the version's shape."""
    info = {"name": AGENT_NAME, "title": AGENT_NAME, "version": __version__}
    roles, histories = list(ATTACH_ROLES), list(ATTACH_HISTORIES)
    forks: dict[str, Any] = {"fork": {}} if facts.forks else {}
    if shapes.state_updates:
        # v2 capability markers are objects, never booleans.
        attach = {"roles": roles, "historyPolicies": histories, "after": {}}
        session: dict[str, Any] = {
            "prompt": {"embeddedContext": {}},
            "mcp": {"stdio": {}, "http": {}},
            "delete": {},
            **forks,
            "attach": attach,
        }
        return {"protocolVersion": 2, "info": info, "capabilities": {"session": session}, "authMethods": auth}
    sessions: dict[str, Any] = {"list": {}, "resume": {}, "close": {}, "delete": {}, **forks}
    sessions["attach"] = {"roles": roles, "historyPolicies": histories, "after": True}
    capabilities: dict[str, Any] = {
        "loadSession": facts.load,
        "promptCapabilities": {"embeddedContext": True},
        "mcpCapabilities": {"http": True, "sse": False},  # stdio goes without saying in v1
        "sessionCapabilities": sessions,
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
