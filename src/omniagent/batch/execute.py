"""One run: one task by one agent, on a `Runtime`, in a workspace of its own. Used by the local scheduler and by
each Ray worker alike, so a task behaves the same wherever it runs.

prepare the workspace → open the session → send the prompt → read events (answering requests by the task's policy,
counting tool calls, watching the time limit and the batch's stop) until the turn ends → close → diff → the task's
verifier, when it has one (verifier.py). The `oracle` agent runs the task's solution instead of a session
(oracle.py); a task whose environment was refused (harbor.py) fails at once with the reason, and nothing runs.

A trial whose failure was the infrastructure's (the workspace could not be made, the agent could not start, its
session died mid-turn) is tried again by `with_retries`, which both backends wrap their runs in; a wrong answer, a
timeout, a turn limit, a refusal or a verifier error is the trial's result and never run again. Not the Ray
backend's restart after a lost worker (its `attempt`): that happens inside one try.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from omniagent.batch import oracle, policy, verifier, workspace
from omniagent.batch.results import AgentInfo, ErrorKind, Span, Status, TaskResult, Timings, Usage, VerifierInfo
from omniagent.batch.tasks import Task
from omniagent.errors import OmniagentError
from omniagent.protocols.sidecar.base import dump
from omniagent.protocols.sidecar.commands import Started
from omniagent.protocols.sidecar.events import (
    Cancelled,
    Completed,
    ContextUsage,
    Event,
    Failed,
    Refused,
    RequestOpened,
    StopLimit,
    StopReason,
    TextDelta,
    ToolUpdated,
    TurnEnded,
)
from omniagent.runtime.errors import AgentError
from omniagent.runtime.runtime import Runtime
from omniagent.runtime.session import Session
from omniagent.runtime.turns import CANCEL_GRACE

# Seconds to wait for the turn to end once we cancelled it: the loop ends it itself after CANCEL_GRACE.
CANCEL_WAIT = CANCEL_GRACE + 2.0

EventSink = Callable[[dict[str, Any]], None]

# The failures that are the infrastructure's, not the agent's: the only ones `with_retries` tries again.
INFRASTRUCTURE = frozenset({ErrorKind.WORKSPACE, ErrorKind.AGENT_START, ErrorKind.AGENT_DIED})


@dataclass(slots=True)
class RunSpec:
    """What one run needs besides the Runtime; plain data, so it crosses to a Ray worker as is."""

    task: Task
    agent: str
    workspace: Path
    logs: Path  # OUT/tasks/T/A (`results.run_dir`): the run's files, the verifier's and the oracle's logs among them
    allow_unsandboxed: bool = False
    attempt: int = 1  # on Ray: the restart of this try after a lost worker
    where: str = "local"
    trial: int = 1  # which of the job's `-k` trials of (task, agent)
    retries: int = 0  # how many times an infrastructure failure of this trial is run again (`with_retries`)

    @property
    def key(self) -> tuple[str, str, int]:
        """The (task, agent, trial) it runs: its result's `key`."""
        return (self.task.id, self.agent, self.trial)


@dataclass(slots=True)
class _Turn:
    """What the event reader learned so far."""

    turn_id: str | None = None
    stop: StopReason | None = None
    reason: Status | None = None  # why we cancelled the turn, when we did
    error: str | None = None
    kind: ErrorKind | None = None  # what kind of error `error` is, set with it
    messages: dict[str, list[str]] = field(default_factory=dict)
    last_message: str | None = None
    tools: set[str] = field(default_factory=set)
    usage: Usage = field(default_factory=Usage)
    events: int = 0


