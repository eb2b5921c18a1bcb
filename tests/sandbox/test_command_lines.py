"""The bubblewrap command lines, pinned word for word for a few representative policies (network off, on and
through the allowlist proxy; a workspace shown at a workdir beside more binds; sized limits; a workspace view), so
that moving or reshaping the code that builds them cannot change what runs.

What differs between machines is computed here from the machine itself, independently of the code under test:
bubblewrap's path and which of its newer options it takes, the host's top-level listing, the interpreter's path.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from omniagent.sandbox import Bind, ExecLimits, MiB, NetworkRules, SandboxPolicy, parse_rules, view_prefix
from omniagent.sandbox.command_line import sandbox_argv
from omniagent.sandbox.network.bridge import BRIDGE_SOURCE
from omniagent.sandbox.policy import AGENT_CREDENTIAL_PATHS, agent_credential_paths

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")

COMMAND = "make test && echo 'done'"
STARTED_FD = 7
SECCOMP_FD = 8
PROXY_FD = 9
# The bridge's source, which the allowlist command line carries whole (its digest, for a readable failure).
BRIDGE_SHA256 = "38f50e3968375472db2ef63aa888475547b313a80853c6c8e68c2292c72447eb"
# Paths no host has, so that the sandbox must make their mount points (in a tmpfs copy of their parent).
APP = Path("/omniagent-pin-app")
TESTS = Path("/omniagent-pin-tests")
LOGS = Path("/omniagent-pin-logs/verifier")
UNDER_USR = Path("/usr/omniagent-pin/src")
FRESH = {"dev", "proc", "tmp", "run"}  # what the sandbox mounts afresh, so never bound from the host
HOST_PROC = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")


def _bwrap() -> tuple[str, bool, bool]:
    """bubblewrap's path, and whether it takes `--size` (0.7, not setuid) and `--disable-userns` (0.8)."""
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    usage = subprocess.run([bwrap, "--help"], capture_output=True, check=False).stdout
    setuid = bool(os.stat(bwrap).st_mode & stat.S_ISUID)
    return bwrap, b"--size" in usage and not setuid, b"--disable-userns" in usage


BWRAP, SIZED, NO_USERNS = _bwrap()


def _tmpfs(path: str, size: int) -> list[str]:
    return ["--size", str(size), "--tmpfs", path] if SIZED else ["--tmpfs", path]


def _copy(directory: str, bind: str, skip: set[str]) -> list[str]:
    """A tmpfs at `directory` holding the host's entries there but `skip`, bound with `bind`, links as links."""
    argv = ["--tmpfs", directory]
    for entry in sorted(os.scandir(directory), key=lambda e: e.name):
        if entry.name in skip:
            continue
        if entry.is_symlink():
            argv += ["--symlink", os.readlink(entry.path), entry.path]
        else:
            argv += [bind, entry.path, entry.path]
    return argv


def _head(size: int) -> list[str]:
    """What every sandbox mounts after its root: /dev, a fresh /proc, sized /tmp and /run, the host's /proc files."""
    argv = ["--dev", "/dev", *_tmpfs("/dev/shm", size), "--remount-ro", "/dev", "--proc", "/proc"]
    argv += [*_tmpfs("/tmp", size), *_tmpfs("/run", size)]
    for entry in HOST_PROC:
        argv += ["--ro-bind-try", entry, entry]
    return argv


def _tail(*, network: bool, chdir: Path) -> list[str]:
    argv = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    argv += [] if network else ["--unshare-net"]
    argv += ["--unshare-user", "--disable-userns"] if NO_USERNS else []
    return [*argv, "--cap-drop", "ALL", "--seccomp", str(SECCOMP_FD), "--die-with-parent", "--chdir", str(chdir)]


SHELL = ["/bin/sh", "-c", f'printf started >/proc/self/fd/{STARTED_FD} && exec /bin/sh -c "$1"', "/bin/sh", COMMAND]
TMP = ExecLimits().tmp_bytes


class Host:
    """A workspace inside a hidden home, and hidden paths of every kind: a directory inside the workspace, a key
    file, a link to a directory (covered at its target), and a path that does not exist."""

    def __init__(self, tmp: Path) -> None:
        self.home = tmp / "home"
        self.workspace = self.home / "ws"
        self.inner = self.workspace / ".secret"
        self.key = tmp / "key"
        self.linked = tmp / "linked"
        self.inner.mkdir(parents=True)
        self.linked.mkdir()
        self.key.write_text("k")
        (tmp / "link").symlink_to(self.linked)
        self.hidden = (self.inner, self.key, tmp / "missing", tmp / "link", self.home)

    def covers(self, *, around: bool) -> list[str]:
        """The covers after the workspace's mount, shortest path first; the home is covered before it when it holds
        the workspace's mount point (`around`)."""
        argv = ["--ro-bind", "/dev/null", str(self.key), "--tmpfs", str(self.linked), "--remount-ro", str(self.linked)]
        argv += [] if around else ["--tmpfs", str(self.home), "--remount-ro", str(self.home)]
        return [*argv, "--tmpfs", str(self.inner), "--remount-ro", str(self.inner)]


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(tmp_path.resolve())


