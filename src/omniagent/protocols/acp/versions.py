"""ACP v1 vs v2 differences as data: method names, capability gates, initialize field names, turn completion.

`runtime/adapters/acp/client.py` reads one `VersionSpec` (chosen by the agent's `initialize` answer) and never tests a
version number itself. Source: the v1 and v2 JSON schemas in `schema/`, whose descriptions also state v2's capability
rules.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from omniagent.protocols.acp import methods

# The version we ask for; the agent answers the one it speaks.
LATEST = 2


@dataclass(frozen=True, slots=True)
class VersionSpec:
    """How one protocol version spells the operations the client offers."""

    version: int
    # operation → wire method name; an operation missing here does not exist in this version.
    method_names: Mapping[str, str]
    # wire method → path in the initialize result that must be present (not null, false or an empty list).
    gates: Mapping[str, tuple[str, ...]]
    # v1: the prompt response carries the stop reason; v2: `{}` at once, then an idle `state_update` ends the turn.
    prompt_response_ends_turn: bool
    # v1 `session/new` and `session/load` require `mcpServers` (send `[]`); v2 makes it optional.
    mcp_servers_required: bool
    # v2 requires `type: "id"` on `set_config_option` with a value id; v1 leaves it untagged.
    config_id_value_tagged: bool
    # v2: a `session/load` is a `session/resume` with `replayFrom: {type: "start"}`.
    load_via_resume: bool

    # The models are imported on first use, not with this module: `omniagent acp` answers `initialize` from the
    # method names alone, and defining both versions' Structs still costs ~10 ms.
    @property
    def models(self) -> ModuleType:
        """protocols.acp.v1 or .v2."""
        return importlib.import_module(f"omniagent.protocols.acp.v{self.version}")

    @property
    def table(self) -> methods.MethodTable:
        """This version's method table (params and result models per method)."""
        from omniagent.protocols.acp import methods

        return methods.V1 if self.version == 1 else methods.V2


V1 = VersionSpec(
    version=1,
    method_names={
        "initialize": "initialize",
        "authenticate": "authenticate",
        "logout": "logout",
        "new": "session/new",
        "load": "session/load",
        "resume": "session/resume",
        "close": "session/close",
        "list": "session/list",
        "fork": "session/fork",
        "delete": "session/delete",
        "prompt": "session/prompt",
        "cancel": "session/cancel",
        "set_mode": "session/set_mode",
        # Unstable v1 method real agents still serve next to their first-class `models` (claude-code-acp, Gemini,
        # Qwen); the bundled v1 schema (SDK 1.3.0) no longer has it and v2 never did, so it is v1 only.
        "set_model": "session/set_model",
        "set_config_option": "session/set_config_option",
    },
    gates={
        "session/load": ("agentCapabilities", "loadSession"),
        "session/list": ("agentCapabilities", "sessionCapabilities", "list"),
        "session/resume": ("agentCapabilities", "sessionCapabilities", "resume"),
        "session/close": ("agentCapabilities", "sessionCapabilities", "close"),
        "session/fork": ("agentCapabilities", "sessionCapabilities", "fork"),
        "session/delete": ("agentCapabilities", "sessionCapabilities", "delete"),
        "logout": ("agentCapabilities", "auth", "logout"),
    },
    prompt_response_ends_turn=True,
    mcp_servers_required=True,
    config_id_value_tagged=False,
    load_via_resume=False,
)

V2 = VersionSpec(
    version=2,
    method_names={
        "initialize": "initialize",
        "authenticate": "auth/login",
        "logout": "auth/logout",
        "new": "session/new",
        "resume": "session/resume",
        "close": "session/close",
        "list": "session/list",
        "fork": "session/fork",
        "delete": "session/delete",
        "prompt": "session/prompt",
        "cancel": "session/cancel",
        "set_config_option": "session/set_config_option",
    },
    # `capabilities.session` present ⇒ new/list/resume/close/prompt exist (the v2 schema's `SessionCapabilities`).
    gates={
        "session/new": ("capabilities", "session"),
        "session/list": ("capabilities", "session"),
        "session/resume": ("capabilities", "session"),
        "session/close": ("capabilities", "session"),
        "session/prompt": ("capabilities", "session"),
        "session/fork": ("capabilities", "session", "fork"),
        "session/delete": ("capabilities", "session", "delete"),
        # Non-empty `authMethods` ⇒ auth/login and auth/logout exist; otherwise clients MUST NOT call them.
        "auth/login": ("authMethods",),
        "auth/logout": ("authMethods",),
    },
    prompt_response_ends_turn=False,
    mcp_servers_required=False,
    config_id_value_tagged=True,
    load_via_resume=True,
)

SPECS: Mapping[int, VersionSpec] = {1: V1, 2: V2}


def spec_for(answered: Any) -> VersionSpec | None:
    """The spec for the version an agent answered, or None if we cannot speak it."""
    return SPECS.get(answered) if isinstance(answered, int) and not isinstance(answered, bool) else None


def advertised(spec: VersionSpec, init_result: Mapping[str, Any], method: str) -> bool:
    """Whether the agent's initialize result allows calling `method` (ungated methods always are)."""
    path = spec.gates.get(method)
    if path is None:
        return True
    node: Any = init_result
    for key in path:
        if not isinstance(node, Mapping):
            return False
        node = node.get(key)
    return node is not None and node is not False and node != []
