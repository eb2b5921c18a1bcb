# Generated from src/omniagent/protocols/acp/schema/acp-v2.schema.json by scripts/gen_acp_models.py; do not edit.
# Schema sha256: 49e10f8c1935854363ed5b176cc6560d856642ba5020c97d264d34de4b6f1b31
# ruff: noqa: E501
"""ACP v2 wire models, one Struct per schema object; unions msgspec cannot decode are markers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import msgspec

from omniagent.protocols.acp._base import UNSET, AcpModel, UnsetType, plain_union, tagged_union

PROTOCOL_VERSION = 2


class AgentRequest(AcpModel, frozen=True, kw_only=True):
    """A JSON-RPC request object."""

    id: RequestId
    method: str
    params: Any = UNSET


class RequestPermissionRequest(AcpModel, frozen=True, kw_only=True):
    """Request for user permission to proceed with an operation."""

    session_id: SessionId = msgspec.field(name="sessionId")
    title: str
    description: str | UnsetType | None = UNSET
    subject: RequestPermissionSubject | UnsetType | None = UNSET
    options: list[PermissionOption]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class RequestPermissionSubjectToolCall(AcpModel, frozen=True, kw_only=True):
    """Permission is requested before executing a tool call."""

    type: Literal["tool_call"] = "tool_call"
    tool_call: ToolCallUpdate = msgspec.field(name="toolCall")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class RequestPermissionSubjectCommand(AcpModel, frozen=True, kw_only=True):
    """Permission is requested before running a command."""

    type: Literal["command"] = "command"
    command: str
    cwd: AbsolutePath
    tool_call_id: ToolCallId | UnsetType | None = msgspec.field(default=UNSET, name="toolCallId")
    terminal_id: TerminalId | UnsetType | None = msgspec.field(default=UNSET, name="terminalId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class RequestPermissionSubjectOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future permission subject."""

    type: str


