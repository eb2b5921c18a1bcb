"""File text in and out for `write` and `edit`: strict UTF-8 reads and atomic replacement."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from omniagent.engine.tools.context import ToolError

__all__ = ["check_regular_file", "read_text", "write_text_atomically"]


def check_regular_file(path: Path, shown: str) -> None:
    """Refuse anything but a regular file (or a link to one): opening a FIFO or a device would block or never end.

    Raises:
        ToolError: `path` is missing, a directory, or a special file.
    """
    if path.is_dir():
        raise ToolError(f"{shown} is a directory; give a file path")
    if not path.exists():
        raise ToolError(f"{shown} does not exist")
    if not path.is_file():
        raise ToolError(f"{shown} is not a regular file")


def read_text(path: Path, shown: str) -> str:
    """The whole file as UTF-8 text, line terminators kept as they are on disk.

    Raises:
        ToolError: the file is not valid UTF-8 (editing it as text would corrupt it).
        OSError: the file cannot be read.
    """
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{shown} is not UTF-8 text; it cannot be edited as text") from exc


def write_text_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8) so a reader sees the old file or the new one, never half of it.

    An existing file keeps its permission bits; a new one gets the usual 0666 & ~umask.

    Raises:
        OSError: the directory is not writable or the disk is full; `path` is then unchanged.
    """
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_UMASK
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def _read_umask() -> int:
    # The only portable way to read the umask is to set it and put it back; done once at import, before any
    # tool thread runs, because the umask is process-wide.
    current = os.umask(0o022)
    os.umask(current)
    return current


_UMASK = _read_umask()
