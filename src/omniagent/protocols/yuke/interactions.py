"""Interactions: the engine asking the frontend mid-run (`interaction.requested`) and its answer
(`interaction.respond`)."""

from __future__ import annotations

from typing import ClassVar, Literal

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import U64, Bool, SessionId, Str


class InteractionConfirm(YukeModel, tag="confirm"):
    type: ClassVar[Literal["confirm"]] = "confirm"
    title: Str
    message: Str


class InteractionSelect(YukeModel, tag="select"):
    type: ClassVar[Literal["select"]] = "select"
    title: Str
    options: list[Str]


class InteractionInput(YukeModel, tag="input"):
    type: ClassVar[Literal["input"]] = "input"
    secret: Bool | None = None
    title: Str
    placeholder: Str | None = None


InteractionRequest = InteractionConfirm | InteractionSelect | InteractionInput


class InteractionConfirmed(YukeModel, tag="confirm"):
    type: ClassVar[Literal["confirm"]] = "confirm"
    value: Bool


class InteractionSelectValue(YukeModel, tag="select"):
    type: ClassVar[Literal["select"]] = "select"
    value: Str


class InteractionInputValue(YukeModel, tag="input"):
    type: ClassVar[Literal["input"]] = "input"
    value: Str


class InteractionCanceled(YukeModel, tag="canceled"):
    type: ClassVar[Literal["canceled"]] = "canceled"


InteractionResponse = InteractionConfirmed | InteractionSelectValue | InteractionInputValue | InteractionCanceled


class InteractionRequestedData(YukeModel):
    interaction_id: U64
    request: InteractionRequest
    session_id: SessionId | None = None


class InteractionRespondParams(YukeModel):
    interaction_id: U64
    response: InteractionResponse
