"""Tool part lifecycle states and the view hints a frontend may render."""

from __future__ import annotations

from typing import ClassVar, Literal

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.content import MediaSource
from omniagent.protocols.yuke.ids import U64, Str


class ViewText(YukeModel, tag="text"):
    type: ClassVar[Literal["text"]] = "text"
    text: Str
    language: Str | None = None


class ViewMarkdown(YukeModel, tag="markdown"):
    type: ClassVar[Literal["markdown"]] = "markdown"
    text: Str


class ViewJson(YukeModel, tag="json"):
    type: ClassVar[Literal["json"]] = "json"
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


class ViewDiff(YukeModel, tag="diff"):
    type: ClassVar[Literal["diff"]] = "diff"
    files: list[DiffFile]


class ViewImage(YukeModel, tag="image"):
    type: ClassVar[Literal["image"]] = "image"
    source: MediaSource
    alt: Str | None = None


View = ViewText | ViewMarkdown | ViewJson | ViewDiff | ViewImage


class ToolStatePending(YukeModel, tag="pending"):
    type: ClassVar[Literal["pending"]] = "pending"


class ToolStateRunning(YukeModel, tag="running"):
    type: ClassVar[Literal["running"]] = "running"
    started_at_ms: U64
    output: Str | None = None


class ToolStateCompleted(YukeModel, tag="completed"):
    type: ClassVar[Literal["completed"]] = "completed"
    output: Str
    view: list[View] | None = None
    duration_ms: U64


class ToolStateError(YukeModel, tag="error"):
    type: ClassVar[Literal["error"]] = "error"
    error: Str
    view: list[View] | None = None
    duration_ms: U64


class ToolStateCanceled(YukeModel, tag="canceled"):
    type: ClassVar[Literal["canceled"]] = "canceled"
    duration_ms: U64 | None = None


ToolState = ToolStatePending | ToolStateRunning | ToolStateCompleted | ToolStateError | ToolStateCanceled
