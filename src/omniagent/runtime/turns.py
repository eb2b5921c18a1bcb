"""The session loop: one task per session owns every turn rule.

It takes commands from the `Session` handle and events from the adapter, and decides: ids, start / steer /
queue, stale frames before the adapter's acknowledgement, agent-originated turns, request lifetimes and answer
validation, inferred completion, status, turn-end bookkeeping, cancel, close, and backpressure. Adapters only
translate (`driver.py`). Nothing here touches a wire.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from time import time_ns
from typing import Any

from msgspec.structs import replace

from omniagent.protocols.sidecar.agents import (
    Capability,
    ConfigValue,
    SessionInfo,
    SessionStatus,
)
from omniagent.protocols.sidecar.base import Diagnostic, DiagnosticLevel, SystemTime
from omniagent.protocols.sidecar.commands import (
    Answer,
    Delivery,
    PermissionAnswer,
    PermissionMode,
    Queued,
    RollbackScope,
    Started,
    Steered,
)
from omniagent.protocols.sidecar.events import (
    Cancelled,
    Completed,
    CompletionSource,
    DiagnosticEvent,
    Event,
    EventKind,
    Failed,
    FromAgent,
    FromPrompt,
    MessageEnded,
    PermissionAsk,
    PermissionChoice,
    PlanUpdated,
    ReasoningDelta,
    Request,
    RequestClosed,
    RequestOpened,
    SessionUpdated,
    StatusChanged,
    StopReason,
    TextDelta,
    ToolOutputDelta,
    ToolUpdated,
    TurnContext,
    TurnEnded,
    TurnOrigin,
    TurnStarted,
    UserMessage,
)
from omniagent.runtime import driver as d
from omniagent.runtime.errors import (
    AgentError,
    AuthRequired,
    InvalidConfiguration,
    InvalidRequest,
    ProcessExited,
    SessionBusy,
    SessionClosed,
    UnsupportedFeature,
)
from omniagent.runtime.requests import check_answer, check_option
from omniagent.runtime.stream import EventStream

log = logging.getLogger(__name__)

# Quiet windows that end a turn whose wire has no deterministic end, in seconds.
PROMPTED_QUIET_WINDOW = 120.0
AGENT_QUIET_WINDOW = 20.0
# Our choice: an adapter that never ends a cancelled turn gets it ended for it after this many seconds.
CANCEL_GRACE = 5.0
# Unread events at which the loop stops taking adapter events to let its consumer catch up (below the stream's cap
# of SESSION_EVENT_BUFFER), the level it waits for, and the seconds it waits before letting the consumer lag.
CONSUMER_PAUSE_AT = 768
CONSUMER_RESUME_AT = 256
CONSUMER_GRACE = 1.0

# Kinds by exact type (arms are never subclassed): a set lookup per event instead of isinstance against a tuple of
# struct classes, which is slow for each class that does not match.
# Engine-owned kinds: an adapter that sends one has it dropped with a warning.
_ENGINE_OWNED = frozenset({TurnStarted, TurnEnded, RequestClosed, SessionUpdated, StatusChanged})
# What belongs to a turn: dropped before the adapter acknowledges a new turn (stale frames of the old one).
_TURN_CONTENT = frozenset({TextDelta, ReasoningDelta, UserMessage, MessageEnded, ToolUpdated, ToolOutputDelta,
                           PlanUpdated, RequestOpened})  # fmt: skip
# Content that opens an agent-originated turn while idle (a ToolUpdated only while active).
_OPENS_TURN = frozenset({TextDelta, ReasoningDelta, UserMessage, RequestOpened})
# What a session's history cannot hold: the loop's own kinds, and requests (nobody could answer one that is past).
_NOT_HISTORY = _ENGINE_OWNED | {RequestOpened}
_EMPTY: Mapping[str, Any] = {}
# Prompts whose message id the loop remembers (a caller asks right after its prompt).
_TAKEN_KEPT = 256


class Phase(Enum):
    IDLE = "idle"  # no turn runs; queued prompts are promoted from here
    RUNNING = "running"  # a turn runs (entered by a prompt, compact, or content from the agent)
    CLOSING = "closing"  # close was asked (or the consumer lagged); waiting for the adapter to finish


@dataclass(slots=True)
class Timing:
    """The loop's clocks; tests shorten them (they are not on any wire)."""

    prompted_quiet: float = PROMPTED_QUIET_WINDOW
    agent_quiet: float = AGENT_QUIET_WINDOW
    cancel_grace: float = CANCEL_GRACE
    close_grace: float = d.SESSION_CLOSE_GRACE


