"""One command run under a `SandboxPolicy`: started, held to its limits, read, stopped, and how it ended.

The command runs under `/bin/sh -c` in a new session, so it and every child share one process group that can be
stopped as a whole, and inside the sandbox (command_line.py) unless the policy is `unsandboxed`. stdout and stderr
share one pipe (read as a terminal would show them, interleaved) and stdin is /dev/null so nothing waits for input.
The pipe is ours rather than asyncio's: asyncio's `Process.wait()` also waits for its pipes to close, which a
backgrounded child (`server &`) would hold open forever.

Stopping: on timeout the group gets SIGTERM, `kill_grace` to close the pipe, then SIGKILL. On cancellation it gets
SIGKILL at once and `CancelledError` propagates. A command that hits a limit (limits.py: processes, memory, the
workspace's disk, or more output than `output_bytes`) gets SIGKILL at once, and the outcome says which limit. After
a normal exit, children still holding the pipe after `drain_grace` are killed; children that redirected their
output (`server >log 2>&1 &`) are left running when unsandboxed. In the sandbox every process of the command lives in
its own PID namespace, which ends with it.

Under a workdir (the policy's `workdir`, e.g. `/app`) the command starts there with the workspace bound at it: in the
sandbox, or unsandboxed in a view of this machine (view.py), never at the workspace's own path.

In the allowlist mode the command's network is an `AllowlistProxy` (network/proxy.py) that lives exactly as long as
the command; what it refused is in the outcome, one line each.

What this is not: the engine's `exec` tool (its arguments, its live output and the result the model reads), nor the
batch's task environment; both call `run_command`.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from omniagent.sandbox.command_line import STARTED, sandbox_argv
from omniagent.sandbox.environment import child_env
from omniagent.sandbox.errors import SandboxUnavailable
from omniagent.sandbox.limits import Confinement, ExecLimits, output_sentence
from omniagent.sandbox.network.proxy import AllowlistProxy
from omniagent.sandbox.policy import SandboxPolicy
from omniagent.sandbox.seccomp import filter_fd
from omniagent.sandbox.view import view_prefix

__all__ = ["DRAIN_GRACE", "KEPT_BYTES", "KILL_GRACE", "Outcome", "run_command"]

# Bytes read from the pipe per chunk; also the StreamReader buffer limit (explicit, never the 64 KiB default).
READ_CHUNK = 64 * 1024
# Seconds to wait for the kernel to report a SIGKILLed shell's exit; only a stuck kernel exceeds it.
REAP_TIMEOUT = 5.0
# Bytes of the sandbox's start signal read at most.
STATUS_MAX = 4096
# Seconds between SIGTERM and SIGKILL when a timed-out command's group is stopped.
KILL_GRACE = 2.0
# Seconds to wait for the output pipe to close after the shell exits (background children may still hold it).
DRAIN_GRACE = 0.5
# Bytes of output an outcome keeps: the head and the tail halves, the middle replaced by a notice.
KEPT_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a command ended: its exit status (None: it timed out; negative: killed by that signal), whether its
    timeout ended it, its output as kept (`run_command`'s `kept_bytes`), whether the sandbox failed to start it
    (`sandbox_failed`: the output is then bubblewrap's reason), the allowlist proxy's refusals (one line each), and
    the sentence for a limit it hit (None: none)."""

    returncode: int | None
    timed_out: bool
    output: str
    sandbox_failed: bool = False
    network: tuple[str, ...] = ()
    limit: str | None = None


async def run_command(
    command: str,
    workspace: Path,
    policy: SandboxPolicy,
    *,
    seconds: float,
    on_output: Callable[[bytes], None] | None = None,
    kept_bytes: int = KEPT_BYTES,
    kill_grace: float = KILL_GRACE,
    drain_grace: float = DRAIN_GRACE,
) -> Outcome:
    """Run `/bin/sh -c command` in `workspace` under `policy` for at most `seconds`; the command's process group
    never outlives cancellation.

    `on_output` receives every chunk of output as it is read (for live display); the outcome keeps the first and
    last `kept_bytes / 2` bytes. `kill_grace` and `drain_grace`: see the module.

    Raises:
        SandboxUnavailable: the policy asks for the sandbox and it cannot start here, or its limits cannot be
            applied, or they were refused before (`ExecLimits.refused`, e.g. a bad sandbox.json).
    """
    if policy.limits.refused:
        raise SandboxUnavailable(policy.limits.refused)
    graces = _Graces(kill_grace, drain_grace)
    rules = policy.allowlist if policy.proxied else None
    if rules is None:
        return await _run(command, workspace, seconds, graces, on_output, kept_bytes, policy, None)
    async with AllowlistProxy(rules) as proxy:
        outcome = await _run(command, workspace, seconds, graces, on_output, kept_bytes, policy, proxy.sandbox_fd)
    return replace(outcome, network=proxy.notes())


