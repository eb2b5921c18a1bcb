"""A workspace view: this machine as it is, but with a workspace shown at another path (a workdir, e.g. `/app`).

A process agent opened with a workdir runs under it (runtime/view.py), and so does an unsandboxed `exec` command
of a session with one (run.py). A view, not a sandbox: see `view_prefix`.

What this is not: the sandbox's own command line (command_line.py), built on the same host tree (bubblewrap.py).
"""

from __future__ import annotations

from pathlib import Path

from omniagent.sandbox.bubblewrap import bwrap_path, host_tree

__all__ = ["view_prefix"]

# Top-level entries a view binds itself (the host's /dev and /proc), so `host_tree` does not bind them.
_VIEW_OWN = frozenset({"dev", "proc"})


def view_prefix(workspace: Path, workdir: Path) -> list[str]:
    """The command prefix (append the program's argv) that runs a program in a view of this machine in which
    `workspace` is at `workdir` (e.g. `/app`), and starts it there.

    A view, not a sandbox: the same user, processes, network and files, each host entry bound as the host has it
    (writable where it is, links as links), `/dev` and `/proc` the host's, so an agent's own sandbox works inside
    as outside. Only the directories the workdir's mount point needs (`/`, or the deepest one the host has on the
    way) are tmpfs copies of the host's listing, so that nothing is ever made on the host; a new name written
    directly in one of them stays in the view.

    Raises:
        SandboxUnavailable: not Linux, or bubblewrap is not installed (the message says how to install it).
    """
    bwrap = bwrap_path(f"showing the workspace at {workdir}")
    tree, _ = host_tree((workdir,), bind="--bind", own=_VIEW_OWN)
    argv = [bwrap, *tree, "--dev-bind", "/dev", "/dev", "--bind", "/proc", "/proc"]
    # The host's /proc bound, not a fresh one: a fresh proc outside a PID namespace of its own would keep a nested
    # bubblewrap (an agent's own sandbox) from mounting its /proc.
    return [*argv, "--bind", str(workspace), str(workdir), "--chdir", str(workdir), "--die-with-parent", "--"]
