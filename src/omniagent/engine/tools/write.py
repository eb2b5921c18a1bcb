"""The `write` tool: create or overwrite a text file inside the workspace, parent directories included."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

from omniagent.engine.tools.args import required_str
from omniagent.engine.tools.context import ToolContext, ToolError, ToolResult, guarded
from omniagent.engine.tools.files import check_regular_file, read_text, write_text_atomically
from omniagent.engine.tools.views import View, diff_view
from omniagent.engine.tools.workspace import display_path, resolve_in_workspace

__all__ = ["WriteTool"]


class WriteTool:
    """Create or overwrite a UTF-8 text file; the view is the diff from the old content."""

    name = "write"
    description = (
        "Create a text file, or overwrite it with new content, in the workspace. Missing parent directories are "
        "created. To change part of an existing file, prefer `edit`."
    )
    input_schema: Mapping[str, object] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the workspace root."},
            "content": {"type": "string", "description": "The complete new content of the file."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }

    async def run(self, args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        """Write the file; bad arguments, paths outside the workspace and I/O failures give an error result."""

        async def body() -> ToolResult:
            given = required_str(args, "path")
            content = required_str(args, "content", allow_empty=True)
            path = resolve_in_workspace(ctx.root, given)
            shown = display_path(ctx.root, path)
            old = await asyncio.to_thread(_write, path, shown, content)
            verb = "created" if old is None else "overwrote"
            size = len(content.encode("utf-8"))
            view = diff_view(shown, old or "", content)
            views: tuple[View, ...] = (view,) if view else ()
            return ToolResult(output=f"{verb} {shown} ({size} bytes)", views=views)

        return await guarded(ctx.root, body)


def _write(path: Path, shown: str, content: str) -> str | None:
    """Write `content`; returns the previous text, or None when the file is new."""
    old: str | None = None
    if path.exists():
        check_regular_file(path, shown)
        try:
            old = read_text(path, shown)
        except ToolError:
            old = ""  # a non-text file being replaced: no meaningful diff, but it is an overwrite
    else:
        # `path` is canonical and inside the workspace, so every missing parent is too.
        path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(path, content)
    return old