def _argv(policy: SandboxPolicy, host: Host, proxy_fd: int | None = None, inner: Sequence[str] = ()) -> list[str]:
    return sandbox_argv(policy, host.workspace, COMMAND, STARTED_FD, SECCOMP_FD, proxy_fd, inner)


def test_network_off(host: Host) -> None:
    ws = str(host.workspace)
    expected = [BWRAP, "--ro-bind", "/", "/", *_head(TMP), *_tmpfs(str(host.home), TMP), "--bind", ws, ws]
    expected += [*host.covers(around=True), *_tail(network=False, chdir=host.workspace), *SHELL]
    assert _argv(SandboxPolicy(mode="sandboxed", hidden=host.hidden), host) == expected


def test_network_on(host: Host) -> None:
    ws = str(host.workspace)
    resolve = ["--ro-bind-try", "/run/systemd/resolve", "/run/systemd/resolve"]
    expected = [BWRAP, "--ro-bind", "/", "/", *_head(TMP), *resolve, *_tmpfs(str(host.home), TMP), "--bind", ws, ws]
    expected += [*host.covers(around=True), *_tail(network=True, chdir=host.workspace), *SHELL]
    policy = SandboxPolicy(mode="sandboxed", network=True, hidden=host.hidden)
    assert _argv(policy, host) == expected


def test_network_through_the_allowlist_proxy(host: Host) -> None:
    ws = str(host.workspace)
    rules = NetworkRules(domains=parse_rules(["pypi.org", "*.pythonhosted.org"]), session="s1")
    policy = SandboxPolicy(mode="sandboxed", hidden=host.hidden, allowlist=rules)
    inner = ("/usr/bin/prlimit", "--nproc=64:64", "--")
    argv = _argv(policy, host, proxy_fd=PROXY_FD, inner=inner)
    python = os.path.realpath(sys.executable)
    bridge = [python, "-I", "-S", "-c", BRIDGE_SOURCE, str(PROXY_FD), str(STARTED_FD), "started", COMMAND]
    expected = [BWRAP, "--ro-bind", "/", "/", *_head(TMP), *_tmpfs(str(host.home), TMP), "--bind", ws, ws]
    expected += [*host.covers(around=True), *_tail(network=False, chdir=host.workspace), *inner, *bridge]
    assert argv == expected
    assert hashlib.sha256(BRIDGE_SOURCE.encode()).hexdigest() == BRIDGE_SHA256


def test_sized_limits_and_a_command_prefix(host: Host) -> None:
    ws = str(host.workspace)
    size = 64 * MiB
    policy = SandboxPolicy(mode="sandboxed", hidden=host.hidden, limits=ExecLimits(tmp_bytes=size, processes=5))
    inner = ("/usr/bin/prlimit", "--nproc=5:5", "--")
    expected = [BWRAP, "--ro-bind", "/", "/", *_head(size), *_tmpfs(str(host.home), size), "--bind", ws, ws]
    expected += [*host.covers(around=True), *_tail(network=False, chdir=host.workspace), *inner, *SHELL]
    assert _argv(policy, host, inner=inner) == expected


def test_a_workdir_beside_more_binds(host: Host, tmp_path: Path) -> None:
    tests, logs, src = tmp_path / "tests", tmp_path / "logs", tmp_path / "src"
    binds = (Bind(tests, TESTS), Bind(logs, LOGS, writable=True), Bind(src, UNDER_USR))
    policy = SandboxPolicy(mode="sandboxed", hidden=host.hidden, workdir=APP, binds=binds)
    root_skip = FRESH | {APP.name, TESTS.name, LOGS.parts[1]}
    tree = [*_copy("/", "--ro-bind", root_skip), *_copy("/usr", "--ro-bind", {UNDER_USR.parts[2]})]
    expected = [BWRAP, *tree, *_head(TMP), "--bind", str(host.workspace), str(APP), *host.covers(around=False)]
    expected += ["--ro-bind", str(tests), str(TESTS), "--bind", str(logs), str(LOGS), "--ro-bind", str(src)]
    expected += [str(UNDER_USR), "--remount-ro", "/", "--remount-ro", "/usr", *_tail(network=False, chdir=APP)]
    assert _argv(policy, host) == [*expected, *SHELL]


def test_a_workspace_view(host: Host) -> None:
    tree = _copy("/", "--bind", {"dev", "proc", APP.name})
    expected = [BWRAP, *tree, "--dev-bind", "/dev", "/dev", "--bind", "/proc", "/proc"]
    expected += ["--bind", str(host.workspace), str(APP), "--chdir", str(APP), "--die-with-parent", "--"]
    assert view_prefix(host.workspace, APP) == expected


def test_the_credential_paths_hidden_under_home() -> None:
    assert AGENT_CREDENTIAL_PATHS == (
        ".claude", ".claude.json", ".codex", ".gemini", ".qwen", ".pi", ".cursor", ".aider", ".continue",
        ".local/share/opencode", ".config/opencode", ".config/gh", ".config/github-copilot", ".config/gcloud",
        ".config/claude", ".config/goose", ".config/crush", ".aws", ".azure", ".kube", ".docker", ".ssh", ".gnupg",
        ".netrc", ".git-credentials", ".npmrc", ".pypirc",
    )  # fmt: skip
    assert agent_credential_paths(Path("/h"))[:2] == (Path("/h/.claude"), Path("/h/.claude.json"))
