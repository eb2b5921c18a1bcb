"""The `exec` sandbox: what a command may see and touch, and the bubblewrap command line that enforces it (Linux).

Policy (docs/security.md, "A hostile model"): the workspace and a private `/tmp` are writable; the rest of the file
system is read-only; `hidden` paths (omniagent's data and config dirs, other agents' credential dirs, the user's key
files) are covered by an empty read-only tmpfs (a directory) or by `/dev/null` (a file); `/run` (the host's sockets:
docker, dbus, ssh-agent) is covered too; the command runs in new PID, IPC, UTS and (unless `network`) network
namespaces with a fresh `/proc`, so no other process (the engine included) can be seen or signalled; every
capability is dropped, even for root, so no mount can be undone; a user namespace of its own may create no other
(bubblewrap's `--disable-userns`, where it has it), and the system-call filter of `seccomp.py` refuses new
namespaces, tracing, Unix sockets and kernel interfaces no build needs. The environment is rebuilt from an allowlist.
With an `allowlist` (and `network` off) the command's only way out is the engine's proxy (proxy.py), reached
through a bridge that runs first inside the sandbox (bridge.py).

`unsandboxed` runs the command as the user, as before, with provider keys still removed from its environment.

What this is not: the decision whether to ask (engine/interactions/permissions.py) nor the per-session setting
(engine/sandboxes.py). This module only turns a policy into a command line, and says clearly when it cannot.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import platformdirs

from omniagent.engine.tools.shell.allowlist import NetworkRules
from omniagent.engine.tools.shell.bridge import bridge_argv
from omniagent.engine.tools.shell.limits import ExecLimits
from omniagent.errors import OmniagentError

__all__ = [
    "BWRAP_INSTALL_HINT",
    "SANDBOX_SUPPORTED",
    "UNSANDBOXED",
    "Bind",
    "SandboxMode",
    "SandboxPolicy",
    "SandboxUnavailable",
    "agent_credential_paths",
    "child_env",
    "private_paths",
    "sandbox_argv",
    "view_prefix",
]

SandboxMode = Literal["sandboxed", "unsandboxed"]
# The sandbox is built on Linux namespaces; elsewhere the default mode is `unsandboxed` (which asks before every exec).
SANDBOX_SUPPORTED = sys.platform.startswith("linux")
BWRAP_INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf install bubblewrap`)"
)
# Environment variables that are passed through to a sandboxed command (when set); everything else is dropped.
ENV_ALLOWLIST = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "COLUMNS", "LINES", "NO_COLOR"}
)
# Variables with these prefixes pass too: locale settings only.
ENV_ALLOWED_PREFIXES = ("LC_",)
# Names that hold keys in every mode, besides the names providers.json gives.
SECRET_ENV_SUFFIXES = ("_API_KEY",)
# Names that hold a shared store's URL or password (docs/fleet.md): never handed to a command either.
SECRET_ENV_NAMES = frozenset({"OMNIAGENT_STORE", "PGPASSWORD"})
# Non-interactive settings so pagers and credential prompts never wait for a terminal that is not there.
CHILD_ENV_OVERRIDES: Mapping[str, str] = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}
# Written by the sandbox once it stands (see `sandbox_argv`).
STARTED = b"started"
# Home-relative paths where agent CLIs, cloud tools and git keep credentials: unreadable in the sandbox.
AGENT_CREDENTIAL_PATHS = (
    ".claude", ".claude.json", ".codex", ".gemini", ".qwen", ".pi", ".cursor", ".aider", ".continue",
    ".local/share/opencode", ".config/opencode", ".config/gh", ".config/github-copilot", ".config/gcloud",
    ".config/claude", ".config/goose", ".config/crush", ".aws", ".azure", ".kube", ".docker", ".ssh", ".gnupg",
    ".netrc", ".git-credentials", ".npmrc", ".pypirc",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Bind:
    """A host path shown at `target` inside the sandbox (read-only unless `writable`)."""

    source: Path
    target: Path
    writable: bool = False


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """How one `exec` call runs.

    `hidden`: absolute paths made unreadable (only those that exist are covered). `secret_env`: variable names
    never passed to a command in any mode (the key variables providers.json names). `network`: share the host's
    network (off: a private loopback only). `allowlist`: with `network` off, the command may reach what these
    rules allow through the engine's proxy (None: nothing). `extra_env`: variables given to the command in every
    mode (the secret answers it was given, engine/interactions/secrets.py). `limits`: processes, memory, CPU,
    output, /tmp, file and disk (limits.py). `workdir`: where the workspace appears inside the sandbox and the
    command starts (None: at its own path; unsandboxed, the command then runs in `view_prefix`'s view of the machine).
    `binds`: more host paths shown inside. With either, the sandbox's root is a read-only tmpfs holding the host's
    top-level entries, so that a path the host lacks (`/app`) can be made (`_host_tree`).
    """

    mode: SandboxMode = "sandboxed" if SANDBOX_SUPPORTED else "unsandboxed"
    network: bool = False
    hidden: tuple[Path, ...] = ()
    secret_env: frozenset[str] = field(default_factory=frozenset)
    extra_env: tuple[tuple[str, str], ...] = ()
    allowlist: NetworkRules | None = None
    limits: ExecLimits = field(default_factory=ExecLimits)
    workdir: Path | None = None
    binds: tuple[Bind, ...] = ()

    @property
    def proxied(self) -> bool:
        """Whether the command's network is the allowlist proxy (sandboxed, network off, an allowlist given)."""
        return self.mode == "sandboxed" and not self.network and self.allowlist is not None


UNSANDBOXED = SandboxPolicy(mode="unsandboxed")


class SandboxUnavailable(OmniagentError):
    """The sandbox cannot start here; the message is the sentence the model (and through it the user) reads."""


def omniagent_dirs() -> tuple[Path, ...]:
    """omniagent's own default folders (data: keys, grants, the hub's token; config: providers.json, which can hold
    literal keys; state; cache) and `$OMNIAGENT_DATA_DIR`: hidden whatever `--data-dir` points at, since an engine run
    with another data dir still shares a machine with the user's own."""
    dirs = [
        platformdirs.user_data_dir("omniagent"),
        platformdirs.user_config_dir("omniagent"),
        platformdirs.user_state_dir("omniagent"),
        platformdirs.user_cache_dir("omniagent"),
    ]
    env_dir = os.environ.get("OMNIAGENT_DATA_DIR")
    return tuple(Path(d) for d in (*dirs, *([env_dir] if env_dir else [])))


def agent_credential_paths(home: Path) -> tuple[Path, ...]:
    """The credential paths of other tools under `home`."""
    return tuple(home / rel for rel in AGENT_CREDENTIAL_PATHS)


def private_paths(home: Path, *also: Path) -> tuple[Path, ...]:
    """What no sandboxed command may read, for `SandboxPolicy.hidden`: `also` (the running engine's own data and
    config dirs), omniagent's default dirs (`omniagent_dirs`) and other tools' credentials under `home`."""
    return (*also, *omniagent_dirs(), *agent_credential_paths(home))


def child_env(policy: SandboxPolicy, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The command's environment: an allowlist when sandboxed, everything but keys when not; plus `extra_env`."""
    source = os.environ if environ is None else environ

    def secret(name: str) -> bool:
        upper = name.upper()
        return name in policy.secret_env or upper.endswith(SECRET_ENV_SUFFIXES) or upper in SECRET_ENV_NAMES

    if policy.mode == "sandboxed":
        env = {
            k: v
            for k, v in source.items()
            if (k in ENV_ALLOWLIST or k.startswith(ENV_ALLOWED_PREFIXES)) and not secret(k)
        }
        env["TMPDIR"] = "/tmp"
    else:
        env = {k: v for k, v in source.items() if not secret(k)}
    env.update(CHILD_ENV_OVERRIDES)
    env.update(policy.extra_env)
    return env


# Entries of a fresh /proc that still reach the host's kernel and are checked by uid, not capability: as root a
# sandboxed command could write them (kernel/core_pattern runs a program as host root outside every namespace).
# bubblewrap remounts /proc/sys read-only only when it is not writable to begin with, never for root; so they are
# bound read-only over themselves, as container runtimes do (Docker's read-only /proc paths).
HOST_WRITABLE_PROC = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")


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
    bwrap = _bwrap()
    options = _options(bwrap)
    tmp_size = policy.limits.tmp_bytes if "--size" in options else None
    argv = [bwrap, "--ro-bind", "/", "/"]
    opened: list[str] = []  # the tmpfs directories of a root with new mount points
    if policy.workdir is not None or policy.binds:
        targets = (policy.workdir or root, *(bind.target for bind in policy.binds))
        tree, opened = _host_tree(targets, bind="--ro-bind", own=_OWN_TOP_LEVEL)
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


def _bwrap(purpose: str | None = None) -> str:
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


# Options of newer bubblewraps the sandbox uses when it has them: `--disable-userns` (0.8.0; Ubuntu 22.04 ships
# 0.6.1; without it the seccomp filter alone refuses new namespaces) and `--size` for a tmpfs (0.7.0; without it
# /tmp and the like are not sized, docs/security.md).
_NEWER_OPTIONS = ("--disable-userns", "--size")


@functools.cache
def _options(bwrap: str) -> frozenset[str]:
    """Which of `_NEWER_OPTIONS` this bubblewrap takes, asked once per process (`bwrap --help`, a few milliseconds).
    A setuid bubblewrap refuses `--size`, so it does not count as having it."""
    try:
        usage = subprocess.run([bwrap, "--help"], capture_output=True, timeout=10, check=False).stdout
        setuid = bool(os.stat(bwrap).st_mode & stat.S_ISUID)
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    found = {option for option in _NEWER_OPTIONS if option.encode() in usage}
    return frozenset(found - {"--size"} if setuid else found)


def _tmpfs(path: str, size: int | None) -> list[str]:
    """A writable tmpfs at `path`, of at most `size` bytes when one is given."""
    return [*(["--size", str(size)] if size is not None else []), "--tmpfs", path]


# Top-level entries the sandbox mounts afresh (`sandbox_argv`), so `_host_tree` does not bind them back; a view
# (`view_prefix`) binds the host's /dev and /proc itself.
_OWN_TOP_LEVEL = frozenset({"dev", "proc", "tmp", "run"})
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
    bwrap = _bwrap(f"showing the workspace at {workdir}")
    tree, _ = _host_tree((workdir,), bind="--bind", own=_VIEW_OWN)
    argv = [bwrap, *tree, "--dev-bind", "/dev", "/dev", "--bind", "/proc", "/proc"]
    # The host's /proc bound, not a fresh one: a fresh proc outside a PID namespace of its own would keep a nested
    # bubblewrap (an agent's own sandbox) from mounting its /proc.
    return [*argv, "--bind", str(workspace), str(workdir), "--chdir", str(workdir), "--die-with-parent", "--"]


def _host_tree(targets: Iterable[Path], *, bind: str, own: frozenset[str]) -> tuple[list[str], list[str]]:
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
