"""Claude Code's tools as the runtime shows them: each call's cumulative snapshot (kind by tool name, input, output,
diffs), what a `tool_result` says about it, and `AskUserQuestion`'s questions. Pure data; no I/O.

Observed with claude 2.1.197: a `tool_result` block's text is the model's view ("(Bash completed with no output)");
the frame's `tool_use_result` holds Bash's `stdout`/`stderr`, an edit's `filePath`/`oldString`/`newString`, a
write's `content`/`originalFile`, and `backgroundTaskId` for a task left running.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from omniagent.protocols.sidecar.events import (
    Choice,
    CommandInput,
    CommandSpec,
    Edit,
    Execute,
    Fetch,
    FileDiff,
    Mcp,
    NoInput,
    OtherTool,
    PathInput,
    PatternInput,
    QueryInput,
    Question,
    RawTool,
    Read,
    Search,
    Subagent,
    ToolInput,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    UrlInput,
)
from omniagent.runtime.adapters.acp.translate import cap_output

_KINDS: Mapping[str, Callable[[], ToolKind]] = {
    "Bash": Execute,
    "BashOutput": Execute,
    "Read": Read,
    "Edit": Edit,
    "MultiEdit": Edit,
    "Write": Edit,
    "NotebookEdit": Edit,
    "Glob": Search,
    "Grep": Search,
    "WebSearch": Search,
    "WebFetch": Fetch,
    "Task": Subagent,
    "Agent": Subagent,
}


@dataclass(slots=True)
class Tool:
    """One tool call as seen so far; `snapshot()` is its cumulative `ToolUpdate`."""

    id: str
    name: str
    input: Mapping[str, Any] = field(default_factory=dict)
    status: ToolStatus = ToolStatus.PENDING
    output: str = ""
    diffs: list[FileDiff] = field(default_factory=list)

    def snapshot(self, status: ToolStatus | None = None) -> ToolUpdate:
        path = first_str(self.input, "file_path", "notebook_path", "path")
        title = first_str(self.input, "description", "command", "file_path", "pattern", "url", "query") or self.name
        return ToolUpdate(
            id=self.id,
            kind=tool_kind(self.name),
            title=title,
            status=status or self.status,
            input=tool_input(self.input),
            output=cap_output(self.output) if self.output else None,
            diffs=list(self.diffs),
            locations=[path] if path else [],
            raw=RawTool(name=self.name, input=dict(self.input)),
        )


def questions(tool_input: Mapping[str, Any]) -> list[Question]:
    """`AskUserQuestion`'s questions: ids `q{i}`, choice ids = labels, no free text."""
    raw = tool_input.get("questions")
    asked: list[Question] = []
    for number, item in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(item, Mapping):
            continue
        options = item.get("options")
        labels = (
            [str(o["label"]) for o in options if isinstance(o, Mapping) and "label" in o]
            if isinstance(options, list)
            else []
        )
        header = item.get("header")
        asked.append(
            Question(
                id=f"q{number}",
                text=str(item.get("question", "")),
                header=header if isinstance(header, str) else None,
                choices=[Choice(id=label, label=label) for label in labels],
                multi_select=item.get("multiSelect") is True,
                allows_free_text=False,
            )
        )
    return asked


def tool_kind(name: str) -> ToolKind:
    """A tool's kind by name; `mcp__<server>__<tool>` names an MCP tool."""
    if name.startswith("mcp__"):
        server, _, tool = name[len("mcp__") :].partition("__")
        return Mcp(server=server, tool=tool)
    return _KINDS.get(name, OtherTool)()


def tool_input(args: Mapping[str, Any]) -> ToolInput:
    """What the tool works on: a command, a path, a pattern, a URL or a query."""
    if isinstance(args.get("command"), str):
        return CommandInput(spec=CommandSpec(command=args["command"]))
    path = first_str(args, "file_path", "notebook_path", "path")
    if path:
        return PathInput(path=path)
    if isinstance(args.get("pattern"), str):
        return PatternInput(pattern=args["pattern"])
    if isinstance(args.get("url"), str):
        return UrlInput(url=args["url"])
    if isinstance(args.get("query"), str):
        return QueryInput(query=args["query"])
    return NoInput()


def result_output(block: Mapping[str, Any], detail: Any) -> str:
    """A result's output: Bash's stdout and stderr when the CLI gives them, else the result's text."""
    if isinstance(detail, Mapping) and ("stdout" in detail or "stderr" in detail):
        parts = [str(detail.get("stdout") or ""), str(detail.get("stderr") or "")]
        text = "\n".join(part for part in parts if part)
        if text:
            return text
    return text_of(block.get("content"))


def diffs(detail: Any) -> list[FileDiff]:
    """An edit's strings, or a write's new content against the file it replaced."""
    if not isinstance(detail, Mapping) or not isinstance(detail.get("filePath"), str):
        return []
    path = detail["filePath"]
    if isinstance(detail.get("newString"), str):
        old = detail.get("oldString")
        return [FileDiff(path=path, old_text=old if isinstance(old, str) else None, new_text=detail["newString"])]
    if isinstance(detail.get("content"), str):
        old = detail.get("originalFile")
        return [FileDiff(path=path, old_text=old if isinstance(old, str) else None, new_text=detail["content"])]
    return []


def text_of(content: Any) -> str:
    """The text of message content: a string, or the text blocks of a list joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text")) for b in content if isinstance(b, Mapping) and b.get("type") == "text")
    return ""


def first_str(args: Mapping[str, Any], *keys: str) -> str | None:
    """The first of `keys` holding a non-empty string."""
    for key in keys:
        if isinstance(args.get(key), str) and args[key]:
            return str(args[key])
    return None
