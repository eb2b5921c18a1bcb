"""The resource limits of `exec` commands: their values (`ExecLimits`), how one sandboxed command is held to them
(`Confinement`), and the one sentence the model reads when a command hits one.

How each limit is enforced (docs/security.md, "Limits"):

- processes and memory: the command's own cgroup, inside its session's (cgroups.py), when a writable hierarchy is
  found (as root on most machines; on cgroup v2 under a delegated scope). A fork past the limit fails, a process
  past the memory limit is killed by the kernel, and the command is then stopped. Without one: RLIMIT_DATA per
  process for memory, and for a user other than root RLIMIT_NPROC set inside the sandbox's user namespace (where it
  counts only the sandbox's processes; outside it would count all the user's processes on the machine), through
  util-linux's `prlimit`; root has no process limit then (the kernel exempts it from RLIMIT_NPROC).
- CPU time and file size: RLIMIT_CPU (per process; SIGXCPU) and RLIMIT_FSIZE (per file; SIGXFSZ, or EFBIG for a
  program that ignores it), which hold for root too.
- /tmp, /dev/shm and /run: tmpfs mounts of a fixed size (bubblewrap 0.7 or newer, not setuid); `/dev` itself is
  read-only.
- the workspace: the growth of its file system's used space while the command runs, checked every `WATCH_PERIOD`.
- output: counted by run.py as it reads the pipe (also for unsandboxed commands).

The command starts behind a tiny gate process (`/bin/sh`) that joins the command's cgroup itself, then waits on its
stdin until the engine has set its rlimits (`resource.prlimit` on its pid) and only then becomes bubblewrap: nothing
of the command ever runs outside its group or without its rlimits, and no `preexec_fn` is needed (unsafe in a process
with threads). Cost, measured: one `/bin/sh` start (about a millisecond) and a few small writes (docs/performance.md,
"exec start-up in the sandbox").

What this is not: the sandbox's mounts and namespaces (command_line.py), the per-session settings and sandbox.json
(engine/sandbox_file.py), the cgroup file system itself (cgroups.py).
"""

from __future__ import annotations

import asyncio
import functools
import os
import resource
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from omniagent.sandbox.cgroups import CommandGroup, Controller, GroupEvents, hierarchy

__all__ = [
    "HOW_TO_CHANGE",
    "WATCH_PERIOD",
    "Confinement",
    "ExecLimits",
    "GiB",
    "MiB",
    "machine_memory",
    "output_sentence",
    "size_text",
]

MiB = 1024 * 1024
GiB = 1024 * MiB
# Seconds between two looks at a running command's cgroup and workspace disk use.
WATCH_PERIOD = 0.1
# Tasks (processes and threads) one command may run at once: far above a parallel build on a large machine
# (a cargo or make -j64 build stays under a thousand), far below what makes a machine fall over.
PROCESSES = 2048
SESSION_PROCESSES = 4096
# CPU seconds one process may use: a process that keeps six cores busy for the longest timeout a model may ask for
# (600 s); the timeout itself ends every sandboxed command sooner.
CPU_SECONDS = 3600
OUTPUT_BYTES = 64 * MiB
TMP_BYTES = 1 * GiB
# Bytes one file may hold: more than a debug build's largest binary.
FILE_BYTES = 16 * GiB
# The exit statuses a shell gives a command killed by SIGXCPU and SIGXFSZ (128 + the signal).
_XCPU = 128 + signal.SIGXCPU
_XFSZ = 128 + signal.SIGXFSZ
# How the user changes any limit; part of every sentence a limit hit gives.
HOW_TO_CHANGE = "the user can change it in sandbox.json or with session.set_sandbox; see docs/security.md"
# The gate: join the command's cgroup (each file before `--`; a failure ends it before anything runs), wait for the
# engine's word on stdin (EOF: the engine gave up, nothing runs), then become the sandbox with stdin from /dev/null as
# every command has. The gate moves itself (`echo` is a builtin) so that the engine never waits on the move.
GATE = (
    'while [ "$1" != -- ]; do echo 0 >"$1" || { echo "the command\'s cgroup could not be joined ($1)"; exit 125; }; '
    'shift; done; shift; read -r _ && exec "$@" </dev/null'
)
# What shells and programs print when a fork or an allocation is refused (dash, bash, Python, coreutils, C++, Go).
_FORK_REFUSED = ("Cannot fork", "Resource temporarily unavailable")
_ALLOCATION_REFUSED = ("MemoryError", "Cannot allocate memory", "memory exhausted", "bad_alloc", "out of memory")


