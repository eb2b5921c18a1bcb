"""Race-free path resolution for the file tools: every component is opened relative to its parent's directory fd.

A path the model gives is walked one component at a time from an fd of the workspace root, each opened with
`O_NOFOLLOW`, so the kernel never follows a symlink for us. A symlink met on the way is read (`readlinkat`) and its
target walked the same way, inside the walk: a target that leaves the workspace (an absolute path elsewhere, or a
`..` above the root) is refused. Because what is finally opened is the fd the walk reached, another process that
swaps a directory or file for a symlink between our check and our open cannot move a read or write outside: the
swapped-in link is met by `O_NOFOLLOW` and walked (and refused) like any other.

A workspace seen at a workdir (`alias`, e.g. `/app`: the session's workspace view) has two absolute names: a path
or a link target under either is walked from the root's fd the same way.

Writes never open their target for writing: they create a temp file in the parent's fd and rename it over the
final name, and a rename replaces a symlink rather than following it.

What this is not: the workspace's display rules (workspace.py) or text decoding (access.py). Linux and macOS only
(`dir_fd` support), which is where the engine runs.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from omniagent.engine.tools.context import ToolError

__all__ = ["Opened", "Slot", "open_beneath", "slot_beneath"]

# Symlinks followed in one walk before it is called a loop (the kernel's own limit).
MAX_LINKS = 40
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_LINK_ERRORS = (errno.ELOOP, errno.ENOTDIR, errno.EMLINK)


@dataclass(slots=True)
class Opened:
    """An open fd of an existing file or directory inside the workspace, and its workspace-relative path."""

    fd: int
    rel: str
    is_dir: bool

    def close(self) -> None:
        os.close(self.fd)


@dataclass(slots=True)
class Slot:
    """Where a file is (or will be) written: an fd of its directory and its name there (not a symlink when
    resolved, unless asked for as it is), with its workspace-relative path. `close()` releases the directory fd."""

    dir_fd: int
    name: str
    rel: str

    def close(self) -> None:
        os.close(self.dir_fd)


def open_beneath(root: Path, path: str, *, alias: Path | None = None) -> Opened:
    """Open the existing file or directory `path` names inside `root`, following only links that stay inside.
    `alias`: another absolute name of `root` (where the model and its commands see the workspace, e.g. `/app`):
    absolute paths and link targets under it are the same paths under `root`.

    Raises:
        ToolError: the path is empty, holds a NUL, leads outside the workspace, or loops.
        OSError: it does not exist or cannot be opened (the file name in the error is the absolute path).
    """
    walk = _Walk(root, path, alias)
    try:
        fd, rel = walk.run(create_dirs=False, open_last=True)
    finally:
        walk.close()
    return Opened(fd, rel, stat.S_ISDIR(os.fstat(fd).st_mode))


def slot_beneath(
    root: Path, path: str, *, create_dirs: bool, follow_last: bool = True, alias: Path | None = None
) -> Slot:
    """The directory fd and final name to write `path` at inside `root`; missing parents made when `create_dirs`;
    `alias` as for `open_beneath`.

    A final component that is a link is followed (inside only), so writing a link to an inside file writes that
    file, as a plain path would. Without `follow_last` the final name is the slot whatever stands there (a link
    itself, to be replaced or removed: a file checkpoint put back, checkpoint.py); its parents are still walked.

    Raises:
        ToolError: as `open_beneath`, or the path names the workspace root itself.
        OSError: a parent is missing (without `create_dirs`) or is not a directory.
    """
    walk = _Walk(root, path, alias)
    try:
        dir_fd, name = walk.run(create_dirs=create_dirs, open_last=False, follow_last=follow_last)
        rel = walk.rel(name)
    finally:
        walk.close()
    return Slot(dir_fd, name, rel)


class _Walk:
    """One component-by-component walk; `stack` holds the open fds of the directories walked into."""

    def __init__(self, root: Path, path: str, alias: Path | None = None) -> None:
        if not path:
            raise ToolError("path is empty; give a path relative to the workspace")
        if "\x00" in path:
            raise ToolError("path contains a NUL byte")
        self.root, self.given, self.alias = root, path, alias
        self.pending: deque[str] = deque(_relative_parts(root, path, alias))
        self.names: list[str] = []
        self.stack: list[int] = [os.open(root, _DIR_FLAGS)]
        self.links = 0
        self.via = ""  # the last link followed, named in a refusal

    def close(self) -> None:
        for fd in self.stack:
            os.close(fd)
        self.stack.clear()

    def rel(self, name: str = "") -> str:
        return "/".join([*self.names, name] if name else self.names) or "."

    def run(self, *, create_dirs: bool, open_last: bool, follow_last: bool = True) -> tuple[int, str]:
        """Walk every component. Returns (an fd of the last one, its rel path) when `open_last`, else (a dup of
        the parent's fd, the last name: a link there followed only with `follow_last`). The fds returned are the
        caller's."""
        while self.pending:
            name = self.pending.popleft()
            if name in ("", "."):
                continue
            if name == "..":
                self._up()
                continue
            last = not any(p not in ("", ".") for p in self.pending)
            if last and not open_last:
                if follow_last and self._follow_if_link(name):
                    continue
                return os.dup(self.stack[-1]), name
            fd = self._open(name, directory=not last, create=create_dirs and not last)
            if fd is None:
                continue  # it was a link; its target's parts are pending now
            self.stack.append(fd)
            self.names.append(name)
        if not open_last:
            raise ToolError(f"{self.given} is the workspace directory itself; give a file path")
        return os.dup(self.stack[-1]), self.rel()

    def _up(self) -> None:
        if len(self.stack) == 1:
            raise ToolError(self._outside())
        os.close(self.stack.pop())
        self.names.pop()

    def _open(self, name: str, *, directory: bool, create: bool) -> int | None:
        parent = self.stack[-1]
        try:
            return os.open(name, _DIR_FLAGS if directory else _FILE_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", self._shown(name)) from None
            os.mkdir(name, 0o777, dir_fd=parent)
            return self._open(name, directory=True, create=False)
        except OSError as exc:
            if exc.errno not in _LINK_ERRORS or not self._follow_if_link(name):
                raise type(exc)(exc.errno, exc.strerror, self._shown(name)) from None
            return None

    def _follow_if_link(self, name: str) -> bool:
        """If `name` is a symlink now, queue its target's parts in its place and say so."""
        try:
            target = os.readlink(name, dir_fd=self.stack[-1])
        except OSError:
            return False  # not a link (or gone): the caller's open or write reports it
        self.links += 1
        if self.links > MAX_LINKS:
            raise ToolError(f"cannot resolve {self.given}: it is a symlink loop")
        self.via = self.rel(name)
        if os.path.isabs(target):
            inside = _inside(Path(target), self.root, self.alias)
            if inside is None:
                raise ToolError(self._outside())
            while len(self.stack) > 1:
                os.close(self.stack.pop())
            self.names.clear()
            target = "/".join(inside) or "."
        self.pending.extendleft(reversed(target.split("/")))
        return True

    def _shown(self, name: str) -> str:
        return str(self.root.joinpath(*self.names, name))

    def _outside(self) -> str:
        how = f" (through the symlink {self.via})" if self.via else ""
        return f"{self.given} is outside the workspace{how}; only paths inside {self.alias or self.root} may be used"


def _inside(path: Path, root: Path, alias: Path | None) -> tuple[str, ...] | None:
    """The parts of absolute `path` below `root` or below its `alias`, as written; None when it is under neither."""
    for base in (root, alias):
        if base is not None and path.is_relative_to(base):
            return path.relative_to(base).parts
    return None


def _relative_parts(root: Path, path: str, alias: Path | None) -> list[str]:
    if not os.path.isabs(path):
        return path.split("/")
    inside = _inside(Path(os.path.normpath(path)), root, alias)
    if inside is not None:
        return list(inside)
    # Not under the root as written: maybe through a link to it (a symlinked home, macOS's /private/tmp). The
    # real path only picks the parts to walk; the walk itself still decides, from the root's fd.
    real = Path(os.path.realpath(path))
    if real.is_relative_to(root):
        return list(real.relative_to(root).parts)
    raise ToolError(f"{path} is outside the workspace; only paths inside {alias or root} may be used")
