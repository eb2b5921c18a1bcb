"""Child processes with piped stdio: spawn in its own process group, keep the stderr tail, close in steps.

The stderr tail is kept redacted (`redact.py`): the values of the secret-named variables the child was given, and
anything key-shaped, never reach an error report or a debug log.

Use as `async with open_process(argv) as child:`; `child.stdout` / `child.stdin` are the streams a `Peer` or a
line reader runs on. Leaving the block closes the child: stdin EOF → `CLOSE_GRACE` → SIGTERM to the group →
`TERM_GRACE` → SIGKILL to the group. The close is bounded, and a cancelled close still kills the group.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import shutil
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType

from omniagent.wire.errors import WireError
from omniagent.wire.jsonl import MAX_LINE_BYTES, read_lines
from omniagent.wire.redact import named_secrets, redact

log = logging.getLogger(__name__)

# Seconds a child gets to exit by itself after its stdin closes (agents flush and save their sessions).
CLOSE_GRACE = 3.0
# Seconds between SIGTERM and SIGKILL.
TERM_GRACE = 2.0
# Seconds to wait for the exit status after SIGKILL (the kernel reaps at once; this only bounds a stuck wait).
KILL_WAIT = 5.0
# Seconds to let the stderr reader finish after the child exits (a grandchild may still hold the pipe open).
STDERR_DRAIN = 0.5
# asyncio's default 64 KiB stream limit breaks on one long JSON line; match the line cap instead.
STREAM_LIMIT = MAX_LINE_BYTES
# Stderr lines kept for error reports.
STDERR_TAIL_LINES = 40
# A single stderr line longer than this is cut (it is only for display).
STDERR_LINE_BYTES = 8 * 1024


class SpawnError(WireError):
    """The child could not be started (no such executable, permission denied)."""


@dataclass(frozen=True, slots=True)
class ExitStatus:
    """How a child ended: `returncode` as asyncio reports it (negative = killed by that signal)."""

    returncode: int

    def __str__(self) -> str:
        if self.returncode < 0:
            number = -self.returncode
            try:
                return f"signal: {number} ({signal.Signals(number).name})"
            except ValueError:
                return f"signal: {number}"
        return f"exit status: {self.returncode}"


def child_env(executable: str, env: Mapping[str, str] | None) -> dict[str, str]:
    """The child's environment: `env` (or ours) with the executable's directory first on PATH.

    npm-installed agents start with `#!/usr/bin/env node`; the node they were installed with sits next to them.
    """
    result = dict(os.environ if env is None else env)
    path = result.get("PATH", os.defpath)
    directory = os.path.dirname(os.path.abspath(executable))
    result["PATH"] = os.pathsep.join([directory, path]) if path else directory
    return result


class ChildProcess:
    """A running child with piped stdin/stdout/stderr. Made by `open_process`; started by `async with`."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None,
        env: Mapping[str, str] | None,
        close_grace: float,
        term_grace: float,
        stderr_lines: int,
        prefix: Sequence[str] = (),
    ) -> None:
        if not argv:
            raise ValueError("argv is empty")
        self.argv = list(argv)
        self._prefix = list(prefix)
        self._cwd = cwd
        self._env = env
        self._close_grace = close_grace
        self._term_grace = term_grace
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=stderr_lines)
        # What the child may print of its environment (its own keys, in a crash dump or a debug line).
        self._secrets = named_secrets(env)
        self._proc: asyncio.subprocess.Process | None = None
        self._tg: asyncio.TaskGroup | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._status: ExitStatus | None = None
        self._exited = asyncio.Event()
        self._finished = asyncio.Event()

    async def __aenter__(self) -> ChildProcess:
        base_env = dict(os.environ if self._env is None else self._env)
        executable = shutil.which(self.argv[0], path=base_env.get("PATH")) or self.argv[0]
        loop = asyncio.get_running_loop()
        protocol = _ExitWatch(limit=STREAM_LIMIT, loop=loop)
        try:
            transport, _ = await loop.subprocess_exec(
                lambda: protocol,
                *self._prefix,
                executable,
                *self.argv[1:],
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self._cwd,
                env=child_env(executable, base_env),
                start_new_session=True,  # own process group: we signal the whole tree, and ^C doesn't reach it
            )
        except OSError as exc:
            raise SpawnError(f"cannot start {self.argv[0]!r}: {exc.strerror or exc}") from exc
        self._proc = asyncio.subprocess.Process(transport, protocol, loop)
        self._exited = protocol.exited
        self._finished = protocol.finished
        self._tg = asyncio.TaskGroup()
        await self._tg.__aenter__()
        self._stderr_task = self._tg.create_task(self._drain_stderr(), name=f"stderr:{self.argv[0]}")
        self._tg.create_task(self._sweep_after_exit(), name=f"sweep:{self.argv[0]}")
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            await self.aclose()
        finally:
            tg, self._tg = self._tg, None
            if tg is not None:
                await tg.__aexit__(None, None, None)

    @property
    def pid(self) -> int:
        """The child's pid (also its process group id)."""
        return self._process().pid

    @property
    def stdin(self) -> asyncio.StreamWriter:
        """The child's stdin (a ByteSink for `LineWriter` / `Peer`)."""
        stream = self._process().stdin
        assert stream is not None
        return stream

    @property
    def stdout(self) -> asyncio.StreamReader:
        """The child's stdout."""
        stream = self._process().stdout
        assert stream is not None
        return stream

    @property
    def returncode(self) -> int | None:
        """The exit code once the child has exited, else None."""
        return self._process().returncode

    def stderr_tail(self) -> list[str]:
        """The last stderr lines (decoded, newline stripped, secrets redacted), oldest first."""
        return list(self._stderr_tail)

    async def wait(self) -> ExitStatus:
        """Wait for the child to exit by itself (even while a grandchild still holds its pipes)."""
        await self._exited.wait()
        code = self._process().returncode
        assert code is not None
        return ExitStatus(code)

    async def _sweep_after_exit(self) -> None:
        # Once the leader is gone the agent is gone: orphans left in its group (an npm launcher's native child)
        # would otherwise hold our pipes open and nobody would ever see the agent end.
        await self._exited.wait()
        self._signal_group(signal.SIGKILL)

    async def aclose(self) -> ExitStatus:
        """Close stdin, then escalate to SIGTERM and SIGKILL of the group; idempotent and bounded."""
        if self._status is not None:
            return self._status
        proc = self._process()
        try:
            self._status = await self._stop(proc)
        except asyncio.CancelledError:
            self._signal_group(signal.SIGKILL)  # cancelled mid-close: never leave the tree running
            raise
        finally:
            await self._finish_stderr()
        await self._finish_transport()
        return self._status

    async def _finish_transport(self) -> None:
        # asyncio closes a child's transport only after it has seen EOF on stdout and stderr. A loop that ends right
        # after this close (a one-shot command) would otherwise leave the transport to the garbage collector, which
        # then complains that the loop is closed. Bounded: an orphaned grandchild may still hold a pipe.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(STDERR_DRAIN):
                await self._finished.wait()

    async def _stop(self, proc: asyncio.subprocess.Process) -> ExitStatus:
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
        for sig, grace in ((None, self._close_grace), (signal.SIGTERM, self._term_grace), (signal.SIGKILL, KILL_WAIT)):
            if sig is not None:
                self._signal_group(sig)
            try:
                async with asyncio.timeout(grace):
                    status = await self.wait()
            except TimeoutError:
                continue
            # The leader is gone; take any grandchild still in its group with it.
            self._signal_group(signal.SIGKILL)
            return status
        raise WireError(f"{self.argv[0]!r} (pid {proc.pid}) did not exit after SIGKILL")

    def _signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is already gone
            os.killpg(self._process().pid, sig)

    async def _drain_stderr(self) -> None:
        stream = self._process().stderr
        assert stream is not None
        async for line in read_lines(stream, max_bytes=STDERR_LINE_BYTES):
            if isinstance(line, bytes):
                text = redact(line.decode(errors="replace"), self._secrets)
                self._stderr_tail.append(text)
                log.debug("%s stderr: %s", self.argv[0], text)
            else:
                self._stderr_tail.append(f"[stderr line over {line.limit} bytes cut]")

    async def _finish_stderr(self) -> None:
        task = self._stderr_task
        if task is None or task.done():
            return
        try:
            async with asyncio.timeout(STDERR_DRAIN):
                await asyncio.shield(task)
        except TimeoutError:
            task.cancel()

    def _process(self) -> asyncio.subprocess.Process:
        if self._proc is None:
            raise RuntimeError("the child is used outside its async with")
        return self._proc


