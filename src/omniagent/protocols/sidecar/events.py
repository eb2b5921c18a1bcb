"""Events: the envelope and every `EventKind` arm, with the tool, plan, request and stop types they carry."""

from __future__ import annotations

import typing
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import msgspec

from omniagent.protocols.sidecar.agents import PlanUsage, SessionInfo, SessionStatus
from omniagent.protocols.sidecar.base import U64, Diagnostic, Newtype, SidecarModel, SystemTime, Variant, tagged

# --- tools -------------------------------------------------------------------------------------------------


class Read(Variant):
    TAG = "Read"


class Edit(Variant):
    TAG = "Edit"


class Delete(Variant):
    TAG = "Delete"


class Move(Variant):
    TAG = "Move"


class Search(Variant):
    TAG = "Search"


class Execute(Variant):
    TAG = "Execute"


class Fetch(Variant):
    TAG = "Fetch"


class Think(Variant):
    TAG = "Think"


class OtherTool(Variant):
    TAG = "Other"


class Subagent(Variant):
    TAG = "Subagent"


class Mcp(Variant):
    TAG = "Mcp"
    server: str
    tool: str


_TOOL_KINDS = Read | Edit | Delete | Move | Search | Execute | Fetch | Think | OtherTool | Mcp | Subagent
if TYPE_CHECKING:
    ToolKind = _TOOL_KINDS
else:
    ToolKind = tagged("ToolKind", _TOOL_KINDS)


