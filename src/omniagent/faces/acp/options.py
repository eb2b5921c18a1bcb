"""What the ACP agent offers about itself: session config options (model, reasoning effort, mode), v1 session
modes, and auth methods. Read from the engine's catalog and permission state; no I/O.

- `model`: every model of a ready provider (plus the session's own, even if its provider is not ready now).
- `reasoning` (category `thought_level`): the levels of the session's model, when it has any.
- `mode`: `ask` (confirm exec, write and edit) or `auto` (never ask) — the engine's permission mode. v1 clients
  also see it as session modes (`modes`, `session/set_mode`, `current_mode_update`).
- `sandbox`: `sandboxed` or `unsandboxed` (every exec then asks, even in auto mode, unless answered "always"),
  `network`: `off`, `allowlist` (the session's allowed domains only) or `on` inside the sandbox, and `fetch`:
  `public` or `private` (the fetch tool may reach this machine and private networks too) — the engine's sandbox
  settings, worded once (`engine/sandboxes.py` `SANDBOX_OPTIONS`). Selects, not booleans, so every client can
  show them.
- Auth methods (listed by `acp.handshake`): one method per provider that needs a key and has none (v1 `env_var`,
  v2 `agent`). `auth/login` / `authenticate` checks that the key is there now.
"""

from __future__ import annotations

from msgspec import UNSET, UnsetType

from omniagent.engine.api import SANDBOX_OPTIONS, EngineApi, PermissionMode, option_values
from omniagent.protocols.acp import v1
from omniagent.protocols.acp._base import AcpModel
from omniagent.protocols.yuke.catalog import CatalogListResultFull
from omniagent.protocols.yuke.sessions import Session
from omniagent.serving.acp.shapes import Shapes

MODES: list[tuple[PermissionMode, str, str]] = [
    ("ask", "Ask", "Ask before running commands and changing files"),
    ("auto", "Auto", "Run commands and change files without asking"),
]


def config_options(engine: EngineApi, shapes: Shapes, session: Session) -> list[AcpModel]:
    """The session's config options in the version's shape."""
    listing = engine.catalog.listing(None)
    assert isinstance(listing, CatalogListResultFull)
    ready = {p.id for p in listing.providers if p.state == "ready"}
    models = [m for m in listing.models if m.provider in ready or m.selector == session.model]
    current = next((m for m in listing.models if m.selector == session.model), None)
    choice = shapes.models.SessionConfigSelectOption
    named = [(m.selector, m.name) for m in models] or [(session.model, session.model)]
    offered = [choice(value=selector, name=name) for selector, name in named]
    options = [_select(shapes, "model", "Model", session.model, offered, "model")]
    levels = list(current.reasoning_levels) if current is not None else []
    if levels:
        if session.reasoning not in levels:
            levels.append(session.reasoning)
        reasoning = [choice(value=level, name=level) for level in levels]
        options.append(_select(shapes, "reasoning", "Reasoning effort", session.reasoning, reasoning, "thought_level"))
    modes = [choice(value=mode, name=name, description=text) for mode, name, text in MODES]
    options.append(_select(shapes, "mode", "Mode", engine.permission_mode(session.id), modes, "mode"))
    now = option_values(engine.sandbox_settings(session.id))
    for option in SANDBOX_OPTIONS:
        values = [choice(value=v, name=label, description=text) for v, label, text in option.values]
        options.append(_select(shapes, option.id, option.name, now[option.id], values))
    return options


def _select(
    shapes: Shapes,
    option_id: str,
    name: str,
    value: str,
    choices: list[AcpModel],
    category: str | UnsetType = UNSET,
) -> AcpModel:
    """A select option; its id is the one field the versions name differently (v2 `config_id`, v1 `id`)."""
    ident = {shapes.config_id_field: option_id}
    select = shapes.models.SessionConfigOptionSelect
    return select(**ident, name=name, category=category, current_value=value, options=choices)


def v1_modes(engine: EngineApi, session_id: str) -> v1.SessionModeState:
    """The v1 `modes` object of a session (its permission mode)."""
    return v1.SessionModeState(
        current_mode_id=engine.permission_mode(session_id),
        available_modes=[v1.SessionMode(id=mode, name=name, description=text) for mode, name, text in MODES],
    )


def provider_ready(engine: EngineApi, provider_id: str) -> bool:
    """Whether an auth method's provider has its key now."""
    provider = engine.catalog.provider(provider_id)
    return provider is not None and engine.catalog.state(provider) == "ready"
