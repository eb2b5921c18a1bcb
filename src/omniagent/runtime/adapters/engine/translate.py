"""Engine broadcasts of one session → driver events: pure translation, no I/O, no turn rules.

Ids (minted from the engine's per-session ids so they are stable): a message is `m<message id>`
(its text and its reasoning share it), a tool call `t<message id>.<part id>`, a permission request
`r<interaction id>`.

| engine broadcast | driver events |
|---|---|
| `message.part_added` text / reasoning | (remembered, so the part's deltas know their kind) |
| `message.part_added` tool (pending) | `ToolUpdated` Pending |
| `message.part_delta` | `TextDelta` / `ReasoningDelta` |
| `tool.state_changed` | `ToolUpdated` Running / Completed / Failed / Cancelled (output, diffs from the diff view) |
| `tool.output_delta` | `ToolOutputDelta` |
| `message.committed` (assistant) | `MessageEnded` (when it streamed text), `ContextUsage` (tokens, window, cost) |
| `message.committed` (compaction, manual or auto) | `ContextCompacted`, `ContextUsage` (the estimate after) |
| `interaction.requested` (a permission ask) | `RequestOpened(Permission)` with AllowOnce, AllowAlways, DenyOnce |
| `interaction.requested` (the model's question) | `RequestOpened(Question)`: one question `q0` (`question_shown`) |
| `plan.updated` (engine extension; the `plan` call itself is not shown) | `PlanUpdated` with every entry |
| `run.done` | `TurnStopped` (`stop_reason`): Completed, Refused, Cancelled, Failed; a limit is Completed with it |
| `run.done` of a compaction run | `TurnStopped`: Completed (compacted or skipped), Failed, Cancelled |
| `notice` about the session (an MCP server that did not start or stopped) | `Diagnostic` (warn → Warning) |

`MessageEnded` carries the extension `omniagent/fork_point` = its message id: the `fork_at` that forks after it.

A resumed or forked session's history (`Translator.history`, the open option `history`) tells the stored conversation
with the same ids and the same mappings: a prompt a person sent as a `UserMessage` (`m<id>`; a skill run as its
`/name arguments` command; the messages the engine sends itself, such as a child's report, are not shown, as live), an
assistant message as its reasoning and text (one `ReasoningDelta` / `TextDelta` per part, the whole text) and each tool
call as one `ToolUpdated` with its final snapshot (a spawn's settled by its child's report when the conversation holds
it; a plan call as the `PlanUpdated` it set), then `MessageEnded`; a compaction's summary is not shown.

A `spawn_agent` call is a `Subagent` tool: its receipt leaves it Running, and `agent_done` (the child's report)
settles it. A child session is translated by a `Translator` of its own whose ids carry the child's name path
(`alpha/m3`, `alpha/t3.0`), so they never collide with the parent's; the driver nests its events under the
parent's call (`parent_tool_id`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from omniagent.engine.api import (
    COST_DIGITS,
    PLAN_TOOL,
    SPAWN_TOOL,
    Answered,
    ChildReported,
    Chunk,
    Committed,
    Dismissed,
    FeedItem,
    InteractionOpened,
    Noticed,
    PendingInteraction,
    PlanChanged,
    Question,
    QuestionOpened,
    Reply,
    RunEnded,
    SessionEvent,
    ToolCall,
    ToolChanged,
    ToolOpened,
    ToolOutput,
    describe,
    message_ref,
    plan_of_part,
    read_tool_call,
    tool_call_ref,
)
from omniagent.engine.api import PlanEntry as EnginePlanEntry
from omniagent.engine.api import ToolKind as FeedToolKind
from omniagent.protocols.sidecar.base import Diagnostic, DiagnosticLevel
from omniagent.protocols.sidecar.commands import ChoicesAnswer, QuestionsAnswer, TextAnswer
from omniagent.protocols.sidecar.events import (
    SECRET_HEADER,
    Cancelled,
    Choice,
    CommandInput,
    CommandSpec,
    Completed,
    ContextCompacted,
    ContextUsage,
    DiagnosticEvent,
    Edit,
    Execute,
    Failed,
    Fetch,
    FileDiff,
    Mcp,
    MessageEnded,
    NoInput,
    OtherTool,
    PathInput,
    PatternInput,
    PermissionAsk,
    PermissionChoice,
    PermissionRequest,
    PlanEntry,
    PlanStatus,
    PlanUpdated,
    QuestionAsk,
    QuestionRequest,
    RawTool,
    Read,
    ReasoningDelta,
    Refused,
    RequestOpened,
    Search,
    StopLimit,
    StopReason,
    Subagent,
    TextDelta,
    ToolInput,
    ToolKind,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
    UrlInput,
    UserMessage,
)
from omniagent.protocols.sidecar.events import Question as QuestionShown
from omniagent.protocols.yuke.content import ContentText
from omniagent.protocols.yuke.messages import (
    AssistantMessage,
    CompactionMessage,
    Message,
    ReasoningPart,
    TextPart,
    ToolPart,
)
from omniagent.protocols.yuke.messages import UserMessage as StoredPrompt
from omniagent.protocols.yuke.runs import (
    RunOutcome,
    RunOutcomeCanceled,
    RunOutcomeFailed,
    RunOutcomeTurn,
)
from omniagent.protocols.yuke.tools import (
    DiffFile,
    ToolState,
    ToolStateCanceled,
    ToolStateCompleted,
    ToolStateError,
    ToolStateRunning,
    ViewDiff,
)
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.acp.translate import cap_output

# What the engine asks about: its guarded tools. Answers map to the engine's decisions in `adapter.py`.
FORK_POINT = "omniagent/fork_point"
PERMISSION_OPTIONS = [PermissionChoice.ALLOW_ONCE, PermissionChoice.ALLOW_ALWAYS, PermissionChoice.DENY_ONCE]
_KINDS: Mapping[FeedToolKind, Callable[[], ToolKind]] = {
    "read": Read,
    "edit": Edit,
    "execute": Execute,
    "search": Search,
    "fetch": Fetch,
    "other": OtherTool,
}
_REFUSING_FINISH = frozenset({"refusal", "content_filter"})


def _kind_of(call: ToolCall) -> ToolKind:
    """A spawn is a `Subagent`, an MCP server's tool `Mcp` (its server and tool), the rest by their feed kind."""
    if call.name == SPAWN_TOOL:
        return Subagent()
    if call.mcp is not None:
        return Mcp(server=call.mcp[0], tool=call.mcp[1])
    return _KINDS[call.kind]()