class _ExitWatch(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's own protocol, plus an event set when the child exits (Python 3.11's `Process.wait()` also waits
    for every pipe to close, which never happens while an orphaned grandchild holds one), and one set when the
    transport is finished too (exited, stdout and stderr at EOF)."""

    def __init__(self, *, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited = asyncio.Event()
        # Set once the child exited and stdout and stderr reached EOF: asyncio has then closed the transport.
        self.finished = asyncio.Event()
        self._open_outputs = {1, 2}

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()
        self._check_finished()

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        super().pipe_connection_lost(fd, exc)
        self._open_outputs.discard(fd)
        self._check_finished()

    def _check_finished(self) -> None:
        if self.exited.is_set() and not self._open_outputs:
            self.finished.set()


def open_process(
    argv: Sequence[str],
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    close_grace: float = CLOSE_GRACE,
    term_grace: float = TERM_GRACE,
    stderr_lines: int = STDERR_TAIL_LINES,
    prefix: Sequence[str] = (),
) -> ChildProcess:
    """A child process to start with `async with`: `async with open_process(["agent", "--acp"]) as child:`.

    `prefix`: a command the child runs under (e.g. bubblewrap showing it another view of the machine), its
    arguments ending where the child's begin. The child's executable is still looked up and put first on its PATH
    as without one; the prefix's own first word is run as given.

    Raises (on entering):
        SpawnError: the executable cannot be started.
    """
    return ChildProcess(
        argv,
        cwd=cwd,
        env=env,
        close_grace=close_grace,
        term_grace=term_grace,
        stderr_lines=stderr_lines,
        prefix=prefix,
    )
