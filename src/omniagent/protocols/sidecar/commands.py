"""Input frames: `{"id": <u64>, "cmd": "<snake_case>", …fields}`, one model per command.

`cmd` is msgspec's tag field: `convert(frame, Command)` picks the command by it. Unknown extra fields are ignored
(docs/sidecar.md "Commands"). Parse failures are the sidecar's `BadFrame`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import msgspec
from msgspec import Meta

from omniagent.protocols.sidecar.agents import ConfigValue, SessionInfo
from omniagent.protocols.sidecar.base import U64, Newtype, SidecarModel, Variant, tagged
from omniagent.protocols.sidecar.events import PermissionChoice


class AcpSpec(SidecarModel):
    """An ACP agent named inline, outside the catalog."""

    name: str
    path: str
    args: list[str] = []


class InlineAcp(SidecarModel):
    acp: AcpSpec


AgentRef = str | InlineAcp


class PermissionMode(StrEnum):
    ASK = "Ask"
    AUTO_APPROVE = "AutoApprove"


class StdioMcp(Variant):
    TAG = "Stdio"
    command: str
    args: list[str]
    env: dict[str, str]


class HttpMcp(Variant):
    TAG = "Http"
    url: str
    headers: dict[str, str]


class SseMcp(Variant):
    TAG = "Sse"
    url: str
    headers: dict[str, str]


_MCP_CONNECTIONS = StdioMcp | HttpMcp | SseMcp
if TYPE_CHECKING:
    McpConnection = _MCP_CONNECTIONS
else:
    McpConnection = tagged("McpConnection", _MCP_CONNECTIONS)


class McpServer(SidecarModel):
    name: str
    connection: McpConnection


class ChoicesAnswer(Newtype):
    TAG = "Choices"
    ids: list[str]


class TextAnswer(Newtype):
    TAG = "Text"
    text: str


_QUESTION_ANSWERS = ChoicesAnswer | TextAnswer
if TYPE_CHECKING:
    QuestionAnswer = _QUESTION_ANSWERS
else:
    QuestionAnswer = tagged("QuestionAnswer", _QUESTION_ANSWERS)


class PermissionAnswer(Newtype):
    TAG = "Permission"
    choice: PermissionChoice


class QuestionsAnswer(Newtype):
    """One answer per question, in order; no answers at all declines the questions (the user dismissed them, or
    no client can show them): the agent goes on without them."""

    TAG = "Question"
    answers: list[QuestionAnswer]


# The answer that declines a question request.
DECLINED = QuestionsAnswer(answers=[])


_ANSWERS = PermissionAnswer | QuestionsAnswer
if TYPE_CHECKING:
    Answer = _ANSWERS
else:
    Answer = tagged("Answer", _ANSWERS)


class RollbackScope(StrEnum):
    CONVERSATION = "Conversation"
    CONVERSATION_AND_FILES = "ConversationAndFiles"


class _Command(SidecarModel, tag_field="cmd"):
    id: U64

    @property
    def cmd(self) -> str:
        """The command's name on the wire."""
        return str(type(self).__struct_config__.tag)


class OpenOptions(_Command):
    """The session options shared by `open` and `generate` (the base of both)."""

    agent: AgentRef
    dir: str
    resume: str | None = None
    fork: str | None = None
    fork_at: str | None = None
    permission_mode: PermissionMode | None = None
    mcp_servers: list[McpServer] = []
    configure: dict[str, ConfigValue] = {}


class Discover(_Command, tag="discover"):
    pass


class Probe(_Command, tag="probe"):
    agent: AgentRef


class GetPlanUsage(_Command, tag="plan_usage"):
    agent: AgentRef


class Generate(OpenOptions, tag="generate"):
    prompt: str


class Open(OpenOptions, tag="open"):
    pass


class SendPrompt(_Command, tag="prompt"):
    session: str
    text: str
    attachments: list[str] = []


class Dequeue(_Command, tag="dequeue"):
    session: str
    prompt: str


class SendAnswer(_Command, tag="answer"):
    session: str
    request: str
    answer: Answer


class Configure(_Command, tag="configure"):
    session: str
    option: str
    value: ConfigValue


class Rollback(_Command, tag="rollback"):
    session: str
    turns: Annotated[int, Meta(ge=1, le=2**32 - 1)]
    scope: RollbackScope


class Compact(_Command, tag="compact"):
    session: str


class Cancel(_Command, tag="cancel"):
    session: str
    clear_queue: bool = False


class Info(_Command, tag="info"):
    session: str


class Close(_Command, tag="close"):
    session: str


