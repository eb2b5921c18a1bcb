"""Reading engine sessions for ACP: the `SessionInfo` of a listing (the conversation for a replay is the engine's
`Sessions.conversation`)."""

from __future__ import annotations

from typing import Any

from omniagent.faces.acp.translate import iso_time
from omniagent.protocols.yuke.sessions import Session


def session_info(session: Session) -> dict[str, Any]:
    """The ACP `SessionInfo` of an engine session (the same shape in v1 and v2)."""
    info: dict[str, Any] = {"sessionId": session.id, "cwd": session.root, "updatedAt": iso_time(session.updated_at_ms)}
    if session.title:
        info["title"] = session.title
    return info
