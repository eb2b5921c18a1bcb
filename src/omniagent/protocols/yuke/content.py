"""Content parts and media sources, plus the input union a client sends."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import U64, Str


class MediaBlob(YukeModel):
    """A content-addressed blob (no blob store exists yet, so the engine refuses it)."""

    type: Literal["blob"] = "blob"
    hash: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    mime: Str
    bytes: U64


MediaSource = Annotated[MediaBlob, Field(discriminator="type")]


class ContentText(YukeModel):
    type: Literal["text"] = "text"
    text: Str


class ContentImage(YukeModel):
    type: Literal["image"] = "image"
    source: MediaSource
    detail: Str | None = None


class ContentAudio(YukeModel):
    type: Literal["audio"] = "audio"
    source: MediaSource
    format: Str


class ContentFile(YukeModel):
    type: Literal["file"] = "file"
    source: MediaSource
    filename: Str | None = None


ContentPart = Annotated[ContentText | ContentImage | ContentAudio | ContentFile, Field(discriminator="type")]


class SkillRef(YukeModel):
    name: Str
    arguments: Str


class SkillInfo(YukeModel):
    name: Str
    description: Str
    scope: Literal["project", "personal"]
    argument_hint: Str


class SkillsListResult(YukeModel):
    skills: list[SkillInfo]


class InputContent(YukeModel):
    type: Literal["content"] = "content"
    content: list[ContentPart]


class InputSkill(YukeModel):
    type: Literal["skill"] = "skill"
    skill: SkillRef


Input = Annotated[InputContent | InputSkill, Field(discriminator="type")]
