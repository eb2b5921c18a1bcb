"""The `write` tool: create or overwrite a text file inside the workspace, parent directories included."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

from omniagent.engine.tools.args import required_str
from omniagent.engine.tools.context import ToolContext, ToolError, ToolResult, guarded
from omniagent.engine.tools.files.access import decode_text, read_existing, write_text_atomically
from omniagent.engine.tools.files.beneath import slot_beneath
from omniagent.engine.tools.files.checkpoint import read_image
from omniagent.engine.tools.views import View, diff_view

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
            # The file as it was is stored first (the session's checkpoint), so a rewind can put it back.
            await ctx.before_change(*await asyncio.to_thread(read_image, ctx.root, given, ctx.workdir))
            shown, old = await asyncio.to_thread(_write, ctx.root, ctx.workdir, given, content)
            verb = "created" if old is None else "overwrote"
            size = len(content.encode("utf-8"))
            view = diff_view(shown, old or "", content)
            views: tuple[View, ...] = (view,) if view else ()
            return ToolResult(output=f"{verb} {shown} ({size} bytes)", views=views)

        return await guarded(ctx.root, body)


def _write(root: Path, workdir: Path | None, given: str, content: str) -> tuple[str, str | None]:
    """Write `content`; returns the shown path and the previous text, or None when the file is new."""
    slot = slot_beneath(root, given, create_dirs=True, alias=workdir)
    try:
        existing = read_existing(slot, slot.rel)
        old: str | None = None
        if existing is not None:
            try:
                old = decode_text(existing[0], slot.rel)
            except ToolError:
                old = ""  # a non-text file being replaced: no meaningful diff, but it is an overwrite
        write_text_atomically(slot, content, existing[1] if existing else None)
        return slot.rel, old
    finally:
        slot.close()
