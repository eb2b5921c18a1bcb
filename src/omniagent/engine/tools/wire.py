"""Tool results onto the yuke wire: view hints → `protocols.yuke.tools.View` models, results → terminal tool states.

Pure mapping, no I/O. The run loop owns timing (`duration_ms`) and decides when a state is sent.
"""

from __future__ import annotations

from omniagent.engine.tools.context import ToolResult
from omniagent.engine.tools.views import DiffView, ImageView, JsonView, MarkdownView, TextView, View
from omniagent.protocols.yuke import content, tools

__all__ = ["terminal_state", "view_to_wire"]


def view_to_wire(view: View) -> tools.View:
    """The yuke wire model for one view hint, field for field."""
    match view:
        case TextView(text=text, language=language):
            return tools.ViewText(text=text, language=language)
        case MarkdownView(text=text):
            return tools.ViewMarkdown(text=text)
        case JsonView(text=text):
            return tools.ViewJson(text=text)
        case DiffView(files=files):
            return tools.ViewDiff(
                files=[
                    tools.DiffFile(
                        path=f.path,
                        old_path=f.old_path,
                        hunks=[
                            tools.DiffHunk(
                                old_start=h.old_start,
                                old_lines=h.old_lines,
                                new_start=h.new_start,
                                new_lines=h.new_lines,
                                lines=list(h.lines),
                            )
                            for h in f.hunks
                        ],
                    )
                    for f in files
                ]
            )
        case ImageView(source=source, alt=alt):
            blob = content.MediaBlob(hash=source.hash, mime=source.mime, bytes=source.bytes)
            return tools.ViewImage(source=blob, alt=alt)


def terminal_state(result: ToolResult, duration_ms: int) -> tools.ToolStateCompleted | tools.ToolStateError:
    """The `completed` or `error` tool state for a finished call; the view list is omitted when there is none."""
    views = [view_to_wire(v) for v in result.views] or None
    if result.is_error:
        return tools.ToolStateError(error=result.output, view=views, duration_ms=duration_ms)
    return tools.ToolStateCompleted(output=result.output, view=views, duration_ms=duration_ms)
