"""The `initialize` handshake: the engine's version, protocol and revisions."""

from __future__ import annotations

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import U32, CatalogRev, SessionRevision, Str


class EngineInfo(YukeModel):
    version: Str


class InitializeResult(YukeModel):
    protocol: U32
    engine: EngineInfo
    session_revision: SessionRevision
    catalog_rev: CatalogRev