@dataclass(slots=True)
class _Clock:
    """The run's times: its wall-clock start, and each phase from monotonic readings counted from it, so the phases
    keep their order and stay within the run whatever the wall clock does meanwhile."""

    started: float = field(default_factory=time.time)
    origin: float = field(default_factory=time.monotonic)
    phases: dict[str, Span] = field(default_factory=dict)

    def at(self, reading: float) -> float:
        return self.started + (reading - self.origin)

    def phase(self, name: str, begin: float, end: float | None = None) -> None:
        """Record the phase `name` (`Timings`' field) from `begin` to `end` (now when None), monotonic readings."""
        finish = time.monotonic() if end is None else end
        self.phases[name] = Span(started_at=self.at(begin), finished_at=self.at(finish))

    def timings(self, opened_at: float, turn_at: float) -> Timings:
        ended = time.monotonic()
        return Timings(
            started_at=self.started,
            open_seconds=round(opened_at - self.origin, 3),
            turn_seconds=round(max(turn_at - opened_at, 0.0), 3),
            total_seconds=round(ended - self.origin, 3),
            finished_at=self.at(ended),
            environment_setup=self.phases.get("environment_setup"),
            agent_setup=self.phases.get("agent_setup"),
            agent_execution=self.phases.get("agent_execution"),
            verifier=self.phases.get("verifier"),
        )


async def run_one(runtime: Runtime, spec: RunSpec, on_event: EventSink, stop: asyncio.Event) -> TaskResult:
    """Run `spec` to its end; never raises for the agent's or the workspace's failures (they are the result).
    `stop` set (Ctrl-C) cancels the turn: the result is then `interrupted`."""
    clock = _Clock()
    task = spec.task
    turn = _Turn()
    opened_at = turn_at = clock.origin
    text, changed, diff = "", [], ""
    about: AgentInfo | None = None
    notes: list[str] = []
    if task.environment.skipped:
        skipped = "; ".join(task.environment.skipped)
        notes.append(f"ran on this machine's system, not the task's image (--host-image); not run: {skipped}")
    prepared = await _prepare(spec, turn)
    clock.phase("environment_setup", clock.origin)
    if prepared and spec.agent == oracle.ORACLE:
        opened_at, turn_at = await _oracle_turn(spec, turn)
        clock.phase("agent_execution", opened_at, turn_at)
    elif prepared:
        opening = time.monotonic()
        opened_at, turn_at, about, text = await _agent_turn(runtime, spec, turn, on_event, stop)
        clock.phase("agent_setup", opening, opened_at)
        if about is not None:  # the session opened
            clock.phase("agent_execution", opened_at, turn_at)
    with suppress(OmniagentError, OSError):
        if spec.workspace.exists():
            diff = await workspace.diff(spec.workspace)
            changed = _changed_files(diff)
    rewards: dict[str, float] | None = None
    checked: VerifierInfo | None = None
    if task.verifier is not None and prepared and turn.reason is not Status.INTERRUPTED:
        rewards, checked = await _verify(spec, clock)
    return TaskResult(
        task=task.id,
        agent=spec.agent,
        status=_status(turn),
        stop=dump(turn.stop) if turn.stop is not None else None,
        error=turn.error,
        text=text,
        usage=turn.usage,
        timings=clock.timings(opened_at, turn_at),
        tool_calls=len(turn.tools),
        events=turn.events,
        changed_files=changed,
        attempt=spec.attempt,
        trial=spec.trial,
        error_kind=turn.kind,
        where=spec.where,
        agent_info=about,
        diff=diff,
        rewards=rewards,
        verifier=checked,
        notes=notes,
    )


def retryable(result: TaskResult) -> bool:
    """Whether `result` failed for the infrastructure's sake (see the module docstring)."""
    return result.status is Status.FAILED and result.error_kind in INFRASTRUCTURE


async def with_retries(once: Callable[[int], Awaitable[TaskResult]], retries: int, stop: asyncio.Event) -> TaskResult:
    """`once(try_number)` (1, 2, …) until its result is not an infrastructure failure, `retries` tries more at most,
    none once `stop` is set. The result says what was retried (`retried`: each earlier try's error)."""
    retried: list[str] = []
    number = 1
    while True:
        result = await once(number)
        if not retryable(result) or len(retried) >= retries or stop.is_set():
            return msgspec.structs.replace(result, retried=retried) if retried else result
        retried.append(result.error or str(result.error_kind))
        number += 1


