"""THE seam between the session loop (`turns.py`) and the adapters: two closed vocabularies and one protocol.

The session loop decides; adapters translate. An adapter turns one agent wire into `DriverEvent`s and carries
`DriverCommand`s back to the agent. It never decides turn rules: the loop owns ids, turn boundaries, request
lifetimes, status and queueing, and drops engine-owned event kinds an adapter tries to send.

Above: `turns.py` (one task per session). Below: one module per wire in `adapters/`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

import msgspec

from omniagent.protocols.sidecar.agents import (
    AgentDetails,
    AgentInstallation,
    ConfigValue,
    LoginMethod,
    SessionConfiguration,
)
from omniagent.protocols.sidecar.commands import Answer, RollbackScope
from omniagent.protocols.sidecar.events import EventKind, StopReason
from omniagent.runtime.options import OpenOptions

# An adapter's event buffer toward the loop; a full buffer makes the adapter wait (its wire then waits too).
ADAPTER_EVENT_BUFFER = 64
# How long an agent may take to launch and finish its handshake.
HANDSHAKE_TIMEOUT = 30.0
# How long a closing session waits for its adapter to finish before giving up on it.
SESSION_CLOSE_GRACE = 5.0


# --- what the loop asks of an adapter ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PromptInput:
    """What the caller sent: text and file paths (adapters reference every path in the text they send)."""

    text: str
    attachments: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StartTurn:
    """Start a turn with this input; the adapter answers `TurnAck` once its wire took it. `prompt_id` is the
    caller's id for the prompt (`p1`, …), for wires that echo an id back with the turn's end."""

    input: PromptInput
    prompt_id: str | None = None


@dataclass(frozen=True, slots=True)
class Steer:
    """Add this input to the running turn; the adapter must answer `SteerResult`."""

    input: PromptInput


@dataclass(frozen=True, slots=True)
class AnswerRequest:
    """Send a validated answer to an open request."""

    request_id: str
    answer: Answer


@dataclass(frozen=True, slots=True)
class Configure:
    """Set a live option; confirmation comes back as `InfoChanged`, refusal as a Warning diagnostic."""

    option: str
    value: ConfigValue


@dataclass(frozen=True, slots=True)
class Rollback:
    turns: int
    scope: RollbackScope


@dataclass(frozen=True, slots=True)
class Compact:
    """Compact the context; runs as an agent-originated turn the loop already opened."""


@dataclass(frozen=True, slots=True)
class Cancel:
    """Stop the running turn; the adapter answers pending wire requests as denied and ends the turn."""


@dataclass(frozen=True, slots=True)
class Close:
    """Shut the agent down; the adapter ends its event channel when done. `forget`: the agent's own record of the
    session goes too, where it keeps one (a deleted session: our engine removes it and its children)."""

    forget: bool = False


DriverCommand = StartTurn | Steer | AnswerRequest | Configure | Rollback | Compact | Cancel | Close


# --- what an adapter tells the loop -------------------------------------------------------------------------

# The extensions of every event that has none: one shared read-only mapping instead of a new dict per event.
_NO_EXTENSIONS: Mapping[str, Any] = MappingProxyType({})


class AdapterEvent(msgspec.Struct, frozen=True, gc=False):
    """A normalized event; the loop assigns sequence, time and turn. (A struct, not a dataclass like its
    neighbours: one is made per agent event, and a frozen dataclass costs ten times as much to build.)"""

    kind: EventKind
    parent_tool_id: str | None = None
    extensions: Mapping[str, Any] = _NO_EXTENSIONS


@dataclass(frozen=True, slots=True)
class History:
    """The session's earlier conversation, as the events its live turns showed (same ids), oldest first: what an
    adapter asked for `ConnectRequest.history` on a resumed or forked session sends, once, from `connect` before
    it yields its driver (so the loop takes it before any command). An adapter that cannot read the conversation
    sends none.

    The loop emits each event outside any turn (`turn_info` None; `parent_tool_id` is not kept), in order, without
    opening a turn; requests and engine-owned kinds are dropped. A History after the session's first turn began is
    dropped with a warning diagnostic."""

    events: list[AdapterEvent]


@dataclass(frozen=True, slots=True)
class TurnAck:
    """The agent took the last `StartTurn`; frames before this one belong to an older turn. `message_id`: the id the
    agent gave the prompt's message, where it names one (our engine: the id its history tells the message by)."""

    message_id: str | None = None


