"""A workspace view: a session whose agent sees its directory at another path, a task's workdir (e.g. `/app`), as
the task's container would show it (batch's Harbor tasks; `Runtime.open(..., workdir=…)`).

A process agent runs under `launch_prefix`: bubblewrap showing this machine as it is, but with the session's
directory bound at the workdir and the agent started there (omniagent.sandbox's `view_prefix`, on the host tree
the exec sandbox and batch's verifier are built on too). The adapters tell the agent that its directory is the
workdir (`ConnectRequest.cwd`: ACP's `cwd`, Codex's thread `cwd`). It is a view, not a sandbox: the agent's own
sandbox, logins and permissions apply as without it. Our engine, in process, shows the workspace at the workdir
itself (`EngineApi.show_workspace_at`). Nothing is ever made at the workdir on the host, and where bubblewrap is
missing the open is refused, never run at the directory's own path instead.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from omniagent.runtime.driver import ConnectRequest
from omniagent.runtime.errors import InvalidConfiguration, SpawnFailed


def checked_workdir(workdir: str) -> str:
    """`workdir` when it can be a view's: an absolute path other than `/`, written normally (no `..`, `//`).

    Raises: `InvalidConfiguration`.
    """
    if not PurePosixPath(workdir).is_absolute() or workdir == "/" or os.path.normpath(workdir) != workdir:
        raise InvalidConfiguration(f"the workdir must be an absolute, normal path other than /, not {workdir!r}")
    return workdir


def launch_prefix(request: ConnectRequest) -> list[str]:
    """The command a process agent of `request` runs under: nothing without a workdir; with one, the view.

    Raises: `SpawnFailed` (bubblewrap is not available here: the sentence says how to install it).
    """
    if request.workdir is None:
        return []
    # Imported on first use: the sandbox layer (its proxy, its system-call filter) is not needed to drive an agent
    # without a view.
    from omniagent.sandbox import SandboxUnavailable, view_prefix

    try:
        return view_prefix(request.directory, Path(request.workdir))
    except SandboxUnavailable as exc:
        raise SpawnFailed(str(exc)) from None
