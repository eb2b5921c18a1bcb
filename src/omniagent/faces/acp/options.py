"""What the ACP agent offers about itself: session config options (model, reasoning effort, mode), v1 session
modes, and auth methods. Read from the engine's catalog and permission state; no I/O.

- `model`: every model of a ready provider (plus the session's own, even if its provider is not ready now).
- `reasoning` (category `thought_level`): the levels of the session's model, when it has any.
- `mode`: `ask` (confirm exec, write and edit) or `auto` (never ask) — the engine's permission mode. v1 clients
  also see it as session modes (`modes`, `session/set_mode`, `current_mode_update`).
- `sandbox`: `sandboxed` or `unsandboxed` (every exec then asks, even in auto mode, unless answered "always"),
  `network`: `off` or `on` inside the sandbox, and `fetch`: `public` or `private` (the fetch tool may reach this
  machine and private networks too) — the engine's sandbox settings, worded once (`engine/sandboxes.py`
  `SANDBOX_OPTIONS`). Selects, not booleans, so every client can show them.
- Auth methods (listed by `acp.handshake`): one `env_var` method per provider that needs a key and has none.
  `auth/login` / `authenticate` checks that the key is there now.
"""

from __future__ import annotations

from typing import Any

from omniagent.engine.api import SANDBOX_OPTIONS, EngineApi, PermissionMode, option_values
from omniagent.faces.acp.shapes import Shapes
from omniagent.protocols.yuke.catalog import CatalogListResultFull
from omniagent.protocols.yuke.sessions import Session

MODES: list[tuple[PermissionMode, str, str]] = [
    ("ask", "Ask", "Ask before running commands and changing files"),
    ("auto", "Auto", "Run commands and change files without asking"),
]


def config_options(engine: EngineApi, shapes: Shapes, session: Session) -> list[dict[str, Any]]:
    """The session's config options in the version's shape."""
    listing = engine.catalog.listing(None)
    assert isinstance(listing, CatalogListResultFull)
    ready = {p.id for p in listing.providers if p.state == "ready"}
    models = [m for m in listing.models if m.provider in ready or m.selector == session.model]
    current = next((m for m in listing.models if m.selector == session.model), None)
    key = shapes.config_id_key
    options: list[dict[str, Any]] = [
        {
            key: "model",
            "name": "Model",
            "category": "model",
            "type": "select",
            "currentValue": session.model,
            "options": [{"value": m.selector, "name": m.name} for m in models]
            or [{"value": session.model, "name": session.model}],
        }
    ]
    levels = list(current.reasoning_levels) if current is not None else []
    if levels:
        if session.reasoning not in levels:
            levels.append(session.reasoning)
        options.append(
            {
                key: "reasoning",
                "name": "Reasoning effort",
                "category": "thought_level",
                "type": "select",
                "currentValue": session.reasoning,
                "options": [{"value": level, "name": level} for level in levels],
            }
        )
    options.append(
        {
            key: "mode",
            "name": "Mode",
            "category": "mode",
            "type": "select",
            "currentValue": engine.permission_mode(session.id),
            "options": [{"value": mode, "name": name, "description": text} for mode, name, text in MODES],
        }
    )
    now = option_values(engine.sandbox_settings(session.id))
    for option in SANDBOX_OPTIONS:
        options.append(
            {
                key: option.id,
                "name": option.name,
                "type": "select",
                "currentValue": now[option.id],
                "options": [{"value": v, "name": label, "description": text} for v, label, text in option.values],
            }
        )
    return options


def v1_modes(engine: EngineApi, session_id: str) -> dict[str, Any]:
    """The v1 `modes` object of a session (its permission mode)."""
    return {
        "currentModeId": engine.permission_mode(session_id),
        "availableModes": [{"id": mode, "name": name, "description": text} for mode, name, text in MODES],
    }


def provider_ready(engine: EngineApi, provider_id: str) -> bool:
    """Whether an auth method's provider has its key now."""
    provider = engine.catalog.provider(provider_id)
    return provider is not None and engine.catalog.state(provider) == "ready"
