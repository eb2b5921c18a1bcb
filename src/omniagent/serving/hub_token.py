"""The bearer token a client of a hub presents (`chat --attach`, `sessions --hub`, `acp --hub`)."""

from __future__ import annotations

import os

from omniagent.engine.config import engine_dirs
from omniagent.hub.state import TOKEN_FILE, HubState

TOKEN_ENV = "OMNIAGENT_HUB_TOKEN"


def hub_token(explicit: str | None = None) -> str | None:
    """The bearer token: `explicit`, else `$OMNIAGENT_HUB_TOKEN`, else the local hub's token file (never made here)."""
    if explicit:
        return explicit
    if os.environ.get(TOKEN_ENV):
        return os.environ[TOKEN_ENV]
    # The folder `omniagent hub` keeps its state in (`hub/` in the data dir); read, never made, from here.
    state = HubState(engine_dirs(None)[0] / "hub")
    return state.token() if (state.folder / TOKEN_FILE).is_file() else None
