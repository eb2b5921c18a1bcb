"""The `edit` tool: exact string replacement in a text file, unique unless `replace_all`."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

from omniagent.engine.tools.args import optional_bool, required_str
from omniagent.engine.tools.context import FileImage, ToolContext, ToolError, ToolResult, guarded
from omniagent.engine.tools.files.access import decode_text, read_existing, write_text_atomically
from omniagent.engine.tools.files.beneath import slot_beneath
from omniagent.engine.tools.views import View, diff_view

__all__ = ["EditTool"]


class EditTool:
    """Replace an exact string in a file; the view is the diff."""

    name = "edit"
    description = (
        "Replace `old_string` with `new_string` in a text file in the workspace. `old_string` must match the file "
        "exactly (whitespace and indentation included, without the line-number prefix `read` shows) and occur "
        "exactly once; include surrounding lines to make it unique, or set `replace_all` to replace every occurrence."
    )
    input_schema: Mapping[str, object] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the workspace root."},
            "old_string": {"type": "string", "description": "The exact text to replace."},
            "new_string": {"type": "string", "description": "The text to put in its place."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence.", "default": False},
        },
        "required": ["path", "old_string", "new_string"],
        "additionalProperties": False,
    }

    async def run(self, args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        """Apply the edit; zero or ambiguous matches and bad arguments give an error result, the file unchanged."""

        async def body() -> ToolResult:
            given = required_str(args, "path")
            old_string = required_str(args, "old_string")
            new_string = required_str(args, "new_string", allow_empty=True)
            replace_all = optional_bool(args, "replace_all", default=False)
            if old_string == new_string:
                raise ToolError("old_string and new_string are the same; there is nothing to change")
            shown, old, new, count, mode = await asyncio.to_thread(
                _plan, ctx.root, ctx.workdir, given, old_string, new_string, replace_all
            )
            # The file as it was is stored first (the session's checkpoint), so a rewind can put it back.
            await ctx.before_change(shown, FileImage(old.encode("utf-8"), mode))
            await asyncio.to_thread(_apply, ctx.root, shown, new, mode)
            view = diff_view(shown, old, new)
            views: tuple[View, ...] = (view,) if view else ()
            noun = "occurrence" if count == 1 else "occurrences"
            return ToolResult(output=f"replaced {count} {noun} in {shown}", views=views)

        return await guarded(ctx.root, body)


def _plan(
    root: Path, workdir: Path | None, given: str, old_string: str, new_string: str, replace_all: bool
) -> tuple[str, str, str, int, int]:
    """The edit, checked but not written: (shown path, old text, new text, replacements, the file's mode)."""
    slot = slot_beneath(root, given, create_dirs=False, alias=workdir)
    try:
        shown = slot.rel
        existing = read_existing(slot, shown)
        if existing is None:
            raise ToolError(f"{shown} does not exist; use write to create it")
        old = decode_text(existing[0], shown)
        new, count = _replace(shown, old, old_string, new_string, replace_all)
        return shown, old, new, count, existing[1]
    finally:
        slot.close()


def _apply(root: Path, shown: str, new: str, mode: int) -> None:
    slot = slot_beneath(root, shown, create_dirs=False)
    try:
        write_text_atomically(slot, new, mode)
    finally:
        slot.close()


def _replace(shown: str, old: str, old_string: str, new_string: str, replace_all: bool) -> tuple[str, int]:
    count = old.count(old_string)
    if count == 0:
        raise ToolError(f"old_string was not found in {shown}; read the file and copy the text exactly")
    if count > 1 and not replace_all:
        raise ToolError(
            f"old_string occurs {count} times in {shown}; add surrounding lines to make it unique, "
            "or set replace_all to replace every occurrence"
        )
    return old.replace(old_string, new_string), count
