"""The session loop's history rule: an adapter's `History` (a resumed session's earlier conversation) is told before
anything else, each event outside any turn and opening none, with sequences from 1; one after the first turn began
is dropped with a warning. A loop driven directly by a scripted driver: the rule is the loop's, whatever the agent."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from omniagent.protocols.sidecar.agents import (
    AgentDetails,
    AgentInstallation,
    AuthUnknown,
    Capabilities,
    InstallationSource,
    SessionConfiguration,
    SessionInfo,
)
from omniagent.protocols.sidecar.base import DiagnosticLevel
from omniagent.protocols.sidecar.commands import PermissionMode, Started
from omniagent.protocols.sidecar.events import (
    Completed,
    DiagnosticEvent,
    Event,
    Execute,
    MessageEnded,
    PermissionAsk,
    PermissionChoice,
    PermissionRequest,
    RequestOpened,
    StatusChanged,
    TextDelta,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
    TurnEnded,
    TurnStarted,
    UserMessage,
)
from omniagent.runtime import driver as d
from omniagent.runtime.stream import EventStream
from omniagent.runtime.turns import CloseCommand, PromptCommand, SessionLoop, Timing
from tests.event_stream import tags
from tests.sidecar_schema import validate

WAIT = 5.0  # seconds: the bound on every wait; nothing sleeps

_DETAILS = AgentDetails(auth=AuthUnknown(), capabilities=Capabilities())
_TOOL = ToolUpdate(id="t2.0", kind=Execute(), title="ls", status=ToolStatus.COMPLETED, output="a.txt")


def _history() -> list[d.AdapterEvent]:
    return [
        d.AdapterEvent(UserMessage(message_id="m1", text="list the files")),
        d.AdapterEvent(TextDelta(message_id="m2", text="Listing.")),
        d.AdapterEvent(ToolUpdated(tool=_TOOL)),
        d.AdapterEvent(MessageEnded(message_id="m2"), extensions={"omniagent/fork_point": "m2"}),
    ]


class _Driver:
    """Records the loop's commands; ends the adapter's channel on Close, as an adapter does."""

    def __init__(self, events: d.EventSink) -> None:
        self.info = d.DriverInfo(details=_DETAILS, configuration=SessionConfiguration())
        self.sent: list[d.DriverCommand] = []
        self._events = events

    def send(self, command: d.DriverCommand) -> None:
        self.sent.append(command)
        if isinstance(command, d.Close):
            self._events.close()


class _Reader:
    """Reads the loop's stream, every event schema-checked; each wait bounded by WAIT."""

    def __init__(self, stream: EventStream) -> None:
        self._events = aiter(stream)
        self.seen: list[Event] = []

    async def until(self, match: Callable[[Event], bool]) -> list[Event]:
        """The events up to and including the first `match` accepts."""
        got: list[Event] = []
        async with asyncio.timeout(WAIT):
            while True:
                event = await anext(self._events)
                validate("Event", event.dump())
                got.append(event)
                self.seen.append(event)
                if match(event):
                    return got


@asynccontextmanager
async def _session(*before: d.DriverEvent, capacity: int = 1024) -> AsyncIterator[tuple[SessionLoop, d.EventSink]]:
    """A session loop whose adapter sent `before` while connecting; closed (and its task awaited) on exit."""
    agent = AgentInstallation(id="scripted", name="Scripted", executable_path="-", source=InstallationSource.PINNED)
    info = SessionInfo(id="s1", agent=agent, details=_DETAILS, configuration=SessionConfiguration())
    loop = SessionLoop(
        info=info, permission_mode=PermissionMode.ASK, stream=EventStream(capacity), timing=Timing(close_grace=1.0)
    )
    events = loop.event_sink(d.ADAPTER_EVENT_BUFFER)
    for event in before:
        await events.send(event)
    task = asyncio.ensure_future(loop.run(_Driver(events)))
    try:
        async with asyncio.timeout(WAIT):
            yield loop, events
    finally:
        if not loop.finished:
            await loop.submit(CloseCommand())
        await asyncio.wait_for(task, WAIT)


