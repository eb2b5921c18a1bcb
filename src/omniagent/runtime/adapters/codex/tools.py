"""Codex app-server tool items (commands, file changes, MCP and web calls, subagents) as cumulative tool snapshots.

Each `item/started` / `item/updated` / `item/completed` of a tool item merges into one snapshot per item id; output
deltas extend it. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from omniagent.protocols.sidecar.events import (
    CommandInput,
    CommandSpec,
    Edit,
    Execute,
    FileDiff,
    Mcp,
    NoInput,
    OtherTool,
    PathInput,
    QueryInput,
    RawTool,
    Read,
    Search,
    Subagent,
    ToolInput,
    ToolKind,
    ToolStatus,
    ToolUpdate,
)
from omniagent.runtime.adapters.acp.translate import cap_output

_TOOL_STATUSES = {
    "inProgress": ToolStatus.RUNNING,
    "completed": ToolStatus.COMPLETED,
    "failed": ToolStatus.FAILED,
    "declined": ToolStatus.CANCELLED,
}
_KINDS: Mapping[str, Callable[[Mapping[str, Any]], ToolKind]] = {
    "commandExecution": lambda item: Execute(),
    "fileChange": lambda item: Edit(),
    "mcpToolCall": lambda item: Mcp(server=str(item.get("server", "")), tool=str(item.get("tool", ""))),
    "webSearch": lambda item: Search(),
    "imageView": lambda item: Read(),
    "collabAgentToolCall": lambda item: Subagent(),
    "subAgentActivity": lambda item: Subagent(),
}


@dataclass(slots=True)
class ToolItem:
    """One tool item as merged so far."""

    id: str
    kind: ToolKind
    title: str
    input: ToolInput
    status: ToolStatus = ToolStatus.RUNNING
    output: str = ""
    diffs: list[FileDiff] = field(default_factory=list)
    locations: list[str] = field(default_factory=list)
    raw: Any = None

    def snapshot(self) -> ToolUpdate:
        return ToolUpdate(
            id=self.id,
            kind=self.kind,
            title=self.title,
            status=self.status,
            input=self.input,
            output=cap_output(self.output) if self.output else None,
            diffs=list(self.diffs),
            locations=list(self.locations),
            raw=RawTool(name=str(self.raw.get("type", "")), input=self.raw) if isinstance(self.raw, Mapping) else None,
        )


class ToolItems:
    """The tool items of the current turn by id."""

    def __init__(self) -> None:
        self._items: dict[str, ToolItem] = {}

    def merge(self, item: Mapping[str, Any], *, completed: bool) -> ToolUpdate:
        """Merge one item frame; returns the item's snapshot. A completed item without a status is Completed."""
        item_id, kind = str(item["id"]), str(item.get("type", ""))
        tool = self._items.get(item_id)
        if tool is None:
            make = _KINDS.get(kind)
            tool = ToolItem(item_id, make(item) if make else OtherTool(), _title(item), _input(item))
            self._items[item_id] = tool
        tool.raw = item
        status = item.get("status")
        if isinstance(status, str) and status in _TOOL_STATUSES:
            tool.status = _TOOL_STATUSES[status]
        elif completed:
            tool.status = ToolStatus.COMPLETED
        output = item.get("aggregatedOutput")
        if isinstance(output, str) and len(output) >= len(tool.output):
            tool.output = output
        if kind == "fileChange":
            tool.diffs, tool.locations = _diffs(item.get("changes"))
        return tool.snapshot()

    def extend(self, item_id: str, text: str) -> bool:
        """Append streamed output to a known item; whether it was known."""
        tool = self._items.get(item_id)
        if tool is None:
            return False
        tool.output += text
        return True

    def snapshot(self, item_id: str) -> ToolUpdate | None:
        tool = self._items.get(item_id)
        return tool.snapshot() if tool is not None else None

    def remember(self, update: ToolUpdate) -> None:
        """A tool first seen in a request (its `item/started` not yet arrived)."""
        self._items.setdefault(update.id, ToolItem(update.id, update.kind, update.title, update.input, update.status))

    def end_turn(self) -> list[ToolUpdate]:
        """The turn ended: items still active end Cancelled (their snapshots); then forget them all."""
        ended = []
        for tool in self._items.values():
            if tool.status.active:
                tool.status = ToolStatus.CANCELLED
                ended.append(tool.snapshot())
        self._items.clear()
        return ended


def _title(item: Mapping[str, Any]) -> str:
    kind = item.get("type")
    if kind == "commandExecution":
        return str(item.get("command") or "command")
    if kind == "mcpToolCall":
        return f"{item.get('server', '')}.{item.get('tool', '')}"
    if kind == "webSearch":
        return f"search: {item.get('query', '')}"
    if kind == "fileChange":
        return "edit files"
    return str(item.get("tool") or kind or "tool")


def _input(item: Mapping[str, Any]) -> ToolInput:
    kind = item.get("type")
    if kind == "commandExecution" and isinstance(item.get("command"), str):
        cwd = item.get("cwd")
        return CommandInput(spec=CommandSpec(command=item["command"], cwd=cwd if isinstance(cwd, str) else None))
    if kind == "webSearch" and isinstance(item.get("query"), str):
        return QueryInput(query=item["query"])
    if kind == "imageView" and isinstance(item.get("path"), str):
        return PathInput(path=item["path"])
    return NoInput()


def _diffs(changes: Any) -> tuple[list[FileDiff], list[str]]:
    """A file change's `changes` as diffs (the patch text per path) and the paths touched."""
    diffs: list[FileDiff] = []
    for change in changes if isinstance(changes, list) else []:
        if isinstance(change, Mapping) and isinstance(change.get("path"), str):
            diffs.append(FileDiff(path=change["path"], new_text=str(change.get("diff") or "")))
    return diffs, [diff.path for diff in diffs]
