"""Tool view hints: frozen mirrors of the yuke `View` union, plus the unified-diff builder.

Each class maps 1:1 to one `View` arm of the yuke wire (`type` tag in `TYPE`, same field names), so the engine core
turns a `View` into its wire model field by field. Views are hints a frontend may render or ignore; the text the
model sees is `ToolResult.output`, never a view.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import ClassVar

__all__ = [
    "DiffFile",
    "DiffHunk",
    "DiffView",
    "ImageView",
    "JsonView",
    "MarkdownView",
    "MediaBlob",
    "TextView",
    "View",
    "diff_view",
]

# Lines of unchanged context around each change, as `diff -u` prints.
DIFF_CONTEXT_LINES = 3
# Past this size (characters, old + new) a diff is not computed: difflib is quadratic and the view is only a hint.
DIFF_MAX_CHARS = 1_000_000


@dataclass(frozen=True, slots=True)
class TextView:
    """`{"type":"text"}`: plain text, optionally with a language name for highlighting."""

    TYPE: ClassVar[str] = "text"
    text: str
    language: str | None = None


@dataclass(frozen=True, slots=True)
class MarkdownView:
    """`{"type":"markdown"}`: Markdown text."""

    TYPE: ClassVar[str] = "markdown"
    text: str


@dataclass(frozen=True, slots=True)
class JsonView:
    """`{"type":"json"}`: JSON text."""

    TYPE: ClassVar[str] = "json"
    text: str


@dataclass(frozen=True, slots=True)
class DiffHunk:
    """One hunk of a unified diff; `lines` carry their ` `/`-`/`+` prefix and no line terminator.

    Starts are 1-based; a side with zero lines gives the line *before* the hunk (0 at the top), as `diff -u` does.
    """

    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DiffFile:
    """One file of a diff view; `path` is workspace-relative with `/` separators."""

    path: str
    hunks: tuple[DiffHunk, ...]
    old_path: str | None = None


@dataclass(frozen=True, slots=True)
class DiffView:
    """`{"type":"diff"}`: a unified diff over one or more files."""

    TYPE: ClassVar[str] = "diff"
    files: tuple[DiffFile, ...]


@dataclass(frozen=True, slots=True)
class MediaBlob:
    """`MediaSource` arm `{"type":"blob"}`: a content-addressed blob (SHA-256 hex)."""

    TYPE: ClassVar[str] = "blob"
    hash: str
    mime: str
    bytes: int


@dataclass(frozen=True, slots=True)
class ImageView:
    """`{"type":"image"}`: an image. No built-in tool emits it yet (there is no blob store)."""

    TYPE: ClassVar[str] = "image"
    source: MediaBlob
    alt: str | None = None


View = TextView | MarkdownView | JsonView | DiffView | ImageView


def diff_view(path: str, old: str, new: str) -> DiffView | None:
    """The unified diff from `old` to `new` for `path`, or None when the texts are equal or too large to diff."""
    if old == new or len(old) + len(new) > DIFF_MAX_CHARS:
        return None
    hunks = diff_hunks(old, new)
    # Texts that differ only in a final newline or line terminators give no line hunk.
    return DiffView(files=(DiffFile(path=path, hunks=hunks),)) if hunks else None


def diff_hunks(old: str, new: str) -> tuple[DiffHunk, ...]:
    """The hunks of a line diff from `old` to `new`, with `DIFF_CONTEXT_LINES` of context."""
    a = old.splitlines()
    b = new.splitlines()
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    hunks: list[DiffHunk] = []
    for group in matcher.get_grouped_opcodes(DIFF_CONTEXT_LINES):
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines.extend(" " + line for line in a[i1:i2])
                continue
            lines.extend("-" + line for line in a[i1:i2])
            lines.extend("+" + line for line in b[j1:j2])
        old_first, old_last = group[0][1], group[-1][2]
        new_first, new_last = group[0][3], group[-1][4]
        hunks.append(
            DiffHunk(
                old_start=_hunk_start(old_first, old_last),
                old_lines=old_last - old_first,
                new_start=_hunk_start(new_first, new_last),
                new_lines=new_last - new_first,
                lines=tuple(lines),
            )
        )
    return tuple(hunks)


def _hunk_start(first: int, last: int) -> int:
    return first + 1 if last > first else first
