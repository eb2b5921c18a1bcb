"""Input frames: `{"id": <u64>, "cmd": "<snake_case>", …fields}`, one model per command.

Unknown extra fields are ignored (anyagent §4). Parse failures are the sidecar's `BadFrame`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field

from omniagent.protocols.sidecar._tagged import Newtype, Variant, tagged
from omniagent.protocols.sidecar.agents import ConfigValue
from omniagent.protocols.sidecar.base import SidecarModel
from omniagent.protocols.sidecar.events import PermissionChoice


class AcpSpec(SidecarModel):
    """An ACP agent named inline, outside the catalog."""

    name: str
    path: str
    args: list[str] = Field(default_factory=list)


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


McpConnection = Annotated[StdioMcp | HttpMcp | SseMcp, tagged(StdioMcp, HttpMcp, SseMcp)]


class McpServer(SidecarModel):
    name: str
    connection: McpConnection


class ChoicesAnswer(Newtype):
    TAG = "Choices"
    ids: list[str]


class TextAnswer(Newtype):
    TAG = "Text"
    text: str


QuestionAnswer = Annotated[ChoicesAnswer | TextAnswer, tagged(ChoicesAnswer, TextAnswer)]


class PermissionAnswer(Newtype):
    TAG = "Permission"
    choice: PermissionChoice


class QuestionsAnswer(Newtype):
    TAG = "Question"
    answers: list[QuestionAnswer]


Answer = Annotated[PermissionAnswer | QuestionsAnswer, tagged(PermissionAnswer, QuestionsAnswer)]


class RollbackScope(StrEnum):
    CONVERSATION = "Conversation"
    CONVERSATION_AND_FILES = "ConversationAndFiles"


class OpenOptions(SidecarModel):
    """The session options shared by `open` and `generate`."""

    agent: AgentRef
    dir: str
    resume: str | None = None
    fork: str | None = None
    fork_at: str | None = None
    permission_mode: PermissionMode | None = None
    mcp_servers: list[McpServer] = Field(default_factory=list)
    configure: dict[str, ConfigValue] = Field(default_factory=dict)


class _Command(SidecarModel):
    id: int = Field(ge=0, lt=2**64)


class Discover(_Command):
    cmd: Literal["discover"]


class Probe(_Command):
    cmd: Literal["probe"]
    agent: AgentRef


class GetPlanUsage(_Command):
    cmd: Literal["plan_usage"]
    agent: AgentRef


class Generate(_Command, OpenOptions):
    cmd: Literal["generate"]
    prompt: str


class Open(_Command, OpenOptions):
    cmd: Literal["open"]


class SendPrompt(_Command):
    cmd: Literal["prompt"]
    session: str
    text: str
    attachments: list[str] = Field(default_factory=list)


class Dequeue(_Command):
    cmd: Literal["dequeue"]
    session: str
    prompt: str


class SendAnswer(_Command):
    cmd: Literal["answer"]
    session: str
    request: str
    answer: Answer


class Configure(_Command):
    cmd: Literal["configure"]
    session: str
    option: str
    value: ConfigValue


class Rollback(_Command):
    cmd: Literal["rollback"]
    session: str
    turns: int = Field(ge=1, lt=2**32)
    scope: RollbackScope


class Compact(_Command):
    cmd: Literal["compact"]
    session: str


class Cancel(_Command):
    cmd: Literal["cancel"]
    session: str
    clear_queue: bool = False


class Info(_Command):
    cmd: Literal["info"]
    session: str


class Close(_Command):
    cmd: Literal["close"]
    session: str


Command = Annotated[
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
    | Close,
    Field(discriminator="cmd"),
]

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
    position: int = Field(ge=0)


DeliveryKind = Annotated[Started | Steered | Queued, tagged(Started, Steered, Queued)]


class Delivery(SidecarModel):
    prompt_id: str
    kind: DeliveryKind
