"""A task's local environment: one shell command (a verifier's test, an oracle's solution) run in bubblewrap the way
Harbor runs it in the task's container, without Docker.

The command runs in the sandbox (omniagent.sandbox: the same mounts, namespaces, seccomp filter and cgroup limits
our engine's `exec` command gets), with the workspace at the task's workdir (e.g. `/app`), the given directories at
`/tests`, `/solution` and `/logs/...`, the rest of the host read-only, omniagent's and other agents' credential
directories hidden. Per task:

- network: `no-network` is a network namespace of its own (loopback only); `public` shares the host's;
- memory: the command's cgroup memory limit (`memory_mb`; where no cgroup is writable, RLIMIT_DATA per process);
- CPUs: the CPU affinity of the command (`taskset`, `cpus` of this machine's CPUs), which its processes inherit; a
  process may widen its own affinity again, so this bounds a cooperative command, not a hostile one;
- time: the command's whole process tree is killed at the timeout.

What this is not: the reward (verifier.py), the oracle (oracle.py), the agent's own sandbox (the agent's).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from omniagent.batch.tasks import Environment
from omniagent.sandbox import (
    HOW_TO_CHANGE,
    Bind,
    ExecLimits,
    MiB,
    SandboxPolicy,
    SandboxUnavailable,
    private_paths,
    run_command,
)

# Harbor's oracle and verifier run with no terminal to answer a package manager's questions.
BASE_ENV = {"DEBIAN_FRONTEND": "noninteractive"}
# How a task's limits change, in the sentence of a limit hit (the engine's names its own settings).
TASK_LIMITS = "the task sets its limits in task.toml's [environment] (memory_mb, cpus) and the timeouts"


@dataclass(frozen=True, slots=True)
class Ran:
    """How the command ended: its exit code (None: timed out or never started), whether the timeout ended it, and
    the sentence for a limit it hit or a sandbox that could not start (`problem`)."""

    exit_code: int | None
    timed_out: bool
    seconds: float
    problem: str | None = None
    output: str = ""


async def run_in_environment(
    command: str,
    *,
    workspace: Path,
    environment: Environment,
    binds: Mapping[str, Path],
    writable: Mapping[str, Path],
    env: Mapping[str, str],
    seconds: float,
    log: str,
) -> Ran:
    """Run `command` under `/bin/sh -c` in the task's environment: `binds` (path inside → host directory) read-only,
    `writable` ones writable (made afresh: what an earlier attempt left is removed), `env` over the environment's
    own, its output (stdout and stderr) into the file `log` (a path inside, in a writable directory), as Harbor's
    verifier and oracle write theirs. Never raises for the command's failures; a sandbox that cannot start is a
    `Ran` with its `problem`."""
    command = f"( {command}\n) >{log} 2>&1"
    await asyncio.to_thread(_afresh, writable.values())
    mounts = tuple(Bind(source, Path(target)) for target, source in binds.items())
    mounts += tuple(Bind(source, Path(target), writable=True) for target, source in writable.items())
    # As in Harbor's container: the kernel kills the process past the memory limit, the rest of the test goes on.
    limits = ExecLimits(stop_at_hit=False)
    if environment.memory_mb:
        limits = replace(limits, memory_bytes=environment.memory_mb * MiB)
    policy = SandboxPolicy(
        mode="sandboxed",
        network=environment.network_mode == "public",
        hidden=private_paths(Path.home()),
        extra_env=tuple({**BASE_ENV, **environment.env, **env}.items()),
        limits=limits,
        workdir=Path(environment.workdir) if environment.workdir else None,
        binds=mounts,
    )
    loop_clock = time.monotonic()
    try:
        outcome = await run_command(_pinned(command, environment.cpus), workspace, policy, seconds=seconds)
    except SandboxUnavailable as error:
        return Ran(None, timed_out=False, seconds=time.monotonic() - loop_clock, problem=str(error))
    elapsed = round(time.monotonic() - loop_clock, 3)
    if outcome.sandbox_failed:
        why = f"the sandbox could not start: {outcome.output.strip()}"
        return Ran(None, timed_out=False, seconds=elapsed, problem=why, output=outcome.output)
    problem = outcome.limit.replace(HOW_TO_CHANGE, TASK_LIMITS) if outcome.limit else None
    return Ran(outcome.returncode, outcome.timed_out, elapsed, problem, outcome.output)


def _pinned(command: str, cpus: int | None) -> str:
    """`command` on at most `cpus` of the CPUs this process may use (all of them when it asks for more)."""
    if cpus is None:
        return command
    allowed = sorted(os.sched_getaffinity(0))[:cpus]
    return f"exec taskset -c {','.join(map(str, allowed))} /bin/sh -c {shlex.quote(command)}"


def _afresh(directories: Iterable[Path]) -> None:
    for directory in directories:
        if directory.exists():
            shutil.rmtree(directory)
        directory.mkdir(parents=True)