@dataclass(slots=True)
class Turn:
    id: str
    prompted: bool
    awaiting_ack: bool
    prompt_id: str | None = None
    open_requests: dict[str, Request] = field(default_factory=dict)
    running_tools: set[str] = field(default_factory=set)
    open_messages: dict[str, None] = field(default_factory=dict)  # insertion-ordered set
    cancel_deadline: float | None = None
    context: TurnContext = field(init=False)  # the events' `turn_info` outside tools (frozen, so shared)

    def __post_init__(self) -> None:
        self.context = TurnContext(self.id)


@dataclass(frozen=True, slots=True)
class _Queued:
    prompt_id: str
    input: d.PromptInput


# --- commands from the Session handle --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PromptCommand:
    input: d.PromptInput


@dataclass(frozen=True, slots=True)
class DequeueCommand:
    prompt_id: str


@dataclass(frozen=True, slots=True)
class AnswerCommand:
    request_id: str
    answer: Answer


@dataclass(frozen=True, slots=True)
class ConfigureCommand:
    option: str
    value: ConfigValue


@dataclass(frozen=True, slots=True)
class RollbackCommand:
    turns: int
    scope: RollbackScope


@dataclass(frozen=True, slots=True)
class CompactCommand:
    pass


@dataclass(frozen=True, slots=True)
class CancelCommand:
    clear_queue: bool


@dataclass(frozen=True, slots=True)
class TakenCommand:
    prompt_id: str


@dataclass(frozen=True, slots=True)
class CloseCommand:
    forget: bool = False


LoopCommand = (
    PromptCommand
    | DequeueCommand
    | AnswerCommand
    | ConfigureCommand
    | RollbackCommand
    | CompactCommand
    | CancelCommand
    | CloseCommand
    | TakenCommand
)


