"""What one confined command may see, touch and reach (`SandboxPolicy`), and what no sandboxed command may read.

Policy (docs/security.md, "A hostile model"): the workspace and a private `/tmp` are writable; the rest of the file
system is read-only; `hidden` paths (omniagent's data and config dirs, other agents' credential dirs, the user's key
files, `private_paths`) are covered; the network is off unless `network`, or reaches only what an `allowlist`
allows through the proxy (network/); processes, memory, CPU time, output and sizes are limited (`limits`,
limits.py). `unsandboxed` runs the command as the user, with provider keys still removed from its environment.

What this is not: the command line that enforces a policy (command_line.py), nor who chooses it (the engine's
per-session settings, the batch's task environment).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import platformdirs

from omniagent.sandbox.limits import ExecLimits
from omniagent.sandbox.network.allowlist import NetworkRules

__all__ = [
    "AGENT_CREDENTIAL_PATHS",
    "SANDBOX_SUPPORTED",
    "UNSANDBOXED",
    "Bind",
    "SandboxMode",
    "SandboxPolicy",
    "agent_credential_paths",
    "omniagent_dirs",
    "private_paths",
]

SandboxMode = Literal["sandboxed", "unsandboxed"]
# The sandbox is built on Linux namespaces; elsewhere the default mode is `unsandboxed` (which asks before every exec).
SANDBOX_SUPPORTED = sys.platform.startswith("linux")
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
    """How one command runs: an engine `exec` call, a batch task's test or solution.

    `hidden`: absolute paths made unreadable (only those that exist are covered). `secret_env`: variable names
    never passed to a command in any mode (the key variables providers.json names). `network`: share the host's
    network (off: a private loopback only). `allowlist`: with `network` off, the command may reach what these
    rules allow through the allowlist proxy (network/proxy.py; None: nothing). `extra_env`: variables given to the
    command in every mode (the secret answers it was given, engine/interactions/secrets.py). `limits`: processes,
    memory, CPU, output, /tmp, file and disk (limits.py). `workdir`: where the workspace appears inside the sandbox
    and the command starts (None: at its own path; unsandboxed, the command then runs in `view_prefix`'s view of the
    machine). `binds`: more host paths shown inside. With either, the sandbox's root is a read-only tmpfs holding
    the host's top-level entries, so that a path the host lacks (`/app`) can be made (`bubblewrap.host_tree`).
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
