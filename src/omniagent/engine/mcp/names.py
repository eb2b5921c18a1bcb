"""The names MCP tools get in front of the model: `mcp__<server>__<tool>`, the convention other agents use.

Provider wires allow `[A-Za-z0-9_-]` and at most 64 characters in a tool name, so other characters become `_`, a
server's name never keeps a `__` (so the first `__` after the prefix always ends it), and a name too long is cut
and ends with a hash of the whole.
"""

from __future__ import annotations

import hashlib
import re

PREFIX = "mcp__"
# The longest tool name every provider wire accepts.
MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_RUNS = re.compile(r"_{2,}")


def tool_name(server: str, tool: str) -> str:
    """The name the model sees for `tool` of `server`."""
    safe_server = _RUNS.sub("_", _UNSAFE.sub("_", server)) or "_"
    name = f"{PREFIX}{safe_server}__{_UNSAFE.sub('_', tool) or '_'}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def split(name: str) -> tuple[str, str] | None:
    """(server, tool) as they read in a namespaced name, for display; None for a name that is not an MCP tool's."""
    if not name.startswith(PREFIX):
        return None
    server, separator, tool = name[len(PREFIX) :].partition("__")
    return (server, tool) if separator and server and tool else None