class ToolStatus(StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    COMPLETED = "Completed"
    FAILED = "Failed"
    CANCELLED = "Cancelled"

    @property
    def active(self) -> bool:
        """Pending and Running tools are still working; the rest are settled."""
        return self in (ToolStatus.PENDING, ToolStatus.RUNNING)


class NoInput(Variant):
    TAG = "None"


class PathInput(Newtype):
    TAG = "Path"
    path: str


class CommandSpec(SidecarModel):
    command: str
    cwd: str | None = None


class CommandInput(Newtype):
    TAG = "Command"
    spec: CommandSpec


class PatternInput(Newtype):
    TAG = "Pattern"
    pattern: str


class UrlInput(Newtype):
    TAG = "Url"
    url: str


class QueryInput(Newtype):
    TAG = "Query"
    query: str


class TextInput(Newtype):
    TAG = "Text"
    text: str


_TOOL_INPUTS = NoInput | PathInput | CommandInput | PatternInput | UrlInput | QueryInput | TextInput
if TYPE_CHECKING:
    ToolInput = _TOOL_INPUTS
else:
    ToolInput = tagged("ToolInput", _TOOL_INPUTS)


class FileDiff(SidecarModel):
    path: str
    old_text: str | None = None
    new_text: str


class RawTool(SidecarModel):
    name: str
    input: Any


class ToolUpdate(SidecarModel):
    """A cumulative snapshot of one tool call: each update replaces the previous one."""

    id: str
    kind: ToolKind
    title: str
    status: ToolStatus
    input: ToolInput = msgspec.field(default_factory=NoInput)
    output: str | None = None
    diffs: list[FileDiff] = []
    locations: list[str] = []
    raw: RawTool | None = None


# --- plans -------------------------------------------------------------------------------------------------


class PlanStatus(StrEnum):
    PENDING = "Pending"
    IN_PROGRESS = "InProgress"
    COMPLETED = "Completed"


class PlanEntry(SidecarModel):
    text: str
    status: PlanStatus


# --- requests (permissions and questions) ----------------------------------------------------------------


class PermissionChoice(StrEnum):
    ALLOW_ONCE = "AllowOnce"
    ALLOW_ALWAYS = "AllowAlways"
    DENY_ONCE = "DenyOnce"
    DENY_ALWAYS = "DenyAlways"


class PermissionRequest(SidecarModel):
    id: str
    tool: ToolUpdate
    options: list[PermissionChoice]
    detail: str | None = None


class Choice(SidecarModel):
    id: str
    label: str
    description: str | None = None


# A question with this header asks for a secret (our engine's `ask_user` input with `secret`): an app shows what it
# types masked and keeps it nowhere (the answer reaches the agent's commands only, never its model).
SECRET_HEADER = "Secret"


class Question(SidecarModel):
    id: str
    text: str
    header: str | None = None
    choices: list[Choice] = []
    multi_select: bool = False
    allows_free_text: bool = False


class QuestionRequest(SidecarModel):
    id: str
    questions: list[Question]


class PermissionAsk(Newtype):
    TAG = "Permission"
    request: PermissionRequest


class QuestionAsk(Newtype):
    TAG = "Question"
    request: QuestionRequest


_REQUESTS = PermissionAsk | QuestionAsk
if TYPE_CHECKING:
    Request = _REQUESTS
else:
    Request = tagged("Request", _REQUESTS)


# --- turn origin and stop ----------------------------------------------------------------------------------


class FromPrompt(Newtype):
    TAG = "Prompt"
    prompt_id: str


class FromAgent(Variant):
    TAG = "Agent"


_TURN_ORIGINS = FromPrompt | FromAgent
if TYPE_CHECKING:
    TurnOrigin = _TURN_ORIGINS
else:
    TurnOrigin = tagged("TurnOrigin", _TURN_ORIGINS)


class CompletionSource(StrEnum):
    PROTOCOL = "Protocol"
    INFERRED = "Inferred"


class Cancelled(Variant):
    TAG = "Cancelled"


class Refused(Variant):
    TAG = "Refused"


class StopLimit(StrEnum):
    """Why a completed turn stopped short: a limit, not the agent's choice (our extension of the anyagent wire)."""

    MAX_TOKENS = "MaxTokens"  # the model's reply reached its output token limit
    MAX_TURN_REQUESTS = "MaxTurnRequests"  # the turn reached its limit of model requests (rounds, turns)

    @property
    def reached(self) -> str:
        """The limit in words, for a person: "the turn stopped at {reached}"."""
        if self is StopLimit.MAX_TOKENS:
            return "the model's output token limit"
        return "its limit of model requests"


def _protocol() -> CompletionSource:
    return CompletionSource.PROTOCOL


class Completed(Variant, omit_defaults=True):
    """The turn ended normally; `limit` says it stopped short at one (absent: the agent was done).

    `limit` is our extension of the anyagent wire: left out when absent (`omit_defaults`), so a turn without one is
    the same line as ever. `source` stays on every line, as the wire has it: its default comes from a factory, which
    `omit_defaults` leaves alone (msgspec omits a factory's value only when it is an empty collection), where a
    plain default would be omitted."""

    TAG = "Completed"
    source: CompletionSource = msgspec.field(default_factory=_protocol)
    limit: StopLimit | None = None


class Failed(Variant):
    TAG = "Failed"
    message: str


_STOP_REASONS = Cancelled | Refused | Completed | Failed
if TYPE_CHECKING:
    StopReason = _STOP_REASONS
else:
    StopReason = tagged("StopReason", _STOP_REASONS)


# --- event kinds -------------------------------------------------------------------------------------------


class TurnStarted(Variant):
    TAG = "TurnStarted"
    origin: TurnOrigin


class TextDelta(Variant):
    TAG = "TextDelta"
    message_id: str
    text: str


class ReasoningDelta(Variant):
    TAG = "ReasoningDelta"
    message_id: str
    text: str


class UserMessage(Variant):
    TAG = "UserMessage"
    message_id: str
    text: str


class MessageEnded(Variant):
    TAG = "MessageEnded"
    message_id: str


class ToolUpdated(Newtype):
    TAG = "ToolUpdated"
    tool: ToolUpdate


class ToolOutputDelta(Variant):
    TAG = "ToolOutputDelta"
    tool_id: str
    text: str


class PlanUpdated(Variant):
    TAG = "PlanUpdated"
    entries: list[PlanEntry]


class RequestOpened(Newtype):
    TAG = "RequestOpened"
    request: Request


class RequestClosed(Variant):
    TAG = "RequestClosed"
    request_id: str


class SessionUpdated(Newtype):
    TAG = "SessionUpdated"
    info: SessionInfo


class StatusChanged(Newtype):
    TAG = "StatusChanged"
    status: SessionStatus


class ContextUsage(Variant):
    TAG = "ContextUsage"
    used_tokens: U64
    window_tokens: U64 | None = None
    cost_usd: float | None = None


class ContextCompacted(Variant):
    TAG = "ContextCompacted"


class PlanUsageUpdated(Newtype):
    TAG = "PlanUsageUpdated"
    usage: PlanUsage


class DiagnosticEvent(Newtype):
    TAG = "Diagnostic"
    diagnostic: Diagnostic


class TurnEnded(Variant):
    TAG = "TurnEnded"
    stop: StopReason
    background: list[str] = []


_EVENT_KINDS = (
    TurnStarted
    | TextDelta
    | ReasoningDelta
    | UserMessage
    | MessageEnded
    | ToolUpdated
    | ToolOutputDelta
    | PlanUpdated
    | RequestOpened
    | RequestClosed
    | SessionUpdated
    | StatusChanged
    | ContextUsage
    | ContextCompacted
    | PlanUsageUpdated
    | DiagnosticEvent
    | TurnEnded
)
EVENT_KINDS: tuple[type[Variant], ...] = typing.get_args(_EVENT_KINDS)
if TYPE_CHECKING:
    EventKind = _EVENT_KINDS
else:
    EventKind = tagged("EventKind", _EVENT_KINDS)


class TurnContext(SidecarModel, kw_only=False, frozen=True, gc=False):  # type: ignore[misc]  # msgspec allows it
    """Frozen: one is shared by the events of a turn."""

    id: str
    parent_tool_id: str | None = None


class Event(SidecarModel, kw_only=False, gc=False):
    """One engine event. `sequence` starts at 1 and is gap-free per session across every kind. Positional too: the
    session loop makes one per event."""

    sequence: U64
    occurred_at: SystemTime
    session_id: str
    turn_info: TurnContext | None
    kind: EventKind
    extensions: dict[str, Any] = {}