class ToolCallUpdate(AcpModel, frozen=True, kw_only=True):
    """Represents an upsert for a tool call that the language model has requested."""

    tool_call_id: ToolCallId = msgspec.field(name="toolCallId")
    name: str | UnsetType | None = UNSET
    title: str | UnsetType | None = UNSET
    kind: ToolKind | UnsetType | None = UNSET
    status: ToolCallStatus | UnsetType | None = UNSET
    content: list[ToolCallContent] | UnsetType | None = UNSET
    locations: list[ToolCallLocation] | UnsetType | None = UNSET
    raw_input: Any = msgspec.field(default=UNSET, name="rawInput")
    raw_output: Any = msgspec.field(default=UNSET, name="rawOutput")
    capabilities: ToolCallCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ToolCallContentContent(AcpModel, frozen=True, kw_only=True):
    """Standard content block (text, images, resources)."""

    type: Literal["content"] = "content"
    content: ContentBlock
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ToolCallContentDiff(AcpModel, frozen=True, kw_only=True):
    """File modification shown as a diff."""

    type: Literal["diff"] = "diff"
    changes: list[DiffChange]
    patch: DiffPatch | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ToolCallContentTerminal(AcpModel, frozen=True, kw_only=True):
    """A display-only reference to an agent-owned terminal."""

    type: Literal["terminal"] = "terminal"
    terminal_id: TerminalId = msgspec.field(name="terminalId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ToolCallContentOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future tool call content."""

    type: str


class ContentBlockText(AcpModel, frozen=True, kw_only=True):
    """Text content. May be plain text or formatted with Markdown."""

    type: Literal["text"] = "text"
    text: str
    annotations: Annotations | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ContentBlockImage(AcpModel, frozen=True, kw_only=True):
    """Images for visual context or analysis."""

    type: Literal["image"] = "image"
    data: str
    mime_type: MediaType = msgspec.field(name="mimeType")
    uri: str | UnsetType | None = UNSET
    annotations: Annotations | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ContentBlockAudio(AcpModel, frozen=True, kw_only=True):
    """Audio data for transcription or analysis."""

    type: Literal["audio"] = "audio"
    data: str
    mime_type: MediaType = msgspec.field(name="mimeType")
    annotations: Annotations | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ContentBlockResourceLink(AcpModel, frozen=True, kw_only=True):
    """References to resources that the receiver may be able to read."""

    type: Literal["resource_link"] = "resource_link"
    name: str
    uri: str
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    icons: list[Icon] | UnsetType | None = UNSET
    mime_type: MediaType | UnsetType | None = msgspec.field(default=UNSET, name="mimeType")
    size: int | UnsetType | None = UNSET
    annotations: Annotations | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ContentBlockResource(AcpModel, frozen=True, kw_only=True):
    """Complete resource contents embedded directly in the message."""

    type: Literal["resource"] = "resource"
    resource: EmbeddedResourceResource
    annotations: Annotations | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ContentBlockOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future content block."""

    type: str


class Annotations(AcpModel, frozen=True, kw_only=True):
    """Optional annotations for the client. The client can use annotations to inform how objects are used or displayed"""

    audience: list[Role] | UnsetType | None = UNSET
    last_modified: str | UnsetType | None = msgspec.field(default=UNSET, name="lastModified")
    priority: float | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class Icon(AcpModel, frozen=True, kw_only=True):
    """An optionally-sized icon that can be displayed in a user interface."""

    src: str
    mime_type: MediaType | UnsetType | None = msgspec.field(default=UNSET, name="mimeType")
    sizes: list[str] | UnsetType | None = UNSET
    theme: IconTheme | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class TextResourceContents(AcpModel, frozen=True, kw_only=True):
    """Text-based resource contents."""

    text: str
    uri: str
    mime_type: MediaType | UnsetType | None = msgspec.field(default=UNSET, name="mimeType")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class BlobResourceContents(AcpModel, frozen=True, kw_only=True):
    """Binary resource contents."""

    blob: str
    uri: str
    mime_type: MediaType | UnsetType | None = msgspec.field(default=UNSET, name="mimeType")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class DiffChangeAdd(AcpModel, frozen=True, kw_only=True):
    """A file was added."""

    operation: Literal["add"] = "add"
    file_type: DiffFileType | UnsetType | None = msgspec.field(default=UNSET, name="fileType")
    mime_type: MediaType | UnsetType | None = msgspec.field(default=UNSET, name="mimeType")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    path: AbsolutePath


class DiffChangeDelete(AcpModel, frozen=True, kw_only=True):
    """A file was deleted."""

    operation: Literal["delete"] = "delete"
    file_type: DiffFileType | UnsetType | None = msgspec.field(default=UNSET, name="fileType")
    mime_type: MediaType | UnsetType | None = msgspec.field(default=UNSET, name="mimeType")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    path: AbsolutePath


class DiffChangeModify(AcpModel, frozen=True, kw_only=True):
    """A file was modified in place."""

    operation: Literal["modify"] = "modify"
    file_type: DiffFileType | UnsetType | None = msgspec.field(default=UNSET, name="fileType")
    mime_type: MediaType | UnsetType | None = msgspec.field(default=UNSET, name="mimeType")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    path: AbsolutePath


class DiffChangeMove(AcpModel, frozen=True, kw_only=True):
    """A file was moved or renamed."""

    operation: Literal["move"] = "move"
    file_type: DiffFileType | UnsetType | None = msgspec.field(default=UNSET, name="fileType")
    mime_type: MediaType | UnsetType | None = msgspec.field(default=UNSET, name="mimeType")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    old_path: AbsolutePath = msgspec.field(name="oldPath")
    path: AbsolutePath


class DiffChangeCopy(AcpModel, frozen=True, kw_only=True):
    """A file was copied."""

    operation: Literal["copy"] = "copy"
    file_type: DiffFileType | UnsetType | None = msgspec.field(default=UNSET, name="fileType")
    mime_type: MediaType | UnsetType | None = msgspec.field(default=UNSET, name="mimeType")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    old_path: AbsolutePath = msgspec.field(name="oldPath")
    path: AbsolutePath


class DiffChangeOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future file operation."""

    file_type: DiffFileType | UnsetType | None = msgspec.field(default=UNSET, name="fileType")
    mime_type: MediaType | UnsetType | None = msgspec.field(default=UNSET, name="mimeType")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    operation: str


class DiffPatch(AcpModel, frozen=True, kw_only=True):
    """Renderable patch text and its format."""

    format: DiffPatchFormat
    text: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ToolCallLocation(AcpModel, frozen=True, kw_only=True):
    """A file location being accessed or modified by a tool."""

    path: AbsolutePath
    line: int | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ToolCallCapabilities(AcpModel, frozen=True, kw_only=True):
    """Client-initiated controls a tool call currently supports."""

    cancel: ToolCallCancelCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ToolCallCancelCapabilities(AcpModel, frozen=True, kw_only=True):
    """Capability to cancel a tool call with `tool_call/cancel`."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class PermissionOption(AcpModel, frozen=True, kw_only=True):
    """An option presented to the user when requesting permission."""

    option_id: PermissionOptionId = msgspec.field(name="optionId")
    name: str
    kind: PermissionOptionKind
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CreateElicitationRequestForm(AcpModel, frozen=True, kw_only=True):
    """Form-based elicitation where the client renders a form from the provided schema."""

    mode: Literal["form"] = "form"
    message: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    requested_schema: ElicitationSchema = msgspec.field(name="requestedSchema")
    session_id: SessionId | UnsetType | None = msgspec.field(default=UNSET, name="sessionId")
    tool_call_id: ToolCallId | UnsetType | None = msgspec.field(default=UNSET, name="toolCallId")
    request_id: RequestId | UnsetType | None = msgspec.field(default=UNSET, name="requestId")


class CreateElicitationRequestUrl(AcpModel, frozen=True, kw_only=True):
    """URL-based elicitation where the client directs the user to a URL."""

    mode: Literal["url"] = "url"
    message: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    elicitation_id: ElicitationId = msgspec.field(name="elicitationId")
    url: str
    session_id: SessionId | UnsetType | None = msgspec.field(default=UNSET, name="sessionId")
    tool_call_id: ToolCallId | UnsetType | None = msgspec.field(default=UNSET, name="toolCallId")
    request_id: RequestId | UnsetType | None = msgspec.field(default=UNSET, name="requestId")


class CreateElicitationRequestOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future elicitation mode."""

    message: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    mode: str
    session_id: SessionId | UnsetType | None = msgspec.field(default=UNSET, name="sessionId")
    tool_call_id: ToolCallId | UnsetType | None = msgspec.field(default=UNSET, name="toolCallId")
    request_id: RequestId | UnsetType | None = msgspec.field(default=UNSET, name="requestId")


class ElicitationSessionScope(AcpModel, frozen=True, kw_only=True):
    """Session-scoped elicitation, optionally tied to a specific tool call."""

    session_id: SessionId = msgspec.field(name="sessionId")
    tool_call_id: ToolCallId | UnsetType | None = msgspec.field(default=UNSET, name="toolCallId")


class ElicitationRequestScope(AcpModel, frozen=True, kw_only=True):
    """Request-scoped elicitation, tied to a specific JSON-RPC request outside of a session (e.g., during auth/configuration phases before any session is started)."""

    request_id: RequestId = msgspec.field(name="requestId")


class ElicitationSchema(AcpModel, frozen=True, kw_only=True):
    """Type-safe elicitation schema for requesting structured user input."""

    type: ElicitationSchemaType
    title: str | UnsetType | None = UNSET
    properties: dict[str, ElicitationPropertySchema]
    required: list[str] | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ElicitationPropertySchemaString(AcpModel, frozen=True, kw_only=True):
    """String property (or single-select enum when `enum`/`oneOf` is set)."""

    type: Literal["string"] = "string"
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    min_length: int | UnsetType | None = msgspec.field(default=UNSET, name="minLength")
    max_length: int | UnsetType | None = msgspec.field(default=UNSET, name="maxLength")
    pattern: str | UnsetType | None = UNSET
    format: StringFormat | UnsetType | None = UNSET
    default: str | UnsetType | None = UNSET
    enum: list[str] | UnsetType | None = UNSET
    one_of: list[EnumOption] | UnsetType | None = msgspec.field(default=UNSET, name="oneOf")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ElicitationPropertySchemaNumber(AcpModel, frozen=True, kw_only=True):
    """Number (floating-point) property."""

    type: Literal["number"] = "number"
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    minimum: float | UnsetType | None = UNSET
    maximum: float | UnsetType | None = UNSET
    default: float | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ElicitationPropertySchemaInteger(AcpModel, frozen=True, kw_only=True):
    """Integer property."""

    type: Literal["integer"] = "integer"
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    minimum: int | UnsetType | None = UNSET
    maximum: int | UnsetType | None = UNSET
    default: int | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ElicitationPropertySchemaBoolean(AcpModel, frozen=True, kw_only=True):
    """Boolean property."""

    type: Literal["boolean"] = "boolean"
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    default: bool | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ElicitationPropertySchemaArray(AcpModel, frozen=True, kw_only=True):
    """Multi-select array property."""

    type: Literal["array"] = "array"
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    min_items: int | UnsetType | None = msgspec.field(default=UNSET, name="minItems")
    max_items: int | UnsetType | None = msgspec.field(default=UNSET, name="maxItems")
    items: MultiSelectItems
    default: list[str] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ElicitationPropertySchemaOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future elicitation property schema."""

    type: str


class EnumOption(AcpModel, frozen=True, kw_only=True):
    """A titled enum option with a const value, human-readable title, and optional description."""

    const: str
    title: str
    description: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class MultiSelectItemsString(AcpModel, frozen=True, kw_only=True):
    """Multi-select string items with plain string values."""

    type: Literal["string"] = "string"
    enum: list[str]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class MultiSelectItemsOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future typed multi-select items."""

    type: str


class MultiSelectItemsTitled(AcpModel, frozen=True, kw_only=True):
    """Titled multi-select items with human-readable labels."""

    any_of: list[EnumOption] = msgspec.field(name="anyOf")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class MessageMcpRequest(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    server_id: McpServerAcpId = msgspec.field(name="serverId")
    request_id: McpRequestId = msgspec.field(name="requestId")
    method: str
    params: dict[str, Any] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AgentResponseResult(AcpModel, frozen=True, kw_only=True):
    """A successful JSON-RPC response."""

    id: RequestId
    result: Any


class AgentResponseError(AcpModel, frozen=True, kw_only=True):
    """A failed JSON-RPC response."""

    id: int | str | None
    error: Error


class InitializeResponse(AcpModel, frozen=True, kw_only=True):
    """Response to the `initialize` method."""

    protocol_version: ProtocolVersion = msgspec.field(name="protocolVersion")
    info: Implementation
    capabilities: AgentCapabilities | UnsetType | None = UNSET
    auth_methods: list[AuthMethod] | UnsetType | None = msgspec.field(default=UNSET, name="authMethods")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class Implementation(AcpModel, frozen=True, kw_only=True):
    """Metadata about the implementation of the client or agent. Describes the name and version of an ACP implementation, with an optional title for UI representation."""

    name: str
    title: str | UnsetType | None = UNSET
    version: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AgentCapabilities(AcpModel, frozen=True, kw_only=True):
    """Capabilities supported by the agent."""

    session: SessionCapabilities | UnsetType | None = UNSET
    auth: AgentAuthCapabilities | UnsetType | None = UNSET
    providers: ProvidersCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionCapabilities(AcpModel, frozen=True, kw_only=True):
    """Session capabilities supported by the agent."""

    prompt: PromptCapabilities | UnsetType | None = UNSET
    mcp: McpCapabilities | UnsetType | None = UNSET
    delete: SessionDeleteCapabilities | UnsetType | None = UNSET
    additional_directories: SessionAdditionalDirectoriesCapabilities | UnsetType | None = msgspec.field(
        default=UNSET, name="additionalDirectories"
    )
    system_prompt: SessionSystemPromptCapabilities | UnsetType | None = msgspec.field(
        default=UNSET, name="systemPrompt"
    )
    fork: SessionForkCapabilities | UnsetType | None = UNSET
    archive: SessionArchiveCapabilities | UnsetType | None = UNSET
    status: SessionStatusCapabilities | UnsetType | None = UNSET
    title: SessionTitleCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class PromptCapabilities(AcpModel, frozen=True, kw_only=True):
    """Prompt capabilities supported by the agent in `session/prompt` requests."""

    image: PromptImageCapabilities | UnsetType | None = UNSET
    audio: PromptAudioCapabilities | UnsetType | None = UNSET
    embedded_context: PromptEmbeddedContextCapabilities | UnsetType | None = msgspec.field(
        default=UNSET, name="embeddedContext"
    )
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class PromptImageCapabilities(AcpModel, frozen=True, kw_only=True):
    """Capabilities for image content in prompt requests."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class PromptAudioCapabilities(AcpModel, frozen=True, kw_only=True):
    """Capabilities for audio content in prompt requests."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class PromptEmbeddedContextCapabilities(AcpModel, frozen=True, kw_only=True):
    """Capabilities for embedded context in prompt requests."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class McpCapabilities(AcpModel, frozen=True, kw_only=True):
    """MCP capabilities supported by the agent for session lifecycle requests."""

    stdio: McpStdioCapabilities | UnsetType | None = UNSET
    http: McpHttpCapabilities | UnsetType | None = UNSET
    acp: McpAcpCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class McpStdioCapabilities(AcpModel, frozen=True, kw_only=True):
    """Capabilities for stdio MCP server transports."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class McpHttpCapabilities(AcpModel, frozen=True, kw_only=True):
    """Capabilities for HTTP MCP server transports."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class McpAcpCapabilities(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionDeleteCapabilities(AcpModel, frozen=True, kw_only=True):
    """Capabilities for the `session/delete` method."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionAdditionalDirectoriesCapabilities(AcpModel, frozen=True, kw_only=True):
    """Capabilities for additional session directories support."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionSystemPromptCapabilities(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    mode: SessionSystemPromptModeCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionSystemPromptModeCapabilities(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    override: SessionSystemPromptOverrideCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionSystemPromptOverrideCapabilities(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionForkCapabilities(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionArchiveCapabilities(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionStatusCapabilities(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionTitleCapabilities(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AgentAuthCapabilities(AcpModel, frozen=True, kw_only=True):
    """Authentication-related extension capabilities supported by the agent."""

    status: AuthStatusCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AuthStatusCapabilities(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ProvidersCapabilities(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AuthMethodTerminal(AcpModel, frozen=True, kw_only=True):
    """Client runs the configured agent program as a separate interactive process, without passing this method to `auth/login`."""

    type: Literal["terminal"] = "terminal"
    method_id: AuthMethodId = msgspec.field(name="methodId")
    name: str
    description: str | UnsetType | None = UNSET
    args: list[str] | UnsetType | None = UNSET
    env: list[EnvVariable] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AuthMethodAgent(AcpModel, frozen=True, kw_only=True):
    """Agent handles authentication itself through `auth/login`."""

    type: Literal["agent"] = "agent"
    method_id: AuthMethodId = msgspec.field(name="methodId")
    name: str
    description: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AuthMethodOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future authentication method."""

    type: str
    method_id: AuthMethodId = msgspec.field(name="methodId")
    name: str


class EnvVariable(AcpModel, frozen=True, kw_only=True):
    """An environment variable to set when launching a process."""

    name: str
    value: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class LoginAuthResponse(AcpModel, frozen=True, kw_only=True):
    """Response to the `auth/login` method."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ListProvidersResponse(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    providers: list[ProviderInfo]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ProviderInfo(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    provider_id: ProviderId = msgspec.field(name="providerId")
    supported: list[LlmProtocol]
    required: bool
    current: ProviderCurrentConfig | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ProviderCurrentConfig(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    api_type: LlmProtocol = msgspec.field(name="apiType")
    base_url: str = msgspec.field(name="baseUrl")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SetProviderResponse(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class DisableProviderResponse(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class LogoutAuthResponse(AcpModel, frozen=True, kw_only=True):
    """Response to the `auth/logout` method."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AuthStatusResponse(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    state: AuthState
    accounts: list[AuthAccount] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AuthAccount(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    label: str
    active: bool | UnsetType | None = UNSET
    name: str | UnsetType | None = UNSET
    email: str | UnsetType | None = UNSET
    organization: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class NewSessionResponse(AcpModel, frozen=True, kw_only=True):
    """Response from creating a new session."""

    session_id: SessionId = msgspec.field(name="sessionId")
    config_options: list[SessionConfigOption] | UnsetType | None = msgspec.field(default=UNSET, name="configOptions")
    available_commands: list[AvailableCommand] | UnsetType | None = msgspec.field(
        default=UNSET, name="availableCommands"
    )
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionConfigOptionSelect(AcpModel, frozen=True, kw_only=True):
    """Single-value selector (dropdown)."""

    type: Literal["select"] = "select"
    config_id: SessionConfigId = msgspec.field(name="configId")
    name: str
    description: str | UnsetType | None = UNSET
    category: SessionConfigOptionCategory | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    current_value: SessionConfigValueId = msgspec.field(name="currentValue")
    options: SessionConfigSelectOptions


class SessionConfigOptionBoolean(AcpModel, frozen=True, kw_only=True):
    """Boolean on/off toggle."""

    type: Literal["boolean"] = "boolean"
    config_id: SessionConfigId = msgspec.field(name="configId")
    name: str
    description: str | UnsetType | None = UNSET
    category: SessionConfigOptionCategory | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    current_value: bool = msgspec.field(name="currentValue")


class SessionConfigOptionOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future session configuration option payload."""

    config_id: SessionConfigId = msgspec.field(name="configId")
    name: str
    description: str | UnsetType | None = UNSET
    category: SessionConfigOptionCategory | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    type: str


class SessionConfigSelectOption(AcpModel, frozen=True, kw_only=True):
    """A possible value for a session configuration option."""

    value: SessionConfigValueId
    name: str
    description: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionConfigSelectGroup(AcpModel, frozen=True, kw_only=True):
    """A group of possible values for a session configuration option."""

    group_id: SessionConfigGroupId = msgspec.field(name="groupId")
    name: str
    options: list[SessionConfigSelectOption]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AvailableCommandCommand(AcpModel, frozen=True, kw_only=True):
    """A slash command the user can invoke by including it in a prompt."""

    type: Literal["command"] = "command"
    name: str
    description: str
    input: AvailableCommandInput | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AvailableCommandOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future command kind."""

    type: str
    name: str
    description: str


class AvailableCommandInputText(AcpModel, frozen=True, kw_only=True):
    """All text after the command name and the whitespace following it is provided as input."""

    type: Literal["text"] = "text"
    hint: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AvailableCommandInputOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future command input specification."""

    type: str


class ListSessionsResponse(AcpModel, frozen=True, kw_only=True):
    """Response from listing sessions."""

    sessions: list[SessionInfo]
    next_cursor: SessionListCursor | UnsetType | None = msgspec.field(default=UNSET, name="nextCursor")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionInfo(AcpModel, frozen=True, kw_only=True):
    """Information about a session returned by session/list"""

    session_id: SessionId = msgspec.field(name="sessionId")
    cwd: AbsolutePath
    additional_directories: list[AbsolutePath] | UnsetType | None = msgspec.field(
        default=UNSET, name="additionalDirectories"
    )
    title: str | UnsetType | None = UNSET
    updated_at: str | UnsetType | None = msgspec.field(default=UNSET, name="updatedAt")
    archived: bool | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class DeleteSessionResponse(AcpModel, frozen=True, kw_only=True):
    """Response from deleting a session."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ForkSessionResponse(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    session_id: SessionId = msgspec.field(name="sessionId")
    config_options: list[SessionConfigOption] | UnsetType | None = msgspec.field(default=UNSET, name="configOptions")
    available_commands: list[AvailableCommand] | UnsetType | None = msgspec.field(
        default=UNSET, name="availableCommands"
    )
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ArchiveSessionResponse(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class UnarchiveSessionResponse(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionStatusResponse(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    status: SessionStatus
    state: StateUpdate | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class StateUpdateRunning(AcpModel, frozen=True, kw_only=True):
    """Foreground work is in progress."""

    state: Literal["running"] = "running"
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class StateUpdateIdleEndTurn(AcpModel, frozen=True, kw_only=True):
    """The active work ended successfully. Includes locally handled commands that required no model call."""

    state: Literal["idle"] = "idle"
    stop_reason: Literal["end_turn"] = msgspec.field(default="end_turn", name="stopReason")
    usage: Usage | UnsetType | None = UNSET
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class StateUpdateIdleMaxTokens(AcpModel, frozen=True, kw_only=True):
    """The active work ended because the agent reached the maximum number of tokens."""

    state: Literal["idle"] = "idle"
    stop_reason: Literal["max_tokens"] = msgspec.field(default="max_tokens", name="stopReason")
    usage: Usage | UnsetType | None = UNSET
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class StateUpdateIdleMaxTurnRequests(AcpModel, frozen=True, kw_only=True):
    """The active work ended because the agent reached the maximum number of model requests for the foreground work."""

    state: Literal["idle"] = "idle"
    stop_reason: Literal["max_turn_requests"] = msgspec.field(default="max_turn_requests", name="stopReason")
    usage: Usage | UnsetType | None = UNSET
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class StateUpdateIdleRefusal(AcpModel, frozen=True, kw_only=True):
    """The active work ended because the agent refused to continue."""

    state: Literal["idle"] = "idle"
    stop_reason: Literal["refusal"] = msgspec.field(default="refusal", name="stopReason")
    usage: Usage | UnsetType | None = UNSET
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class StateUpdateIdleCancelled(AcpModel, frozen=True, kw_only=True):
    """The user or client chose to stop the work: via `session/cancel`, by closing the session, or through an interaction the agent offers, such as a permission option that tells the agent to stop. Work the agent stops for its own reasons uses another reason, such as `error` for an internal timeout."""

    state: Literal["idle"] = "idle"
    stop_reason: Literal["cancelled"] = msgspec.field(default="cancelled", name="stopReason")
    usage: Usage | UnsetType | None = UNSET
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class StateUpdateIdleError(AcpModel, frozen=True, kw_only=True):
    """The active work ended because something failed."""

    state: Literal["idle"] = "idle"
    stop_reason: Literal["error"] = msgspec.field(default="error", name="stopReason")
    usage: Usage | UnsetType | None = UNSET
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    error: Error | UnsetType | None = UNSET


class StateUpdateIdleOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future stop reason."""

    state: Literal["idle"] = "idle"
    usage: Usage | UnsetType | None = UNSET
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    stop_reason: str = msgspec.field(name="stopReason")


class StateUpdateIdleNone(AcpModel, frozen=True, kw_only=True):
    """No stop reason: `stopReason` is omitted or `null`."""

    state: Literal["idle"] = "idle"
    usage: Usage | UnsetType | None = UNSET
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class StateUpdateRequiresAction(AcpModel, frozen=True, kw_only=True):
    """Foreground work is blocked on user action."""

    state: Literal["requires_action"] = "requires_action"
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class StateUpdateUnknown(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    state: Literal["unknown"] = "unknown"
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class StateUpdateOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future session state."""

    state: str


class BackgroundWorkTerminal(AcpModel, frozen=True, kw_only=True):
    """A process that keeps running after its tool call returned control to the model. Live until its `terminal_update` reports `exitStatus`."""

    type: Literal["terminal"] = "terminal"
    terminal_id: TerminalId = msgspec.field(name="terminalId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class BackgroundWorkToolCall(AcpModel, frozen=True, kw_only=True):
    """Work started by a tool call that continues without a process of its own, such as a watcher, a workflow, or a scheduled wakeup. `pending` and `paused` tool calls stay listed."""

    type: Literal["tool_call"] = "tool_call"
    tool_call_id: ToolCallId = msgspec.field(name="toolCallId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class BackgroundWorkSubagent(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    type: Literal["subagent"] = "subagent"
    session_id: SessionId = msgspec.field(name="sessionId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class BackgroundWorkOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future background work."""

    type: str


class Error(AcpModel, frozen=True, kw_only=True):
    """JSON-RPC error object."""

    code: ErrorCode
    message: str
    data: Any = UNSET


class UnsupportedProtocolVersionErrorData(AcpModel, frozen=True, kw_only=True):
    """Data for the `-32022` (Unsupported protocol version) error."""

    requested: ProtocolVersion
    supported: list[ProtocolVersion]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionNotFoundErrorData(AcpModel, frozen=True, kw_only=True):
    """Data for the `-32002` (Resource not found) error when a session-scoped request names a session that does not exist or is not active."""

    session_id: SessionId = msgspec.field(name="sessionId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class Usage(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    total_tokens: int = msgspec.field(name="totalTokens")
    input_tokens: int = msgspec.field(name="inputTokens")
    output_tokens: int = msgspec.field(name="outputTokens")
    thought_tokens: int | UnsetType | None = msgspec.field(default=UNSET, name="thoughtTokens")
    cached_read_tokens: int | UnsetType | None = msgspec.field(default=UNSET, name="cachedReadTokens")
    cached_write_tokens: int | UnsetType | None = msgspec.field(default=UNSET, name="cachedWriteTokens")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SetSessionTitleResponse(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    title: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ResumeSessionResponse(AcpModel, frozen=True, kw_only=True):
    """Response from resuming an existing session."""

    config_options: list[SessionConfigOption] | UnsetType | None = msgspec.field(default=UNSET, name="configOptions")
    available_commands: list[AvailableCommand] | UnsetType | None = msgspec.field(
        default=UNSET, name="availableCommands"
    )
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CloseSessionResponse(AcpModel, frozen=True, kw_only=True):
    """Response from closing a session."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CancelToolCallResponse(AcpModel, frozen=True, kw_only=True):
    """Response from cancelling a tool call."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CancelTerminalResponse(AcpModel, frozen=True, kw_only=True):
    """Response from cancelling a terminal."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SetSessionConfigOptionResponse(AcpModel, frozen=True, kw_only=True):
    """Response to `session/set_config_option` method."""

    config_options: list[SessionConfigOption] = msgspec.field(name="configOptions")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class PromptResponse(AcpModel, frozen=True, kw_only=True):
    """Response acknowledging that a user prompt was inserted into the ACP conversation."""

    message_id: MessageId = msgspec.field(name="messageId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AgentNotification(AcpModel, frozen=True, kw_only=True):
    """A JSON-RPC notification object."""

    method: str
    params: Any = UNSET


class UpdateSessionNotification(AcpModel, frozen=True, kw_only=True):
    """Notification containing a session update from the agent."""

    session_id: SessionId = msgspec.field(name="sessionId")
    update: SessionUpdate
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateUserMessageChunk(AcpModel, frozen=True, kw_only=True):
    """A chunk of the user's message being streamed."""

    session_update: Literal["user_message_chunk"] = msgspec.field(default="user_message_chunk", name="sessionUpdate")
    message_id: MessageId = msgspec.field(name="messageId")
    content: ContentBlock
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateUserMessage(AcpModel, frozen=True, kw_only=True):
    """A user message has been created or updated."""

    session_update: Literal["user_message"] = msgspec.field(default="user_message", name="sessionUpdate")
    message_id: MessageId = msgspec.field(name="messageId")
    content: list[ContentBlock] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateAgentMessageChunk(AcpModel, frozen=True, kw_only=True):
    """A chunk of the agent's response being streamed."""

    session_update: Literal["agent_message_chunk"] = msgspec.field(default="agent_message_chunk", name="sessionUpdate")
    message_id: MessageId = msgspec.field(name="messageId")
    content: ContentBlock
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateAgentMessage(AcpModel, frozen=True, kw_only=True):
    """An agent message has been created or updated."""

    session_update: Literal["agent_message"] = msgspec.field(default="agent_message", name="sessionUpdate")
    message_id: MessageId = msgspec.field(name="messageId")
    content: list[ContentBlock] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateAgentThoughtChunk(AcpModel, frozen=True, kw_only=True):
    """A chunk of the agent's internal reasoning being streamed."""

    session_update: Literal["agent_thought_chunk"] = msgspec.field(default="agent_thought_chunk", name="sessionUpdate")
    message_id: MessageId = msgspec.field(name="messageId")
    content: ContentBlock
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateAgentThought(AcpModel, frozen=True, kw_only=True):
    """An agent thought or reasoning message has been created or updated."""

    session_update: Literal["agent_thought"] = msgspec.field(default="agent_thought", name="sessionUpdate")
    message_id: MessageId = msgspec.field(name="messageId")
    content: list[ContentBlock] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateStateUpdateRunning(AcpModel, frozen=True, kw_only=True):
    """Foreground work is in progress."""

    session_update: Literal["state_update"] = msgspec.field(default="state_update", name="sessionUpdate")
    state: Literal["running"] = "running"
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateStateUpdateIdleEndTurn(AcpModel, frozen=True, kw_only=True):
    """The active work ended successfully. Includes locally handled commands that required no model call."""

    session_update: Literal["state_update"] = msgspec.field(default="state_update", name="sessionUpdate")
    state: Literal["idle"] = "idle"
    stop_reason: Literal["end_turn"] = msgspec.field(default="end_turn", name="stopReason")
    usage: Usage | UnsetType | None = UNSET
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateStateUpdateIdleMaxTokens(AcpModel, frozen=True, kw_only=True):
    """The active work ended because the agent reached the maximum number of tokens."""

    session_update: Literal["state_update"] = msgspec.field(default="state_update", name="sessionUpdate")
    state: Literal["idle"] = "idle"
    stop_reason: Literal["max_tokens"] = msgspec.field(default="max_tokens", name="stopReason")
    usage: Usage | UnsetType | None = UNSET
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateStateUpdateIdleMaxTurnRequests(AcpModel, frozen=True, kw_only=True):
    """The active work ended because the agent reached the maximum number of model requests for the foreground work."""

    session_update: Literal["state_update"] = msgspec.field(default="state_update", name="sessionUpdate")
    state: Literal["idle"] = "idle"
    stop_reason: Literal["max_turn_requests"] = msgspec.field(default="max_turn_requests", name="stopReason")
    usage: Usage | UnsetType | None = UNSET
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateStateUpdateIdleRefusal(AcpModel, frozen=True, kw_only=True):
    """The active work ended because the agent refused to continue."""

    session_update: Literal["state_update"] = msgspec.field(default="state_update", name="sessionUpdate")
    state: Literal["idle"] = "idle"
    stop_reason: Literal["refusal"] = msgspec.field(default="refusal", name="stopReason")
    usage: Usage | UnsetType | None = UNSET
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateStateUpdateIdleCancelled(AcpModel, frozen=True, kw_only=True):
    """The user or client chose to stop the work: via `session/cancel`, by closing the session, or through an interaction the agent offers, such as a permission option that tells the agent to stop. Work the agent stops for its own reasons uses another reason, such as `error` for an internal timeout."""

    session_update: Literal["state_update"] = msgspec.field(default="state_update", name="sessionUpdate")
    state: Literal["idle"] = "idle"
    stop_reason: Literal["cancelled"] = msgspec.field(default="cancelled", name="stopReason")
    usage: Usage | UnsetType | None = UNSET
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateStateUpdateIdleError(AcpModel, frozen=True, kw_only=True):
    """The active work ended because something failed."""

    session_update: Literal["state_update"] = msgspec.field(default="state_update", name="sessionUpdate")
    state: Literal["idle"] = "idle"
    stop_reason: Literal["error"] = msgspec.field(default="error", name="stopReason")
    usage: Usage | UnsetType | None = UNSET
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    error: Error | UnsetType | None = UNSET


class SessionUpdateStateUpdateIdleOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future stop reason."""

    session_update: Literal["state_update"] = msgspec.field(default="state_update", name="sessionUpdate")
    state: Literal["idle"] = "idle"
    usage: Usage | UnsetType | None = UNSET
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    stop_reason: str = msgspec.field(name="stopReason")


class SessionUpdateStateUpdateIdleNone(AcpModel, frozen=True, kw_only=True):
    """No stop reason: `stopReason` is omitted or `null`."""

    session_update: Literal["state_update"] = msgspec.field(default="state_update", name="sessionUpdate")
    state: Literal["idle"] = "idle"
    usage: Usage | UnsetType | None = UNSET
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateStateUpdateRequiresAction(AcpModel, frozen=True, kw_only=True):
    """Foreground work is blocked on user action."""

    session_update: Literal["state_update"] = msgspec.field(default="state_update", name="sessionUpdate")
    state: Literal["requires_action"] = "requires_action"
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateStateUpdateUnknown(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    session_update: Literal["state_update"] = msgspec.field(default="state_update", name="sessionUpdate")
    state: Literal["unknown"] = "unknown"
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateStateUpdateOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future session state."""

    session_update: Literal["state_update"] = msgspec.field(default="state_update", name="sessionUpdate")
    state: str


class SessionUpdateToolCallContentChunk(AcpModel, frozen=True, kw_only=True):
    """A chunk of tool-call content being streamed."""

    session_update: Literal["tool_call_content_chunk"] = msgspec.field(
        default="tool_call_content_chunk", name="sessionUpdate"
    )
    tool_call_id: ToolCallId = msgspec.field(name="toolCallId")
    content: ToolCallContent
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateToolCallUpdate(AcpModel, frozen=True, kw_only=True):
    """A tool call has been created or updated."""

    session_update: Literal["tool_call_update"] = msgspec.field(default="tool_call_update", name="sessionUpdate")
    tool_call_id: ToolCallId = msgspec.field(name="toolCallId")
    name: str | UnsetType | None = UNSET
    title: str | UnsetType | None = UNSET
    kind: ToolKind | UnsetType | None = UNSET
    status: ToolCallStatus | UnsetType | None = UNSET
    content: list[ToolCallContent] | UnsetType | None = UNSET
    locations: list[ToolCallLocation] | UnsetType | None = UNSET
    raw_input: Any = msgspec.field(default=UNSET, name="rawInput")
    raw_output: Any = msgspec.field(default=UNSET, name="rawOutput")
    capabilities: ToolCallCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateTerminalUpdate(AcpModel, frozen=True, kw_only=True):
    """An agent-owned terminal has been created or updated."""

    session_update: Literal["terminal_update"] = msgspec.field(default="terminal_update", name="sessionUpdate")
    terminal_id: TerminalId = msgspec.field(name="terminalId")
    command: str | UnsetType | None = UNSET
    cwd: AbsolutePath | UnsetType | None = UNSET
    output: TerminalOutput | UnsetType | None = UNSET
    exit_status: TerminalExitStatus | UnsetType | None = msgspec.field(default=UNSET, name="exitStatus")
    size: TerminalSize | UnsetType | None = UNSET
    capabilities: TerminalCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateTerminalOutputChunk(AcpModel, frozen=True, kw_only=True):
    """A chunk of bytes appended to an agent-owned terminal's output."""

    session_update: Literal["terminal_output_chunk"] = msgspec.field(
        default="terminal_output_chunk", name="sessionUpdate"
    )
    terminal_id: TerminalId = msgspec.field(name="terminalId")
    data: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdatePlanUpdate(AcpModel, frozen=True, kw_only=True):
    """A content update for a plan identified by ID. See protocol docs: [Agent Plan](https://agentclientprotocol.com/protocol/v2/draft/agent-plan)"""

    session_update: Literal["plan_update"] = msgspec.field(default="plan_update", name="sessionUpdate")
    plan: PlanUpdateContent
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdatePlanRemoved(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    session_update: Literal["plan_removed"] = msgspec.field(default="plan_removed", name="sessionUpdate")
    plan_id: PlanId = msgspec.field(name="planId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateAvailableCommandsUpdate(AcpModel, frozen=True, kw_only=True):
    """Available commands are ready or have changed"""

    session_update: Literal["available_commands_update"] = msgspec.field(
        default="available_commands_update", name="sessionUpdate"
    )
    available_commands: list[AvailableCommand] = msgspec.field(name="availableCommands")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateConfigOptionUpdate(AcpModel, frozen=True, kw_only=True):
    """Session configuration options have been updated."""

    session_update: Literal["config_option_update"] = msgspec.field(
        default="config_option_update", name="sessionUpdate"
    )
    config_options: list[SessionConfigOption] = msgspec.field(name="configOptions")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateSessionInfoUpdate(AcpModel, frozen=True, kw_only=True):
    """Session metadata has been updated (title, timestamps, custom metadata)"""

    session_update: Literal["session_info_update"] = msgspec.field(default="session_info_update", name="sessionUpdate")
    title: str | UnsetType | None = UNSET
    updated_at: str | UnsetType | None = msgspec.field(default=UNSET, name="updatedAt")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateUsageUpdate(AcpModel, frozen=True, kw_only=True):
    """Context window and cost update for the session."""

    session_update: Literal["usage_update"] = msgspec.field(default="usage_update", name="sessionUpdate")
    used: int
    size: int
    cost: Cost | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateNotice(AcpModel, frozen=True, kw_only=True):
    """Information for the user that is not part of session history."""

    session_update: Literal["notice"] = msgspec.field(default="notice", name="sessionUpdate")
    severity: NoticeSeverity
    title: str
    description: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateCompactionUpdate(AcpModel, frozen=True, kw_only=True):
    """A context compaction has been created or updated."""

    session_update: Literal["compaction_update"] = msgspec.field(default="compaction_update", name="sessionUpdate")
    compaction_id: CompactionId = msgspec.field(name="compactionId")
    status: CompactionStatus
    summary: list[ContentBlock] | UnsetType | None = UNSET
    error: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateCompactionSummaryChunk(AcpModel, frozen=True, kw_only=True):
    """A content block appended to a context compaction's retained summary."""

    session_update: Literal["compaction_summary_chunk"] = msgspec.field(
        default="compaction_summary_chunk", name="sessionUpdate"
    )
    compaction_id: CompactionId = msgspec.field(name="compactionId")
    content: ContentBlock
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateSubagentUpdate(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    session_update: Literal["subagent_update"] = msgspec.field(default="subagent_update", name="sessionUpdate")
    session_id: SessionId = msgspec.field(name="sessionId")
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    capabilities: SubagentSessionCapabilities | UnsetType | None = UNSET
    state: StateUpdate | UnsetType | None = UNSET
    cwd: AbsolutePath | UnsetType | None = UNSET
    additional_directories: list[AbsolutePath] | UnsetType | None = msgspec.field(
        default=UNSET, name="additionalDirectories"
    )
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateSessionMessage(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    session_update: Literal["session_message"] = msgspec.field(default="session_message", name="sessionUpdate")
    message_id: MessageId = msgspec.field(name="messageId")
    sender_session_id: SessionId | UnsetType | None = msgspec.field(default=UNSET, name="senderSessionId")
    recipient_session_id: SessionId | UnsetType | None = msgspec.field(default=UNSET, name="recipientSessionId")
    sender_message_id: MessageId | UnsetType | None = msgspec.field(default=UNSET, name="senderMessageId")
    recipient_message_id: MessageId | UnsetType | None = msgspec.field(default=UNSET, name="recipientMessageId")
    content: list[ContentBlock] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateSessionMessageChunk(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    session_update: Literal["session_message_chunk"] = msgspec.field(
        default="session_message_chunk", name="sessionUpdate"
    )
    message_id: MessageId = msgspec.field(name="messageId")
    content: ContentBlock
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionUpdateOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future session update."""

    session_update: str = msgspec.field(name="sessionUpdate")


class TerminalOutput(AcpModel, frozen=True, kw_only=True):
    """An authoritative replacement snapshot of terminal output bytes."""

    data: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class TerminalExitStatus(AcpModel, frozen=True, kw_only=True):
    """Exit information for an agent-owned terminal."""

    exit_code: int | UnsetType | None = msgspec.field(default=UNSET, name="exitCode")
    signal: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class TerminalSize(AcpModel, frozen=True, kw_only=True):
    """The size of an agent-owned terminal in character cells."""

    cols: int
    rows: int
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class TerminalCapabilities(AcpModel, frozen=True, kw_only=True):
    """Client-initiated controls a terminal currently supports."""

    cancel: TerminalCancelCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class TerminalCancelCapabilities(AcpModel, frozen=True, kw_only=True):
    """Capability to cancel a terminal with `terminal/cancel`."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class PlanUpdateContentItems(AcpModel, frozen=True, kw_only=True):
    """Structured plan entries."""

    type: Literal["items"] = "items"
    plan_id: PlanId = msgspec.field(name="planId")
    entries: list[PlanEntry]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class PlanUpdateContentFile(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    type: Literal["file"] = "file"
    plan_id: PlanId = msgspec.field(name="planId")
    uri: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class PlanUpdateContentMarkdown(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    type: Literal["markdown"] = "markdown"
    plan_id: PlanId = msgspec.field(name="planId")
    content: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class PlanUpdateContentOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future plan update content."""

    type: str
    plan_id: PlanId = msgspec.field(name="planId")


class PlanEntry(AcpModel, frozen=True, kw_only=True):
    """A single entry in the execution plan."""

    content: str
    priority: PlanEntryPriority
    status: PlanEntryStatus
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class Cost(AcpModel, frozen=True, kw_only=True):
    """Cost information for a session."""

    amount: float
    currency: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SubagentSessionCapabilities(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    cancel: SessionCancelCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionCancelCapabilities(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CompleteElicitationNotification(AcpModel, frozen=True, kw_only=True):
    """Notification sent by the agent when a URL-based elicitation is complete."""

    elicitation_id: ElicitationId = msgspec.field(name="elicitationId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AuthStatusUpdateNotification(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    state: AuthState
    accounts: list[AuthAccount] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ClientRequest(AcpModel, frozen=True, kw_only=True):
    """A JSON-RPC request object."""

    id: RequestId
    method: str
    params: Any = UNSET


class InitializeRequest(AcpModel, frozen=True, kw_only=True):
    """Request parameters for the initialize method."""

    protocol_version: ProtocolVersion = msgspec.field(name="protocolVersion")
    info: Implementation
    capabilities: ClientCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ClientCapabilities(AcpModel, frozen=True, kw_only=True):
    """Capabilities supported by the client."""

    auth: ClientAuthCapabilities | UnsetType | None = UNSET
    elicitation: ElicitationCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ClientAuthCapabilities(AcpModel, frozen=True, kw_only=True):
    """Authentication capabilities supported by the client."""

    terminal: TerminalAuthCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class TerminalAuthCapabilities(AcpModel, frozen=True, kw_only=True):
    """Capabilities for terminal authentication methods."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ElicitationCapabilities(AcpModel, frozen=True, kw_only=True):
    """Elicitation capabilities supported by the client."""

    form: ElicitationFormCapabilities | UnsetType | None = UNSET
    url: ElicitationUrlCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ElicitationFormCapabilities(AcpModel, frozen=True, kw_only=True):
    """Form-based elicitation capabilities."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ElicitationUrlCapabilities(AcpModel, frozen=True, kw_only=True):
    """URL-based elicitation capabilities."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class LoginAuthRequest(AcpModel, frozen=True, kw_only=True):
    """Request parameters for the `auth/login` method."""

    method_id: AuthMethodId = msgspec.field(name="methodId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ListProvidersRequest(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SetProviderRequest(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    provider_id: ProviderId = msgspec.field(name="providerId")
    api_type: LlmProtocol = msgspec.field(name="apiType")
    base_url: str = msgspec.field(name="baseUrl")
    headers: dict[str, str] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class DisableProviderRequest(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    provider_id: ProviderId = msgspec.field(name="providerId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class LogoutAuthRequest(AcpModel, frozen=True, kw_only=True):
    """Request parameters for the `auth/logout` method."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AuthStatusRequest(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class NewSessionRequest(AcpModel, frozen=True, kw_only=True):
    """Request parameters for creating a new session."""

    cwd: AbsolutePath
    additional_directories: list[AbsolutePath] | UnsetType | None = msgspec.field(
        default=UNSET, name="additionalDirectories"
    )
    mcp_servers: list[McpServer] | UnsetType | None = msgspec.field(default=UNSET, name="mcpServers")
    system_prompt: SystemPrompt | UnsetType | None = msgspec.field(default=UNSET, name="systemPrompt")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class McpServerHttp(AcpModel, frozen=True, kw_only=True):
    """HTTP transport configuration"""

    type: Literal["http"] = "http"
    name: str
    url: str
    headers: list[HttpHeader] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class McpServerAcp(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    type: Literal["acp"] = "acp"
    name: str
    server_id: McpServerAcpId = msgspec.field(name="serverId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class McpServerStdio(AcpModel, frozen=True, kw_only=True):
    """Stdio transport configuration"""

    type: Literal["stdio"] = "stdio"
    name: str
    command: AbsolutePath
    args: list[str] | UnsetType | None = UNSET
    env: list[EnvVariable] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class McpServerOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future MCP server transport configuration."""

    type: str


class HttpHeader(AcpModel, frozen=True, kw_only=True):
    """An HTTP header to set when making requests to the MCP server."""

    name: str
    value: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SystemPrompt(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    mode: SystemPromptMode
    content: list[ContentBlock]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ListSessionsRequest(AcpModel, frozen=True, kw_only=True):
    """Request parameters for listing existing sessions."""

    cwd: AbsolutePath | UnsetType | None = UNSET
    cursor: SessionListCursor | UnsetType | None = UNSET
    archived: SessionArchiveFilter | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class DeleteSessionRequest(AcpModel, frozen=True, kw_only=True):
    """Request parameters for deleting an existing session from `session/list`."""

    session_id: SessionId = msgspec.field(name="sessionId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ForkSessionRequest(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    session_id: SessionId = msgspec.field(name="sessionId")
    cwd: AbsolutePath
    additional_directories: list[AbsolutePath] | UnsetType | None = msgspec.field(
        default=UNSET, name="additionalDirectories"
    )
    mcp_servers: list[McpServer] | UnsetType | None = msgspec.field(default=UNSET, name="mcpServers")
    system_prompt: SystemPrompt | UnsetType | None = msgspec.field(default=UNSET, name="systemPrompt")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ArchiveSessionRequest(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    session_id: SessionId = msgspec.field(name="sessionId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class UnarchiveSessionRequest(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    session_id: SessionId = msgspec.field(name="sessionId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionStatusRequest(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    session_id: SessionId = msgspec.field(name="sessionId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SetSessionTitleRequest(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    session_id: SessionId = msgspec.field(name="sessionId")
    title: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ResumeSessionRequest(AcpModel, frozen=True, kw_only=True):
    """Request parameters for resuming an existing session."""

    session_id: SessionId = msgspec.field(name="sessionId")
    cwd: AbsolutePath
    additional_directories: list[AbsolutePath] | UnsetType | None = msgspec.field(
        default=UNSET, name="additionalDirectories"
    )
    mcp_servers: list[McpServer] | UnsetType | None = msgspec.field(default=UNSET, name="mcpServers")
    replay_from: ReplayFrom | UnsetType | None = msgspec.field(default=UNSET, name="replayFrom")
    system_prompt: SystemPrompt | UnsetType | None = msgspec.field(default=UNSET, name="systemPrompt")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ReplayFromStart(AcpModel, frozen=True, kw_only=True):
    """Replay all retained conversation history from its first replayable entry."""

    type: Literal["start"] = "start"
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ReplayFromOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future replay cursor."""

    type: str


class CloseSessionRequest(AcpModel, frozen=True, kw_only=True):
    """Request parameters for closing an active session."""

    session_id: SessionId = msgspec.field(name="sessionId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CancelToolCallRequest(AcpModel, frozen=True, kw_only=True):
    """Request parameters for cancelling one tool call."""

    session_id: SessionId = msgspec.field(name="sessionId")
    tool_call_id: ToolCallId = msgspec.field(name="toolCallId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CancelTerminalRequest(AcpModel, frozen=True, kw_only=True):
    """Request parameters for cancelling one terminal."""

    session_id: SessionId = msgspec.field(name="sessionId")
    terminal_id: TerminalId = msgspec.field(name="terminalId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SetSessionConfigOptionRequestId(AcpModel, frozen=True, kw_only=True):
    """A `SessionConfigValueId` string value (`type: "id"`)."""

    type: Literal["id"] = "id"
    session_id: SessionId = msgspec.field(name="sessionId")
    config_id: SessionConfigId = msgspec.field(name="configId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    value: SessionConfigValueId


class SetSessionConfigOptionRequestBoolean(AcpModel, frozen=True, kw_only=True):
    """A boolean value (`type: "boolean"`)."""

    type: Literal["boolean"] = "boolean"
    session_id: SessionId = msgspec.field(name="sessionId")
    config_id: SessionConfigId = msgspec.field(name="configId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    value: bool


class SetSessionConfigOptionRequestOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future session configuration option value payload."""

    session_id: SessionId = msgspec.field(name="sessionId")
    config_id: SessionConfigId = msgspec.field(name="configId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    type: str
    value: Any


class PromptRequest(AcpModel, frozen=True, kw_only=True):
    """Request parameters for sending a user prompt to the agent."""

    session_id: SessionId = msgspec.field(name="sessionId")
    prompt: list[ContentBlock]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ClientResponseResult(AcpModel, frozen=True, kw_only=True):
    """A successful JSON-RPC response."""

    id: RequestId
    result: Any


class ClientResponseError(AcpModel, frozen=True, kw_only=True):
    """A failed JSON-RPC response."""

    id: int | str | None
    error: Error


class RequestPermissionResponse(AcpModel, frozen=True, kw_only=True):
    """Response to a permission request."""

    outcome: RequestPermissionOutcome
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class RequestPermissionOutcomeCancelled(AcpModel, frozen=True, kw_only=True):
    """The request was not approved and no option was selected: the session's work was cancelled, the user dismissed the prompt, or the client declined it by policy. Agents MUST NOT proceed with the operation."""

    outcome: Literal["cancelled"] = "cancelled"
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class RequestPermissionOutcomeSelected(AcpModel, frozen=True, kw_only=True):
    """The user selected one of the provided options."""

    outcome: Literal["selected"] = "selected"
    option_id: PermissionOptionId = msgspec.field(name="optionId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class RequestPermissionOutcomeOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future permission outcome."""

    outcome: str


class CreateElicitationResponseAccept(AcpModel, frozen=True, kw_only=True):
    """The user accepted and provided content."""

    action: Literal["accept"] = "accept"
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    content: dict[str, ElicitationContentValue] | UnsetType | None = UNSET


class CreateElicitationResponseDecline(AcpModel, frozen=True, kw_only=True):
    """The user declined the elicitation."""

    action: Literal["decline"] = "decline"
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CreateElicitationResponseCancel(AcpModel, frozen=True, kw_only=True):
    """The elicitation was cancelled."""

    action: Literal["cancel"] = "cancel"
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CreateElicitationResponseOther(AcpModel, frozen=True, kw_only=True):
    """Custom or future elicitation action."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
    action: str


class MessageMcpResponseResult(AcpModel, frozen=True, kw_only=True):
    """An opaque inner MCP result."""

    result: Any
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class MessageMcpResponseError(AcpModel, frozen=True, kw_only=True):
    """A structured inner MCP error."""

    error: McpError
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class McpError(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    code: int
    message: str
    data: Any = UNSET


class ClientNotification(AcpModel, frozen=True, kw_only=True):
    """A JSON-RPC notification object."""

    method: str
    params: Any = UNSET


class CancelSessionNotification(AcpModel, frozen=True, kw_only=True):
    """Notification to cancel a session's foreground work and its prompts not yet inserted."""

    session_id: SessionId = msgspec.field(name="sessionId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class MessageMcpNotification(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    server_id: McpServerAcpId = msgspec.field(name="serverId")
    request_id: McpRequestId = msgspec.field(name="requestId")
    method: str
    params: dict[str, Any] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CancelRequestNotification(AcpModel, frozen=True, kw_only=True):
    """Notification to cancel an ongoing request."""

    request_id: RequestId = msgspec.field(name="requestId")
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ProxyRequest(AcpModel, frozen=True, kw_only=True):
    """A JSON-RPC request object."""

    id: RequestId
    method: str
    params: ProxyRequestParams | UnsetType | None = UNSET


class ProxySuccessorRequest(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    method: str
    params: Any = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ProxyResponseResult(AcpModel, frozen=True, kw_only=True):
    """A successful JSON-RPC response."""

    id: RequestId
    result: Any


class ProxyResponseError(AcpModel, frozen=True, kw_only=True):
    """A failed JSON-RPC response."""

    id: int | str | None
    error: Error


class ProxyNotification(AcpModel, frozen=True, kw_only=True):
    """A JSON-RPC notification object."""

    method: str
    params: ProxySuccessorNotification | UnsetType | None = UNSET


class ProxySuccessorNotification(AcpModel, frozen=True, kw_only=True):
    """**UNSTABLE**"""

    method: str
    params: Any = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


RequestId: TypeAlias = int | str
SessionId: TypeAlias = str
if TYPE_CHECKING:
    RequestPermissionSubject: TypeAlias = (
        RequestPermissionSubjectToolCall | RequestPermissionSubjectCommand | RequestPermissionSubjectOther
    )
else:
    RequestPermissionSubject = tagged_union(
        "RequestPermissionSubject",
        "type",
        {"tool_call": RequestPermissionSubjectToolCall, "command": RequestPermissionSubjectCommand},
        other=RequestPermissionSubjectOther,
        default=None,
    )
ToolCallId: TypeAlias = str
ToolKind: TypeAlias = (
    Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"] | str
)
ToolCallStatus: TypeAlias = Literal["pending", "in_progress", "paused", "completed", "failed", "cancelled"] | str
if TYPE_CHECKING:
    ToolCallContent: TypeAlias = (
        ToolCallContentContent | ToolCallContentDiff | ToolCallContentTerminal | ToolCallContentOther
    )
else:
    ToolCallContent = tagged_union(
        "ToolCallContent",
        "type",
        {"content": ToolCallContentContent, "diff": ToolCallContentDiff, "terminal": ToolCallContentTerminal},
        other=ToolCallContentOther,
        default=None,
    )
if TYPE_CHECKING:
    ContentBlock: TypeAlias = (
        ContentBlockText
        | ContentBlockImage
        | ContentBlockAudio
        | ContentBlockResourceLink
        | ContentBlockResource
        | ContentBlockOther
    )
else:
    ContentBlock = tagged_union(
        "ContentBlock",
        "type",
        {
            "text": ContentBlockText,
            "image": ContentBlockImage,
            "audio": ContentBlockAudio,
            "resource_link": ContentBlockResourceLink,
            "resource": ContentBlockResource,
        },
        other=ContentBlockOther,
        default=None,
    )
Role: TypeAlias = Literal["assistant", "user"] | str
MediaType: TypeAlias = str
IconTheme: TypeAlias = Literal["light", "dark"] | str
if TYPE_CHECKING:
    EmbeddedResourceResource: TypeAlias = TextResourceContents | BlobResourceContents
else:
    EmbeddedResourceResource = plain_union(
        "EmbeddedResourceResource",
        (
            TextResourceContents,
            BlobResourceContents,
        ),
    )
if TYPE_CHECKING:
    DiffChange: TypeAlias = (
        DiffChangeAdd | DiffChangeDelete | DiffChangeModify | DiffChangeMove | DiffChangeCopy | DiffChangeOther
    )
else:
    DiffChange = tagged_union(
        "DiffChange",
        "operation",
        {
            "add": DiffChangeAdd,
            "delete": DiffChangeDelete,
            "modify": DiffChangeModify,
            "move": DiffChangeMove,
            "copy": DiffChangeCopy,
        },
        other=DiffChangeOther,
        default=None,
    )
DiffFileType: TypeAlias = Literal["text", "binary", "directory", "symlink"] | str
AbsolutePath: TypeAlias = str
DiffPatchFormat: TypeAlias = Literal["git_patch"] | str
TerminalId: TypeAlias = str
PermissionOptionId: TypeAlias = str
PermissionOptionKind: TypeAlias = Literal["allow_once", "allow_always", "reject_once", "reject_always"] | str
if TYPE_CHECKING:
    CreateElicitationRequest: TypeAlias = (
        CreateElicitationRequestForm | CreateElicitationRequestUrl | CreateElicitationRequestOther
    )
else:
    CreateElicitationRequest = tagged_union(
        "CreateElicitationRequest",
        "mode",
        {"form": CreateElicitationRequestForm, "url": CreateElicitationRequestUrl},
        other=CreateElicitationRequestOther,
        default=None,
    )
ElicitationSchemaType: TypeAlias = Literal["object"]
if TYPE_CHECKING:
    ElicitationPropertySchema: TypeAlias = (
        ElicitationPropertySchemaString
        | ElicitationPropertySchemaNumber
        | ElicitationPropertySchemaInteger
        | ElicitationPropertySchemaBoolean
        | ElicitationPropertySchemaArray
        | ElicitationPropertySchemaOther
    )
else:
    ElicitationPropertySchema = tagged_union(
        "ElicitationPropertySchema",
        "type",
        {
            "string": ElicitationPropertySchemaString,
            "number": ElicitationPropertySchemaNumber,
            "integer": ElicitationPropertySchemaInteger,
            "boolean": ElicitationPropertySchemaBoolean,
            "array": ElicitationPropertySchemaArray,
        },
        other=ElicitationPropertySchemaOther,
        default=None,
    )
StringFormat: TypeAlias = Literal["email", "uri", "date", "date-time"] | str
if TYPE_CHECKING:
    MultiSelectItems: TypeAlias = MultiSelectItemsString | MultiSelectItemsOther | MultiSelectItemsTitled
else:
    MultiSelectItems = tagged_union(
        "MultiSelectItems",
        "type",
        {"string": MultiSelectItemsString},
        other=MultiSelectItemsOther,
        default=MultiSelectItemsTitled,
    )
ElicitationId: TypeAlias = str
McpServerAcpId: TypeAlias = str
McpRequestId: TypeAlias = str
ExtRequest: TypeAlias = Any
if TYPE_CHECKING:
    AgentResponse: TypeAlias = AgentResponseResult | AgentResponseError
else:
    AgentResponse = plain_union(
        "AgentResponse",
        (
            AgentResponseResult,
            AgentResponseError,
        ),
    )
ProtocolVersion: TypeAlias = int
if TYPE_CHECKING:
    AuthMethod: TypeAlias = AuthMethodTerminal | AuthMethodAgent | AuthMethodOther
else:
    AuthMethod = tagged_union(
        "AuthMethod",
        "type",
        {"terminal": AuthMethodTerminal, "agent": AuthMethodAgent},
        other=AuthMethodOther,
        default=None,
    )
AuthMethodId: TypeAlias = str
ProviderId: TypeAlias = str
LlmProtocol: TypeAlias = Literal["anthropic", "openai", "azure", "vertex", "bedrock"] | str
AuthState: TypeAlias = Literal["authenticated", "unauthenticated", "not_required", "unknown"] | str
if TYPE_CHECKING:
    SessionConfigOption: TypeAlias = SessionConfigOptionSelect | SessionConfigOptionBoolean | SessionConfigOptionOther
else:
    SessionConfigOption = tagged_union(
        "SessionConfigOption",
        "type",
        {"select": SessionConfigOptionSelect, "boolean": SessionConfigOptionBoolean},
        other=SessionConfigOptionOther,
        default=None,
    )
SessionConfigId: TypeAlias = str
SessionConfigOptionCategory: TypeAlias = Literal["mode", "model", "model_config", "thought_level"] | str
SessionConfigValueId: TypeAlias = str
if TYPE_CHECKING:
    SessionConfigSelectOptions: TypeAlias = list[SessionConfigSelectOption] | list[SessionConfigSelectGroup]
else:
    SessionConfigSelectOptions = plain_union(
        "SessionConfigSelectOptions",
        (
            list[SessionConfigSelectOption],
            list[SessionConfigSelectGroup],
        ),
    )
SessionConfigGroupId: TypeAlias = str
if TYPE_CHECKING:
    AvailableCommand: TypeAlias = AvailableCommandCommand | AvailableCommandOther
else:
    AvailableCommand = tagged_union(
        "AvailableCommand", "type", {"command": AvailableCommandCommand}, other=AvailableCommandOther, default=None
    )
if TYPE_CHECKING:
    AvailableCommandInput: TypeAlias = AvailableCommandInputText | AvailableCommandInputOther
else:
    AvailableCommandInput = tagged_union(
        "AvailableCommandInput",
        "type",
        {"text": AvailableCommandInputText},
        other=AvailableCommandInputOther,
        default=None,
    )
SessionListCursor: TypeAlias = str
SessionStatus: TypeAlias = Literal["open", "saved"] | str
if TYPE_CHECKING:
    StateUpdateIdle: TypeAlias = (
        StateUpdateIdleEndTurn
        | StateUpdateIdleMaxTokens
        | StateUpdateIdleMaxTurnRequests
        | StateUpdateIdleRefusal
        | StateUpdateIdleCancelled
        | StateUpdateIdleError
        | StateUpdateIdleOther
        | StateUpdateIdleNone
    )
else:
    StateUpdateIdle = tagged_union(
        "StateUpdateIdle",
        "stopReason",
        {
            "end_turn": StateUpdateIdleEndTurn,
            "max_tokens": StateUpdateIdleMaxTokens,
            "max_turn_requests": StateUpdateIdleMaxTurnRequests,
            "refusal": StateUpdateIdleRefusal,
            "cancelled": StateUpdateIdleCancelled,
            "error": StateUpdateIdleError,
        },
        other=StateUpdateIdleOther,
        default=StateUpdateIdleNone,
    )
if TYPE_CHECKING:
    StateUpdate: TypeAlias = (
        StateUpdateRunning | StateUpdateIdle | StateUpdateRequiresAction | StateUpdateUnknown | StateUpdateOther
    )
else:
    StateUpdate = tagged_union(
        "StateUpdate",
        "state",
        {
            "running": StateUpdateRunning,
            "idle": StateUpdateIdle,
            "requires_action": StateUpdateRequiresAction,
            "unknown": StateUpdateUnknown,
        },
        other=StateUpdateOther,
        default=None,
    )
if TYPE_CHECKING:
    BackgroundWork: TypeAlias = (
        BackgroundWorkTerminal | BackgroundWorkToolCall | BackgroundWorkSubagent | BackgroundWorkOther
    )
else:
    BackgroundWork = tagged_union(
        "BackgroundWork",
        "type",
        {"terminal": BackgroundWorkTerminal, "tool_call": BackgroundWorkToolCall, "subagent": BackgroundWorkSubagent},
        other=BackgroundWorkOther,
        default=None,
    )
ErrorCode: TypeAlias = Literal[-32700, -32600, -32601, -32602, -32603, -32800, -32000, -32002, -32022] | int
ErrorData: TypeAlias = Any
MessageId: TypeAlias = str
ExtResponse: TypeAlias = Any
if TYPE_CHECKING:
    SessionUpdateStateUpdateIdle: TypeAlias = (
        SessionUpdateStateUpdateIdleEndTurn
        | SessionUpdateStateUpdateIdleMaxTokens
        | SessionUpdateStateUpdateIdleMaxTurnRequests
        | SessionUpdateStateUpdateIdleRefusal
        | SessionUpdateStateUpdateIdleCancelled
        | SessionUpdateStateUpdateIdleError
        | SessionUpdateStateUpdateIdleOther
        | SessionUpdateStateUpdateIdleNone
    )
else:
    SessionUpdateStateUpdateIdle = tagged_union(
        "SessionUpdateStateUpdateIdle",
        "stopReason",
        {
            "end_turn": SessionUpdateStateUpdateIdleEndTurn,
            "max_tokens": SessionUpdateStateUpdateIdleMaxTokens,
            "max_turn_requests": SessionUpdateStateUpdateIdleMaxTurnRequests,
            "refusal": SessionUpdateStateUpdateIdleRefusal,
            "cancelled": SessionUpdateStateUpdateIdleCancelled,
            "error": SessionUpdateStateUpdateIdleError,
        },
        other=SessionUpdateStateUpdateIdleOther,
        default=SessionUpdateStateUpdateIdleNone,
    )
if TYPE_CHECKING:
    SessionUpdateStateUpdate: TypeAlias = (
        SessionUpdateStateUpdateRunning
        | SessionUpdateStateUpdateIdle
        | SessionUpdateStateUpdateRequiresAction
        | SessionUpdateStateUpdateUnknown
        | SessionUpdateStateUpdateOther
    )
else:
    SessionUpdateStateUpdate = tagged_union(
        "SessionUpdateStateUpdate",
        "state",
        {
            "running": SessionUpdateStateUpdateRunning,
            "idle": SessionUpdateStateUpdateIdle,
            "requires_action": SessionUpdateStateUpdateRequiresAction,
            "unknown": SessionUpdateStateUpdateUnknown,
        },
        other=SessionUpdateStateUpdateOther,
        default=None,
    )
if TYPE_CHECKING:
    SessionUpdate: TypeAlias = (
        SessionUpdateUserMessageChunk
        | SessionUpdateUserMessage
        | SessionUpdateAgentMessageChunk
        | SessionUpdateAgentMessage
        | SessionUpdateAgentThoughtChunk
        | SessionUpdateAgentThought
        | SessionUpdateStateUpdate
        | SessionUpdateToolCallContentChunk
        | SessionUpdateToolCallUpdate
        | SessionUpdateTerminalUpdate
        | SessionUpdateTerminalOutputChunk
        | SessionUpdatePlanUpdate
        | SessionUpdatePlanRemoved
        | SessionUpdateAvailableCommandsUpdate
        | SessionUpdateConfigOptionUpdate
        | SessionUpdateSessionInfoUpdate
        | SessionUpdateUsageUpdate
        | SessionUpdateNotice
        | SessionUpdateCompactionUpdate
        | SessionUpdateCompactionSummaryChunk
        | SessionUpdateSubagentUpdate
        | SessionUpdateSessionMessage
        | SessionUpdateSessionMessageChunk
        | SessionUpdateOther
    )
else:
    SessionUpdate = tagged_union(
        "SessionUpdate",
        "sessionUpdate",
        {
            "user_message_chunk": SessionUpdateUserMessageChunk,
            "user_message": SessionUpdateUserMessage,
            "agent_message_chunk": SessionUpdateAgentMessageChunk,
            "agent_message": SessionUpdateAgentMessage,
            "agent_thought_chunk": SessionUpdateAgentThoughtChunk,
            "agent_thought": SessionUpdateAgentThought,
            "state_update": SessionUpdateStateUpdate,
            "tool_call_content_chunk": SessionUpdateToolCallContentChunk,
            "tool_call_update": SessionUpdateToolCallUpdate,
            "terminal_update": SessionUpdateTerminalUpdate,
            "terminal_output_chunk": SessionUpdateTerminalOutputChunk,
            "plan_update": SessionUpdatePlanUpdate,
            "plan_removed": SessionUpdatePlanRemoved,
            "available_commands_update": SessionUpdateAvailableCommandsUpdate,
            "config_option_update": SessionUpdateConfigOptionUpdate,
            "session_info_update": SessionUpdateSessionInfoUpdate,
            "usage_update": SessionUpdateUsageUpdate,
            "notice": SessionUpdateNotice,
            "compaction_update": SessionUpdateCompactionUpdate,
            "compaction_summary_chunk": SessionUpdateCompactionSummaryChunk,
            "subagent_update": SessionUpdateSubagentUpdate,
            "session_message": SessionUpdateSessionMessage,
            "session_message_chunk": SessionUpdateSessionMessageChunk,
        },
        other=SessionUpdateOther,
        default=None,
    )
if TYPE_CHECKING:
    PlanUpdateContent: TypeAlias = (
        PlanUpdateContentItems | PlanUpdateContentFile | PlanUpdateContentMarkdown | PlanUpdateContentOther
    )
else:
    PlanUpdateContent = tagged_union(
        "PlanUpdateContent",
        "type",
        {"items": PlanUpdateContentItems, "file": PlanUpdateContentFile, "markdown": PlanUpdateContentMarkdown},
        other=PlanUpdateContentOther,
        default=None,
    )
PlanId: TypeAlias = str
PlanEntryPriority: TypeAlias = Literal["high", "medium", "low"] | str
PlanEntryStatus: TypeAlias = Literal["pending", "in_progress", "completed", "cancelled"] | str
NoticeSeverity: TypeAlias = Literal["info", "warning", "error"] | str
CompactionId: TypeAlias = str
CompactionStatus: TypeAlias = Literal["in_progress", "completed", "failed", "cancelled"] | str
ExtNotification: TypeAlias = Any
if TYPE_CHECKING:
    McpServer: TypeAlias = McpServerHttp | McpServerAcp | McpServerStdio | McpServerOther
else:
    McpServer = tagged_union(
        "McpServer",
        "type",
        {"http": McpServerHttp, "acp": McpServerAcp, "stdio": McpServerStdio},
        other=McpServerOther,
        default=None,
    )
SystemPromptMode: TypeAlias = Literal["append", "override"] | str
SessionArchiveFilter: TypeAlias = Literal["exclude", "include", "only"] | str
if TYPE_CHECKING:
    ReplayFrom: TypeAlias = ReplayFromStart | ReplayFromOther
else:
    ReplayFrom = tagged_union("ReplayFrom", "type", {"start": ReplayFromStart}, other=ReplayFromOther, default=None)
if TYPE_CHECKING:
    SetSessionConfigOptionRequest: TypeAlias = (
        SetSessionConfigOptionRequestId | SetSessionConfigOptionRequestBoolean | SetSessionConfigOptionRequestOther
    )
else:
    SetSessionConfigOptionRequest = tagged_union(
        "SetSessionConfigOptionRequest",
        "type",
        {"id": SetSessionConfigOptionRequestId, "boolean": SetSessionConfigOptionRequestBoolean},
        other=SetSessionConfigOptionRequestOther,
        default=None,
    )
if TYPE_CHECKING:
    ClientResponse: TypeAlias = ClientResponseResult | ClientResponseError
else:
    ClientResponse = plain_union(
        "ClientResponse",
        (
            ClientResponseResult,
            ClientResponseError,
        ),
    )
if TYPE_CHECKING:
    RequestPermissionOutcome: TypeAlias = (
        RequestPermissionOutcomeCancelled | RequestPermissionOutcomeSelected | RequestPermissionOutcomeOther
    )
else:
    RequestPermissionOutcome = tagged_union(
        "RequestPermissionOutcome",
        "outcome",
        {"cancelled": RequestPermissionOutcomeCancelled, "selected": RequestPermissionOutcomeSelected},
        other=RequestPermissionOutcomeOther,
        default=None,
    )
if TYPE_CHECKING:
    CreateElicitationResponse: TypeAlias = (
        CreateElicitationResponseAccept
        | CreateElicitationResponseDecline
        | CreateElicitationResponseCancel
        | CreateElicitationResponseOther
    )
else:
    CreateElicitationResponse = tagged_union(
        "CreateElicitationResponse",
        "action",
        {
            "accept": CreateElicitationResponseAccept,
            "decline": CreateElicitationResponseDecline,
            "cancel": CreateElicitationResponseCancel,
        },
        other=CreateElicitationResponseOther,
        default=None,
    )
ElicitationContentValue: TypeAlias = Any
if TYPE_CHECKING:
    MessageMcpResponse: TypeAlias = MessageMcpResponseResult | MessageMcpResponseError
else:
    MessageMcpResponse = plain_union(
        "MessageMcpResponse",
        (
            MessageMcpResponseResult,
            MessageMcpResponseError,
        ),
    )
InitializeProxyRequest: TypeAlias = InitializeRequest
if TYPE_CHECKING:
    ProxyRequestParams: TypeAlias = InitializeProxyRequest | ProxySuccessorRequest
else:
    ProxyRequestParams = plain_union(
        "ProxyRequestParams",
        (
            InitializeProxyRequest,
            ProxySuccessorRequest,
        ),
    )
if TYPE_CHECKING:
    ProxyResponse: TypeAlias = ProxyResponseResult | ProxyResponseError
else:
    ProxyResponse = plain_union(
        "ProxyResponse",
        (
            ProxyResponseResult,
            ProxyResponseError,
        ),
    )
InitializeProxyResponse: TypeAlias = InitializeResponse
ProxySuccessorResponse: TypeAlias = Any


# Requests the agent answers: method → (params, result).
AGENT_REQUESTS: dict[str, tuple[Any, Any]] = {
    "initialize": (InitializeRequest, InitializeResponse),
    "auth/login": (LoginAuthRequest, LoginAuthResponse),
    "providers/list": (ListProvidersRequest, ListProvidersResponse),
    "providers/set": (SetProviderRequest, SetProviderResponse),
    "providers/disable": (DisableProviderRequest, DisableProviderResponse),
    "auth/logout": (LogoutAuthRequest, LogoutAuthResponse),
    "auth/status": (AuthStatusRequest, AuthStatusResponse),
    "session/new": (NewSessionRequest, NewSessionResponse),
    "session/list": (ListSessionsRequest, ListSessionsResponse),
    "session/delete": (DeleteSessionRequest, DeleteSessionResponse),
    "session/fork": (ForkSessionRequest, ForkSessionResponse),
    "session/archive": (ArchiveSessionRequest, ArchiveSessionResponse),
    "session/unarchive": (UnarchiveSessionRequest, UnarchiveSessionResponse),
    "session/status": (SessionStatusRequest, SessionStatusResponse),
    "session/set_title": (SetSessionTitleRequest, SetSessionTitleResponse),
    "session/resume": (ResumeSessionRequest, ResumeSessionResponse),
    "session/close": (CloseSessionRequest, CloseSessionResponse),
    "tool_call/cancel": (CancelToolCallRequest, CancelToolCallResponse),
    "terminal/cancel": (CancelTerminalRequest, CancelTerminalResponse),
    "session/set_config_option": (SetSessionConfigOptionRequest, SetSessionConfigOptionResponse),
    "session/prompt": (PromptRequest, PromptResponse),
}
# Requests the client answers: method → (params, result).
CLIENT_REQUESTS: dict[str, tuple[Any, Any]] = {
    "session/request_permission": (RequestPermissionRequest, RequestPermissionResponse),
    "elicitation/create": (CreateElicitationRequest, CreateElicitationResponse),
    "mcp/message": (MessageMcpRequest, MessageMcpResponse),
}
# Notifications the agent handles: method → params.
AGENT_NOTIFICATIONS: dict[str, Any] = {
    "session/cancel": CancelSessionNotification,
    "mcp/message": MessageMcpNotification,
}
# Notifications the client handles: method → params.
CLIENT_NOTIFICATIONS: dict[str, Any] = {
    "session/update": UpdateSessionNotification,
    "elicitation/complete": CompleteElicitationNotification,
    "auth/status_update": AuthStatusUpdateNotification,
}
# Notifications either side handles: method → params.
PROTOCOL_NOTIFICATIONS: dict[str, Any] = {
    "$/cancel_request": CancelRequestNotification,
}
