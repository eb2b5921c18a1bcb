"""Tool results on the yuke wire: view hints and terminal tool states dump to the spec's shapes."""

from __future__ import annotations

from pathlib import Path

from omniagent.engine.tools import (
    DiffFile,
    DiffHunk,
    DiffView,
    ImageView,
    JsonView,
    MarkdownView,
    MediaBlob,
    TextView,
    ToolResult,
    View,
    default_tools,
)
from omniagent.engine.tools.wire import terminal_state, view_to_wire
from omniagent.protocols.yuke import tools as wire_tools
from omniagent.protocols.yuke.base import decode

from .conftest import make_ctx


def test_every_view_kind_dumps_to_its_yuke_arm_and_decodes_back() -> None:
    """The yuke `View` union: text/markdown/json/diff/image arms, tagged by `type`, absent optionals omitted."""
    views: list[View] = [
        TextView(text="t"),
        TextView(text="x = 1", language="python"),
        MarkdownView(text="# h"),
        JsonView(text="{}"),
        DiffView(files=(DiffFile(path="a.txt", hunks=(DiffHunk(1, 1, 1, 1, ("-a", "+b")),), old_path="b.txt"),)),
        ImageView(source=MediaBlob(hash="ab" * 32, mime="image/png", bytes=3), alt="logo"),
    ]
    dumped = [view_to_wire(v).dump() for v in views]
    assert dumped == [
        {"type": "text", "text": "t"},
        {"type": "text", "text": "x = 1", "language": "python"},
        {"type": "markdown", "text": "# h"},
        {"type": "json", "text": "{}"},
        {
            "type": "diff",
            "files": [
                {
                    "path": "a.txt",
                    "old_path": "b.txt",
                    "hunks": [{"old_start": 1, "old_lines": 1, "new_start": 1, "new_lines": 1, "lines": ["-a", "+b"]}],
                }
            ],
        },
        {
            "type": "image",
            "source": {"type": "blob", "hash": "ab" * 32, "mime": "image/png", "bytes": 3},
            "alt": "logo",
        },
    ]
    assert [decode(wire_tools.View, d).dump() for d in dumped] == dumped


async def test_an_edit_result_becomes_a_completed_state_with_a_diff_view(workspace: Path) -> None:
    """yuke ToolStateCompleted {output, view?, duration_ms}."""
    (workspace / "f.txt").write_text("old\n")
    args = {"path": "f.txt", "old_string": "old", "new_string": "new"}
    result = await default_tools().run("edit", args, make_ctx(workspace))
    assert terminal_state(result, duration_ms=7).dump() == {
        "type": "completed",
        "output": "replaced 1 occurrence in f.txt",
        "view": [
            {
                "type": "diff",
                "files": [
                    {
                        "path": "f.txt",
                        "hunks": [
                            {"old_start": 1, "old_lines": 1, "new_start": 1, "new_lines": 1, "lines": ["-old", "+new"]}
                        ],
                    }
                ],
            }
        ],
        "duration_ms": 7,
    }


def test_an_error_result_becomes_an_error_state_without_a_view() -> None:
    """yuke ToolStateError {error, view?, duration_ms}; an empty view list is omitted, not sent as []."""
    assert terminal_state(ToolResult.error("boom"), duration_ms=0).dump() == {
        "type": "error",
        "error": "boom",
        "duration_ms": 0,
    }