# --- omniagent's extension of the wire: a hub's sessions (docs/sidecar.md, "Sessions of a hub") ---------------


class AttachRole(StrEnum):
    """What an attached client may do: a controller prompts, answers, cancels, configures and closes; an observer
    only reads."""

    CONTROLLER = "controller"
    OBSERVER = "observer"


class AttachHistory(StrEnum):
    """What a client attaching without `after` is replayed first."""

    FULL = "full"  # every event the hub still keeps
    PENDING_ONLY = "pending_only"  # the requests still waiting for an answer
    NONE = "none"  # live events only


class Attach(_Command, tag="attach"):
    """Follow a session the hub already has: the events after `after` (a sequence the client has), else what
    `history` says, then live ones."""

    session: str
    after: U64 | None = None
    role: AttachRole = AttachRole.CONTROLLER
    history: AttachHistory = AttachHistory.FULL


class Detach(_Command, tag="detach"):
    """Stop following a session; it goes on in the hub."""

    session: str


class ListSessions(_Command, tag="list"):
    """The hub's sessions across agents (this run's, then earlier runs' from its index). With `after` (a list
    `version` the client has), the reply waits until the list changed past it (or at most `LIST_WAIT_SECONDS`)."""

    after: U64 | None = None


# How long a `list` with `after` waits for a change before it answers with the list as it is.
LIST_WAIT_SECONDS = 30.0


Command = (
    Discover
    | Probe
    | GetPlanUsage
    | Generate
    | Open
    | SendPrompt
    | Dequeue
    | SendAnswer
    | Configure
    | Rollback
    | Compact
    | Cancel
    | Info
    | Close
    | Attach
    | Detach
    | ListSessions
)

SessionCommand = SendPrompt | Dequeue | SendAnswer | Configure | Rollback | Compact | Cancel | Info | Close


# --- the `prompt` reply ------------------------------------------------------------------------------------


class Started(Variant):
    """The prompt started a new turn."""

    TAG = "Started"
    turn_id: str


class Steered(Variant):
    """The prompt joined the running turn."""

    TAG = "Steered"
    turn_id: str


class Queued(Variant):
    """The prompt waits; `position` prompts are ahead of it."""

    TAG = "Queued"
    position: U64


_DELIVERY_KINDS = Started | Steered | Queued
if TYPE_CHECKING:
    DeliveryKind = _DELIVERY_KINDS
else:
    DeliveryKind = tagged("DeliveryKind", _DELIVERY_KINDS)


class Delivery(SidecarModel):
    prompt_id: str
    kind: DeliveryKind


# --- the hub replies (omniagent's extension) ---------------------------------------------------------------


class Attached(SidecarModel):
    """The `attach` reply: the session, the role, and what the replay covers. `from_` (`from` on the wire) is the
    sequence the contiguous events start at; `missed` counts the events asked for (after `after`) that the hub no
    longer keeps: the client got what is kept instead (a snapshot of the recent history), starting at `from`."""

    info: SessionInfo
    role: AttachRole
    from_: Annotated[int, Meta(ge=1)] = msgspec.field(name="from")
    missed: U64


class AttachedClient(SidecarModel):
    """A client attached to a hub session, as it said it was (a name, not an identity)."""

    name: str
    version: str | None
    transport: str
    role: AttachRole


class SessionUsage(SidecarModel):
    """A session's latest `ContextUsage`: its context (tokens used, of the window) and its cost so far."""

    used_tokens: U64
    window_tokens: U64 | None = None
    cost_usd: float | None = None


class HubSessionRow(SidecarModel):
    """One session in the `list` reply. `activity` is `working`, `needs_input`, `idle` or `ended`; a session of an
    earlier run of the hub (`past`) has no clients and no `last_sequence`, and resumes by its `resume_token`.
    `usage` is the latest usage its agent reported this run (null before any, and for a past session)."""

    id: str
    agent: str
    directory: str
    title: str | None
    created_at: float
    activity: str
    clients: list[AttachedClient]
    last_sequence: U64 | None
    resume_token: str | None
    past: bool
    usage: SessionUsage | None = None


class SessionList(SidecarModel):
    """The `list` reply. `version` counts the changes of what the list shows (a `list` with `after` waits for the
    next one)."""

    sessions: list[HubSessionRow]
    version: U64 = 0


# The models of omniagent's own extension, not anyagent's (its schema has none of them).
EXTENSIONS: tuple[type[SidecarModel], ...] = (
    Attach,
    Detach,
    ListSessions,
    Attached,
    AttachedClient,
    SessionUsage,
    HubSessionRow,
    SessionList,
)
