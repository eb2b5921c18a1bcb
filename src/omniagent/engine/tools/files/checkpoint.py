"""File images for checkpoints: what a file held before a tool changed it, and putting that back.

A tool that changes a file (`write`, `edit`) reads the file's image and hands it to `ToolContext.before_change`
*before* it writes, so the run can store it durably first (engine/run/executor.py); `session.rewind` puts stored images
back with `put_image` (engine/session/rewind.py). Both walk from the workspace's fd (beneath.py), so neither can read or
touch a path outside the workspace, and a put is atomic per file (a temp file renamed over the name).

What this is not: deciding which image to restore (the rewind's job) or storing images (the store's).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from omniagent.engine.tools.context import ABSENT, FileImage
from omniagent.engine.tools.files.access import read_existing, write_bytes_atomically
from omniagent.engine.tools.files.beneath import slot_beneath

__all__ = ["current_image", "put_image", "read_image"]


def read_image(root: Path, path: str) -> tuple[str, FileImage]:
    """The workspace-relative path `path` resolves to and the image of the file there (`ABSENT` when there is none).
    Missing parents are made, as the write that follows would.

    Raises:
        ToolError: the path leads outside the workspace, or a directory or special file is there.
        OSError: it cannot be read.
    """
    slot = slot_beneath(root, path, create_dirs=True)
    try:
        existing = read_existing(slot, slot.rel)
        return slot.rel, ABSENT if existing is None else FileImage(existing[0], existing[1])
    finally:
        slot.close()


def current_image(root: Path, rel: str) -> FileImage:
    """The image of the file at `rel` now (`ABSENT` when there is none, its directory included).

    Raises:
        ToolError: the path leads outside the workspace, or a directory or special file is there.
        OSError: it cannot be read.
    """
    try:
        slot = slot_beneath(root, rel, create_dirs=False)
    except FileNotFoundError:
        return ABSENT
    try:
        existing = read_existing(slot, slot.rel)
        return ABSENT if existing is None else FileImage(existing[0], existing[1])
    finally:
        slot.close()


def put_image(root: Path, rel: str, image: FileImage) -> None:
    """Make the file at `rel` hold `image` again: its bytes and mode, or no file (a regular file there is removed;
    directories the tools made stay).

    Raises:
        ToolError: the path leads outside the workspace.
        OSError: it cannot be written or removed (a directory is there now, a read-only directory, a full disk).
    """
    if image.content is None:
        try:
            slot = slot_beneath(root, rel, create_dirs=False)
        except FileNotFoundError:
            return  # its directory is gone: so is the file
        try:
            with contextlib.suppress(FileNotFoundError):
                if stat.S_ISDIR(os.lstat(slot.name, dir_fd=slot.dir_fd).st_mode):
                    raise IsADirectoryError(errno.EISDIR, "Is a directory", str(root / rel))
                os.unlink(slot.name, dir_fd=slot.dir_fd)
        finally:
            slot.close()
        return
    slot = slot_beneath(root, rel, create_dirs=True)
    try:
        write_bytes_atomically(slot, image.content, image.mode)
    finally:
        slot.close()
