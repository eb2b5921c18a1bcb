"""Notices: out-of-band messages for the user (`notice`)."""

from __future__ import annotations

from typing import Literal

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import SessionId, Str


class Notice(YukeModel):
    level: Literal["info", "warn", "error"]
    source: Str
    message: Str
    # Engine extension (docs/engine.md): the session a notice is about, when it is about one.
    session_id: SessionId | None = None
