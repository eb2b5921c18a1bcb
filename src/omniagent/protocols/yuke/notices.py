"""Notices: out-of-band messages for the user (`notice`)."""

from __future__ import annotations

from typing import Literal

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import Str


class Notice(YukeModel):
    level: Literal["info", "warn", "error"]
    source: Str
    message: Str
