"""The command loop the process adapters share: one queue of driver commands, one handler task per session.

A process adapter's driver (acp, pi, codex, claude) takes commands through `send`, handles them one at a time in
`run` until `Close` (or `stop`), runs its wire work as helper tasks in the session's task group, and on the way out
cancels those helpers and ends the event channel. What a command means and how the agent's exit is noticed stay
with each adapter (`_handle`, `_helpers`); this module only owns the loop around them.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Coroutine, Sequence
from typing import Any

from omniagent.protocols.sidecar.base import Diagnostic, DiagnosticLevel
from omniagent.protocols.sidecar.events import DiagnosticEvent
from omniagent.runtime import driver as d
from omniagent.runtime.errors import STDERR_CHARS
from omniagent.wire.redact import clip

# Last stderr lines carried by `Exited` and by handshake failures.
STDERR_TAIL = 6


def stderr_tail(lines: Sequence[str]) -> str:
    """The agent's last STDERR_TAIL non-blank stderr lines, each on a line of its own after a newline ("" if none),
    at most their last STDERR_CHARS characters (a line can be kilobytes long)."""
    kept = [line for line in lines if line.strip()][-STDERR_TAIL:]
    return "\n" + clip("\n".join(kept), STDERR_CHARS, keep_end=True) if kept else ""


class DriverLoop(ABC):
    """The base of a process adapter's driver: the command queue, the loop over it and the helper tasks.

    The adapter's `connect` sets `group` to the session's task group before it starts `run` there.
    """

    def __init__(self, events: d.EventSink) -> None:
        self._events = events
        self.group: asyncio.TaskGroup | None = None
        self._commands: asyncio.Queue[d.DriverCommand | None] = asyncio.Queue()
        self._tasks: set[asyncio.Task[None]] = set()
        # Set once the loop is ending: an exit seen from then on is ours, not news for the caller.
        self._closing = False

    def send(self, command: d.DriverCommand) -> None:
        """Queue a command for `run`; never blocks."""
        self._commands.put_nowait(command)

    def stop(self) -> None:
        """End `run` after the commands already queued."""
        self._commands.put_nowait(None)

    async def run(self) -> None:
        """Start the helpers, handle commands in order until `Close` or `stop`, then cancel every helper task and
        end the event channel."""
        for work in self._helpers():
            self._spawn(work)
        try:
            while (command := await self._commands.get()) is not None:
                if isinstance(command, d.Close):
                    break
                await self._handle(command)
        finally:
            self._end_helpers()
            self._events.close()

    def _helpers(self) -> list[Coroutine[Any, Any, None]]:
        """Work that runs beside the loop for the whole session (typically the exit watcher)."""
        return []

    def _end_helpers(self) -> None:
        """Mark the loop closing and cancel every helper task still running."""
        self._closing = True
        for task in list(self._tasks):
            task.cancel()

    @abstractmethod
    async def _handle(self, command: d.DriverCommand) -> None:
        """Carry one command (never `Close`) to the agent."""

    async def _report_exit(self, status: object, stderr: Sequence[str]) -> None:
        """The agent process ended by itself: send `Exited` with its last stderr lines and end the channel (nothing
        when the loop is closing: that exit is the one we asked for)."""
        if not self._closing:
            await self._events.send(d.Exited(str(status), stderr_tail(stderr).strip()))
            self._events.close()

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run `work` in the session's task group as a helper that `run` cancels on its way out."""
        assert self.group is not None
        task = self.group.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _warn(self, message: str) -> None:
        diagnostic = Diagnostic(level=DiagnosticLevel.WARNING, message=message)
        await self._events.send(d.AdapterEvent(DiagnosticEvent(diagnostic=diagnostic)))
