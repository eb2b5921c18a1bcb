"""Agents config: the model slots of named agents (`agents.*`)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import AgentConfigRev, SessionId, Str

AgentModelSlot = Literal["small", "medium"]


class AgentModel(YukeModel):
    model: Annotated[str, Meta(min_length=1, max_length=4096)]
    reasoning: Str | None = None


class AgentModels(YukeModel):
    small: AgentModel | None = None
    medium: AgentModel | None = None


class AgentsConfig(YukeModel, omit_defaults=False):
    models: AgentModels = msgspec.field(default_factory=AgentModels)


class AgentsGetResult(YukeModel):
    path: Str | None = None
    revision: AgentConfigRev
    config: AgentsConfig


class AgentsUpdateParams(YukeModel):
    revision: AgentConfigRev
    config: AgentsConfig


class AgentsResolveParams(YukeModel):
    model: AgentModelSlot


class AgentsResolveResult(YukeModel):
    slot: AgentModelSlot
    model: Str
    reasoning: Str
    revision: AgentConfigRev


class AgentsSetModelParams(YukeModel):
    session_id: SessionId
    model: AgentModel