@dataclass(frozen=True, slots=True)
class _Graces:
    kill: float
    drain: float


async def _run(
    command: str,
    cwd: Path,
    seconds: float,
    graces: _Graces,
    on_output: Callable[[bytes], None] | None,
    kept_bytes: int,
    policy: SandboxPolicy,
    proxy_fd: int | None,
) -> Outcome:
    sandboxed = policy.mode == "sandboxed"
    confinement = _confinement(policy.limits, cwd) if sandboxed else None
    status_read = -1
    try:
        proc, read_fd, status_read = await _start(command, cwd, policy, proxy_fd, confinement)
    except BaseException:
        _close(status_read)
        if confinement is not None:
            confinement.close()
        raise
    stop = _Stop(proc)
    reader = asyncio.StreamReader(limit=READ_CHUNK)
    pipe = os.fdopen(read_fd, "rb", buffering=0)
    transport: asyncio.BaseTransport | None = None
    capture = _Capture(kept_bytes, on_output, policy.limits, stop)
    watcher: asyncio.Task[None] | None = None
    outcome: Outcome | None = None
    try:
        if confinement is not None:
            _admit(confinement, proc.pid)
            watcher = asyncio.create_task(confinement.watch(stop))
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
        outcome = await _run_to_end(proc, reader, capture, seconds, graces, status_read if sandboxed else None)
        limit = stop.reason or (confinement.verdict(outcome.returncode, outcome.output) if confinement else None)
        return replace(outcome, limit=limit)
    finally:
        if watcher is not None:
            watcher.cancel()
        if outcome is None:
            # Cancelled: no grace, the caller is leaving. The shell may have exited while its children live on.
            _signal_group(proc, signal.SIGKILL)
        if proc.returncode is None:
            async with asyncio.timeout(REAP_TIMEOUT):
                await proc.wait()
        if transport is None:
            pipe.close()
        else:
            transport.close()
        _close(status_read)
        if confinement is not None:
            confinement.close()


async def _start(
    command: str, cwd: Path, policy: SandboxPolicy, proxy_fd: int | None, confinement: Confinement | None
) -> tuple[asyncio.subprocess.Process, int, int]:
    """Spawn the command (behind its confinement's gate and in the sandbox when it has one); returns it, the read
    end of its output pipe and the read end of the sandbox's start pipe (-1 unsandboxed)."""
    if confinement is None:
        # Unsandboxed under a workdir: as the user still, in a view of this machine with the workspace there.
        view = view_prefix(cwd, policy.workdir) if policy.workdir is not None else []
        proc, read_fd = await _spawn([*view, "/bin/sh", "-c", command], cwd, policy, ())
        return proc, read_fd, -1
    status_read, status_write = os.pipe()
    seccomp_fd = -1
    try:
        seccomp_fd = filter_fd()
        argv = sandbox_argv(policy, cwd, command, status_write, seccomp_fd, proxy_fd, confinement.inner_argv)
        lent = () if proxy_fd is None else (proxy_fd,)  # the proxy's own: it closes it when the command is done
        # _spawn closes the start pipe's write end and the filter either way.
        passed, status_write, seccomp_fd = (status_write, seccomp_fd), -1, -1
        proc, read_fd = await _spawn(confinement.wrap(argv), cwd, policy, passed, lent, confinement.gate)
    except BaseException:
        _close(status_read, status_write, seccomp_fd)
        raise
    return proc, read_fd, status_read


def _confinement(limits: ExecLimits, cwd: Path) -> Confinement:
    try:
        return Confinement.prepare(limits, cwd)
    except OSError as exc:
        raise SandboxUnavailable(f"the command was not run: its cgroup could not be made: {_reason(exc)}") from None


def _admit(confinement: Confinement, pid: int) -> None:
    try:
        confinement.admit(pid)
    except OSError as exc:
        raise SandboxUnavailable(f"the command was not run: its limits could not be applied: {_reason(exc)}") from None


def _reason(exc: OSError) -> str:
    return (exc.strerror or type(exc).__name__).lower()


