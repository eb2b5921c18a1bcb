"""File images for checkpoints: what a file held before a tool changed it, and putting that back.

A tool that changes a file (`write`, `edit`) reads the file's image and hands it to `ToolContext.before_change`
*before* it writes, so the run can store it durably first (engine/run/executor.py); `session.rewind` puts stored images
back with `put_image` (engine/session/rewind.py). Both walk from the workspace's fd (beneath.py), so neither can read or
touch a path outside the workspace, and a put is atomic per file (a temp file renamed over the name).

Links: a tool writes through a link to a file inside the workspace, so its checkpoint is the target's image under
the target's path, and the link is never touched. Putting an image back replaces whatever stands at the path now,
a link included (one that something else put there since), and never writes through it; what was there is read
without following a link either (`current_image`), so a rewind that fails can put a link back as a link.

What this is not: deciding which image to restore (the rewind's job) or storing images (the store's).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from omniagent.engine.tools.context import ABSENT, FileImage
from omniagent.engine.tools.files.access import read_existing, write_bytes_atomically, write_link_atomically
from omniagent.engine.tools.files.beneath import slot_beneath

__all__ = ["Image", "LinkImage", "current_image", "put_image", "read_image"]


@dataclass(frozen=True, slots=True)
class LinkImage:
    """A symbolic link as it stood: its target text, kept as it was and never followed."""

    target: str


# What stood at a path: a file (or, `ABSENT`, nothing), or a link. The tools' checkpoints are only ever files or
# nothing (they write through a link to a file inside the workspace, so the image is its target's, under the
# target's path); a rewind's undo may hold a link, for what it replaced (engine/session/rewind.py).
Image = FileImage | LinkImage


def read_image(root: Path, path: str, workdir: Path | None = None) -> tuple[str, FileImage]:
    """The workspace-relative path `path` resolves to and the image of the file there (`ABSENT` when there is none).
    A link at `path` to a file inside is followed, as the write that follows does; missing parents are made, as it
    would; `workdir` is another name of `root` (beneath.py's `alias`).

    Raises:
        ToolError: the path leads outside the workspace, or a directory or special file is there.
        OSError: it cannot be read.
    """
    slot = slot_beneath(root, path, create_dirs=True, alias=workdir)
    try:
        existing = read_existing(slot, slot.rel)
        return slot.rel, ABSENT if existing is None else FileImage(existing[0], existing[1])
    finally:
        slot.close()


def current_image(root: Path, rel: str) -> Image:
    """What stands at `rel` now, a link there not followed: a link's `LinkImage`, a file's image, or `ABSENT`
    (nothing there, its directory included).

    Raises:
        ToolError: a parent leads outside the workspace, or a directory or special file is there.
        OSError: it cannot be read.
    """
    try:
        slot = slot_beneath(root, rel, create_dirs=False, follow_last=False)
    except FileNotFoundError:
        return ABSENT
    try:
        try:
            if stat.S_ISLNK(os.lstat(slot.name, dir_fd=slot.dir_fd).st_mode):
                return LinkImage(os.readlink(slot.name, dir_fd=slot.dir_fd))
        except FileNotFoundError:
            return ABSENT
        existing = read_existing(slot, slot.rel)  # O_NOFOLLOW: a link swapped in since is refused, not read
        return ABSENT if existing is None else FileImage(existing[0], existing[1])
    finally:
        slot.close()


def put_image(root: Path, rel: str, image: Image) -> None:
    """Make `rel` what `image` says again: a file with its bytes and mode, a link with its target text, or nothing
    (a file or link there is removed; directories the tools made stay). Whatever stands at `rel` itself is
    replaced, a link included, never written through: only the parents are walked (inside the workspace).

    Raises:
        ToolError: a parent leads outside the workspace.
        OSError: it cannot be written or removed (a directory is there now, a read-only directory, a full disk).
    """
    content = image.content if isinstance(image, FileImage) else None
    if content is None and not isinstance(image, LinkImage):
        _remove(root, rel)
        return
    slot = slot_beneath(root, rel, create_dirs=True, follow_last=False)
    try:
        if isinstance(image, LinkImage):
            write_link_atomically(slot, image.target)
        else:
            write_bytes_atomically(slot, content or b"", image.mode)
    finally:
        slot.close()


def _remove(root: Path, rel: str) -> None:
    try:
        slot = slot_beneath(root, rel, create_dirs=False, follow_last=False)
    except FileNotFoundError:
        return  # its directory is gone: so is the file
    try:
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISDIR(os.lstat(slot.name, dir_fd=slot.dir_fd).st_mode):
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(root / rel))
            os.unlink(slot.name, dir_fd=slot.dir_fd)  # a link itself, never its target
    finally:
        slot.close()