@functools.cache
def machine_memory() -> int:
    """Bytes of memory this engine may use: the machine's RAM, or the engine's own cgroup limit when lower."""
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    for path in _own_memory_limit_files():
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


def _own_memory_limit_files() -> list[Path]:
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    files = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        controllers, rel = parts[1], parts[2].lstrip("/")
        if controllers == "":
            files.append(Path("/sys/fs/cgroup", rel, "memory.max"))
        elif "memory" in controllers.split(","):
            files.append(Path("/sys/fs/cgroup/memory", rel, "memory.limit_in_bytes"))
    return files


def _half_memory() -> int:
    return machine_memory() // 2 // MiB * MiB


def _three_quarters_memory() -> int:
    return machine_memory() * 3 // 4 // MiB * MiB


@dataclass(frozen=True, slots=True)
class ExecLimits:
    """The limits of a session's `exec` commands (docs/security.md, "Limits"); sizes in bytes.

    `processes`, `memory_bytes`: one command (tasks: processes and threads at once; memory: RAM, tmpfs files
    included, no swap). `session_processes`, `session_memory_bytes`: all of `session`'s running commands together.
    `cpu_seconds`: CPU time of any one process. `output_bytes`: what one command may write to stdout and stderr.
    `tmp_bytes`: the size of each of the sandbox's /tmp, /dev/shm and /run. `file_bytes`: the size of any one file
    a command writes. `disk_bytes`: how much the workspace's file system may fill during one command (None: half of
    its free space when the command starts). `session`: the session whose commands share the session limits (empty:
    none). `refused`: when set, no command runs and this is the sentence the model reads (a bad sandbox.json).
    `stop_at_hit`: whether a command is stopped as soon as one of its processes is refused a fork or killed for
    memory (the engine's `exec`: the model learns at once), or goes on as in a container, where only the process
    the kernel refused or killed is affected (the batch's verifier, whose test may provoke that on purpose); its
    sentence is given either way, and the workspace's disk limit always stops it.
    """

    processes: int = PROCESSES
    memory_bytes: int = field(default_factory=_half_memory)
    session_processes: int = SESSION_PROCESSES
    session_memory_bytes: int = field(default_factory=_three_quarters_memory)
    cpu_seconds: int = CPU_SECONDS
    output_bytes: int = OUTPUT_BYTES
    tmp_bytes: int = TMP_BYTES
    file_bytes: int = FILE_BYTES
    disk_bytes: int | None = None
    session: str = ""
    refused: str = ""
    stop_at_hit: bool = True


def size_text(size: int) -> str:
    """A size as people write it: `64 MiB`, `1.5 GiB`, `512 bytes`."""
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (1024, "KiB")):
        if size >= unit:
            value = size / unit
            return f"{value:.0f} {name}" if value == int(value) else f"{value:.1f} {name}"
    return f"{size} bytes"


def output_sentence(limits: ExecLimits) -> str:
    """What the model reads when a command wrote more than `output_bytes` and was stopped."""
    return (
        f"[stopped: the command wrote more than {size_text(limits.output_bytes)} of output "
        f"(the limit `output_mb`; {HOW_TO_CHANGE})]"
    )