class SessionLoop:
    """Runs one session: `run` connects through the adapter and loops until the session ends."""

    def __init__(
        self,
        *,
        info: SessionInfo,
        permission_mode: PermissionMode,
        stream: EventStream,
        timing: Timing,
    ) -> None:
        self.info = info
        self.stream = stream
        self._permission_mode = permission_mode
        self._timing = timing
        self._wake = asyncio.Event()
        self._consumer_slow = False  # it did not catch up within CONSUMER_GRACE: no more pauses until it does
        self._commands: deque[tuple[LoopCommand, asyncio.Future[Any]]] = deque()
        self._events = d.EventSink(readable=self._wake)
        self._driver: d.Driver | None = None
        self.driver_info: d.DriverInfo | None = None
        self._phase = Phase.IDLE
        self._turn: Turn | None = None
        self._queue: deque[_Queued] = deque()
        self._steer: tuple[_Queued, asyncio.Future[Any]] | None = None
        self._close_waiters: list[asyncio.Future[Any]] = []
        self._taken: dict[str, str | None] = {}  # prompt id → the agent's id of its message, once it took it
        self._taken_waiters: dict[str, list[asyncio.Future[Any]]] = {}
        self._close_deadline: float | None = None
        self._quiet_deadline: float | None = None
        self._late_end_warned = False
        self._history_told = False
        self._error: AgentError | None = None
        self._sequence = 0
        self._turns = 0
        self._prompts = 0
        self._status = SessionStatus.IDLE
        self._done = asyncio.Event()
        self.finished = False

    async def wait_finished(self) -> None:
        """Wait until the session has ended (closed, lagged, died or lost its login)."""
        await self._done.wait()

    # --- the handle's side ---------------------------------------------------------------------------------

    def submit(self, command: LoopCommand) -> asyncio.Future[Any]:
        """Queue a command; the future resolves with its reply or fails with an `AgentError`."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self.finished:
            future.set_exception(SessionClosed())
        else:
            self._commands.append((command, future))
            self._wake.set()
        return future

    def event_sink(self, capacity: int) -> d.EventSink:
        """The adapter's channel into this loop (made before `connect`, with the adapter's buffer size)."""
        self._events = d.EventSink(capacity, readable=self._wake)
        return self._events

    # --- the loop ------------------------------------------------------------------------------------------

    async def run(self, driver: d.Driver) -> None:
        """Loop until the adapter's channel ends (after close, death or auth loss) or the close grace runs out."""
        self._driver = driver
        self.driver_info = driver.info
        try:
            # What the adapter sent while connecting (a resumed session's `History` first) is the session's start:
            # told now, in the step that hands the session to its opener, so it is in the stream when `open`
            # returns and precedes every command.
            while (event := self._events.take()) is not None:
                self._handle_event(event)
                self._sync_status()
            await self._loop()
        finally:
            self._finish()

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if self._commands:
                command, future = self._commands.popleft()
                if not future.cancelled():
                    self._handle_command(command, future)
            elif self.stream.unread >= CONSUMER_PAUSE_AT and not self._consumer_slow and self._events.pending:
                # Bounded: a consumer that reads nothing in the grace is let fall behind (and lag) as before.
                self._consumer_slow = not await self.stream.wait_read_below(CONSUMER_RESUME_AT, CONSUMER_GRACE)
                continue
            elif (event := self._events.take()) is not None:
                if self._consumer_slow and self.stream.unread < CONSUMER_RESUME_AT:
                    self._consumer_slow = False
                self._handle_event(event)
            elif self._events.ended:
                self._on_channel_end()
                return
            else:
                if self._run_deadlines(loop.time()):
                    continue
                if self._close_deadline is not None and loop.time() >= self._close_deadline:
                    log.warning("session %s: adapter did not close within the grace period", self.info.id)
                    return
                self._wake.clear()
                deadline = self._next_deadline()
                try:
                    if deadline is None:
                        await self._wake.wait()
                    else:
                        async with asyncio.timeout_at(deadline):
                            await self._wake.wait()
                except TimeoutError:
                    pass
                continue
            self._promote()
            self._sync_status()

    def _next_deadline(self) -> float | None:
        candidates = [self._close_deadline, self._quiet_deadline]
        if self._turn is not None:
            candidates.append(self._turn.cancel_deadline)
        present = [c for c in candidates if c is not None]
        return min(present) if present else None

    def _run_deadlines(self, now: float) -> bool:
        """Fire due deadlines; True if one fired (the loop then runs another iteration)."""
        turn = self._turn
        if turn is None or self._phase is not Phase.RUNNING:
            return False
        if turn.cancel_deadline is not None and now >= turn.cancel_deadline:
            self._diagnostic(DiagnosticLevel.WARNING, "the agent did not end the cancelled turn; ended it")
            self._end_turn(Cancelled())
        elif self._quiet_deadline is not None and now >= self._quiet_deadline:
            self._quiet_deadline = None
            if turn.open_requests or turn.running_tools:
                return False  # never inferred while the agent waits on the caller or a tool runs
            self._end_turn(Completed(source=CompletionSource.INFERRED))
        else:
            return False
        self._promote()
        self._sync_status()
        return True

    def abandon(self) -> None:
        """End a session whose adapter never connected (or crashed): nothing more will come."""
        self.finished = True
        self.stream.end(None)
        self._done.set()

    def _finish(self) -> None:
        if self._turn is not None and self._phase is Phase.RUNNING:
            self._end_turn(Cancelled())
        self._phase = Phase.CLOSING
        self._fail_steer(SessionClosed())
        self._sync_status()
        self.finished = True
        while self._commands:
            _, future = self._commands.popleft()
            if not future.done():
                future.set_exception(SessionClosed())
        for waiter in self._close_waiters:
            if not waiter.done():
                waiter.set_result(None)
        for waiters in self._taken_waiters.values():
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)
        self._taken_waiters.clear()
        self.stream.end(self._error)
        self._done.set()

    # --- commands ------------------------------------------------------------------------------------------

    def _handle_command(self, command: LoopCommand, future: asyncio.Future[Any]) -> None:
        try:
            if isinstance(command, TakenCommand):
                self._taken_waiters.setdefault(command.prompt_id, []).append(future)
                self._settle_taken(command.prompt_id)
                return
            if isinstance(command, CloseCommand):
                self._close_waiters.append(future)
                self._begin_close(command.forget)
                return
            if isinstance(command, PromptCommand):
                reply = self._prompt(command.input, future)
                if reply is None:
                    return  # a steer holds the reply until the adapter answers
            else:
                reply = self._run_command(command)
        except AgentError as error:
            future.set_exception(error)
            return
        self._promote()
        self._sync_status()
        future.set_result(reply)

    def _run_command(self, command: LoopCommand) -> Any:
        if isinstance(command, DequeueCommand):
            return self._dequeue(command.prompt_id)
        if isinstance(command, AnswerCommand):
            return self._answer(command.request_id, command.answer)
        if isinstance(command, ConfigureCommand):
            return self._configure(command.option, command.value)
        if isinstance(command, RollbackCommand):
            return self._rollback(command)
        if isinstance(command, CompactCommand):
            return self._compact()
        if isinstance(command, CancelCommand):
            return self._cancel(command.clear_queue)
        raise AssertionError(f"unhandled command {command!r}")

    def _prompt(self, prompt: d.PromptInput, future: asyncio.Future[Any]) -> Delivery | None:
        self._prompts += 1  # consumed before dispatch, even when refused
        queued = _Queued(f"p{self._prompts}", prompt)
        if self._phase is Phase.CLOSING:
            raise SessionClosed()
        if self._phase is Phase.IDLE:
            turn = self._start_turn(FromPrompt(prompt_id=queued.prompt_id), queued.input)
            return Delivery(prompt_id=queued.prompt_id, kind=Started(turn_id=turn.id))
        if self._has(Capability.STEER) and self._steer is None:
            self._steer = (queued, future)
            self._send(d.Steer(queued.input))
            return None
        self._queue.append(queued)
        return Delivery(prompt_id=queued.prompt_id, kind=Queued(position=len(self._queue) - 1))

    def _took(self, turn: Turn, message_id: str | None) -> None:
        """The agent took (or will never take) the prompt that started `turn`: its message id is known."""
        if turn.prompt_id is None:
            return
        self._taken[turn.prompt_id] = message_id
        while len(self._taken) > _TAKEN_KEPT:
            del self._taken[next(iter(self._taken))]
        self._settle_taken(turn.prompt_id)

    def _settle_taken(self, prompt_id: str) -> None:
        """Answer who waits for `prompt_id`'s message id once it is known, or known never to come: a prompt neither
        starting the running turn nor queued (dequeued, not this session's, or long forgotten) names none."""
        if prompt_id not in self._taken and (
            (self._turn is not None and self._turn.prompt_id == prompt_id)
            or any(item.prompt_id == prompt_id for item in self._queue)
        ):
            return  # the agent has not taken it yet
        message_id = self._taken.get(prompt_id)
        for waiter in self._taken_waiters.pop(prompt_id, []):
            if not waiter.done():
                waiter.set_result(message_id)

    def _dequeue(self, prompt_id: str) -> None:
        for item in self._queue:
            if item.prompt_id == prompt_id:
                self._queue.remove(item)
                self._settle_taken(prompt_id)  # it never reaches the agent
                return None
        raise InvalidRequest(f"prompt {prompt_id} is not queued")

    def _answer(self, request_id: str, answer: Answer) -> None:
        turn = self._turn
        request = turn.open_requests.get(request_id) if turn is not None else None
        if turn is None or request is None:
            raise InvalidRequest(f"request {request_id} is not open")
        problem = check_answer(request, answer)
        if problem is not None:
            raise InvalidRequest(problem)  # the request stays open
        del turn.open_requests[request_id]
        self._send(d.AnswerRequest(request_id, answer))
        self._emit(RequestClosed(request_id=request_id), turn.context)
        self._arm_quiet()
        return None

    def _configure(self, option: str, value: ConfigValue) -> None:
        problem = check_option(self.info.details, option, value, live=True)
        if problem is not None:
            raise InvalidConfiguration(problem)
        self._send(d.Configure(option, value))
        return None

    def _rollback(self, command: RollbackCommand) -> None:
        if not self._has(Capability.ROLLBACK):
            raise UnsupportedFeature("rollback")
        if command.scope is RollbackScope.CONVERSATION_AND_FILES and not self._has(Capability.ROLLBACK_FILES):
            raise UnsupportedFeature("file rollback")
        if self._phase is not Phase.IDLE:
            raise SessionBusy()
        self._send(d.Rollback(command.turns, command.scope))
        return None

    def _compact(self) -> None:
        if not self._has(Capability.COMPACT):
            raise UnsupportedFeature("compaction")
        if self._phase is not Phase.IDLE:
            raise SessionBusy()
        self._start_turn(FromAgent(), None)
        self._send(d.Compact())
        return None

    def _cancel(self, clear_queue: bool) -> None:
        if clear_queue:
            self._queue.clear()
        turn = self._turn
        if self._phase is not Phase.RUNNING or turn is None:
            return None
        self._close_requests(turn)
        self._send(d.Cancel())
        turn.cancel_deadline = asyncio.get_running_loop().time() + self._timing.cancel_grace
        self._arm_quiet()
        return None

    def _begin_close(self, forget: bool = False) -> None:
        if self._phase is Phase.CLOSING:
            return  # a second close joins the waiters
        if self._phase is Phase.RUNNING:
            self._end_turn(Cancelled())
        self._fail_steer(SessionClosed())
        self._phase = Phase.CLOSING
        self._quiet_deadline = None
        self._send(d.Close(forget))
        self._close_deadline = asyncio.get_running_loop().time() + self._timing.close_grace
        self._sync_status()

    # --- adapter events ------------------------------------------------------------------------------------

    def _handle_event(self, event: d.DriverEvent) -> None:
        if isinstance(event, d.AdapterEvent):
            self._on_adapter_event(event)
        elif isinstance(event, d.History):
            self._on_history(event.events)
        elif isinstance(event, d.TurnAck):
            if self._turn is not None:
                self._turn.awaiting_ack = False
                self._took(self._turn, event.message_id)
        elif isinstance(event, d.TurnStopped):
            self._on_turn_stopped(event.stop)
        elif isinstance(event, d.SteerResult):
            self._on_steer_result(event.accepted)
        elif isinstance(event, d.InfoChanged):
            self._apply_info(event.info)
        elif isinstance(event, d.AuthLost):
            self._on_fatal(AuthRequired(event.login, rejected=event.rejected), "agent needs login")
        elif isinstance(event, d.Exited):
            exited = ProcessExited(event.status, event.stderr)
            self._on_fatal(exited, exited.during_turn())

    def _on_adapter_event(self, event: d.AdapterEvent) -> None:
        kind = event.kind
        cls = type(kind)
        if cls in _ENGINE_OWNED:
            self._diagnostic(DiagnosticLevel.WARNING, f"adapter sent engine-owned event {kind.TAG}; dropped")
            return
        if self._phase is Phase.CLOSING:
            if cls not in _TURN_CONTENT:
                self._emit(kind, None, event.extensions)
            return
        opens = _opens_turn(kind)
        if self._phase is Phase.IDLE:
            if not opens:
                self._emit(kind, None, event.extensions)
                return
            self._start_turn(FromAgent(), None)
        turn = self._turn
        assert turn is not None
        if turn.awaiting_ack and cls in _TURN_CONTENT:
            return  # a stale frame of the previous turn
        if isinstance(kind, TextDelta | ReasoningDelta):  # first: by far the most frequent
            turn.open_messages[kind.message_id] = None
        elif isinstance(kind, RequestOpened):
            if self._auto_approves(kind.request):
                self._send(
                    d.AnswerRequest(kind.request.request.id, PermissionAnswer(choice=PermissionChoice.ALLOW_ONCE))
                )
                return
            turn.open_requests[kind.request.request.id] = kind.request
        elif isinstance(kind, ToolUpdated):
            if kind.tool.status.active:
                turn.running_tools.add(kind.tool.id)
            else:
                turn.running_tools.discard(kind.tool.id)
        elif isinstance(kind, MessageEnded):
            turn.open_messages.pop(kind.message_id, None)
        parent = event.parent_tool_id
        self._emit(kind, turn.context if parent is None else TurnContext(turn.id, parent), event.extensions)
        if opens or cls is ToolUpdated:
            self._arm_quiet()

    def _on_history(self, events: list[d.AdapterEvent]) -> None:
        """The earlier conversation, told once before the first turn: each event outside any turn, opening none."""
        if self._turns or self._history_told or self._phase is not Phase.IDLE:
            self._diagnostic(DiagnosticLevel.WARNING, "adapter sent the session's history after it began; dropped")
            return
        self._history_told = True
        # Told at once, so it is not held against the consumer's lag budget (its memory is the History's already).
        self.stream.widen(len(events))
        for event in events:
            kind = event.kind
            if type(kind) in _NOT_HISTORY:
                self._diagnostic(DiagnosticLevel.WARNING, f"adapter sent {kind.TAG} in the session's history; dropped")
                continue
            self._emit(kind, None, event.extensions)

    def _on_turn_stopped(self, stop: StopReason) -> None:
        if self._phase is Phase.RUNNING and self._turn is not None:
            if not self._turn.awaiting_ack:
                self._end_turn(stop)
            return
        if self._phase is Phase.IDLE and not self._late_end_warned:
            self._late_end_warned = True
            self._diagnostic(
                DiagnosticLevel.WARNING, "late turn end from the agent after the turn already ended; ignored"
            )

    def _on_steer_result(self, accepted: bool) -> None:
        if self._steer is None:
            return
        queued, future = self._steer
        self._steer = None
        if accepted and self._phase is Phase.RUNNING and self._turn is not None:
            future.set_result(Delivery(prompt_id=queued.prompt_id, kind=Steered(turn_id=self._turn.id)))
        else:
            self._queue.appendleft(queued)
            future.set_result(Delivery(prompt_id=queued.prompt_id, kind=Queued(position=0)))

    def _on_fatal(self, error: AgentError, turn_message: str) -> None:
        if self._phase is Phase.RUNNING:
            self._end_turn(Failed(message=turn_message))
        if self._phase is not Phase.CLOSING:
            self._error = error
            self._begin_close()

    def _on_channel_end(self) -> None:
        if self._phase is not Phase.CLOSING and self._error is None:
            # The adapter ended without saying why: treat it as an exit we know nothing about.
            exited = ProcessExited("unknown", "")
            self._on_fatal(exited, exited.during_turn())

    def _apply_info(self, info: d.DriverInfo) -> None:
        self.driver_info = info
        updated = replace(
            self.info,
            details=info.details,
            configuration=info.configuration,
            resume_token=info.resume_token,
            title=info.title,
        )
        if updated != self.info:
            self.info = updated
            self._emit(SessionUpdated(info=updated), None)

    # --- turns ---------------------------------------------------------------------------------------------

    def _start_turn(self, origin: TurnOrigin, prompt: d.PromptInput | None) -> Turn:
        self._turns += 1
        prompt_id = origin.prompt_id if isinstance(origin, FromPrompt) else None
        turn = Turn(
            id=f"t{self._turns}", prompted=prompt is not None, awaiting_ack=prompt is not None, prompt_id=prompt_id
        )
        self._turn = turn
        self._phase = Phase.RUNNING
        self._late_end_warned = False
        self._emit(TurnStarted(origin=origin), turn.context)
        if prompt is not None:
            self._send(d.StartTurn(prompt, origin.prompt_id if isinstance(origin, FromPrompt) else None))
        self._arm_quiet()
        return turn

    def _end_turn(self, stop: StopReason) -> None:
        """Unended messages, then open requests, then TurnEnded; then Idle."""
        turn = self._turn
        assert turn is not None
        for message_id in turn.open_messages:
            self._emit(MessageEnded(message_id=message_id), turn.context)
        self._close_requests(turn)
        self._emit(TurnEnded(stop=stop, background=sorted(turn.running_tools)), turn.context)
        if turn.awaiting_ack:
            self._took(turn, None)  # ended before the agent took it
        self._turn = None
        self._phase = Phase.IDLE
        self._quiet_deadline = None
        if self._steer is not None:
            self._on_steer_result(accepted=False)

    def _close_requests(self, turn: Turn) -> None:
        for request_id in turn.open_requests:
            self._emit(RequestClosed(request_id=request_id), turn.context)
        turn.open_requests.clear()

    def _promote(self) -> None:
        """Start the next queued prompt, only when idle and no adapter frames are pending (late frames first)."""
        if self._phase is Phase.IDLE and self._queue and not self._events.pending:
            queued = self._queue.popleft()
            self._start_turn(FromPrompt(prompt_id=queued.prompt_id), queued.input)

    def _arm_quiet(self) -> None:
        turn, info = self._turn, self.driver_info
        if turn is None or info is None:
            self._quiet_deadline = None
            return
        deterministic = info.deterministic_turn_end if turn.prompted else info.deterministic_agent_turn_end
        if deterministic:
            self._quiet_deadline = None
            return
        window = self._timing.prompted_quiet if turn.prompted else self._timing.agent_quiet
        self._quiet_deadline = asyncio.get_running_loop().time() + window

    def _fail_steer(self, error: AgentError) -> None:
        if self._steer is not None:
            _, future = self._steer
            self._steer = None
            if not future.done():
                future.set_exception(error)

    # --- status and output ---------------------------------------------------------------------------------

    def _sync_status(self) -> None:
        """Emitted only on change, and never a flash of Idle between chained turns."""
        if self._phase is Phase.RUNNING:
            assert self._turn is not None
            status = SessionStatus.NEEDS_INPUT if self._turn.open_requests else SessionStatus.WORKING
        elif self._phase is Phase.IDLE and self._queue:
            status = SessionStatus.WORKING
        else:
            status = SessionStatus.IDLE
        if status is not self._status:
            self._status = status
            self.info = replace(self.info, status=status)
            self._emit(StatusChanged(status=status), None)

    def _diagnostic(self, level: DiagnosticLevel, message: str) -> None:
        self._emit(DiagnosticEvent(diagnostic=Diagnostic(level=level, message=message)), None)

    def _emit(self, kind: EventKind, turn: TurnContext | None, extensions: Mapping[str, Any] = _EMPTY) -> None:
        if self.stream.lagged or self.stream.ended:
            return
        self._sequence += 1
        # Built once, positionally (half the cost of keywords); the forwarder encodes it as it is.
        secs, nanos = divmod(time_ns(), 1_000_000_000)
        event = Event(
            self._sequence,
            SystemTime(secs, nanos),
            self.info.id,
            turn,
            kind,
            dict(sorted(extensions.items())) if extensions else {},
        )
        if not self.stream.offer(event):
            # The consumer is gone (G6): stop delivering and close the session, without an error.
            log.warning("session %s: consumer fell %d events behind; closing", self.info.id, self.stream.unread)
            if self._phase is not Phase.CLOSING:
                self._begin_close()

    def _send(self, command: d.DriverCommand) -> None:
        assert self._driver is not None
        self._driver.send(command)

    def _has(self, capability: Capability) -> bool:
        return capability in self.info.details.capabilities.features

    def _auto_approves(self, request: Request) -> bool:
        return self._permission_mode is PermissionMode.AUTO_APPROVE and isinstance(request, PermissionAsk)


def _opens_turn(kind: EventKind) -> bool:
    """Content while idle opens an agent-originated turn."""
    if type(kind) in _OPENS_TURN:
        return True
    return isinstance(kind, ToolUpdated) and kind.tool.status.active