@dataclass(frozen=True, slots=True)
class TurnStopped:
    """The agent's wire ended its turn."""

    stop: StopReason


@dataclass(frozen=True, slots=True)
class SteerResult:
    accepted: bool


@dataclass(frozen=True, slots=True)
class InfoChanged:
    info: DriverInfo


@dataclass(frozen=True, slots=True)
class AuthLost:
    """The agent lost (or never had) a working login. `rejected` names the credential its provider turned down
    (a variable name, or a description such as "the stored key"), when the adapter knows it."""

    login: list[LoginMethod]
    rejected: str | None = None


@dataclass(frozen=True, slots=True)
class Exited:
    """The agent process ended; sent once, just before the channel closes."""

    status: str
    stderr: str


DriverEvent = AdapterEvent | History | TurnAck | TurnStopped | SteerResult | InfoChanged | AuthLost | Exited


@dataclass(frozen=True, slots=True)
class DriverInfo:
    """What an adapter knows about its session; replaced whole through `InfoChanged`."""

    details: AgentDetails
    configuration: SessionConfiguration
    resume_token: str | None = None
    title: str | None = None
    # Whether the wire ends prompted / agent-originated turns itself; otherwise a quiet window ends them.
    deterministic_turn_end: bool = True
    deterministic_agent_turn_end: bool = True
    # Whether the agent was launched with its tools disabled (what `generate` wants).
    tools_disabled: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectRequest(OpenOptions):
    """Everything an adapter needs to open one session: the open options, and where and with what."""

    installation: AgentInstallation
    directory: Path
    # `generate` asks for an agent without tools where the wire allows it.
    disable_tools: bool = False
    # Where the agent sees `directory` (a workspace view, `view.py`: e.g. /app); None: at its own path.
    workdir: str | None = None

    @property
    def cwd(self) -> str:
        """The session's directory as the agent is told it: the workdir under a workspace view."""
        return self.workdir if self.workdir is not None else str(self.directory)


class EventSink:
    """The bounded channel from an adapter to its session loop.

    `send` waits while `capacity` events are unread (backpressure onto the agent's wire); `close` ends the
    channel. The loop drains with `take_all` after `wait_ready`, so a flood costs one wakeup per batch.
    """

    def __init__(self, capacity: int = ADAPTER_EVENT_BUFFER, *, readable: asyncio.Event | None = None) -> None:
        self._capacity = capacity
        self._items: deque[DriverEvent] = deque()
        # The loop may share one wakeup event between this channel and its command inbox.
        self._readable = readable if readable is not None else asyncio.Event()
        self._writable = asyncio.Event()
        self._writable.set()
        self.closed = False

    async def send(self, event: DriverEvent) -> None:
        """Queue one event, waiting while the buffer is full. Events after `close` are dropped."""
        while len(self._items) >= self._capacity and not self.closed:
            self._writable.clear()
            await self._writable.wait()
        if self.closed:
            return
        self._items.append(event)
        self._readable.set()

    def close(self) -> None:
        """End the channel; the loop sees the end after the buffered events."""
        self.closed = True
        self._readable.set()
        self._writable.set()

    @property
    def pending(self) -> bool:
        return bool(self._items)

    def take(self) -> DriverEvent | None:
        """The next buffered event, or None."""
        if not self._items:
            return None
        item = self._items.popleft()
        self._writable.set()
        return item

    @property
    def ended(self) -> bool:
        """Closed and drained."""
        return self.closed and not self._items


class Driver(Protocol):
    """One open agent session, as an adapter exposes it to the loop."""

    @property
    def info(self) -> DriverInfo: ...

    def send(self, command: DriverCommand) -> None:
        """Hand a command to the adapter; never blocks."""
        ...


class Adapter(Protocol):
    """Speaks one agent wire. `connect` launches and handshakes, yields the driver, and cleans up on exit.

    Raises (from `connect`): `SpawnFailed`, `HandshakeTimeout`, `AuthRequired`, `ResumeFailed`,
    `InvalidConfiguration`, `UnsupportedFeature`, `ProtocolFailed`.
    """

    def connect(self, request: ConnectRequest, events: EventSink) -> AbstractAsyncContextManager[Driver]: ...
