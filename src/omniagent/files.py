"""Files replaced whole: a reader, or a process killed mid-write, sees the old file or the new one, never half of one.

Every file omniagent rewrites in place (a key or grant file, a session index, a settings file, a batch's job.json)
goes through `write_whole`: written to a temporary file beside it, then renamed over it, which POSIX makes atomic
within one folder. The temporary file is created private (`mkstemp`: 0600, exclusively, under a fresh name), so a
secret is never readable by others for a moment, whatever the umask, and a planted link cannot redirect the write.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

PRIVATE = 0o600


def write_whole(path: Path, data: str | bytes, *, mode: int = PRIVATE, durable: bool = False) -> None:
    """`data` (text as UTF-8) into `path`, replaced whole, the file's mode `mode`. With `durable`, the bytes reach
    the disk before the rename (fsync), so once this returns the new content survives a power cut, not only a
    crash of this process. The folder must exist. Raises OSError; no temporary file is left behind."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            if mode != PRIVATE:
                os.fchmod(out.fileno(), mode)
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
            if durable:
                out.flush()
                os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
