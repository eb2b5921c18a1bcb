"""Tool part lifecycle states and the view hints a frontend may render."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.content import MediaSource
from omniagent.protocols.yuke.ids import U64, Str


class ViewText(YukeModel):
    type: Literal["text"] = "text"
    text: Str
    language: Str | None = None


class ViewMarkdown(YukeModel):
    type: Literal["markdown"] = "markdown"
    text: Str


class ViewJson(YukeModel):
    type: Literal["json"] = "json"
    text: Str


class DiffHunk(YukeModel):
    old_start: U64
    old_lines: U64
    new_start: U64
    new_lines: U64
    lines: list[Str]


class DiffFile(YukeModel):
    path: Str
    old_path: Str | None = None
    hunks: list[DiffHunk]


class ViewDiff(YukeModel):
    type: Literal["diff"] = "diff"
    files: list[DiffFile]


class ViewImage(YukeModel):
    type: Literal["image"] = "image"
    source: MediaSource
    alt: Str | None = None


View = Annotated[ViewText | ViewMarkdown | ViewJson | ViewDiff | ViewImage, Field(discriminator="type")]


class ToolStatePending(YukeModel):
    type: Literal["pending"] = "pending"


class ToolStateRunning(YukeModel):
    type: Literal["running"] = "running"
    started_at_ms: U64
    output: Str | None = None


class ToolStateCompleted(YukeModel):
    type: Literal["completed"] = "completed"
    output: Str
    view: list[View] | None = None
    duration_ms: U64


class ToolStateError(YukeModel):
    type: Literal["error"] = "error"
    error: Str
    view: list[View] | None = None
    duration_ms: U64


class ToolStateCanceled(YukeModel):
    type: Literal["canceled"] = "canceled"
    duration_ms: U64 | None = None


ToolState = Annotated[
    ToolStatePending | ToolStateRunning | ToolStateCompleted | ToolStateError | ToolStateCanceled,
    Field(discriminator="type"),
]