def _is(kind: type) -> Callable[[Event], bool]:
    return lambda event: isinstance(event.kind, kind)


async def test_the_history_is_told_first_outside_any_turn_and_the_first_prompt_is_still_turn_t1() -> None:
    async with _session(d.History(_history())) as (loop, events):
        reader = _Reader(loop.stream)
        told = await reader.until(_is(MessageEnded))
        assert tags(told) == ["UserMessage", "TextDelta", "ToolUpdated", "MessageEnded"]
        assert [e.sequence for e in told] == [1, 2, 3, 4]
        assert all(e.turn_info is None for e in told)
        assert told[3].extensions == {"omniagent/fork_point": "m2"}
        # No turn was opened for it: the session is idle, and the first prompt starts t1.
        assert loop.info.status == "Idle"
        delivery = await loop.submit(PromptCommand(d.PromptInput("and now?")))
        assert delivery.kind == Started(turn_id="t1")
        await events.send(d.TurnAck())
        await events.send(d.AdapterEvent(TextDelta(message_id="m3", text="Now.")))
        await events.send(d.TurnStopped(Completed()))
        turn = await reader.until(_is(TurnEnded))
        assert tags(turn) == ["TurnStarted", "StatusChanged", "TextDelta", "MessageEnded", "TurnEnded"]
        assert [e.sequence for e in reader.seen] == list(range(1, len(reader.seen) + 1))


async def test_a_history_after_the_first_turn_began_is_dropped_with_a_warning() -> None:
    async with _session() as (loop, events):
        reader = _Reader(loop.stream)
        await loop.submit(PromptCommand(d.PromptInput("hello")))
        await events.send(d.TurnAck())
        await events.send(d.History(_history()))
        await events.send(d.AdapterEvent(TextDelta(message_id="m1", text="hi")))
        await events.send(d.TurnStopped(Completed()))
        turn = await reader.until(_is(TurnEnded))
        kinds = [e.kind for e in turn if not isinstance(e.kind, StatusChanged)]
        assert [type(k) for k in kinds] == [TurnStarted, DiagnosticEvent, TextDelta, MessageEnded, TurnEnded]
        warning = kinds[1]
        assert isinstance(warning, DiagnosticEvent) and warning.diagnostic.level is DiagnosticLevel.WARNING
        assert "history" in warning.diagnostic.message


async def test_a_history_never_holds_a_request_and_is_told_once() -> None:
    ask = PermissionRequest(id="r1", tool=_TOOL, options=[PermissionChoice.ALLOW_ONCE])
    history = [d.AdapterEvent(RequestOpened(request=PermissionAsk(request=ask))), *_history()]
    async with _session(d.History(history), d.History(_history())) as (loop, _):
        reader = _Reader(loop.stream)
        told = await reader.until(
            lambda e: isinstance(e.kind, DiagnosticEvent) and "began" in e.kind.diagnostic.message
        )
        assert tags(told) == ["Diagnostic", "UserMessage", "TextDelta", "ToolUpdated", "MessageEnded", "Diagnostic"]
        assert all(e.turn_info is None for e in told)
        assert loop.info.status == "Idle"  # the request was never opened: nobody is asked


async def test_a_history_longer_than_the_consumer_may_lag_is_told_whole() -> None:
    """Told at once, before any consumer could read: it does not count against the lag budget."""
    many = [d.AdapterEvent(UserMessage(message_id=f"m{n}", text=f"prompt {n}")) for n in range(1, 41)]
    async with _session(d.History(many), capacity=8) as (loop, _):
        reader = _Reader(loop.stream)
        told = await reader.until(lambda e: isinstance(e.kind, UserMessage) and e.kind.message_id == "m40")
        assert [e.sequence for e in told] == list(range(1, 41))
        assert not loop.stream.lagged and not loop.finished