async def _prepare(spec: RunSpec, turn: _Turn) -> bool:
    """Make the run's workspace; False (the reason in `turn.error`) when the task is refused or it cannot be made."""
    task = spec.task
    if task.environment.refused is not None:
        turn.error, turn.kind = task.environment.refused, ErrorKind.REFUSED
        return False
    try:
        await workspace.prepare(task.workspace, spec.workspace, task.environment.seed)
    except (OmniagentError, OSError) as error:
        turn.error, turn.kind = f"could not start: {error}", ErrorKind.WORKSPACE
        return False
    return True


async def _verify(spec: RunSpec, clock: _Clock) -> tuple[dict[str, float] | None, VerifierInfo]:
    """The task's verifier on the run's workspace (verifier.py), its phase on `clock`."""
    verifying = time.monotonic()
    try:
        return await verifier.verify(spec.task, spec.workspace, spec.logs / "verifier")
    finally:
        clock.phase("verifier", verifying)


async def _oracle_turn(spec: RunSpec, turn: _Turn) -> tuple[float, float]:
    """The oracle's turn: the task's `solution/solve.sh` (oracle.py); when it started and when it ended."""
    opened_at = time.monotonic()
    solved = await oracle.solve(spec.task, spec.workspace, spec.logs / "agent")
    if solved.status is Status.COMPLETED:
        turn.stop = Completed()
    else:
        turn.reason, turn.error, turn.kind = solved.status, solved.error, ErrorKind.SOLUTION_FAILED
    return opened_at, time.monotonic()


async def _agent_turn(
    runtime: Runtime, spec: RunSpec, turn: _Turn, on_event: EventSink, stop: asyncio.Event
) -> tuple[float, float, AgentInfo | None, str]:
    """Open the agent's session on the prepared workspace and drive its turn; when it opened, when the turn ended,
    what the agent said of itself, and its last message."""
    task = spec.task
    try:
        # The agent sees its workspace at the task's workdir (e.g. /app), as the verifier does (runtime/view.py).
        workdir = task.environment.workdir
        session = await runtime.open(spec.agent, spec.workspace, workdir=workdir, configure=task.configure() or None)
    except (OmniagentError, OSError) as error:
        turn.error, turn.kind = f"could not start: {error}", ErrorKind.AGENT_START
        failed_at = time.monotonic()  # the failed open's time is the setup's
        return failed_at, failed_at, None, ""
    opened_at = time.monotonic()
    try:
        refusal = policy.auto_refusal(session.info(), allow_unsandboxed=spec.allow_unsandboxed)
        if task.permissions == "auto" and refusal is not None:
            turn.error, turn.kind = refusal, ErrorKind.REFUSED
        else:
            await _drive(session, task, turn, on_event, stop)
    finally:
        turn_at = time.monotonic()
        about = AgentInfo.of(session.info())
        with suppress(AgentError):
            await session.close()
    return opened_at, turn_at, about, "".join(turn.messages.get(turn.last_message or "", []))


