"""bubblewrap on this machine, and the root both of its command lines start from.

`bwrap_path` finds the program (or says how to install it), `bwrap_options` which of its newer options it takes,
and `host_tree` a root that shows the host's top level while leaving room for mount points the host lacks (`/app`).
The sandbox's command line (command_line.py) and a workspace view's (view.py) are both built on these.

What this is not: either command line itself.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from omniagent.sandbox.errors import SandboxUnavailable
from omniagent.sandbox.policy import SANDBOX_SUPPORTED

__all__ = ["BWRAP_INSTALL_HINT", "bwrap_options", "bwrap_path", "host_tree"]

BWRAP_INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf install bubblewrap`)"
)
# Options of newer bubblewraps the sandbox uses when it has them: `--disable-userns` (0.8.0; Ubuntu 22.04 ships
# 0.6.1; without it the seccomp filter alone refuses new namespaces) and `--size` for a tmpfs (0.7.0; without it
# /tmp and the like are not sized, docs/security.md).
NEWER_OPTIONS = ("--disable-userns", "--size")


def bwrap_path(purpose: str | None = None) -> str:
    """bubblewrap's path. Raises `SandboxUnavailable` (saying how to install it) where there is none: in the words
    of an `exec` call, or of `purpose` (what needs it, e.g. "showing the workspace at /app")."""
    if not SANDBOX_SUPPORTED:
        if purpose is not None:
            raise SandboxUnavailable(f"{purpose} needs bubblewrap, which runs on Linux only (not {sys.platform})")
        raise SandboxUnavailable(
            f"the command was not run: the exec sandbox is not available on {sys.platform}; "
            "the user can switch this session's sandbox option to unsandboxed"
        )
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        if purpose is not None:
            raise SandboxUnavailable(
                f"{purpose} needs bubblewrap (bwrap), which is not installed; {BWRAP_INSTALL_HINT}"
            )
        raise SandboxUnavailable(
            f"the command was not run: the exec sandbox needs bubblewrap (bwrap), which is not installed; "
            f"{BWRAP_INSTALL_HINT}, or switch this session's sandbox option to unsandboxed"
        )
    return bwrap


@functools.cache
def bwrap_options(bwrap: str) -> frozenset[str]:
    """Which of `NEWER_OPTIONS` this bubblewrap takes, asked once per process (`bwrap --help`, a few milliseconds).
    A setuid bubblewrap refuses `--size`, so it does not count as having it."""
    try:
        usage = subprocess.run([bwrap, "--help"], capture_output=True, timeout=10, check=False).stdout
        setuid = bool(os.stat(bwrap).st_mode & stat.S_ISUID)
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    found = {option for option in NEWER_OPTIONS if option.encode() in usage}
    return frozenset(found - {"--size"} if setuid else found)


def host_tree(targets: Iterable[Path], *, bind: str, own: frozenset[str]) -> tuple[list[str], list[str]]:
    """A tmpfs root holding every top-level entry of the host's but `own` (bound with `bind`, links as links), with
    room for mount points the host lacks: what `--bind / /` shows. A target whose place the host lacks below a
    top-level directory (`/usr/src/app`) has the deepest directory the host has on its way (`/usr/src`) copied the
    same way, so bubblewrap makes the mount point in a tmpfs, never on the host. Returns the arguments and the
    tmpfs directories, shallowest first.

    Raises:
        SandboxUnavailable: such a directory cannot be listed.
    """
    opened: dict[Path, set[str]] = {Path("/"): set(own)}
    for target in targets:
        place = _mount_place(target)
        if place is None or set(place[0].parts[1:2]) & own:
            continue  # the host has it, or it is under a directory mounted afresh, which takes the mount point
        opened.setdefault(place[0], set()).add(place[1])
    argv: list[str] = []
    order = sorted(opened, key=lambda directory: len(directory.parts))
    for directory in order:
        argv += ["--tmpfs", str(directory)]
        try:
            with os.scandir(directory) as entries:
                for entry in sorted(entries, key=lambda e: e.name):
                    if entry.name in opened[directory]:
                        continue
                    if entry.is_symlink():
                        argv += ["--symlink", os.readlink(entry.path), entry.path]
                    else:
                        argv += [bind, entry.path, entry.path]
        except OSError as exc:
            why = (exc.strerror or type(exc).__name__).lower()
            raise SandboxUnavailable(f"{directory} cannot be listed to mount over it: {why}") from None
    return argv, [str(directory) for directory in order]


def _mount_place(target: Path) -> tuple[Path, str] | None:
    """Where bubblewrap must make `target`'s mount point: the deepest directory on its way that the host has (no
    link on the way) and the name below it; None when the host has all of it (mounting over it changes nothing)."""
    here = Path("/")
    for name in target.relative_to("/").parts:
        below = here / name
        if below.is_symlink() or not below.is_dir():
            return here, name
        here = below
    return None