class Confinement:
    """One sandboxed command's limits, from before it starts until it is gone.

    Use: `prepare`, then run `wrap(argv)` with `gate` as its stdin, `admit(pid)` at once, `watch` while it runs,
    `verdict` when it ended, and always `close`.
    """

    def __init__(self, limits: ExecLimits, workspace: Path, group: CommandGroup | None) -> None:
        self.limits = limits
        self._workspace = workspace
        self._group = group
        self._controllers: frozenset[Controller] = frozenset(group.dirs) if group else frozenset()
        self.gate, self._gate_write = os.pipe()
        disk = _disk(workspace)
        self._used_at_start = disk[0] if disk else 0
        self._disk_quota: int | None = None  # a file system that cannot say its use (statvfs failed) is not watched
        if disk is not None:
            self._disk_quota = limits.disk_bytes if limits.disk_bytes is not None else disk[1] // 2
        # What runs the command's shell inside the sandbox (`sandbox_argv`'s `inner`).
        self.inner_argv = self._inner_argv()

    @classmethod
    def prepare(cls, limits: ExecLimits, workspace: Path) -> Confinement:
        """Make the command's cgroup (when the machine has a writable one) and its gate.

        Raises:
            OSError: the cgroup could not be made (the command must not run then).
        """
        found = hierarchy()
        group = None
        if found is not None:
            values: dict[Controller, tuple[int, int]] = {
                "pids": (limits.session_processes, limits.processes),
                "memory": (limits.session_memory_bytes, limits.memory_bytes),
            }
            group = found.open_command(limits.session, values)
        try:
            return cls(limits, workspace, group)
        except BaseException:
            if group is not None:
                group.close()
            raise

    def _inner_argv(self) -> tuple[str, ...]:
        """What runs the command's shell inside the sandbox: `prlimit --nproc` where only RLIMIT_NPROC can bound
        processes (no pids cgroup, not root), so that it counts the sandbox's processes only (see the module)."""
        if "pids" in self._controllers or os.geteuid() == 0:
            return ()
        prlimit = shutil.which("prlimit")
        if prlimit is None:
            return ()
        hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
        count = self.limits.processes if hard == resource.RLIM_INFINITY else min(self.limits.processes, hard)
        return (prlimit, f"--nproc={count}:{count}", "--")

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` behind the gate, which joins the command's cgroup and starts `argv` once `admit` says so."""
        joins = [str(path) for path in self._group.join_files()] if self._group is not None else []
        return ["/bin/sh", "-c", GATE, "sh", *joins, "--", *argv]

    def admit(self, pid: int) -> None:
        """Give the waiting gate process `pid` the rlimits, and let it go on (into the sandbox).

        Raises:
            OSError: a limit could not be applied; the gate is closed, so the command never runs.
        """
        try:
            for which, soft, hard in self._rlimits():
                resource.prlimit(pid, which, (soft, hard))
            os.write(self._gate_write, b"\n")
        finally:
            self._close_gate()  # the gate process holds its own end; a closed one ends it if nothing was written

    def _rlimits(self) -> list[tuple[int, int, int]]:
        """(resource, soft, hard): never above this process's own hard limits, which no unprivileged process may
        raise."""
        wanted = [
            (resource.RLIMIT_CPU, self.limits.cpu_seconds, self.limits.cpu_seconds + 1),  # SIGXCPU, then SIGKILL
            (resource.RLIMIT_FSIZE, self.limits.file_bytes, self.limits.file_bytes),
        ]
        if "memory" not in self._controllers:
            wanted.append((resource.RLIMIT_DATA, self.limits.memory_bytes, self.limits.memory_bytes))
        applied = []
        for which, soft, hard in wanted:
            ceiling = resource.getrlimit(which)[1]
            if ceiling != resource.RLIM_INFINITY:
                soft, hard = min(soft, ceiling), min(hard, ceiling)
            applied.append((which, soft, hard))
        return applied

    async def watch(self, stop: Callable[[str], None]) -> None:
        """Look at the command every `WATCH_PERIOD` seconds; at the first limit hit, `stop` it with the sentence."""
        while True:
            await asyncio.sleep(WATCH_PERIOD)
            sentence = self._hit() if self.limits.stop_at_hit else self._disk_hit()
            if sentence is not None:
                stop(sentence)
                return

    def verdict(self, returncode: int | None, output: str) -> str | None:
        """After the command: the sentence for a limit it hit (or a limit that explains its failure), else None."""
        hit = self._hit()
        if hit is not None or returncode is None:  # None: it timed out, which the result says
            return hit
        limits = self.limits
        if returncode in (_XCPU, -signal.SIGXCPU):
            return (
                f"[killed: a process of the command used more than {limits.cpu_seconds} s of CPU time (SIGXCPU, "
                f"exit code {returncode}; the limit `cpu_seconds`; {HOW_TO_CHANGE})]"
            )
        if returncode in (_XFSZ, -signal.SIGXFSZ):
            return (
                f"[stopped: the command tried to write a file larger than {size_text(limits.file_bytes)} (SIGXFSZ, "
                f"exit code {returncode}; the limit `file_mb`; {HOW_TO_CHANGE})]"
            )
        return None if returncode == 0 else self._explained(returncode, output)

    def _explained(self, returncode: int, output: str) -> str | None:
        """For a failed command whose output shows the error a limit gives, the limit behind it: a file too large,
        a full /tmp, and, where no cgroup sees them, a refused fork or a refused allocation."""
        limits = self.limits
        if "File too large" in output:
            return (
                f"[exit code {returncode}; a file may hold at most {size_text(limits.file_bytes)} "
                f"(the limit `file_mb`; {HOW_TO_CHANGE})]"
            )
        if "No space left on device" in output:
            return (
                f"[exit code {returncode}; the sandbox's /tmp, /dev/shm and /run hold at most "
                f"{size_text(limits.tmp_bytes)} each (the limit `tmp_mb`; {HOW_TO_CHANGE}); "
                "else the workspace's disk is full]"
            )
        if self.inner_argv and any(text in output for text in _FORK_REFUSED):
            return (
                f"[exit code {returncode}; the command may run at most {limits.processes} processes and threads at "
                f"once (the limit `processes`; {HOW_TO_CHANGE})]"
            )
        if "memory" not in self._controllers and any(text in output for text in _ALLOCATION_REFUSED):
            return (
                f"[exit code {returncode}; each process of the command may use at most "
                f"{size_text(limits.memory_bytes)} of memory (the limit `memory_mb`; {HOW_TO_CHANGE})]"
            )
        return None

    def _hit(self) -> str | None:
        events = self._group.events() if self._group is not None else GroupEvents()
        limits = self.limits
        if events.fork_refused == "command":
            return (
                f"[stopped: the command tried to run more than {limits.processes} processes and threads at once "
                f"(the limit `processes`; {HOW_TO_CHANGE})]"
            )
        if events.fork_refused == "session":
            return (
                f"[stopped: the session's running commands together tried to run more than "
                f"{limits.session_processes} processes and threads at once (the limit `session_processes`; "
                f"{HOW_TO_CHANGE})]"
            )
        if events.fork_refused == "machine":
            return (
                "[stopped: the command could not start another process although it was within its limits: the "
                "machine, or the group the engine runs in, has no room for more]"
            )
        if events.oom_killed == "command":
            return (
                f"[killed: the command used more than {size_text(limits.memory_bytes)} of memory "
                f"(the limit `memory_mb`; {HOW_TO_CHANGE})]"
            )
        if events.oom_killed == "session":
            return (
                f"[killed: the session's running commands together used more than "
                f"{size_text(limits.session_memory_bytes)} of memory (the limit `session_memory_mb`; {HOW_TO_CHANGE})]"
            )
        if events.oom_killed == "machine":
            return (
                "[killed: the machine ran out of memory and the kernel killed a process of the command, which was "
                "within its own limits]"
            )
        return self._disk_hit()

    def _disk_hit(self) -> str | None:
        if self._disk_quota is None:
            return None
        disk = _disk(self._workspace)
        if disk is None or disk[0] - self._used_at_start <= self._disk_quota:
            return None
        return (
            f"[stopped: the command wrote more than {size_text(self._disk_quota)} to the workspace's file system "
            f"(the limit `disk_mb`; {HOW_TO_CHANGE}); what it wrote is still there]"
        )

    def close(self) -> None:
        """Remove the command's cgroup (call once its processes are gone) and close the gate."""
        self._close_gate()
        if self._group is not None:
            self._group.close()
            self._group = None

    def _close_gate(self) -> None:
        for fd in (self.gate, self._gate_write):
            if fd >= 0:
                os.close(fd)
        self.gate = self._gate_write = -1


def _disk(path: Path) -> tuple[int, int] | None:
    """(bytes used, bytes free for unprivileged users) on the file system holding `path`; None if it cannot say."""
    try:
        info = os.statvfs(path)
    except OSError:
        return None
    return (info.f_blocks - info.f_bfree) * info.f_frsize, info.f_bavail * info.f_frsize
