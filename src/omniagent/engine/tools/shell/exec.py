"""The `exec` tool: one shell command in the workspace, output streamed live, bounded in time and size.

The command runs under `/bin/sh -c` in a new session, so it and every child share one process group that we can
stop as a whole, and inside the sandbox of `sandbox.py` unless the session opted out. stdout and stderr share one
pipe (the model sees them interleaved as a terminal would) and stdin is /dev/null so nothing waits for input.
The pipe is ours rather than asyncio's: asyncio's `Process.wait()` also waits for its pipes to close, which a
backgrounded child (`server &`) would hold open forever.

Stopping: on timeout the group gets SIGTERM, `kill_grace` to close the pipe, then SIGKILL. On cancellation it gets
SIGKILL at once and `CancelledError` propagates. A command that hits a limit (limits.py: processes, memory, the
workspace's disk, or more output than `output_bytes`) gets SIGKILL at once, and the result says which limit. After
a normal exit, children still holding the pipe after `drain_grace` are killed; children that redirected their
output (`server >log 2>&1 &`) are left running when unsandboxed. In the sandbox every process of the command lives in
its own PID namespace, which ends with it.

Under a workdir (the policy's `workdir`: the session shows its workspace at e.g. `/app`) the command starts there
with the workspace bound at it: in the sandbox, or unsandboxed in a view of this machine (sandbox.py
`view_prefix`), never at the workspace's own path.

In the sandbox's allowlist mode the command's network is an `AllowlistProxy` (proxy.py) that lives exactly as long
as the command; what it refused ends the result, one line each, so the model knows why a download failed.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from omniagent.engine.tools.args import optional_number, required_str
from omniagent.engine.tools.context import OutputSink, ToolContext, ToolError, ToolLimits, ToolResult, guarded
from omniagent.engine.tools.shell.limits import Confinement, ExecLimits, output_sentence
from omniagent.engine.tools.shell.proxy import AllowlistProxy
from omniagent.engine.tools.shell.sandbox import (
    STARTED,
    SandboxPolicy,
    SandboxUnavailable,
    child_env,
    sandbox_argv,
    view_prefix,
)
from omniagent.engine.tools.shell.seccomp import filter_fd
from omniagent.engine.tools.views import TextView

__all__ = ["ExecTool"]

# Bytes read from the pipe per chunk; also the StreamReader buffer limit (explicit, never the 64 KiB default).
READ_CHUNK = 64 * 1024
# Seconds to wait for the kernel to report a SIGKILLed shell's exit; only a stuck kernel exceeds it.
REAP_TIMEOUT = 5.0
# Bytes of the sandbox's start signal read at most.
STATUS_MAX = 4096
# Appended to a failed sandboxed command's result, so the model knows why a path or the network was refused.
SANDBOX_NOTE = (
    "[the command ran in the exec sandbox: only the workspace and /tmp (and /dev/shm, /run) are writable, "
    "omniagent's data and credential directories are hidden, other processes are invisible, the network is off "
    "or limited to the domains the user allowed (through the proxy in HTTPS_PROXY) unless the user turned it on, "
    'some system calls are refused ("Operation not permitted": new namespaces, ptrace, Unix sockets), and '
    "processes, memory, CPU time, output and file sizes are limited; this is the user's policy, not a fault to "
    "work around]"
)


@dataclass(frozen=True, slots=True)
class _Outcome:
    returncode: int | None
    timed_out: bool
    output: str
    sandbox_failed: bool = False
    network: tuple[str, ...] = ()  # the allowlist proxy's refusals, one line each
    limit: str | None = None  # the sentence for a limit the command hit


class ExecTool:
    """Run a shell command in the workspace root."""

    name = "exec"
    description = (
        "Run a shell command (/bin/sh -c) in the workspace root. stdout and stderr are combined; stdin is empty. "
        "The command is killed after `timeout` seconds (default 120). Long output keeps its beginning and end. "
        "Unless the user turned it off, it runs in a sandbox: only the workspace and /tmp are writable, "
        "credential directories are hidden, other processes are invisible, the network is off or limited to the "
        "domains the user allowed (through the proxy the environment names), new namespaces, ptrace and Unix "
        "sockets are refused, and processes, memory, CPU time and output are limited."
    )
    input_schema: Mapping[str, object] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The shell command line to run."},
            "timeout": {"type": "number", "exclusiveMinimum": 0, "description": "Seconds before it is killed."},
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    async def run(self, args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        """Run the command; a non-zero exit or a timeout gives an error result carrying the output."""

        async def body() -> ToolResult:
            command = required_str(args, "command")
            if "\x00" in command:
                raise ToolError("the command contains a NUL byte")
            asked = optional_number(args, "timeout", minimum=0.0)
            timeout = min(asked or ctx.limits.exec_timeout, ctx.limits.exec_max_timeout)
            try:
                outcome = await run_command(command, ctx.root, timeout, ctx.limits, ctx.on_output, ctx.sandbox)
            except SandboxUnavailable as exc:
                raise ToolError(str(exc)) from None
            if outcome.sandbox_failed:
                why = f"the command was not run: the exec sandbox could not start: {outcome.output.strip()}"
                raise ToolError(f"{why}\n{outcome.limit}" if outcome.limit else why)
            return _result(command, timeout, outcome, sandboxed=ctx.sandbox.mode == "sandboxed")

        return await guarded(ctx.root, body)


async def run_command(
    command: str, cwd: Path, seconds: float, limits: ToolLimits, on_output: OutputSink, policy: SandboxPolicy
) -> _Outcome:
    """Run `command` for at most `seconds`, streaming output to `on_output`; the group never outlives cancellation.

    Raises:
        SandboxUnavailable: the policy asks for the sandbox and it cannot start here, or its limits cannot be
            applied, or sandbox.json is invalid (`ExecLimits.refused`).
    """
    if policy.limits.refused:
        raise SandboxUnavailable(policy.limits.refused)
    rules = policy.allowlist if policy.proxied else None
    if rules is None:
        return await _run(command, cwd, seconds, limits, on_output, policy, None)
    async with AllowlistProxy(rules) as proxy:
        outcome = await _run(command, cwd, seconds, limits, on_output, policy, proxy.sandbox_fd)
    return replace(outcome, network=proxy.notes())


async def _run(
    command: str,
    cwd: Path,
    seconds: float,
    limits: ToolLimits,
    on_output: OutputSink,
    policy: SandboxPolicy,
    proxy_fd: int | None,
) -> _Outcome:
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
    capture = _Capture(limits, on_output, policy.limits, stop)
    watcher: asyncio.Task[None] | None = None
    outcome: _Outcome | None = None
    try:
        if confinement is not None:
            _admit(confinement, proc.pid)
            watcher = asyncio.create_task(confinement.watch(stop))
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
        outcome = await _run_to_end(proc, reader, capture, seconds, limits, status_read if sandboxed else None)
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
    limits: ToolLimits,
    status_read: int | None,
) -> _Outcome:
    """Wait for the command for at most `seconds`, then TERM, then KILL its group; `status_read` (sandboxed runs)
    tells whether the sandbox started the command at all."""
    try:
        async with asyncio.timeout(seconds):
            returncode = await _wait_and_pump(proc, reader, capture, limits.drain_grace)
    except TimeoutError:
        _signal_group(proc, signal.SIGTERM)
        await _drain(reader, capture, limits.kill_grace)
        _signal_group(proc, signal.SIGKILL)
        await _drain(reader, capture, limits.drain_grace)
        return _Outcome(None, timed_out=True, output=capture.text())
    started = status_read is None or STARTED in _read_available(status_read)
    return _Outcome(returncode, timed_out=False, output=capture.text(), sandbox_failed=not started)


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
    """Keeps the head and tail of the output for the model and streams a capped prefix live, in order."""

    def __init__(
        self, limits: ToolLimits, on_output: OutputSink, exec_limits: ExecLimits, stop: Callable[[str], None]
    ) -> None:
        self._output_limit = exec_limits.output_bytes
        self._over_limit = output_sentence(exec_limits)
        self._stop = stop
        self._head_cap = limits.exec_output_cap // 2
        self._tail_cap = limits.exec_output_cap - self._head_cap
        self._stream_cap = limits.stream_output_cap
        self._on_output = on_output
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0
        self._stream_stopped = False

    def feed(self, data: bytes) -> None:
        self._stream(data)
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

    def _stream(self, data: bytes) -> None:
        if self._stream_stopped:
            return
        room = self._stream_cap - self._total
        if len(data) <= room:
            self._emit(self._decoder.decode(data))
            return
        self._emit(self._decoder.decode(data[:room], final=True))
        self._emit(f"\n[live output stops after {self._stream_cap} bytes; the command goes on]\n")
        self._stream_stopped = True

    def _emit(self, text: str) -> None:
        if text:
            self._on_output(text)


def _result(command: str, timeout: float, outcome: _Outcome, *, sandboxed: bool) -> ToolResult:
    body = outcome.output.rstrip("\n")
    if outcome.limit is not None:
        status = outcome.limit
    elif outcome.timed_out:
        status = f"[timed out after {timeout:g} s; the command and its children were killed]"
    elif outcome.returncode is not None and outcome.returncode < 0:
        status = f"[killed by signal {_signal_name(-outcome.returncode)}]"
    else:
        status = f"[exit code {outcome.returncode}]"
    failed = outcome.timed_out or outcome.returncode != 0 or outcome.limit is not None
    if failed and sandboxed:
        status += f"\n{SANDBOX_NOTE}"
    status = "\n".join((*outcome.network, status))
    text = f"{body}\n{status}" if body else f"(no output)\n{status}"
    view = TextView(text=f"$ {command}\n{text}", language="console")
    return ToolResult(output=text, is_error=failed, views=(view,))


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
