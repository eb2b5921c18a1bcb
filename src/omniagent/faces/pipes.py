"""When stdout's reader goes away (`omniagent run --json "…" | head -5`, an app that closes our stdout): every command
and face ends quietly with `EXIT_READER_GONE`, the status a shell shows for a process SIGPIPE ended, as other
command-line tools do. Python ignores SIGPIPE, so a closed pipe reaches us as BrokenPipeError (a blocking write) or
ConnectionResetError (an asyncio writer), often inside a TaskGroup's ExceptionGroup; this module recognises those,
and silences stdout so the interpreter's own flush at exit does not print "Exception ignored … BrokenPipeError".

Only the standard library at import: the faces read `EXIT_READER_GONE` after their first reply, the CLI's error
boundary on its way out; rich is imported only by `stdout_console`.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio
    import logging

    from rich.console import Console

EXIT_READER_GONE = 141  # 128 + SIGPIPE
_PIPE_ERRORS = (BrokenPipeError, ConnectionResetError)


def reader_gone(error: BaseException) -> bool:
    """Whether `error` is stdout's reader having gone away: a closed-pipe error (or one every exception of a group
    comes from), while stdout is indeed a pipe or socket whose other end closed. The second test keeps a closed
    pipe to some other process (an agent's stdin) what it is: an error to report."""
    return _from_a_closed_pipe(error) and stdout_closed()


def _from_a_closed_pipe(error: BaseException) -> bool:
    if isinstance(error, BaseExceptionGroup):
        return all(_from_a_closed_pipe(inner) for inner in error.exceptions)
    seen: set[int] = set()
    cause: BaseException | None = error
    # A writer that failed earlier refuses later lines with its own error (`PeerClosed`), caused by the pipe's.
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, _PIPE_ERRORS):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def stdout_closed() -> bool:
    """Whether stdout is a pipe or socket whose reader has gone away (poll reports an error or a hang-up on it)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        events = poller.poll(0)
    except (AttributeError, OSError, ValueError):  # no poll here, or no stdout at all
        return False
    return any(event & (select.POLLERR | select.POLLHUP) for _, event in events)


class BrokenStdout:
    """A stdio face's `on_error` for its stdout writer: says once on stderr that stdout broke, keeps why (`error`)
    and sets `event`, which stops the face at once (`unless_reader_gone`): nobody reads what it would answer."""

    def __init__(self, log: logging.Logger) -> None:
        import asyncio

        self.event = asyncio.Event()
        self.error: BaseException | None = None
        self._log = log

    def __call__(self, error: BaseException) -> None:
        if self.error is None:
            self._log.error("stdout is broken (%s); shutting down", type(error).__name__)
            self.error = error
        self.event.set()

    def exit_status(self) -> int:
        """0 when stdout never broke, `EXIT_READER_GONE` when its reader went away, else 1."""
        if self.error is None:
            return 0
        return EXIT_READER_GONE if reader_gone(self.error) else 1


def leave_quietly() -> int:
    """Point stdout at /dev/null (what is still buffered then goes nowhere, instead of failing again at exit) and
    return `EXIT_READER_GONE`."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass  # no stdout file descriptor to silence
    finally:
        os.close(devnull)
    return EXIT_READER_GONE


def stdout_console(**options: Any) -> Console:
    """A rich `Console` (on stdout unless `options` name another file) whose closed pipe raises BrokenPipeError like
    any other write, where rich's own answer is to exit 1 at once: so every command ends the same way."""
    from rich.console import Console

    class _StdoutConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True  # rich would otherwise try to write the rest again
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    return _StdoutConsole(**options)


async def unless_reader_gone(work: Awaitable[None], gone: asyncio.Event) -> None:
    """Await `work`, cancelled when `gone` is set first (a face's writer found stdout closed): nobody is left to
    read what it would answer. Its own errors propagate."""
    import asyncio

    task = asyncio.ensure_future(work)
    waiting = asyncio.ensure_future(gone.wait())
    try:
        await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiting.cancel()
        task.cancel()  # a no-op once it is done
    if not task.done():
        await asyncio.wait({task})  # let it finish being cancelled; never raises the task's own error
    if not task.cancelled():
        task.result()