async def _drive(session: Session, task: Task, turn: _Turn, on_event: EventSink, stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    cancels: set[asyncio.Task[None]] = set()
    # No bound while the turn runs (the time limit is the task's own); once we cancel it, CANCEL_WAIT at most.
    bound = asyncio.timeout(None)

    def cancel(reason: Status) -> None:
        if turn.reason is None and turn.stop is None:
            turn.reason = reason
            bound.reschedule(loop.time() + CANCEL_WAIT)
            job = loop.create_task(_cancel(session))
            cancels.add(job)
            job.add_done_callback(cancels.discard)

    watcher = loop.create_task(_on_stop(stop, cancel))
    deadline = loop.call_later(task.time_limit, cancel, Status.TIMED_OUT) if task.time_limit else None
    try:
        async with bound:
            delivery = await session.prompt(task.prompt)
            if isinstance(delivery.kind, Started):
                turn.turn_id = delivery.kind.turn_id
            await _read(session, task, turn, on_event, cancel)
    except AgentError as error:
        turn.error, turn.kind = str(error), ErrorKind.AGENT_DIED
    except TimeoutError:  # the session loop ends a cancelled turn itself; this is the bound on that promise
        turn.error, turn.kind = f"the agent did not stop within {CANCEL_WAIT:.0f} s of the cancel", ErrorKind.STUCK
    finally:
        watcher.cancel()
        if deadline is not None:
            deadline.cancel()
        for job in list(cancels):
            with suppress(Exception):
                await job


async def _read(
    session: Session, task: Task, turn: _Turn, on_event: EventSink, cancel: Callable[[Status], None]
) -> None:
    events = session.events
    async for event in events:
        turn.events += 1
        on_event(event.dump())
        if _ours(event, turn) and await _take(session, event, task, turn, cancel):
            return
    if turn.error is None:
        turn.error = str(events.error) if events.error else "the session ended before the turn did"
        turn.kind = ErrorKind.AGENT_DIED


def _ours(event: Event, turn: _Turn) -> bool:
    return event.turn_info is not None and event.turn_info.id == turn.turn_id


async def _take(session: Session, event: Event, task: Task, turn: _Turn, cancel: Callable[[Status], None]) -> bool:
    """Learn from one event of our turn; True when the turn has ended."""
    kind = event.kind
    top_level = event.turn_info is not None and event.turn_info.parent_tool_id is None
    if isinstance(kind, TextDelta) and top_level:
        turn.messages.setdefault(kind.message_id, []).append(kind.text)
        turn.last_message = kind.message_id
    elif isinstance(kind, ToolUpdated):
        turn.tools.add(kind.tool.id)
        if task.max_turns is not None and len(turn.tools) > task.max_turns:
            cancel(Status.TURN_LIMIT)
    elif isinstance(kind, ContextUsage):
        turn.usage = Usage(context_tokens=kind.used_tokens, cost_usd=kind.cost_usd)
    elif isinstance(kind, RequestOpened) and turn.reason is None:
        reply = policy.answer(kind.request, task.permissions)
        if reply is None:
            turn.error, turn.kind = "the agent asked something a batch cannot answer", ErrorKind.UNANSWERABLE
            cancel(Status.FAILED)
        else:
            with suppress(AgentError):  # the request may close on its own meanwhile
                await session.answer(kind.request.request.id, reply)
    elif isinstance(kind, TurnEnded):
        turn.stop = kind.stop
        return True
    return False


async def _cancel(session: Session) -> None:
    with suppress(AgentError):
        await session.cancel(clear_queue=True)


async def _on_stop(stop: asyncio.Event, cancel: Callable[[Status], None]) -> None:
    await stop.wait()
    cancel(Status.INTERRUPTED)


def _status(turn: _Turn) -> Status:
    if turn.reason is not None:
        return turn.reason
    if isinstance(turn.stop, Completed) and turn.error is None:
        if turn.stop.limit is StopLimit.MAX_TURN_REQUESTS:
            # The agent's own turn limit: its work is undone, as when the task's `max_turns` stops it (a reply cut
            # at the output limit is the agent's answer, and completes).
            turn.error = f"the turn stopped at {turn.stop.limit.reached}"
            return Status.TURN_LIMIT
        return Status.COMPLETED
    if turn.error is None:
        turn.error, turn.kind = _describe(turn.stop), ErrorKind.TURN_FAILED
    return Status.FAILED


def _describe(stop: StopReason | None) -> str:
    if isinstance(stop, Failed):
        return f"the turn failed: {stop.message}"
    if isinstance(stop, Refused):
        return "the agent refused the prompt"
    if isinstance(stop, Cancelled):
        return "the turn was cancelled"
    return "the turn did not end"


def _changed_files(diff: str) -> list[str]:
    prefix = "diff --git a/"
    return [line[len(prefix) :].split(" b/", 1)[0] for line in diff.splitlines() if line.startswith(prefix)]