_PLAN_STATUS = {
    "pending": PlanStatus.PENDING,
    "in_progress": PlanStatus.IN_PROGRESS,
    "completed": PlanStatus.COMPLETED,
}
_LEVELS = {"info": DiagnosticLevel.INFO, "warn": DiagnosticLevel.WARNING, "error": DiagnosticLevel.ERROR}


message_id = message_ref
tool_id = tool_call_ref
# What a child sent its parent when its run ended: how the run ended, and its report.
Report = tuple[RunOutcome, str]


def request_id(interaction_id: int) -> str:
    return f"r{interaction_id}"


def interaction_of(request: str) -> int | None:
    """The engine interaction id behind a request id we minted, or None."""
    digits = request.removeprefix("r")
    return int(digits) if request.startswith("r") and digits.isdigit() else None


def question_shown(question: Question) -> QuestionShown:
    """The engine question as the sidecar's one question `q0`."""
    if question.kind == "confirm":
        choices = [Choice(id="yes", label="Yes"), Choice(id="no", label="No")]
        text = f"{question.title}\n{question.detail}" if question.detail else question.title
        return QuestionShown(id="q0", text=text, choices=choices)
    if question.kind == "select":
        return QuestionShown(id="q0", text=question.title, choices=[Choice(id=o, label=o) for o in question.options])
    header = SECRET_HEADER if question.secret else None
    return QuestionShown(id="q0", text=question.title, header=header, allows_free_text=True)


def reply_of(question: Question, answer: QuestionsAnswer) -> Reply:
    """The sidecar's answer (already checked against `question_shown` by the session loop) as the engine's; no
    answer at all declines the question (the tool then tells the model the user dismissed it)."""
    if not answer.answers:
        return Dismissed()
    first = answer.answers[0]
    if isinstance(first, TextAnswer):
        return Answered(first.text)
    chosen = first.ids[0] if isinstance(first, ChoicesAnswer) and first.ids else ""
    return Answered(chosen == "yes" if question.kind == "confirm" else chosen)


def stop_reason(outcome: RunOutcome) -> StopReason:
    """A finished run as the turn's stop reason: the one place an engine outcome enters the session language.

    A run out of rounds (`max_rounds`) and a reply cut at the model's output limit (finish `length`) completed at a
    limit, not failed: every face then says them alike (ACP `max_turn_requests` / `max_tokens`)."""
    if isinstance(outcome, RunOutcomeCanceled):
        return Cancelled()
    if isinstance(outcome, RunOutcomeFailed):
        if outcome.code == "max_rounds":
            return Completed(limit=StopLimit.MAX_TURN_REQUESTS)
        return Failed(message=f"{outcome.message} ({outcome.code})")
    if isinstance(outcome, RunOutcomeTurn):
        if outcome.finish in _REFUSING_FINISH:
            return Refused()
        if outcome.finish == "canceled":
            return Cancelled()
        if outcome.finish == "length":
            return Completed(limit=StopLimit.MAX_TOKENS)
    return Completed()


