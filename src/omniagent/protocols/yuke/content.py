"""Content parts and media sources, plus the input union a client sends."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from msgspec import Meta

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import U64, Str


class MediaBlob(YukeModel, tag="blob"):
    """A content-addressed blob (no blob store exists yet, so the engine refuses it)."""

    type: ClassVar[Literal["blob"]] = "blob"
    hash: Annotated[str, Meta(pattern=r"^[0-9a-f]{64}$")]
    mime: Str
    bytes: U64


# A union of one arm today: msgspec checks a tag that is present (a missing one reads as "blob").
MediaSource = MediaBlob


class ContentText(YukeModel, tag="text"):
    type: ClassVar[Literal["text"]] = "text"
    text: Str


class ContentImage(YukeModel, tag="image"):
    type: ClassVar[Literal["image"]] = "image"
    source: MediaSource
    detail: Str | None = None


class ContentAudio(YukeModel, tag="audio"):
    type: ClassVar[Literal["audio"]] = "audio"
    source: MediaSource
    format: Str


class ContentFile(YukeModel, tag="file"):
    type: ClassVar[Literal["file"]] = "file"
    source: MediaSource
    filename: Str | None = None


ContentPart = ContentText | ContentImage | ContentAudio | ContentFile


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


class InputContent(YukeModel, tag="content"):
    type: ClassVar[Literal["content"]] = "content"
    content: list[ContentPart]


class InputSkill(YukeModel, tag="skill"):
    type: ClassVar[Literal["skill"]] = "skill"
    skill: SkillRef


Input = InputContent | InputSkill
