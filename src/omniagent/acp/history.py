"""Reading engine sessions for ACP: the whole conversation (for replay) and the `SessionInfo` of a listing."""

from __future__ import annotations

from typing import Any

from omniagent.acp.translate import iso_time
from omniagent.engine.engine import Engine
from omniagent.engine.sessions import HISTORY_MAX
from omniagent.protocols.yuke.messages import Message
from omniagent.protocols.yuke.sessions import Session, SessionHistoryParams

NEWEST = 2**53 - 1  # `before_message_id` of the newest history page (yuke-rpc.md §9 #12)


async def conversation(engine: Engine, session_id: str) -> list[Message]:
    """Every committed message of a session, oldest first (read newest page first, as the engine pages)."""
    pages: list[list[Message]] = []
    before = NEWEST
    while True:
        params = SessionHistoryParams(session_id=session_id, before_message_id=before, limit=HISTORY_MAX)
        page = await engine.sessions.history(params)
        pages.append(page.messages)
        if not page.has_more or not page.messages:
            break
        before = page.messages[0].id
    return [message for page in reversed(pages) for message in page]


def session_info(session: Session) -> dict[str, Any]:
    """The ACP `SessionInfo` of an engine session (the same shape in v1 and v2)."""
    info: dict[str, Any] = {"sessionId": session.id, "cwd": session.root, "updatedAt": iso_time(session.updated_at_ms)}
    if session.title:
        info["title"] = session.title
    return info