class _Stop:
    """Stops the command's group at the first limit hit and remembers that hit's sentence."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self._proc = proc
        self.reason: str | None = None

    def __call__(self, sentence: str) -> None:
        if self.reason is None:
            self.reason = sentence
            _signal_group(self._proc, signal.SIGKILL)


async def _spawn(
    argv: list[str],
    cwd: Path,
    policy: SandboxPolicy,
    passed: tuple[int, ...],
    lent: tuple[int, ...] = (),
    stdin: int = asyncio.subprocess.DEVNULL,
) -> tuple[asyncio.subprocess.Process, int]:
    """Start the command in a session of its own, stdout and stderr on one pipe; returns it and the pipe's read end.

    `passed` (the sandbox's start pipe and filter) are inherited by the child and closed here either way; `lent`
    (the proxy's socket) are inherited too and stay the caller's to close.
    """
    read_fd, write_fd = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=stdin,
            stdout=write_fd,
            stderr=write_fd,
            cwd=cwd,
            env=child_env(policy),
            start_new_session=True,
            pass_fds=(*passed, *lent),
        )
    except BaseException:
        _close(read_fd)
        raise
    finally:
        _close(write_fd, *passed)  # the child holds its own copies; ours would keep the pipes open forever
    return proc, read_fd


async def _run_to_end(
    proc: asyncio.subprocess.Process,
    reader: asyncio.StreamReader,
    capture: _Capture,
    seconds: float,
    graces: _Graces,
    status_read: int | None,
) -> Outcome:
    """Wait for the command for at most `seconds`, then TERM, then KILL its group; `status_read` (sandboxed runs)
    tells whether the sandbox started the command at all."""
    try:
        async with asyncio.timeout(seconds):
            returncode = await _wait_and_pump(proc, reader, capture, graces.drain)
    except TimeoutError:
        _signal_group(proc, signal.SIGTERM)
        await _drain(reader, capture, graces.kill)
        _signal_group(proc, signal.SIGKILL)
        await _drain(reader, capture, graces.drain)
        return Outcome(None, timed_out=True, output=capture.text())
    started = status_read is None or STARTED in _read_available(status_read)
    return Outcome(returncode, timed_out=False, output=capture.text(), sandbox_failed=not started)


def _close(*fds: int) -> None:
    for fd in fds:
        if fd >= 0:
            os.close(fd)


def _read_available(fd: int) -> bytes:
    """What the sandbox wrote to its start pipe; never blocks (a sandboxed child may still hold the pipe)."""
    os.set_blocking(fd, False)
    try:
        return os.read(fd, STATUS_MAX)
    except BlockingIOError:
        return b""


async def _wait_and_pump(
    proc: asyncio.subprocess.Process, reader: asyncio.StreamReader, capture: _Capture, drain_grace: float
) -> int:
    async with asyncio.TaskGroup() as group:
        pump = group.create_task(_pump(reader, capture))
        returncode = await proc.wait()
        done, _ = await asyncio.wait({pump}, timeout=drain_grace)
        if not done:
            # Background children still hold the pipe: stop them so the output ends.
            _signal_group(proc, signal.SIGKILL)
            done, _ = await asyncio.wait({pump}, timeout=drain_grace)
        if not done:
            pump.cancel()  # a child escaped the group (setsid) and keeps the pipe: stop reading it
    return returncode


async def _pump(reader: asyncio.StreamReader, capture: _Capture) -> None:
    while chunk := await reader.read(READ_CHUNK):
        capture.feed(chunk)


async def _drain(reader: asyncio.StreamReader, capture: _Capture, grace: float) -> None:
    """Read until EOF or `grace` seconds, whichever comes first."""
    try:
        async with asyncio.timeout(grace):
            await _pump(reader, capture)
    except TimeoutError:
        return


def _signal_group(proc: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    try:
        os.killpg(proc.pid, sig)  # start_new_session made the shell's pid the group id
    except ProcessLookupError:
        return  # the whole group is already gone


class _Capture:
    """Hands each chunk to `on_output`, stops the command past its output limit, and keeps the output's head and
    tail."""

    def __init__(
        self,
        kept_bytes: int,
        on_output: Callable[[bytes], None] | None,
        limits: ExecLimits,
        stop: Callable[[str], None],
    ) -> None:
        self._output_limit = limits.output_bytes
        self._over_limit = output_sentence(limits)
        self._stop = stop
        self._head_cap = kept_bytes // 2
        self._tail_cap = kept_bytes - self._head_cap
        self._on_output = on_output
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0

    def feed(self, data: bytes) -> None:
        if self._on_output is not None:
            self._on_output(data)
        self._total += len(data)
        if self._total > self._output_limit:
            self._stop(self._over_limit)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        self._tail += data
        if len(self._tail) > 2 * self._tail_cap:
            del self._tail[: -self._tail_cap]  # trimmed in batches to keep feeding linear

    def text(self) -> str:
        tail = bytes(self._tail[-self._tail_cap :]) if self._tail_cap else b""
        omitted = self._total - len(self._head) - len(tail)
        head_text = self._head.decode("utf-8", errors="replace")
        tail_text = tail.decode("utf-8", errors="replace")
        if omitted <= 0:
            return head_text + tail_text
        return f"{head_text}\n[... {omitted} bytes of output omitted ...]\n{tail_text}"
