"""File text in and out for `read`, `write` and `edit`, through the race-free walk of beneath.py: regular files
only, strict UTF-8 for edits, and atomic replacement by a temp file renamed in the parent's directory fd."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator

from omniagent.engine.tools.context import ToolError
from omniagent.engine.tools.files.beneath import Opened, Slot

__all__ = [
    "check_regular_file",
    "decode_text",
    "read_existing",
    "write_bytes_atomically",
    "write_link_atomically",
    "write_text_atomically",
]

# Bytes read per call when slurping a file.
READ_CHUNK = 1024 * 1024
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def check_regular_file(opened: Opened, shown: str) -> None:
    """Refuse anything but a regular file: a FIFO or a device would block or never end. Leaves the fd blocking.

    Raises:
        ToolError: it is a directory or a special file.
    """
    mode = os.fstat(opened.fd).st_mode
    if stat.S_ISDIR(mode):
        raise ToolError(f"{shown} is a directory; give a file path")
    if not stat.S_ISREG(mode):
        raise ToolError(f"{shown} is not a regular file")
    os.set_blocking(opened.fd, True)


def read_existing(slot: Slot, shown: str) -> tuple[bytes, int] | None:
    """The bytes and permission bits of the regular file at `slot`, or None when nothing is there.

    Raises:
        ToolError: a directory or special file is there.
        OSError: it cannot be read (a symlink swapped in since the walk is refused here: `O_NOFOLLOW`).
    """
    try:
        fd = os.open(slot.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=slot.dir_fd)
    except FileNotFoundError:
        return None
    opened = Opened(fd, slot.rel, is_dir=False)
    try:
        check_regular_file(opened, shown)
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read()
        return data, stat.S_IMODE(os.fstat(fd).st_mode)
    finally:
        opened.close()


def decode_text(data: bytes, shown: str) -> str:
    """`data` as UTF-8 text, line terminators kept as they are on disk.

    Raises:
        ToolError: it is not valid UTF-8 (editing it as text would corrupt it).
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{shown} is not UTF-8 text; it cannot be edited as text") from exc


def write_text_atomically(slot: Slot, text: str, mode: int | None) -> None:
    """Replace the file at `slot` with `text` (UTF-8) so a reader sees the old file or the new one, never half.

    `mode`: the permission bits to keep (an existing file's); None for a new file (0666 & ~umask). The rename
    replaces whatever is at the name, a symlink swapped in included, and never follows it.

    Raises:
        OSError: the directory is not writable or the disk is full; the file is then unchanged.
    """
    write_bytes_atomically(slot, text.encode("utf-8"), mode)


def write_bytes_atomically(slot: Slot, data: bytes, mode: int | None) -> None:
    """`write_text_atomically` for bytes (a checkpoint put back may hold any content)."""
    with _replacing(slot) as temp:
        fd = os.open(temp, _CREATE_FLAGS, 0o600, dir_fd=slot.dir_fd)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            os.fchmod(handle.fileno(), mode if mode is not None else 0o666 & ~_UMASK)


def write_link_atomically(slot: Slot, target: str) -> None:
    """Make the name at `slot` a symbolic link to `target` (its text as given, which may lead anywhere: a link is
    made, nothing is written where it points), replacing whatever file or link is there in one rename.

    Raises:
        OSError: the directory is not writable, or a directory stands at the name; nothing is then changed.
    """
    with _replacing(slot) as temp:
        os.symlink(target, temp, dir_fd=slot.dir_fd)


@contextlib.contextmanager
def _replacing(slot: Slot) -> Iterator[str]:
    """A fresh temporary name beside `slot`'s for the block to make a file or link at, renamed over the name when
    the block ends (one rename: a reader sees the old entry or the new one); removed again if anything fails."""
    temp = f".{slot.name[:200]}.{secrets.token_hex(4)}.tmp"
    try:
        yield temp
        os.replace(temp, slot.name, src_dir_fd=slot.dir_fd, dst_dir_fd=slot.dir_fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=slot.dir_fd)
        raise


def _read_umask() -> int:
    # The only portable way to read the umask is to set it and put it back; done once at import, before any
    # tool thread runs, because the umask is process-wide.
    current = os.umask(0o022)
    os.umask(current)
    return current


_UMASK = _read_umask()
