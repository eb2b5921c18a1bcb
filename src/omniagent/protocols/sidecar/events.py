"""Events: the envelope and every `EventKind` arm, with the tool, plan, request and stop types they carry."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import Field

from omniagent.protocols.sidecar._tagged import Newtype, Variant, tagged
from omniagent.protocols.sidecar.agents import PlanUsage, SessionInfo, SessionStatus
from omniagent.protocols.sidecar.base import Diagnostic, SidecarModel, SystemTime

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


_TOOL_KINDS = (Read, Edit, Delete, Move, Search, Execute, Fetch, Think, OtherTool, Mcp, Subagent)
ToolKind = Annotated[
    Read | Edit | Delete | Move | Search | Execute | Fetch | Think | OtherTool | Mcp | Subagent, tagged(*_TOOL_KINDS)
]


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


_TOOL_INPUTS = (NoInput, PathInput, CommandInput, PatternInput, UrlInput, QueryInput, TextInput)
ToolInput = Annotated[
    NoInput | PathInput | CommandInput | PatternInput | UrlInput | QueryInput | TextInput, tagged(*_TOOL_INPUTS)
]


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
    input: ToolInput = Field(default_factory=NoInput)
    output: str | None = None
    diffs: list[FileDiff] = Field(default_factory=list)
    locations: list[str] = Field(default_factory=list)
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


class Question(SidecarModel):
    id: str
    text: str
    header: str | None = None
    choices: list[Choice] = Field(default_factory=list)
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


Request = Annotated[PermissionAsk | QuestionAsk, tagged(PermissionAsk, QuestionAsk)]


# --- turn origin and stop ----------------------------------------------------------------------------------


class FromPrompt(Newtype):
    TAG = "Prompt"
    prompt_id: str


class FromAgent(Variant):
    TAG = "Agent"


TurnOrigin = Annotated[FromPrompt | FromAgent, tagged(FromPrompt, FromAgent)]


class CompletionSource(StrEnum):
    PROTOCOL = "Protocol"
    INFERRED = "Inferred"


class Cancelled(Variant):
    TAG = "Cancelled"


class Refused(Variant):
    TAG = "Refused"


class Completed(Variant):
    TAG = "Completed"
    source: CompletionSource = CompletionSource.PROTOCOL


class Failed(Variant):
    TAG = "Failed"
    message: str


StopReason = Annotated[Cancelled | Refused | Completed | Failed, tagged(Cancelled, Refused, Completed, Failed)]


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
    used_tokens: int = Field(ge=0)
    window_tokens: int | None = Field(default=None, ge=0)
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
    background: list[str] = Field(default_factory=list)


EVENT_KINDS: tuple[type[Variant], ...] = (
    TurnStarted,
    TextDelta,
    ReasoningDelta,
    UserMessage,
    MessageEnded,
    ToolUpdated,
    ToolOutputDelta,
    PlanUpdated,
    RequestOpened,
    RequestClosed,
    SessionUpdated,
    StatusChanged,
    ContextUsage,
    ContextCompacted,
    PlanUsageUpdated,
    DiagnosticEvent,
    TurnEnded,
)

EventKind = Annotated[
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
    | TurnEnded,
    tagged(*EVENT_KINDS),
]


class TurnContext(SidecarModel):
    id: str
    parent_tool_id: str | None = None


class Event(SidecarModel):
    """One engine event. `sequence` starts at 1 and is gap-free per session across every kind."""

    sequence: int = Field(ge=0)
    occurred_at: SystemTime
    session_id: str
    turn_info: TurnContext | None
    kind: EventKind
    extensions: dict[str, Any] = Field(default_factory=dict)
