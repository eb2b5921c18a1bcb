"""Agents config, interactions, notices and initialize: the small corners of the protocol."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import U32, U64, AgentConfigRev, Bool, CatalogRev, SessionId, SessionRevision, Str

AgentModelSlot = Literal["small", "medium"]


class AgentModel(YukeModel):
    model: Annotated[str, Field(min_length=1, max_length=4096)]
    reasoning: Str | None = None


class AgentModels(YukeModel):
    small: AgentModel | None = None
    medium: AgentModel | None = None


class AgentsConfig(YukeModel):
    models: AgentModels = Field(default_factory=AgentModels)


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


class InteractionConfirm(YukeModel):
    type: Literal["confirm"] = "confirm"
    title: Str
    message: Str


class InteractionSelect(YukeModel):
    type: Literal["select"] = "select"
    title: Str
    options: list[Str]


class InteractionInput(YukeModel):
    type: Literal["input"] = "input"
    secret: Bool | None = None
    title: Str
    placeholder: Str | None = None


InteractionRequest = Annotated[InteractionConfirm | InteractionSelect | InteractionInput, Field(discriminator="type")]


class InteractionConfirmed(YukeModel):
    type: Literal["confirm"] = "confirm"
    value: Bool


class InteractionSelectValue(YukeModel):
    type: Literal["select"] = "select"
    value: Str


class InteractionInputValue(YukeModel):
    type: Literal["input"] = "input"
    value: Str


class InteractionCanceled(YukeModel):
    type: Literal["canceled"] = "canceled"


InteractionResponse = Annotated[
    InteractionConfirmed | InteractionSelectValue | InteractionInputValue | InteractionCanceled,
    Field(discriminator="type"),
]


class InteractionRequestedData(YukeModel):
    interaction_id: U64
    request: InteractionRequest
    session_id: SessionId | None = None


class InteractionRespondParams(YukeModel):
    interaction_id: U64
    response: InteractionResponse


class Notice(YukeModel):
    level: Literal["info", "warn", "error"]
    source: Str
    message: Str


class Empty(YukeModel):
    """Empty params or result object."""


class EngineInfo(YukeModel):
    version: Str


class InitializeResult(YukeModel):
    protocol: U32
    engine: EngineInfo
    session_revision: SessionRevision
    catalog_rev: CatalogRev
