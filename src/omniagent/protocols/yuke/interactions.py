"""Interactions: the engine asking the frontend mid-run (`interaction.requested`) and its answer
(`interaction.respond`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import U64, Bool, SessionId, Str


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
