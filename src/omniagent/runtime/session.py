"""The public session handle: each method sends one command to the session loop and awaits its reply."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from msgspec.structs import replace

from omniagent.protocols.sidecar.agents import ConfigValue, SessionInfo, SessionStatus
from omniagent.protocols.sidecar.commands import Answer, Delivery, RollbackScope
from omniagent.runtime.driver import PromptInput
from omniagent.runtime.stream import EventStream
from omniagent.runtime.turns import (
    AnswerCommand,
    CancelCommand,
    CloseCommand,
    CompactCommand,
    ConfigureCommand,
    DequeueCommand,
    PromptCommand,
    RollbackCommand,
    SessionLoop,
    TakenCommand,
)


class Session:
    """One open agent session. Cheap to copy around; the loop behind it owns all state.

    Every method raises `SessionClosed` once the session has ended (except `info`, which keeps answering with
    the last snapshot). Read events with `async for event in session.events: …` (one consumer).
    """

    def __init__(self, loop: SessionLoop) -> None:
        self._loop = loop

    @property
    def id(self) -> str:
        return self._loop.info.id

    @property
    def events(self) -> EventStream:
        """The session's events in `sequence` order; ends after the session closes.

        Raises (while iterating): `ProcessExited` when the agent died, `AuthRequired` when it lost its login.
        """
        return self._loop.stream

    @property
    def tools_disabled(self) -> bool:
        """Whether the agent was launched without tools (what `generate` asks for where the wire allows it)."""
        info = self._loop.driver_info
        return info is not None and info.tools_disabled

    @property
    def closed(self) -> bool:
        return self._loop.finished

    async def wait_closed(self) -> None:
        """Wait until the session has ended, for whatever reason (close, agent death, a lagging consumer)."""
        await self._loop.wait_finished()

    def info(self) -> SessionInfo:
        """The latest snapshot (status included); still answers after close."""
        if self._loop.finished:
            return replace(self._loop.info, status=SessionStatus.IDLE)
        return self._loop.info

    async def prompt(self, text: str, attachments: Sequence[str] = ()) -> Delivery:
        """Start a turn, steer the running one, or queue. Raises: `SessionClosed`."""
        delivery: Delivery = await self._loop.submit(PromptCommand(PromptInput(text, tuple(attachments))))
        return delivery

    async def dequeue(self, prompt_id: str) -> None:
        """Remove a queued prompt. Raises: `InvalidRequest` if it is not queued."""
        await self._loop.submit(DequeueCommand(prompt_id))

    async def answer(self, request_id: str, answer: Answer) -> None:
        """Answer an open request. Raises: `InvalidRequest` (the request stays open)."""
        await self._loop.submit(AnswerCommand(request_id, answer))

    async def configure(self, option: str, value: ConfigValue) -> None:
        """Set a live option; confirmed later by `SessionUpdated`. Raises: `InvalidConfiguration`."""
        await self._loop.submit(ConfigureCommand(option, value))

    async def rollback(self, turns: int, scope: RollbackScope) -> None:
        """Raises: `UnsupportedFeature`, `SessionBusy`."""
        await self._loop.submit(RollbackCommand(turns, scope))

    async def compact(self) -> None:
        """Compact as an agent-originated turn. Raises: `UnsupportedFeature`, `SessionBusy`."""
        await self._loop.submit(CompactCommand())

    async def cancel(self, clear_queue: bool = False) -> None:
        """Cancel the running turn (idempotent); optionally drop every queued prompt."""
        await self._loop.submit(CancelCommand(clear_queue))

    async def taken(self, prompt_id: str) -> str | None:
        """The id the agent gave prompt `prompt_id`'s message, once it took the prompt (at once when it already did;
        a queued prompt waits for its turn): the id its history tells the message by. None when the agent names no
        id (most agents), or the prompt never reached it (dequeued, cancelled, the session ended)."""
        reply: str | None = await self._loop.submit(TakenCommand(prompt_id))
        return reply

    async def close(self, *, forget: bool = False) -> None:
        """End the session; returns once the agent finished (at most the close grace). `forget`: the agent's own
        record of the session goes too, where it keeps one (ACP's `session/delete`)."""
        await self._loop.submit(CloseCommand(forget))


class SessionControls(Protocol):
    """What every handle of a session offers its user: the runtime's `Session`, a hub's `Attachment`, a hub session
    reached over the network (`faces/cli/remote.py`). The faces that take any of them type it with this."""

    @property
    def id(self) -> str: ...
    def info(self) -> SessionInfo: ...
    async def prompt(self, text: str, attachments: Sequence[str] = ()) -> Delivery: ...
    async def dequeue(self, prompt_id: str) -> None: ...
    async def answer(self, request_id: str, answer: Answer) -> None: ...
    async def configure(self, option: str, value: ConfigValue) -> None: ...
    async def rollback(self, turns: int, scope: RollbackScope) -> None: ...
    async def compact(self) -> None: ...
    async def cancel(self, clear_queue: bool = False) -> None: ...
    async def close(self) -> None: ...
