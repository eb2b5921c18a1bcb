"""Reading engine sessions for ACP: the `SessionInfo` of a listing (the conversation for a replay is the engine's
`Sessions.conversation`)."""

from __future__ import annotations

from msgspec import UNSET

from omniagent.protocols.acp import v2
from omniagent.protocols.yuke.sessions import Session
from omniagent.serving.acp.builders import iso_time


def session_info(session: Session) -> v2.SessionInfo:
    """The ACP `SessionInfo` of an engine session (the same in v1 and v2: built with v2's model)."""
    return v2.SessionInfo(
        session_id=session.id,
        cwd=session.root,
        title=session.title or UNSET,
        updated_at=iso_time(session.updated_at_ms),
    )