@dataclass(slots=True)
class _Tool:
    """One tool call as the engine has described it so far."""

    call: ToolCall
    prefix: str = ""
    status: ToolStatus = ToolStatus.PENDING
    output: str = ""
    diffs: list[FileDiff] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.prefix + tool_id(self.call.message_id, self.call.part_id)


class Translator:
    """Maps one engine session's events (from its `Subscription`) to driver events, keeping what the mapping needs
    between them."""

    def __init__(self, session_id: str, root: str, prefix: str = "") -> None:
        self.session_id = session_id
        self.root = root
        self.prefix = prefix  # a child session's name path and `/`: its ids stay apart from its parent's
        self.window_tokens: int | None = None  # the current model's context window, kept current by the driver
        self._tools: dict[tuple[int, int], _Tool] = {}
        self._agents: dict[tuple[int, int], _Tool] = {}  # spawn_agent calls whose child has not reported yet
        self._early: dict[tuple[int, int], tuple[RunOutcome, str]] = {}  # reports that beat their call's receipt
        self._streamed: set[int] = set()  # messages that sent text or reasoning
        self._cost: float | None = None  # USD of this session's replies (and its children's) since opened here
        self._used = 0  # the context size the last usage report said
        self._reported: float | None = None  # the cost the last usage report said

    def map(self, item: SessionEvent) -> list[d.DriverEvent]:
        """The events for one event of this session (its turn's end is the driver's: `TurnEnded`)."""
        if isinstance(item, ChildReported):
            return self.agent_done(*item.child.site, item.outcome, item.text)
        return self._events(item) if isinstance(item, FeedItem) else []

    def _events(self, item: FeedItem) -> list[d.DriverEvent]:
        if isinstance(item, ToolOpened):
            tool = self._tools[(item.call.message_id, item.call.part_id)] = _Tool(item.call, self.prefix)
            return [d.AdapterEvent(ToolUpdated(tool=self._apply(tool, item.state)))]
        if isinstance(item, Chunk):
            self._streamed.add(item.message_id)
            mid = self.prefix + message_id(item.message_id)
            if item.reasoning:
                return [d.AdapterEvent(ReasoningDelta(message_id=mid, text=item.text))]
            return [d.AdapterEvent(TextDelta(message_id=mid, text=item.text))]
        if isinstance(item, ToolOutput):
            running = self._tools.get((item.call.message_id, item.call.part_id))
            if running is None:
                return []
            running.output += item.text
            return [d.AdapterEvent(ToolOutputDelta(tool_id=running.id, text=item.text))]
        if isinstance(item, ToolChanged):
            changed = self._tools.get((item.call.message_id, item.call.part_id))
            return [d.AdapterEvent(ToolUpdated(tool=self._apply(changed, item.state)))] if changed else []
        if isinstance(item, Committed) and isinstance(item.message, AssistantMessage):
            return self._committed(item.message)
        if isinstance(item, Committed) and isinstance(item.message, CompactionMessage):
            return [d.AdapterEvent(ContextCompacted()), self._usage(item.message.tokens_after)]
        if isinstance(item, RunEnded):
            self._tools.clear()  # the run's parts are final
            return []
        if isinstance(item, InteractionOpened):
            return [self._permission(item.interaction, item.call)]
        if isinstance(item, QuestionOpened):
            request = QuestionRequest(
                id=request_id(item.question.interaction_id), questions=[question_shown(item.question.question)]
            )
            return [d.AdapterEvent(RequestOpened(request=QuestionAsk(request=request)))]
        if isinstance(item, PlanChanged):
            return [_plan(item.entries)]
        if isinstance(item, Noticed):
            level = _LEVELS[item.notice.level]
            return [d.AdapterEvent(DiagnosticEvent(diagnostic=Diagnostic(level=level, message=item.notice.message)))]
        return []

    def agent_done(self, message_id: int, part_id: int, outcome: RunOutcome, report: str) -> list[d.DriverEvent]:
        """The child a `spawn_agent` call started reported: the call settles with the report as its output."""
        tool = self._agents.pop((message_id, part_id), None)
        if tool is None:
            self._early[(message_id, part_id)] = (outcome, report)
            return []
        _settle(tool, outcome, report)
        return [d.AdapterEvent(ToolUpdated(tool=self._snapshot(tool)))]

    def _permission(self, interaction: PendingInteraction, call: ToolCall) -> d.AdapterEvent:
        """An engine interaction as a permission request naming the tool call it guards."""
        tool = self._tools.get((call.message_id, call.part_id)) or _Tool(call, self.prefix)
        unsandboxed, secrets = interaction.unsandboxed, interaction.secrets
        _, detail = describe(interaction.tool_name, interaction.arguments, unsandboxed=unsandboxed, secrets=secrets)
        # A command given a secret answer is approved alone: "always" would not hold for it.
        options = [c for c in PERMISSION_OPTIONS if not (interaction.secrets and c is PermissionChoice.ALLOW_ALWAYS)]
        request = PermissionRequest(
            id=request_id(interaction.interaction_id), tool=self._snapshot(tool), options=options, detail=detail
        )
        return d.AdapterEvent(RequestOpened(request=PermissionAsk(request=request)))

    def _committed(self, message: AssistantMessage) -> list[d.DriverEvent]:
        events: list[d.DriverEvent] = []
        if message.id in self._streamed:
            self._streamed.discard(message.id)
            mid = self.prefix + message_id(message.id)
            # The cut point to pass as `fork_at`, named as the other adapters name theirs (`claude/fork_point`);
            # a child's message is no cut point of this session.
            extensions = {} if self.prefix else {FORK_POINT: mid}
            events.append(d.AdapterEvent(MessageEnded(message_id=mid), extensions=extensions))
        if message.cost is not None:
            self.spend(message.cost)
        if message.tokens is not None:
            # What the next model call will carry: this call's prompt plus its answer.
            events.append(self._usage(message.tokens.input + message.tokens.output))
        return events

    def _usage(self, used: int) -> d.AdapterEvent:
        window = self.window_tokens
        self._used = used = min(used, window) if window else used
        self._reported = self._cost
        return d.AdapterEvent(ContextUsage(used_tokens=used, window_tokens=window, cost_usd=self._cost))

    def spend(self, cost: float) -> None:
        """Count `cost`, what a reply of this session or of one of its child sessions (at any depth) cost, in the
        session's cost: a session costs what its replies and its subagents' cost, as other agents report theirs.
        A child's is told with the session's next usage report (its next reply's, or `unreported_usage` at the
        turn's end), never as a report of its own: a report closes the session's step in a trajectory, and a
        child's reply is not one."""
        self._cost = round((self._cost or 0.0) + cost, COST_DIGITS)

    def unreported_usage(self) -> d.AdapterEvent | None:
        """A usage report when the cost grew since the last one (a child spent after the session's last reply)."""
        return self._usage(self._used) if self._cost != self._reported else None

    # --- a stored conversation ------------------------------------------------------------------------------

    def history(self, messages: Iterable[Message], reports: Mapping[tuple[int, int], Report]) -> list[d.AdapterEvent]:
        """A stored conversation (`EngineApi.conversation`, oldest first) as the events its live turns showed, with
        the same ids (module doc). `reports`: the report each `spawn_agent` call's child sent, by the call's (message
        id, part id), which settles the call as it settled live."""
        events: list[d.AdapterEvent] = []
        for message in messages:
            if isinstance(message, StoredPrompt):
                events += self._prompted(message)
            elif isinstance(message, AssistantMessage):
                events += self._replied(message, reports)
        return events

    def _prompted(self, message: StoredPrompt) -> list[d.AdapterEvent]:
        if message.source is not None:
            return []  # the engine's own input (a child's report, an interruption): never shown live either
        if message.skill is not None:
            text = f"/{message.skill.name} {message.skill.arguments}".rstrip()  # the command, not what it expanded to
        else:
            text = "\n".join(p.text for p in message.content if isinstance(p, ContentText))
        mid = self.prefix + message_id(message.id)
        return [d.AdapterEvent(UserMessage(message_id=mid, text=text))] if text else []

    def _replied(self, message: AssistantMessage, reports: Mapping[tuple[int, int], Report]) -> list[d.AdapterEvent]:
        mid = self.prefix + message_id(message.id)
        events: list[d.AdapterEvent] = []
        said = False
        for part in message.content:
            if isinstance(part, ReasoningPart | TextPart) and part.text:
                said = True
                kind = ReasoningDelta if isinstance(part, ReasoningPart) else TextDelta
                events.append(d.AdapterEvent(kind(message_id=mid, text=part.text)))
            elif isinstance(part, ToolPart) and part.name == PLAN_TOOL:
                entries = plan_of_part(part)  # the plan it set, as live (a failed call set none)
                events += [_plan(entries)] if entries is not None else []
            elif isinstance(part, ToolPart):
                tool = _Tool(read_tool_call(message.id, part.id, part.name, part.arguments), self.prefix)
                report = reports.get((message.id, part.id)) if part.name == SPAWN_TOOL else None
                if report is not None:
                    _settle(tool, *report)
                else:
                    self._take(tool, part.state)
                events.append(d.AdapterEvent(ToolUpdated(tool=self._snapshot(tool))))
        if said:
            extensions = {} if self.prefix else {FORK_POINT: mid}
            events.append(d.AdapterEvent(MessageEnded(message_id=mid), extensions=extensions))
        return events

    # --- tool snapshots ------------------------------------------------------------------------------------

    def _apply(self, tool: _Tool, state: ToolState) -> ToolUpdate:
        if isinstance(state, ToolStateCompleted) and tool.call.name == SPAWN_TOOL:
            key = (tool.call.message_id, tool.call.part_id)
            early = self._early.pop(key, None)
            if early is not None:
                _settle(tool, *early)
            else:
                tool.status, tool.output = ToolStatus.RUNNING, state.output  # the receipt: the child works on
                self._agents[key] = tool
        else:
            self._take(tool, state)
        return self._snapshot(tool)

    def _take(self, tool: _Tool, state: ToolState) -> None:
        """A call's state as its status, output and diffs (a spawn's receipt as it is: its child's report is the
        caller's to wait for)."""
        if isinstance(state, ToolStateRunning):
            tool.status = ToolStatus.RUNNING
            tool.output = state.output or tool.output
        elif isinstance(state, ToolStateCompleted):
            tool.status, tool.output = ToolStatus.COMPLETED, state.output
            tool.diffs = [diff for view in state.view or [] if isinstance(view, ViewDiff) for diff in self._diffs(view)]
        elif isinstance(state, ToolStateError):
            tool.status, tool.output = ToolStatus.FAILED, state.error
        elif isinstance(state, ToolStateCanceled):
            tool.status = ToolStatus.CANCELLED

    def _snapshot(self, tool: _Tool) -> ToolUpdate:
        call = tool.call
        located = self._abs(call.path) if call.path is not None else None
        return ToolUpdate(
            id=tool.id,
            kind=_kind_of(call),
            title=call.title,
            status=tool.status,
            input=self._input(call, located),
            output=cap_output(tool.output) if tool.output else None,
            diffs=list(tool.diffs),
            locations=[located] if located else [],
            raw=RawTool(name=call.name, input=call.args),
        )

    def _input(self, call: ToolCall, located: str | None) -> ToolInput:
        if located is not None:
            return PathInput(path=located)
        if call.command is not None:
            return CommandInput(spec=CommandSpec(command=call.command, cwd=self.root))
        if call.pattern is not None:
            return PatternInput(pattern=call.pattern)
        if call.url is not None:
            return UrlInput(url=call.url)
        return NoInput()

    def _diffs(self, view: ViewDiff) -> list[FileDiff]:
        """One `FileDiff` per hunk: the hunk's old side (None for a new file) and new side, context included."""
        out: list[FileDiff] = []
        for file in view.files:
            created = _created(file)
            for hunk in file.hunks:
                old = [line[1:] for line in hunk.lines if line[:1] in (" ", "-")]
                new = [line[1:] for line in hunk.lines if line[:1] in (" ", "+")]
                text = "\n".join(old) + "\n" if old else ""
                out.append(
                    FileDiff(
                        path=self._abs(file.path),
                        old_text=None if created else text,
                        new_text="\n".join(new) + "\n" if new else "",
                    )
                )
        return out

    def _abs(self, path: str) -> str:
        return os.path.normpath(os.path.join(self.root, path))


def _plan(entries: Sequence[EnginePlanEntry]) -> d.AdapterEvent:
    """The session's plan now (the `plan` tool replaced it), as the sidecar's."""
    shown = [PlanEntry(text=e.content, status=_PLAN_STATUS[e.status]) for e in entries]
    return d.AdapterEvent(PlanUpdated(entries=shown))


def _settle(tool: _Tool, outcome: RunOutcome, report: str) -> None:
    """A spawn call whose child reported: its status from the child's run, the report as its output."""
    tool.output = report
    if isinstance(outcome, RunOutcomeTurn):
        tool.status = ToolStatus.COMPLETED
    else:
        tool.status = ToolStatus.CANCELLED if isinstance(outcome, RunOutcomeCanceled) else ToolStatus.FAILED


def _created(file: DiffFile) -> bool:
    return bool(file.hunks) and all(h.old_start == 0 and h.old_lines == 0 for h in file.hunks)
