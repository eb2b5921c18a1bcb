"""A run's `trajectory.json`: the run as an ATIF-v1.7 trajectory (the Agent Trajectory Interchange Format of Harbor's
RFC 0001), built from the run's normalized events (`events.jsonl`), the task's prompt and the run's result.

The same for every agent, because it reads only the sidecar `Event`s every adapter produces:

- the prompt is the first step (`user`); user content the agent reports mid-turn (`UserMessage`) is a `user` step;
- each model answer is an `agent` step: its text (`message`), its reasoning (`reasoning_content`), the tool calls
  it made (`tool_calls`, the tool's name and arguments as the agent reported them) and their results
  (`observation`, one result per settled call, matched by `source_call_id`, its status in `extra`);
- a step's `metrics` are those of the usage report (`ContextUsage`) that closed it: the cost since the previous
  report and the context tokens then; `final_metrics` holds the step count, the session's cost and its last context
  size;
- a subagent (the events nested under the call that spawned it, `parent_tool_id`) is a trajectory of its own,
  embedded in `subagent_trajectories` with the spawning call's id as its `trajectory_id`, and referenced from that
  call's observation.

The stream says nothing of where one model answer ends, so steps are cut where the events show a new one began:
text or reasoning after the step's tool calls, a message id other than the step's, a tool call once every call of
the step has settled, or a usage report. Events the format has no place for (permission requests and their answers,
plans, diagnostics, status changes, output deltas, which the final tool snapshot repeats) are left out.

This module is not an ATIF library: it writes what a batch run can say and checks nothing (the tests validate what
it writes against the published schema, tests/batch/atif.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import msgspec

from omniagent.batch.results import TaskResult, run_dir
from omniagent.protocols.sidecar.base import SystemTime, ValidationError, convert
from omniagent.protocols.sidecar.events import (
    CommandInput,
    ContextUsage,
    Event,
    Mcp,
    PathInput,
    PatternInput,
    PermissionAsk,
    QueryInput,
    ReasoningDelta,
    RequestOpened,
    TextDelta,
    TextInput,
    ToolUpdate,
    ToolUpdated,
    TurnStarted,
    UrlInput,
    UserMessage,
)

SCHEMA_VERSION = "ATIF-v1.7"
FILE = "trajectory.json"
EVENTS = "events.jsonl"
UNKNOWN_VERSION = "unknown"  # ATIF requires an agent version; this is ours when the agent reported none
_COST_DIGITS = 9  # costs are sums of small floats: rounded, so a step's cost reads 0.000141, not 0.00014100000001


# --- the format (the fields a batch run fills; absent optionals are left out of the JSON) ---------------------


class _Atif(msgspec.Struct, omit_defaults=True):
    """An ATIF object: absent optionals are left out (msgspec's `kw_only` is per class, so each says it)."""


class Agent(_Atif, kw_only=True):
    name: str
    version: str
    model_name: str | None = None
    extra: dict[str, Any] | None = None


class ToolCall(_Atif, kw_only=True):
    tool_call_id: str
    function_name: str
    arguments: dict[str, Any]
    extra: dict[str, Any] | None = None


class SubagentTrajectoryRef(_Atif, kw_only=True):
    trajectory_id: str


class ObservationResult(_Atif, kw_only=True):
    source_call_id: str
    content: str | None = None
    subagent_trajectory_ref: list[SubagentTrajectoryRef] | None = None
    extra: dict[str, Any] | None = None


class Observation(_Atif, kw_only=True):
    results: list[ObservationResult]


class Metrics(_Atif, kw_only=True):
    cost_usd: float | None = None
    extra: dict[str, Any] | None = None


class Step(_Atif, kw_only=True):
    step_id: int
    timestamp: str
    source: Literal["user", "agent"]
    message: str
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    observation: Observation | None = None
    metrics: Metrics | None = None


class FinalMetrics(_Atif, kw_only=True):
    total_cost_usd: float | None = None
    total_steps: int
    extra: dict[str, Any] | None = None


class Trajectory(_Atif, kw_only=True):
    """One ATIF trajectory: the run's root session, or (embedded) one of its subagents."""

    schema_version: str
    session_id: str | None = None
    trajectory_id: str | None = None
    agent: Agent
    steps: list[Step]
    final_metrics: FinalMetrics
    extra: dict[str, Any] | None = None
    subagent_trajectories: list[Trajectory] | None = None


# --- reading the events --------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Step:
    """A step being gathered from the events."""

    source: Literal["user", "agent"]
    at: SystemTime
    text: list[str] = field(default_factory=list)
    text_ids: set[str] = field(default_factory=set)
    reasoning: list[str] = field(default_factory=list)
    reasoning_ids: set[str] = field(default_factory=set)
    calls: dict[str, ToolUpdate] = field(default_factory=dict)  # by id, the latest snapshot, in call order
    metrics: Metrics | None = None
    closed: bool = False

    def takes_reasoning(self, message_id: str) -> bool:
        # Reasoning comes first in an answer: after its text or its calls, it is the next answer's.
        return self._open() and not self.text and not self.calls and self.reasoning_ids <= {message_id}

    def takes_text(self, message_id: str) -> bool:
        return self._open() and not self.calls and self.text_ids <= {message_id}

    def takes_call(self) -> bool:
        # The model sees a call's result only in its next answer: a call made once every call here has settled
        # belongs to that next answer.
        return self._open() and (not self.calls or any(call.status.active for call in self.calls.values()))

    def _open(self) -> bool:
        return self.source == "agent" and not self.closed


@dataclass(slots=True)
class _Thread:
    """One session's steps: the run's own (key None) or a subagent's (key: the id of the call that spawned it)."""

    steps: list[_Step] = field(default_factory=list)
    cost: float | None = None  # the session's cost as last reported (a running total)
    context: ContextUsage | None = None

    def current(self) -> _Step | None:
        return self.steps[-1] if self.steps else None


class _Reader:
    """Sorts the events into threads and steps."""

    def __init__(self) -> None:
        self.threads: dict[str | None, _Thread] = {None: _Thread()}
        self.owner: dict[str, str | None] = {}  # tool call id → the thread that made the call
        self.started: SystemTime | None = None

    def take(self, event: Event) -> None:
        kind = event.kind
        key = event.turn_info.parent_tool_id if event.turn_info is not None else None
        if isinstance(kind, ContextUsage):
            self._usage(self._thread(key), kind)
        elif event.turn_info is None:
            return  # the session's own events (status, info): no step of the conversation
        elif isinstance(kind, TurnStarted):
            self.started = self.started or event.occurred_at
        elif isinstance(kind, TextDelta):
            said = kind.message_id
            step = self._agent_step(key, event.occurred_at, lambda step: step.takes_text(said))
            step.text.append(kind.text)
            step.text_ids.add(said)
        elif isinstance(kind, ReasoningDelta):
            thought = kind.message_id
            step = self._agent_step(key, event.occurred_at, lambda step: step.takes_reasoning(thought))
            step.reasoning.append(kind.text)
            step.reasoning_ids.add(thought)
        elif isinstance(kind, ToolUpdated):
            self._call(key, event.occurred_at, kind.tool, replace=True)
        elif isinstance(kind, RequestOpened) and isinstance(kind.request, PermissionAsk):
            # Some agents show a call first in the permission request for it (and, denied, never again).
            self._call(key, event.occurred_at, kind.request.request.tool, replace=False)
        elif isinstance(kind, UserMessage):
            self._user(key, event.occurred_at, kind)

    def _thread(self, key: str | None) -> _Thread:
        thread = self.threads.get(key)
        if thread is None:
            thread = self.threads[key] = _Thread()
        return thread

    def _agent_step(self, key: str | None, at: SystemTime, fits: Callable[[_Step], bool]) -> _Step:
        thread = self._thread(key)
        step = thread.current()
        if step is None or not fits(step):
            step = _Step("agent", at)
            thread.steps.append(step)
        return step

    def _call(self, key: str | None, at: SystemTime, tool: ToolUpdate, *, replace: bool) -> None:
        if tool.id in self.owner:
            if replace:
                for step in reversed(self._thread(self.owner[tool.id]).steps):
                    if tool.id in step.calls:
                        step.calls[tool.id] = tool
                        break
            return
        self.owner[tool.id] = key
        self._agent_step(key, at, _Step.takes_call).calls[tool.id] = tool

    def _user(self, key: str | None, at: SystemTime, message: UserMessage) -> None:
        thread = self._thread(key)
        step = thread.current()
        if step is None or step.source != "user" or message.message_id not in step.text_ids:
            step = _Step("user", at)
            thread.steps.append(step)
        step.text.append(message.text)
        step.text_ids.add(message.message_id)

    @staticmethod
    def _usage(thread: _Thread, usage: ContextUsage) -> None:
        spent = None
        if usage.cost_usd is not None:
            before = thread.cost or 0.0
            spent = round(usage.cost_usd - before, _COST_DIGITS) if usage.cost_usd >= before else None
            thread.cost = usage.cost_usd
        thread.context = usage
        step = thread.current()
        if step is not None and step.source == "agent" and step.metrics is None:
            step.metrics = Metrics(cost_usd=spent, extra=_context(usage))
            step.closed = True


# --- building the trajectory ---------------------------------------------------------------------------------


def build(events: Iterable[Event], *, prompt: str, result: TaskResult) -> Trajectory:
    """The run's trajectory: `events` are the run's events in order, `prompt` the task's prompt."""
    reader = _Reader()
    for event in events:
        reader.take(event)
    info = result.agent_info
    agent = Agent(
        name=(info.name if info is not None else None) or result.agent,
        version=(info.version if info is not None else None) or UNKNOWN_VERSION,
        model_name=info.model if info is not None else None,
    )
    asked = _Step("user", reader.started or _system_time(result.timings.started_at), text=[prompt])
    trajectory = _Builder(reader, agent).trajectory(None, [asked])
    trajectory.session_id = info.session_id if info is not None else None
    trajectory.extra = {"task": result.task, "agent": result.agent, "status": str(result.status)}
    return trajectory


class _Builder:
    def __init__(self, reader: _Reader, agent: Agent) -> None:
        self._reader = reader
        self._agent = agent
        self._children: dict[str | None, list[str]] = {}  # thread → its subagents' threads, in the order seen
        for key, thread in reader.threads.items():
            if key is not None and thread.steps:
                parent = reader.owner.get(key)  # a subagent whose spawning call was never seen: the run's own
                self._children.setdefault(parent if parent != key else None, []).append(key)
        self._built: set[str | None] = set()

    def trajectory(self, key: str | None, first: list[_Step]) -> Trajectory:
        self._built.add(key)
        thread = self._reader.threads[key]
        # Each thread once: a stream whose nesting loops (none does) cannot recurse for ever.
        kids = [child for child in self._children.get(key, []) if child not in self._built]
        self._built.update(kids)
        children = [self.trajectory(child, []) for child in kids]
        spawned = {child.trajectory_id for child in children}
        steps = [self._step(number, step, spawned) for number, step in enumerate([*first, *thread.steps], start=1)]
        agent = self._agent if key is None else Agent(name=self._agent.name, version=self._agent.version)
        return Trajectory(
            schema_version=SCHEMA_VERSION,
            trajectory_id=key,
            agent=agent,
            steps=steps,
            final_metrics=_final(thread, len(steps)),
            subagent_trajectories=children or None,
        )

    @staticmethod
    def _step(number: int, step: _Step, spawned: set[str | None]) -> Step:
        at = _iso(step.at)
        if step.source == "user":
            return Step(step_id=number, timestamp=at, source="user", message="".join(step.text))
        calls = [_tool_call(tool) for tool in step.calls.values()]
        results = [
            ObservationResult(
                source_call_id=tool.id,
                content=tool.output,
                subagent_trajectory_ref=[SubagentTrajectoryRef(trajectory_id=tool.id)] if tool.id in spawned else None,
                extra={"status": str(tool.status)},
            )
            for tool in step.calls.values()
            if not tool.status.active or tool.id in spawned
        ]
        return Step(
            step_id=number,
            timestamp=at,
            source="agent",
            message="".join(step.text),
            reasoning_content="".join(step.reasoning) or None,
            tool_calls=calls or None,
            observation=Observation(results=results) if results else None,
            metrics=step.metrics,
        )


def _final(thread: _Thread, steps: int) -> FinalMetrics:
    """The step count, the cost, the last context size. The cost is the last one the agent reported for the
    session, which counts its subagents' (the event stream's meaning, and ATIF's for `total_cost_usd`); a subagent
    trajectory's own is left out, its cost being in its parent's."""
    extra = _context(thread.context) if thread.context is not None else {}
    return FinalMetrics(total_cost_usd=thread.cost, total_steps=steps, extra=extra or None)


def _context(usage: ContextUsage) -> dict[str, Any]:
    found: dict[str, Any] = {"context_tokens": usage.used_tokens}
    if usage.window_tokens is not None:
        found["context_window"] = usage.window_tokens
    return found


def _tool_call(tool: ToolUpdate) -> ToolCall:
    kind = tool.kind
    name = tool.raw.name if tool.raw is not None and tool.raw.name else None
    if name is None:
        name = kind.tool if isinstance(kind, Mcp) else kind.TAG.lower()
    return ToolCall(
        tool_call_id=tool.id,
        function_name=name,
        arguments=_arguments(tool),
        extra={"title": tool.title, "kind": kind.TAG},
    )


def _arguments(tool: ToolUpdate) -> dict[str, Any]:
    """The call's arguments as the agent reported them; a bare value as `input`; without any, the normalized input."""
    raw = tool.raw.input if tool.raw is not None else None
    if isinstance(raw, dict):
        return raw
    if raw is not None:
        return {"input": raw}
    shown = tool.input
    if isinstance(shown, CommandInput):
        return {"command": shown.spec.command} | ({"cwd": shown.spec.cwd} if shown.spec.cwd else {})
    if isinstance(shown, PathInput):
        return {"path": shown.path}
    if isinstance(shown, PatternInput):
        return {"pattern": shown.pattern}
    if isinstance(shown, UrlInput):
        return {"url": shown.url}
    if isinstance(shown, QueryInput):
        return {"query": shown.query}
    if isinstance(shown, TextInput):
        return {"text": shown.text}
    return {}


def _iso(at: SystemTime) -> str:
    seconds = at.secs_since_epoch + at.nanos_since_epoch / 1e9
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")


def _system_time(unix: float) -> SystemTime:
    return SystemTime(*divmod(int(unix * 1e9), 1_000_000_000))


# --- the file --------------------------------------------------------------------------------------------------


def read_events(path: Path) -> Iterator[Event]:
    """The events of an `events.jsonl`, in order; none when it is missing. A line that is not an event (none of
    ours is) is passed over."""
    try:
        file = path.open("rb")
    except FileNotFoundError:
        return
    decoder = msgspec.json.Decoder()
    with file:
        for line in file:
            try:
                yield convert(decoder.decode(line), Event)
            except (msgspec.DecodeError, ValidationError):
                continue


def write(out: Path, prompt: str, result: TaskResult) -> None:
    """Write the run's `trajectory.json` beside its `events.jsonl` (before its `results.jsonl` line)."""
    directory = run_dir(out, result.task, result.agent, result.trial)
    directory.mkdir(parents=True, exist_ok=True)
    trajectory = build(read_events(directory / EVENTS), prompt=prompt, result=result)
    (directory / FILE).write_bytes(msgspec.json.format(msgspec.json.encode(trajectory), indent=2) + b"\n")
