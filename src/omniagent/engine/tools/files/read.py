"""The `read` tool: a window of a text file's lines, numbered like `cat -n`.

Output format (our choice, as Claude Code and opencode do): each line is `<number>\\t<text>`, the number
right-aligned to 6 columns and 1-based, so the model can cite lines and pass `offset` back. `edit` wants the text
without the number prefix, which the tool description says. A window stops at `limit` lines or `read_max_bytes`,
whichever comes first, and ends with a notice naming the `offset` to continue from.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from omniagent.engine.tools.args import optional_int, required_str
from omniagent.engine.tools.context import ToolContext, ToolError, ToolLimits, ToolResult, guarded
from omniagent.engine.tools.files.access import check_regular_file
from omniagent.engine.tools.files.beneath import open_beneath
from omniagent.engine.tools.views import TextView

__all__ = ["ReadTool"]

# Bytes sniffed for a NUL byte to tell binary files from text, as git and grep do.
BINARY_SNIFF_BYTES = 8192

# File suffix → language name for the text view's highlighting hint. Unknown suffixes get no language.
LANGUAGES: Mapping[str, str] = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".ts": "typescript",
    ".tsx": "tsx", ".jsx": "jsx", ".rs": "rust", ".go": "go", ".zig": "zig", ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".java": "java", ".kt": "kotlin", ".rb": "ruby",
    ".sh": "bash", ".bash": "bash", ".json": "json", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml",
    ".md": "markdown", ".html": "html", ".css": "css", ".sql": "sql", ".txt": "text",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Window:
    lines: tuple[str, ...]
    first: int
    more: bool


class ReadTool:
    """Read a text file inside the workspace, as numbered lines."""

    name = "read"
    description = (
        "Read a text file in the workspace. Each output line is `<line number>\\t<text>`; the number and the tab "
        "are not part of the file (leave them out of `edit` strings). Reads up to `limit` lines (default 2000) "
        "from line `offset` (1-based, default 1); a notice says how to read further."
    )
    input_schema: Mapping[str, object] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the workspace root."},
            "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)."},
            "limit": {"type": "integer", "minimum": 1, "description": "Number of lines to read."},
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    async def run(self, args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        """Read the requested window; bad arguments and unreadable files give an error result."""

        async def body() -> ToolResult:
            given = required_str(args, "path")
            offset = optional_int(args, "offset", minimum=1) or 1
            limit = optional_int(args, "limit", minimum=1) or ctx.limits.read_default_lines
            shown, window = await asyncio.to_thread(_read, ctx.root, ctx.workdir, given, offset, limit, ctx.limits)
            return _render(shown, window)

        return await guarded(ctx.root, body)


def _read(
    root: Path, workdir: Path | None, given: str, offset: int, limit: int, limits: ToolLimits
) -> tuple[str, _Window]:
    opened = open_beneath(root, given, alias=workdir)
    try:
        if opened.is_dir:
            raise ToolError(f"{given} is a directory; use the search tool to list files")
        check_regular_file(opened, given)
        with os.fdopen(os.dup(opened.fd), "rb") as handle:
            return opened.rel, _read_window(handle, given, offset, limit, limits)
    finally:
        opened.close()


def _read_window(handle: BinaryIO, given: str, offset: int, limit: int, limits: ToolLimits) -> _Window:
    lines: list[str] = []
    size = 0
    if b"\x00" in handle.read(BINARY_SNIFF_BYTES):
        raise ToolError(f"{Path(given).name} is a binary file; read only text files")
    handle.seek(0)
    number = 0
    for number, raw in enumerate(handle, start=1):
        if number < offset:
            continue
        if len(lines) >= limit or (lines and size + len(raw) > limits.read_max_bytes):
            return _Window(tuple(lines), offset, more=True)
        text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if len(text) > limits.max_line_chars:
            text = f"{text[: limits.max_line_chars]} [line cut: {len(text)} characters]"
        lines.append(text)
        size += len(raw)
    if offset > 1 and offset > number:
        raise ToolError(f"offset {offset} is past the end of the file ({number} lines)")
    return _Window(tuple(lines), offset, more=False)


def _render(shown: str, window: _Window) -> ToolResult:
    if not window.lines:
        return ToolResult(output=f"{shown} is empty", views=(TextView(text="", language=_language(shown)),))
    numbered = [f"{window.first + i:6}\t{line}" for i, line in enumerate(window.lines)]
    if window.more:
        next_offset = window.first + len(window.lines)
        numbered.append(f"[more lines follow; read again with offset={next_offset}]")
    view = TextView(text="\n".join(window.lines), language=_language(shown))
    return ToolResult(output="\n".join(numbered), views=(view,))


def _language(shown: str) -> str | None:
    return LANGUAGES.get(Path(shown).suffix.lower())
