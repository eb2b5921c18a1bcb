"""Workspace paths as a check and for display. The tools do not open what `resolve_in_workspace` returns: they
open through beneath.py, whose walk from the workspace's fd cannot be raced by a symlink swap."""

from __future__ import annotations

import os
from pathlib import Path

from omniagent.engine.tools.context import ToolError

__all__ = ["display_path", "resolve_in_workspace"]


def resolve_in_workspace(root: Path, path: str) -> Path:
    """The canonical absolute path for `path` (relative to `root`, or absolute), refused unless it lies inside `root`.

    Symlinks are followed before the check, so a link (even a dangling one) pointing outside is refused, and so
    are `..` escapes and absolute paths elsewhere. `root` must already be canonical (`ToolContext.for_workspace`).
    The check is made at call time: a link swapped in afterwards by another process is not caught, which is why
    no tool opens the path it returns (beneath.py does the opening).

    Raises:
        ToolError: the path is empty, holds a NUL byte, or resolves outside the workspace.
    """
    if not path:
        raise ToolError("path is empty; give a path relative to the workspace")
    if "\x00" in path:
        raise ToolError("path contains a NUL byte")
    candidate = Path(path) if os.path.isabs(path) else root / path
    try:
        resolved = candidate.resolve(strict=False)
    except RuntimeError as exc:  # a symlink loop
        raise ToolError(f"cannot resolve {path}: it is a symlink loop") from exc
    if not resolved.is_relative_to(root):
        raise ToolError(f"{path} is outside the workspace; only paths inside {root} may be used")
    return resolved


def display_path(root: Path, path: Path) -> str:
    """`path` as the model and views show it: workspace-relative with `/` separators (`.` for the root)."""
    return path.relative_to(root).as_posix()
