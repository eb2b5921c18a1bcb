"""The sandbox's bubblewrap command line: a `SandboxPolicy` turned into the `bwrap` argv that enforces it (Linux).

The workspace and a private, sized `/tmp` (and `/dev/shm`, `/run`) are writable; the rest of the file system is
read-only; `hidden` paths are covered by an empty read-only tmpfs (a directory) or by `/dev/null` (a file); `/run`
(the host's sockets: docker, dbus, ssh-agent) is covered too; the command runs in new PID, IPC, UTS and (unless
`network`) network namespaces with a fresh `/proc`, so no other process (the engine included) can be seen or
signalled; every capability is dropped, even for root, so no mount can be undone; a user namespace of its own may
create no other (bubblewrap's `--disable-userns`, where it has it), and the system-call filter of `seccomp.py`
refuses new namespaces, tracing, Unix sockets and kernel interfaces no build needs. With an `allowlist` (and
`network` off) the command's only way out is the allowlist proxy (network/proxy.py), reached through a bridge that
runs first inside the sandbox (network/bridge.py).

What this is not: the policy (policy.py), the command's environment (environment.py), starting and stopping it
(run.py). This module only turns a policy into a command line, and says clearly when it cannot.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from omniagent.sandbox.bubblewrap import bwrap_options, bwrap_path, host_tree
from omniagent.sandbox.network.bridge import bridge_argv
from omniagent.sandbox.policy import SandboxPolicy

__all__ = ["STARTED", "sandbox_argv"]

# Written by the sandbox once it stands (see `sandbox_argv`).
STARTED = b"started"

# Entries of a fresh /proc that still reach the host's kernel and are checked by uid, not capability: as root a
# sandboxed command could write them (kernel/core_pattern runs a program as host root outside every namespace).
# bubblewrap remounts /proc/sys read-only only when it is not writable to begin with, never for root; so they are
# bound read-only over themselves, as container runtimes do (Docker's read-only /proc paths).
HOST_WRITABLE_PROC = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")
# Top-level entries the sandbox mounts afresh, so `host_tree` does not bind them back.
_OWN_TOP_LEVEL = frozenset({"dev", "proc", "tmp", "run"})


def sandbox_argv(
    policy: SandboxPolicy,
    root: Path,
    command: str,
    started_fd: int,
    seccomp_fd: int,
    proxy_fd: int | None = None,
    inner: Sequence[str] = (),
) -> list[str]:
    """The bubblewrap command line that runs `/bin/sh -c command` in `root` under `policy` (mode `sandboxed`).

    Inside the finished sandbox a first shell (run by `inner`, a command prefix such as `prlimit …`, when given)
    writes `started` to the pipe `started_fd` and then becomes the command's shell: without that word the sandbox
    did not start, and the output is bubblewrap's reason. `seccomp_fd` holds the system-call filter
    (`seccomp.filter_fd`), which bubblewrap installs before that shell. When `policy.proxied`, the bridge to the
    proxy (`proxy_fd`: the sandbox's end of `AllowlistProxy`) comes first instead (under `inner` too), and writes
    `started` once it listens.

    Raises:
        SandboxUnavailable: the platform has no sandbox, or bubblewrap is not installed (the message says how to
            install it). Never a silent fallback to running unconfined.
    """
    bwrap = bwrap_path()
    options = bwrap_options(bwrap)
    tmp_size = policy.limits.tmp_bytes if "--size" in options else None
    argv = [bwrap, "--ro-bind", "/", "/"]
    opened: list[str] = []  # the tmpfs directories of a root with new mount points
    if policy.workdir is not None or policy.binds:
        targets = (policy.workdir or root, *(bind.target for bind in policy.binds))
        tree, opened = host_tree(targets, bind="--ro-bind", own=_OWN_TOP_LEVEL)
        argv = [bwrap, *tree]
    # /dev read-only (else a writable tmpfs of half the machine's memory; its devices still work) but a sized /dev/shm.
    argv += ["--dev", "/dev", *_tmpfs("/dev/shm", tmp_size), "--remount-ro", "/dev", "--proc", "/proc"]
    argv += [*_tmpfs("/tmp", tmp_size), *_tmpfs("/run", tmp_size)]  # RAM-backed: sized (limits.py, `tmp_bytes`)
    for entry in HOST_WRITABLE_PROC:
        argv += ["--ro-bind-try", entry, entry]
    if policy.network:
        # DNS often resolves through a stub under /run (resolv.conf links there).
        argv += ["--ro-bind-try", "/run/systemd/resolve", "/run/systemd/resolve"]
    argv += _workspace_and_hidden(policy, root, tmp_size)
    for bind in policy.binds:
        argv += ["--bind" if bind.writable else "--ro-bind", str(bind.source), str(bind.target)]
    for directory in opened:
        argv += ["--remount-ro", directory]  # the tmpfs took the new mount points; now read-only as the host's
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not policy.network:
        argv.append("--unshare-net")
    if "--disable-userns" in options:
        # A user namespace of the sandbox's own in which the kernel allows no other: a second wall behind the
        # filter's namespace rules, and root in the sandbox holds its (dropped) capabilities only there.
        argv += ["--unshare-user", "--disable-userns"]
    argv += ["--cap-drop", "ALL", "--seccomp", str(seccomp_fd), "--die-with-parent"]
    argv += ["--chdir", str(policy.workdir or root)]
    if policy.proxied:
        if proxy_fd is None:
            raise ValueError("an allowlist policy needs the proxy's socket (proxy_fd)")
        return [*argv, *inner, *bridge_argv(proxy_fd, started_fd, STARTED, command)]
    started = f'printf {STARTED.decode()} >/proc/self/fd/{started_fd} && exec /bin/sh -c "$1"'
    argv += [*inner, "/bin/sh", "-c", started, "/bin/sh", command]
    return argv


def _tmpfs(path: str, size: int | None) -> list[str]:
    """A writable tmpfs at `path`, of at most `size` bytes when one is given."""
    return [*(["--size", str(size)] if size is not None else []), "--tmpfs", path]


def _workspace_and_hidden(policy: SandboxPolicy, root: Path, tmp_size: int | None) -> list[str]:
    """The workspace's mount and the covers over `policy.hidden`, in the order that keeps both true."""
    hidden = _existing(policy.hidden)
    target = policy.workdir or root
    # A hidden dir that holds the workspace is covered first, so the workspace mount lands on top of it; every
    # other one after, so a hidden dir inside the workspace stays hidden.
    around = [p for p in hidden if target.is_relative_to(p)]
    argv: list[str] = []
    for path in around:
        argv += _tmpfs(str(path), tmp_size)  # read-only would leave no room for the workspace's mount point
    argv += ["--bind", str(root), str(target)]
    for path in hidden:
        if path not in around:
            argv += _cover(path, read_only=True)
    return argv


def _existing(paths: Iterable[Path]) -> list[Path]:
    """The paths that exist now (a dangling link has nothing to hide), deduplicated, shortest first."""
    seen: dict[Path, None] = {}
    for path in paths:
        if os.path.exists(path):
            # A link is covered at its target: bubblewrap mounts onto what the path resolves to.
            seen[Path(os.path.realpath(path))] = None
    return sorted(seen, key=lambda p: len(p.parts))


def _cover(path: Path, *, read_only: bool) -> list[str]:
    if path.is_dir():
        return ["--tmpfs", str(path)] + (["--remount-ro", str(path)] if read_only else [])
    return ["--ro-bind", "/dev/null", str(path)]
