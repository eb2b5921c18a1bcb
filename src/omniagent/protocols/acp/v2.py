# Generated from src/omniagent/protocols/acp/schema/acp-v2.schema.json by scripts/gen_acp_models.py; do not edit.
# Schema sha256: cbc5e33204f7cb6b587c3c0fced5819c4676063dbbe2185980b32cae26675d35
# ruff: noqa: E501
"""ACP v2 wire models, one class per schema object; unions are discriminated aliases."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, TypeAlias

from pydantic import Discriminator, Field, Tag

from omniagent.protocols.acp._base import AcpModel, tag_picker

PROTOCOL_VERSION = 2


class AgentRequest(AcpModel):
    """A JSON-RPC request object."""

    id: RequestId
    method: str
    params: (
        RequestPermissionRequest
        | CreateElicitationRequest
        | ConnectMcpRequest
        | MessageMcpRequest
        | DisconnectMcpRequest
        | ExtRequest
        | None
    ) = None


class RequestPermissionRequest(AcpModel):
    """Request for user permission to proceed with an operation."""

    session_id: SessionId = Field(alias="sessionId")
    title: str
    description: str | None = None
    subject: RequestPermissionSubject | None = None
    options: list[PermissionOption]
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class RequestPermissionSubjectToolCall(AcpModel):
    """Permission is requested before executing a tool call."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["tool_call"] = Field(default="tool_call", alias="type")
    tool_call: ToolCallUpdate = Field(alias="toolCall")


class RequestPermissionSubjectCommand(AcpModel):
    """Permission is requested before running a command."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["command"] = Field(default="command", alias="type")
    command: str
    cwd: AbsolutePath
    tool_call_id: ToolCallId | None = Field(default=None, alias="toolCallId")
    terminal_id: TerminalId | None = Field(default=None, alias="terminalId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class RequestPermissionSubjectOther(AcpModel):
    """Custom or future permission subject."""

    type: str


class ToolCallUpdate(AcpModel):
    """Represents an upsert for a tool call that the language model has requested."""

    tool_call_id: ToolCallId = Field(alias="toolCallId")
    name: str | None = None
    title: str | None = None
    kind: ToolKind | None = None
    status: ToolCallStatus | None = None
    content: list[ToolCallContent] | None = None
    locations: list[ToolCallLocation] | None = None
    raw_input: Any = Field(default=None, alias="rawInput")
    raw_output: Any = Field(default=None, alias="rawOutput")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ToolCallContentContent(AcpModel):
    """Standard content block (text, images, resources)."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["content"] = Field(default="content", alias="type")
    content: ContentBlock
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ToolCallContentDiff(AcpModel):
    """File modification shown as a diff."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["diff"] = Field(default="diff", alias="type")
    changes: list[DiffChange]
    patch: DiffPatch | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ToolCallContentTerminal(AcpModel):
    """A display-only reference to an agent-owned terminal."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["terminal"] = Field(default="terminal", alias="type")
    terminal_id: TerminalId = Field(alias="terminalId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ToolCallContentOther(AcpModel):
    """Custom or future tool call content."""

    type: str


class ContentBlockText(AcpModel):
    """Text content. May be plain text or formatted with Markdown."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["text"] = Field(default="text", alias="type")
    text: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ContentBlockImage(AcpModel):
    """Images for visual context or analysis."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["image"] = Field(default="image", alias="type")
    data: str
    mime_type: MediaType = Field(alias="mimeType")
    uri: str | None = None
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ContentBlockAudio(AcpModel):
    """Audio data for transcription or analysis."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["audio"] = Field(default="audio", alias="type")
    data: str
    mime_type: MediaType = Field(alias="mimeType")
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ContentBlockResourceLink(AcpModel):
    """References to resources that the agent can access."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["resource_link"] = Field(default="resource_link", alias="type")
    name: str
    uri: str
    title: str | None = None
    description: str | None = None
    icons: list[Icon] | None = None
    mime_type: MediaType | None = Field(default=None, alias="mimeType")
    size: int | None = None
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ContentBlockResource(AcpModel):
    """Complete resource contents embedded directly in the message."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["resource"] = Field(default="resource", alias="type")
    resource: EmbeddedResourceResource
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ContentBlockOther(AcpModel):
    """Custom or future content block."""

    type: str


class Annotations(AcpModel):
    """Optional annotations for the client. The client can use annotations to inform how objects are used or displayed"""

    audience: list[Role] | None = None
    last_modified: str | None = Field(default=None, alias="lastModified")
    priority: float | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class Icon(AcpModel):
    """An optionally-sized icon that can be displayed in a user interface."""

    src: str
    mime_type: MediaType | None = Field(default=None, alias="mimeType")
    sizes: list[str] | None = None
    theme: IconTheme | None = None


class TextResourceContents(AcpModel):
    """Text-based resource contents."""

    text: str
    uri: str
    mime_type: MediaType | None = Field(default=None, alias="mimeType")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class BlobResourceContents(AcpModel):
    """Binary resource contents."""

    blob: str
    uri: str
    mime_type: MediaType | None = Field(default=None, alias="mimeType")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class DiffChangeAdd(AcpModel):
    """A file was added."""

    tag_fields: ClassVar[tuple[str, ...]] = ("operation",)
    operation: Literal["add"] = Field(default="add", alias="operation")
    file_type: DiffFileType | None = Field(default=None, alias="fileType")
    mime_type: MediaType | None = Field(default=None, alias="mimeType")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    path: AbsolutePath


class DiffChangeDelete(AcpModel):
    """A file was deleted."""

    tag_fields: ClassVar[tuple[str, ...]] = ("operation",)
    operation: Literal["delete"] = Field(default="delete", alias="operation")
    file_type: DiffFileType | None = Field(default=None, alias="fileType")
    mime_type: MediaType | None = Field(default=None, alias="mimeType")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    path: AbsolutePath


class DiffChangeModify(AcpModel):
    """A file was modified in place."""

    tag_fields: ClassVar[tuple[str, ...]] = ("operation",)
    operation: Literal["modify"] = Field(default="modify", alias="operation")
    file_type: DiffFileType | None = Field(default=None, alias="fileType")
    mime_type: MediaType | None = Field(default=None, alias="mimeType")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    path: AbsolutePath


class DiffChangeMove(AcpModel):
    """A file was moved or renamed."""

    tag_fields: ClassVar[tuple[str, ...]] = ("operation",)
    operation: Literal["move"] = Field(default="move", alias="operation")
    file_type: DiffFileType | None = Field(default=None, alias="fileType")
    mime_type: MediaType | None = Field(default=None, alias="mimeType")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    old_path: AbsolutePath = Field(alias="oldPath")
    path: AbsolutePath


class DiffChangeCopy(AcpModel):
    """A file was copied."""

    tag_fields: ClassVar[tuple[str, ...]] = ("operation",)
    operation: Literal["copy"] = Field(default="copy", alias="operation")
    file_type: DiffFileType | None = Field(default=None, alias="fileType")
    mime_type: MediaType | None = Field(default=None, alias="mimeType")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    old_path: AbsolutePath = Field(alias="oldPath")
    path: AbsolutePath


class DiffChangeOther(AcpModel):
    """Custom or future file operation."""

    file_type: DiffFileType | None = Field(default=None, alias="fileType")
    mime_type: MediaType | None = Field(default=None, alias="mimeType")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    operation: str


class DiffPatch(AcpModel):
    """Renderable patch text and its format."""

    format: DiffPatchFormat
    text: str


class ToolCallLocation(AcpModel):
    """A file location being accessed or modified by a tool."""

    path: AbsolutePath
    line: int | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class PermissionOption(AcpModel):
    """An option presented to the user when requesting permission."""

    option_id: PermissionOptionId = Field(alias="optionId")
    name: str
    kind: PermissionOptionKind
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class CreateElicitationRequestForm(AcpModel):
    """Form-based elicitation where the client renders a form from the provided schema."""

    tag_fields: ClassVar[tuple[str, ...]] = ("mode",)
    mode: Literal["form"] = Field(default="form", alias="mode")
    message: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    requested_schema: ElicitationSchema = Field(alias="requestedSchema")
    session_id: SessionId | None = Field(default=None, alias="sessionId")
    tool_call_id: ToolCallId | None = Field(default=None, alias="toolCallId")
    request_id: RequestId | None = Field(default=None, alias="requestId")


class CreateElicitationRequestUrl(AcpModel):
    """URL-based elicitation where the client directs the user to a URL."""

    tag_fields: ClassVar[tuple[str, ...]] = ("mode",)
    mode: Literal["url"] = Field(default="url", alias="mode")
    message: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    elicitation_id: ElicitationId = Field(alias="elicitationId")
    url: str
    session_id: SessionId | None = Field(default=None, alias="sessionId")
    tool_call_id: ToolCallId | None = Field(default=None, alias="toolCallId")
    request_id: RequestId | None = Field(default=None, alias="requestId")


class CreateElicitationRequestOther(AcpModel):
    """Custom or future elicitation mode."""

    message: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    mode: str
    session_id: SessionId | None = Field(default=None, alias="sessionId")
    tool_call_id: ToolCallId | None = Field(default=None, alias="toolCallId")
    request_id: RequestId | None = Field(default=None, alias="requestId")


class ElicitationSessionScope(AcpModel):
    """**UNSTABLE**"""

    session_id: SessionId = Field(alias="sessionId")
    tool_call_id: ToolCallId | None = Field(default=None, alias="toolCallId")


class ElicitationRequestScope(AcpModel):
    """**UNSTABLE**"""

    request_id: RequestId = Field(alias="requestId")


class ElicitationSchema(AcpModel):
    """Type-safe elicitation schema for requesting structured user input."""

    type: ElicitationSchemaType | None = None
    title: str | None = None
    properties: dict[str, ElicitationPropertySchema] | None = None
    required: list[str] | None = None
    description: str | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ElicitationPropertySchemaString(AcpModel):
    """String property (or single-select enum when `enum`/`oneOf` is set)."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["string"] = Field(default="string", alias="type")
    title: str | None = None
    description: str | None = None
    min_length: int | None = Field(default=None, alias="minLength")
    max_length: int | None = Field(default=None, alias="maxLength")
    pattern: str | None = None
    format: StringFormat | None = None
    default: str | None = None
    enum: list[str] | None = None
    one_of: list[EnumOption] | None = Field(default=None, alias="oneOf")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ElicitationPropertySchemaNumber(AcpModel):
    """Number (floating-point) property."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["number"] = Field(default="number", alias="type")
    title: str | None = None
    description: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    default: float | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ElicitationPropertySchemaInteger(AcpModel):
    """Integer property."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["integer"] = Field(default="integer", alias="type")
    title: str | None = None
    description: str | None = None
    minimum: int | None = None
    maximum: int | None = None
    default: int | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ElicitationPropertySchemaBoolean(AcpModel):
    """Boolean property."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["boolean"] = Field(default="boolean", alias="type")
    title: str | None = None
    description: str | None = None
    default: bool | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ElicitationPropertySchemaArray(AcpModel):
    """Multi-select array property."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["array"] = Field(default="array", alias="type")
    title: str | None = None
    description: str | None = None
    min_items: int | None = Field(default=None, alias="minItems")
    max_items: int | None = Field(default=None, alias="maxItems")
    items: MultiSelectItems
    default: list[str] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ElicitationPropertySchemaOther(AcpModel):
    """Custom or future elicitation property schema."""

    type: str


class EnumOption(AcpModel):
    """A titled enum option with a const value, human-readable title, and optional description."""

    const: str
    title: str
    description: str | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class MultiSelectItemsString(AcpModel):
    """Multi-select string items with plain string values."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["string"] = Field(default="string", alias="type")
    enum: list[str]
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class MultiSelectItemsOther(AcpModel):
    """Custom or future typed multi-select items."""

    type: str


class MultiSelectItemsTitled(AcpModel):
    """Titled multi-select items with human-readable labels."""

    any_of: list[EnumOption] = Field(alias="anyOf")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ConnectMcpRequest(AcpModel):
    """**UNSTABLE**"""

    server_id: McpServerAcpId = Field(alias="serverId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class MessageMcpRequest(AcpModel):
    """**UNSTABLE**"""

    connection_id: McpConnectionId = Field(alias="connectionId")
    method: str
    params: dict[str, Any] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class DisconnectMcpRequest(AcpModel):
    """**UNSTABLE**"""

    connection_id: McpConnectionId = Field(alias="connectionId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class AgentResponseResult(AcpModel):
    """A successful JSON-RPC response."""

    id: RequestId
    result: (
        InitializeResponse
        | LoginAuthResponse
        | ListProvidersResponse
        | SetProviderResponse
        | DisableProviderResponse
        | LogoutAuthResponse
        | NewSessionResponse
        | ListSessionsResponse
        | DeleteSessionResponse
        | ForkSessionResponse
        | ResumeSessionResponse
        | CloseSessionResponse
        | SetSessionConfigOptionResponse
        | PromptResponse
        | StartNesResponse
        | SuggestNesResponse
        | CloseNesResponse
        | ExtResponse
        | MessageMcpResponse
    )


class AgentResponseError(AcpModel):
    """A failed JSON-RPC response."""

    id: RequestId
    error: Error


class InitializeResponse(AcpModel):
    """Response to the `initialize` method."""

    protocol_version: ProtocolVersion = Field(alias="protocolVersion")
    info: Implementation
    capabilities: AgentCapabilities | None = None
    auth_methods: list[AuthMethod] | None = Field(default=None, alias="authMethods")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class Implementation(AcpModel):
    """Metadata about the implementation of the client or agent. Describes the name and version of an ACP implementation, with an optional title for UI representation."""

    name: str
    title: str | None = None
    version: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class AgentCapabilities(AcpModel):
    """Capabilities supported by the agent."""

    session: SessionCapabilities | None = None
    auth: AgentAuthCapabilities | None = None
    providers: ProvidersCapabilities | None = None
    nes: NesCapabilities | None = None
    position_encoding: PositionEncodingKind | None = Field(default=None, alias="positionEncoding")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionCapabilities(AcpModel):
    """Session capabilities supported by the agent."""

    prompt: PromptCapabilities | None = None
    mcp: McpCapabilities | None = None
    delete: SessionDeleteCapabilities | None = None
    additional_directories: SessionAdditionalDirectoriesCapabilities | None = Field(
        default=None, alias="additionalDirectories"
    )
    fork: SessionForkCapabilities | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class PromptCapabilities(AcpModel):
    """Prompt capabilities supported by the agent in `session/prompt` requests."""

    image: PromptImageCapabilities | None = None
    audio: PromptAudioCapabilities | None = None
    embedded_context: PromptEmbeddedContextCapabilities | None = Field(default=None, alias="embeddedContext")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class PromptImageCapabilities(AcpModel):
    """Capabilities for image content in prompt requests."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class PromptAudioCapabilities(AcpModel):
    """Capabilities for audio content in prompt requests."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class PromptEmbeddedContextCapabilities(AcpModel):
    """Capabilities for embedded context in prompt requests."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class McpCapabilities(AcpModel):
    """MCP capabilities supported by the agent for session lifecycle requests."""

    stdio: McpStdioCapabilities | None = None
    http: McpHttpCapabilities | None = None
    acp: McpAcpCapabilities | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class McpStdioCapabilities(AcpModel):
    """Capabilities for stdio MCP server transports."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class McpHttpCapabilities(AcpModel):
    """Capabilities for HTTP MCP server transports."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class McpAcpCapabilities(AcpModel):
    """**UNSTABLE**"""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionDeleteCapabilities(AcpModel):
    """Capabilities for the `session/delete` method."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionAdditionalDirectoriesCapabilities(AcpModel):
    """Capabilities for additional session directories support."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionForkCapabilities(AcpModel):
    """**UNSTABLE**"""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class AgentAuthCapabilities(AcpModel):
    """Authentication-related extension capabilities supported by the agent."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ProvidersCapabilities(AcpModel):
    """**UNSTABLE**"""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesCapabilities(AcpModel):
    """NES capabilities advertised by the agent during initialization."""

    events: NesEventCapabilities | None = None
    context: NesContextCapabilities | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesEventCapabilities(AcpModel):
    """Event capabilities the agent can consume."""

    document: NesDocumentEventCapabilities | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesDocumentEventCapabilities(AcpModel):
    """Document event capabilities the agent wants to receive."""

    did_open: NesDocumentDidOpenCapabilities | None = Field(default=None, alias="didOpen")
    did_change: NesDocumentDidChangeCapabilities | None = Field(default=None, alias="didChange")
    did_close: NesDocumentDidCloseCapabilities | None = Field(default=None, alias="didClose")
    did_save: NesDocumentDidSaveCapabilities | None = Field(default=None, alias="didSave")
    did_focus: NesDocumentDidFocusCapabilities | None = Field(default=None, alias="didFocus")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesDocumentDidOpenCapabilities(AcpModel):
    """Marker for `document/didOpen` capability support."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesDocumentDidChangeCapabilities(AcpModel):
    """Capabilities for `document/didChange` events."""

    sync_kind: TextDocumentSyncKind = Field(alias="syncKind")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesDocumentDidCloseCapabilities(AcpModel):
    """Marker for `document/didClose` capability support."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesDocumentDidSaveCapabilities(AcpModel):
    """Marker for `document/didSave` capability support."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesDocumentDidFocusCapabilities(AcpModel):
    """Marker for `document/didFocus` capability support."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesContextCapabilities(AcpModel):
    """Context capabilities the agent wants attached to each suggestion request."""

    recent_files: NesRecentFilesCapabilities | None = Field(default=None, alias="recentFiles")
    related_snippets: NesRelatedSnippetsCapabilities | None = Field(default=None, alias="relatedSnippets")
    edit_history: NesEditHistoryCapabilities | None = Field(default=None, alias="editHistory")
    user_actions: NesUserActionsCapabilities | None = Field(default=None, alias="userActions")
    open_files: NesOpenFilesCapabilities | None = Field(default=None, alias="openFiles")
    diagnostics: NesDiagnosticsCapabilities | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesRecentFilesCapabilities(AcpModel):
    """Capabilities for recent files context."""

    max_count: int | None = Field(default=None, alias="maxCount")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesRelatedSnippetsCapabilities(AcpModel):
    """Capabilities for related snippets context."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesEditHistoryCapabilities(AcpModel):
    """Capabilities for edit history context."""

    max_count: int | None = Field(default=None, alias="maxCount")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesUserActionsCapabilities(AcpModel):
    """Capabilities for user actions context."""

    max_count: int | None = Field(default=None, alias="maxCount")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesOpenFilesCapabilities(AcpModel):
    """Capabilities for open files context."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesDiagnosticsCapabilities(AcpModel):
    """Capabilities for diagnostics context."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class AuthMethodEnvVar(AcpModel):
    """**UNSTABLE**"""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["env_var"] = Field(default="env_var", alias="type")
    method_id: AuthMethodId = Field(alias="methodId")
    name: str
    description: str | None = None
    vars: list[AuthEnvVar]
    link: str | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class AuthMethodTerminal(AcpModel):
    """**UNSTABLE**"""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["terminal"] = Field(default="terminal", alias="type")
    method_id: AuthMethodId = Field(alias="methodId")
    name: str
    description: str | None = None
    args: list[str] | None = None
    env: list[EnvVariable] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class AuthMethodAgent(AcpModel):
    """Agent handles authentication itself."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["agent"] = Field(default="agent", alias="type")
    method_id: AuthMethodId = Field(alias="methodId")
    name: str
    description: str | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class AuthMethodOther(AcpModel):
    """Custom or future authentication method."""

    type: str
    method_id: AuthMethodId = Field(alias="methodId")
    name: str
    description: str | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class AuthEnvVar(AcpModel):
    """**UNSTABLE**"""

    name: str
    label: str | None = None
    secret: bool | None = None
    optional: bool | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class EnvVariable(AcpModel):
    """An environment variable to set when launching an MCP server."""

    name: str
    value: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class LoginAuthResponse(AcpModel):
    """Response to the `auth/login` method."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ListProvidersResponse(AcpModel):
    """**UNSTABLE**"""

    providers: list[ProviderInfo]
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ProviderInfo(AcpModel):
    """**UNSTABLE**"""

    provider_id: ProviderId = Field(alias="providerId")
    supported: list[LlmProtocol]
    required: bool
    current: ProviderCurrentConfig | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ProviderCurrentConfig(AcpModel):
    """**UNSTABLE**"""

    api_type: LlmProtocol = Field(alias="apiType")
    base_url: str = Field(alias="baseUrl")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SetProviderResponse(AcpModel):
    """**UNSTABLE**"""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class DisableProviderResponse(AcpModel):
    """**UNSTABLE**"""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class LogoutAuthResponse(AcpModel):
    """Response to the `auth/logout` method."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NewSessionResponse(AcpModel):
    """Response from creating a new session."""

    session_id: SessionId = Field(alias="sessionId")
    config_options: list[SessionConfigOption] | None = Field(default=None, alias="configOptions")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionConfigOptionSelect(AcpModel):
    """Single-value selector (dropdown)."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["select"] = Field(default="select", alias="type")
    config_id: SessionConfigId = Field(alias="configId")
    name: str
    description: str | None = None
    category: SessionConfigOptionCategory | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    current_value: SessionConfigValueId = Field(alias="currentValue")
    options: SessionConfigSelectOptions


class SessionConfigOptionBoolean(AcpModel):
    """Boolean on/off toggle."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["boolean"] = Field(default="boolean", alias="type")
    config_id: SessionConfigId = Field(alias="configId")
    name: str
    description: str | None = None
    category: SessionConfigOptionCategory | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    current_value: bool = Field(alias="currentValue")


class SessionConfigOptionOther(AcpModel):
    """Custom or future session configuration option payload."""

    config_id: SessionConfigId = Field(alias="configId")
    name: str
    description: str | None = None
    category: SessionConfigOptionCategory | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    type: str


class SessionConfigSelectOption(AcpModel):
    """A possible value for a session configuration option."""

    value: SessionConfigValueId
    name: str
    description: str | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionConfigSelectGroup(AcpModel):
    """A group of possible values for a session configuration option."""

    group_id: SessionConfigGroupId = Field(alias="groupId")
    name: str
    options: list[SessionConfigSelectOption]
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ListSessionsResponse(AcpModel):
    """Response from listing sessions."""

    sessions: list[SessionInfo]
    next_cursor: SessionListCursor | None = Field(default=None, alias="nextCursor")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionInfo(AcpModel):
    """Information about a session returned by session/list"""

    session_id: SessionId = Field(alias="sessionId")
    cwd: AbsolutePath
    additional_directories: list[AbsolutePath] | None = Field(default=None, alias="additionalDirectories")
    title: str | None = None
    updated_at: str | None = Field(default=None, alias="updatedAt")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class DeleteSessionResponse(AcpModel):
    """Response from deleting a session."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ForkSessionResponse(AcpModel):
    """**UNSTABLE**"""

    session_id: SessionId = Field(alias="sessionId")
    config_options: list[SessionConfigOption] | None = Field(default=None, alias="configOptions")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ResumeSessionResponse(AcpModel):
    """Response from resuming an existing session."""

    config_options: list[SessionConfigOption] | None = Field(default=None, alias="configOptions")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class CloseSessionResponse(AcpModel):
    """Response from closing a session."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SetSessionConfigOptionResponse(AcpModel):
    """Response to `session/set_config_option` method."""

    config_options: list[SessionConfigOption] = Field(alias="configOptions")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class PromptResponse(AcpModel):
    """Response acknowledging that a user prompt was accepted."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class StartNesResponse(AcpModel):
    """Response to `nes/start`."""

    session_id: SessionId = Field(alias="sessionId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SuggestNesResponse(AcpModel):
    """Response to `nes/suggest`."""

    suggestions: list[NesSuggestion]
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesSuggestionEdit(AcpModel):
    """A text edit suggestion."""

    tag_fields: ClassVar[tuple[str, ...]] = ("kind",)
    kind: Literal["edit"] = Field(default="edit", alias="kind")
    suggestion_id: NesSuggestionId = Field(alias="suggestionId")
    uri: str
    edits: list[NesTextEdit]
    cursor_position: Position | None = Field(default=None, alias="cursorPosition")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesSuggestionJump(AcpModel):
    """A jump-to-location suggestion."""

    tag_fields: ClassVar[tuple[str, ...]] = ("kind",)
    kind: Literal["jump"] = Field(default="jump", alias="kind")
    suggestion_id: NesSuggestionId = Field(alias="suggestionId")
    uri: str
    position: Position
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesSuggestionRename(AcpModel):
    """A rename symbol suggestion."""

    tag_fields: ClassVar[tuple[str, ...]] = ("kind",)
    kind: Literal["rename"] = Field(default="rename", alias="kind")
    suggestion_id: NesSuggestionId = Field(alias="suggestionId")
    uri: str
    position: Position
    new_name: str = Field(alias="newName")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesSuggestionSearchAndReplace(AcpModel):
    """A search-and-replace suggestion."""

    tag_fields: ClassVar[tuple[str, ...]] = ("kind",)
    kind: Literal["searchAndReplace"] = Field(default="searchAndReplace", alias="kind")
    suggestion_id: NesSuggestionId = Field(alias="suggestionId")
    uri: str
    search: str
    replace: str
    is_regex: bool | None = Field(default=None, alias="isRegex")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesSuggestionOther(AcpModel):
    """Custom or future NES suggestion."""

    kind: str
    suggestion_id: NesSuggestionId = Field(alias="suggestionId")


class NesTextEdit(AcpModel):
    """A text edit within a suggestion."""

    range: Range
    new_text: str = Field(alias="newText")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class Range(AcpModel):
    """A range in a text document, expressed as start and end positions."""

    start: Position
    end: Position
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class Position(AcpModel):
    """A zero-based position in a text document."""

    line: int
    character: int
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class CloseNesResponse(AcpModel):
    """Response from closing an NES session."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class Error(AcpModel):
    """JSON-RPC error object."""

    code: ErrorCode
    message: str
    data: Any = None


class AgentNotification(AcpModel):
    """A JSON-RPC notification object."""

    method: str
    params: (
        UpdateSessionNotification | CompleteElicitationNotification | MessageMcpNotification | ExtNotification | None
    ) = None


class UpdateSessionNotification(AcpModel):
    """Notification containing a session update from the agent."""

    session_id: SessionId = Field(alias="sessionId")
    update: SessionUpdate
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateUserMessageChunk(AcpModel):
    """A chunk of the user's message being streamed."""

    tag_fields: ClassVar[tuple[str, ...]] = ("session_update",)
    session_update: Literal["user_message_chunk"] = Field(default="user_message_chunk", alias="sessionUpdate")
    message_id: MessageId = Field(alias="messageId")
    content: ContentBlock
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateUserMessage(AcpModel):
    """A user message has been created or updated."""

    tag_fields: ClassVar[tuple[str, ...]] = ("session_update",)
    session_update: Literal["user_message"] = Field(default="user_message", alias="sessionUpdate")
    message_id: MessageId = Field(alias="messageId")
    content: list[ContentBlock] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateAgentMessageChunk(AcpModel):
    """A chunk of the agent's response being streamed."""

    tag_fields: ClassVar[tuple[str, ...]] = ("session_update",)
    session_update: Literal["agent_message_chunk"] = Field(default="agent_message_chunk", alias="sessionUpdate")
    message_id: MessageId = Field(alias="messageId")
    content: ContentBlock
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateAgentMessage(AcpModel):
    """An agent message has been created or updated."""

    tag_fields: ClassVar[tuple[str, ...]] = ("session_update",)
    session_update: Literal["agent_message"] = Field(default="agent_message", alias="sessionUpdate")
    message_id: MessageId = Field(alias="messageId")
    content: list[ContentBlock] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateAgentThoughtChunk(AcpModel):
    """A chunk of the agent's internal reasoning being streamed."""

    tag_fields: ClassVar[tuple[str, ...]] = ("session_update",)
    session_update: Literal["agent_thought_chunk"] = Field(default="agent_thought_chunk", alias="sessionUpdate")
    message_id: MessageId = Field(alias="messageId")
    content: ContentBlock
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateAgentThought(AcpModel):
    """An agent thought or reasoning message has been created or updated."""

    tag_fields: ClassVar[tuple[str, ...]] = ("session_update",)
    session_update: Literal["agent_thought"] = Field(default="agent_thought", alias="sessionUpdate")
    message_id: MessageId = Field(alias="messageId")
    content: list[ContentBlock] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateStateUpdateRunning(AcpModel):
    """Foreground work is in progress."""

    tag_fields: ClassVar[tuple[str, ...]] = (
        "session_update",
        "state",
    )
    session_update: Literal["state_update"] = Field(default="state_update", alias="sessionUpdate")
    state: Literal["running"] = Field(default="running", alias="state")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateStateUpdateIdle(AcpModel):
    """The agent is ready to process a new prompt."""

    tag_fields: ClassVar[tuple[str, ...]] = (
        "session_update",
        "state",
    )
    session_update: Literal["state_update"] = Field(default="state_update", alias="sessionUpdate")
    state: Literal["idle"] = Field(default="idle", alias="state")
    stop_reason: StopReason | None = Field(default=None, alias="stopReason")
    usage: Usage | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateStateUpdateRequiresAction(AcpModel):
    """Foreground work is blocked on user action."""

    tag_fields: ClassVar[tuple[str, ...]] = (
        "session_update",
        "state",
    )
    session_update: Literal["state_update"] = Field(default="state_update", alias="sessionUpdate")
    state: Literal["requires_action"] = Field(default="requires_action", alias="state")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateStateUpdateOther(AcpModel):
    """Custom or future session state."""

    tag_fields: ClassVar[tuple[str, ...]] = ("session_update",)
    session_update: Literal["state_update"] = Field(default="state_update", alias="sessionUpdate")
    state: str


class SessionUpdateToolCallContentChunk(AcpModel):
    """A chunk of tool-call content being streamed."""

    tag_fields: ClassVar[tuple[str, ...]] = ("session_update",)
    session_update: Literal["tool_call_content_chunk"] = Field(default="tool_call_content_chunk", alias="sessionUpdate")
    tool_call_id: ToolCallId = Field(alias="toolCallId")
    content: ToolCallContent
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateToolCallUpdate(AcpModel):
    """A tool call has been created or updated."""

    tag_fields: ClassVar[tuple[str, ...]] = ("session_update",)
    session_update: Literal["tool_call_update"] = Field(default="tool_call_update", alias="sessionUpdate")
    tool_call_id: ToolCallId = Field(alias="toolCallId")
    name: str | None = None
    title: str | None = None
    kind: ToolKind | None = None
    status: ToolCallStatus | None = None
    content: list[ToolCallContent] | None = None
    locations: list[ToolCallLocation] | None = None
    raw_input: Any = Field(default=None, alias="rawInput")
    raw_output: Any = Field(default=None, alias="rawOutput")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateTerminalUpdate(AcpModel):
    """An agent-owned terminal has been created or updated."""

    tag_fields: ClassVar[tuple[str, ...]] = ("session_update",)
    session_update: Literal["terminal_update"] = Field(default="terminal_update", alias="sessionUpdate")
    terminal_id: TerminalId = Field(alias="terminalId")
    command: str | None = None
    cwd: AbsolutePath | None = None
    output: TerminalOutput | None = None
    exit_status: TerminalExitStatus | None = Field(default=None, alias="exitStatus")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateTerminalOutputChunk(AcpModel):
    """A chunk of bytes appended to an agent-owned terminal's output."""

    tag_fields: ClassVar[tuple[str, ...]] = ("session_update",)
    session_update: Literal["terminal_output_chunk"] = Field(default="terminal_output_chunk", alias="sessionUpdate")
    terminal_id: TerminalId = Field(alias="terminalId")
    data: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdatePlanUpdate(AcpModel):
    """A content update for a plan identified by ID. See protocol docs: [Agent Plan](https://agentclientprotocol.com/protocol/v2/draft/agent-plan)"""

    tag_fields: ClassVar[tuple[str, ...]] = ("session_update",)
    session_update: Literal["plan_update"] = Field(default="plan_update", alias="sessionUpdate")
    plan: PlanUpdateContent
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdatePlanRemoved(AcpModel):
    """**UNSTABLE**"""

    tag_fields: ClassVar[tuple[str, ...]] = ("session_update",)
    session_update: Literal["plan_removed"] = Field(default="plan_removed", alias="sessionUpdate")
    plan_id: PlanId = Field(alias="planId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateAvailableCommandsUpdate(AcpModel):
    """Available commands are ready or have changed"""

    tag_fields: ClassVar[tuple[str, ...]] = ("session_update",)
    session_update: Literal["available_commands_update"] = Field(
        default="available_commands_update", alias="sessionUpdate"
    )
    available_commands: list[AvailableCommand] = Field(alias="availableCommands")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateConfigOptionUpdate(AcpModel):
    """Session configuration options have been updated."""

    tag_fields: ClassVar[tuple[str, ...]] = ("session_update",)
    session_update: Literal["config_option_update"] = Field(default="config_option_update", alias="sessionUpdate")
    config_options: list[SessionConfigOption] = Field(alias="configOptions")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateSessionInfoUpdate(AcpModel):
    """Session metadata has been updated (title, timestamps, custom metadata)"""

    tag_fields: ClassVar[tuple[str, ...]] = ("session_update",)
    session_update: Literal["session_info_update"] = Field(default="session_info_update", alias="sessionUpdate")
    title: str | None = None
    updated_at: str | None = Field(default=None, alias="updatedAt")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateUsageUpdate(AcpModel):
    """Context window and cost update for the session."""

    tag_fields: ClassVar[tuple[str, ...]] = ("session_update",)
    session_update: Literal["usage_update"] = Field(default="usage_update", alias="sessionUpdate")
    used: int
    size: int
    cost: Cost | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SessionUpdateOther(AcpModel):
    """Custom or future session update."""

    session_update: str = Field(alias="sessionUpdate")


class Usage(AcpModel):
    """**UNSTABLE**"""

    total_tokens: int = Field(alias="totalTokens")
    input_tokens: int = Field(alias="inputTokens")
    output_tokens: int = Field(alias="outputTokens")
    thought_tokens: int | None = Field(default=None, alias="thoughtTokens")
    cached_read_tokens: int | None = Field(default=None, alias="cachedReadTokens")
    cached_write_tokens: int | None = Field(default=None, alias="cachedWriteTokens")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class TerminalOutput(AcpModel):
    """An authoritative replacement snapshot of terminal output bytes."""

    data: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class TerminalExitStatus(AcpModel):
    """Exit information for an agent-owned terminal."""

    exit_code: int | None = Field(default=None, alias="exitCode")
    signal: str | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class PlanUpdateContentItems(AcpModel):
    """Structured plan entries."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["items"] = Field(default="items", alias="type")
    plan_id: PlanId = Field(alias="planId")
    entries: list[PlanEntry]
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class PlanUpdateContentFile(AcpModel):
    """**UNSTABLE**"""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["file"] = Field(default="file", alias="type")
    plan_id: PlanId = Field(alias="planId")
    uri: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class PlanUpdateContentMarkdown(AcpModel):
    """**UNSTABLE**"""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["markdown"] = Field(default="markdown", alias="type")
    plan_id: PlanId = Field(alias="planId")
    content: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class PlanUpdateContentOther(AcpModel):
    """Custom or future plan update content."""

    type: str
    plan_id: PlanId = Field(alias="planId")


class PlanEntry(AcpModel):
    """A single entry in the execution plan."""

    content: str
    priority: PlanEntryPriority
    status: PlanEntryStatus
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class AvailableCommand(AcpModel):
    """Information about a command."""

    name: str
    description: str
    input: AvailableCommandInput | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class AvailableCommandInputText(AcpModel):
    """All text that was typed after the command name is provided as input."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["text"] = Field(default="text", alias="type")
    hint: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class AvailableCommandInputOther(AcpModel):
    """Custom or future command input specification."""

    type: str


class Cost(AcpModel):
    """Cost information for a session."""

    amount: float
    currency: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class CompleteElicitationNotification(AcpModel):
    """**UNSTABLE**"""

    elicitation_id: ElicitationId = Field(alias="elicitationId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class MessageMcpNotification(AcpModel):
    """**UNSTABLE**"""

    connection_id: McpConnectionId = Field(alias="connectionId")
    method: str
    params: dict[str, Any] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ClientRequest(AcpModel):
    """A JSON-RPC request object."""

    id: RequestId
    method: str
    params: (
        InitializeRequest
        | LoginAuthRequest
        | ListProvidersRequest
        | SetProviderRequest
        | DisableProviderRequest
        | LogoutAuthRequest
        | NewSessionRequest
        | ListSessionsRequest
        | DeleteSessionRequest
        | ForkSessionRequest
        | ResumeSessionRequest
        | CloseSessionRequest
        | SetSessionConfigOptionRequest
        | PromptRequest
        | StartNesRequest
        | SuggestNesRequest
        | CloseNesRequest
        | MessageMcpRequest
        | ExtRequest
        | None
    ) = None


class InitializeRequest(AcpModel):
    """Request parameters for the initialize method."""

    protocol_version: ProtocolVersion = Field(alias="protocolVersion")
    info: Implementation
    capabilities: ClientCapabilities | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ClientCapabilities(AcpModel):
    """Capabilities supported by the client."""

    auth: AuthCapabilities | None = None
    elicitation: ElicitationCapabilities | None = None
    nes: ClientNesCapabilities | None = None
    position_encodings: list[PositionEncodingKind] | None = Field(default=None, alias="positionEncodings")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class AuthCapabilities(AcpModel):
    """**UNSTABLE**"""

    terminal: TerminalAuthCapabilities | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class TerminalAuthCapabilities(AcpModel):
    """**UNSTABLE**"""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ElicitationCapabilities(AcpModel):
    """**UNSTABLE**"""

    form: ElicitationFormCapabilities | None = None
    url: ElicitationUrlCapabilities | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ElicitationFormCapabilities(AcpModel):
    """**UNSTABLE**"""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ElicitationUrlCapabilities(AcpModel):
    """**UNSTABLE**"""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ClientNesCapabilities(AcpModel):
    """NES capabilities advertised by the client during initialization."""

    jump: NesJumpCapabilities | None = None
    rename: NesRenameCapabilities | None = None
    search_and_replace: NesSearchAndReplaceCapabilities | None = Field(default=None, alias="searchAndReplace")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesJumpCapabilities(AcpModel):
    """Marker for jump suggestion support."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesRenameCapabilities(AcpModel):
    """Marker for rename suggestion support."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesSearchAndReplaceCapabilities(AcpModel):
    """Marker for search and replace suggestion support."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class LoginAuthRequest(AcpModel):
    """Request parameters for the `auth/login` method."""

    method_id: AuthMethodId = Field(alias="methodId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ListProvidersRequest(AcpModel):
    """**UNSTABLE**"""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SetProviderRequest(AcpModel):
    """**UNSTABLE**"""

    provider_id: ProviderId = Field(alias="providerId")
    api_type: LlmProtocol = Field(alias="apiType")
    base_url: str = Field(alias="baseUrl")
    headers: dict[str, str] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class DisableProviderRequest(AcpModel):
    """**UNSTABLE**"""

    provider_id: ProviderId = Field(alias="providerId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class LogoutAuthRequest(AcpModel):
    """Request parameters for the `auth/logout` method."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NewSessionRequest(AcpModel):
    """Request parameters for creating a new session."""

    cwd: AbsolutePath
    additional_directories: list[AbsolutePath] | None = Field(default=None, alias="additionalDirectories")
    mcp_servers: list[McpServer] | None = Field(default=None, alias="mcpServers")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class McpServerHttp(AcpModel):
    """HTTP transport configuration"""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["http"] = Field(default="http", alias="type")
    name: str
    url: str
    headers: list[HttpHeader] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class McpServerAcp(AcpModel):
    """**UNSTABLE**"""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["acp"] = Field(default="acp", alias="type")
    name: str
    server_id: McpServerAcpId = Field(alias="serverId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class McpServerStdio(AcpModel):
    """Stdio transport configuration"""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["stdio"] = Field(default="stdio", alias="type")
    name: str
    command: AbsolutePath
    args: list[str] | None = None
    env: list[EnvVariable] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class McpServerOther(AcpModel):
    """Custom or future MCP server transport configuration."""

    type: str


class HttpHeader(AcpModel):
    """An HTTP header to set when making requests to the MCP server."""

    name: str
    value: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ListSessionsRequest(AcpModel):
    """Request parameters for listing existing sessions."""

    cwd: AbsolutePath | None = None
    cursor: SessionListCursor | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class DeleteSessionRequest(AcpModel):
    """Request parameters for deleting an existing session from `session/list`."""

    session_id: SessionId = Field(alias="sessionId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ForkSessionRequest(AcpModel):
    """**UNSTABLE**"""

    session_id: SessionId = Field(alias="sessionId")
    cwd: AbsolutePath
    additional_directories: list[AbsolutePath] | None = Field(default=None, alias="additionalDirectories")
    mcp_servers: list[McpServer] | None = Field(default=None, alias="mcpServers")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ResumeSessionRequest(AcpModel):
    """Request parameters for resuming an existing session."""

    session_id: SessionId = Field(alias="sessionId")
    cwd: AbsolutePath
    additional_directories: list[AbsolutePath] | None = Field(default=None, alias="additionalDirectories")
    mcp_servers: list[McpServer] | None = Field(default=None, alias="mcpServers")
    replay_from: ReplayFrom | None = Field(default=None, alias="replayFrom")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ReplayFromStart(AcpModel):
    """Replay the whole conversation from its first replayable entry."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["start"] = Field(default="start", alias="type")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ReplayFromOther(AcpModel):
    """Custom or future replay cursor."""

    type: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class CloseSessionRequest(AcpModel):
    """Request parameters for closing an active session."""

    session_id: SessionId = Field(alias="sessionId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SetSessionConfigOptionRequestId(AcpModel):
    """A [`SessionConfigValueId`] string value (`type: "id"`)."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["id"] = Field(default="id", alias="type")
    session_id: SessionId = Field(alias="sessionId")
    config_id: SessionConfigId = Field(alias="configId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    value: SessionConfigValueId


class SetSessionConfigOptionRequestBoolean(AcpModel):
    """A boolean value (`type: "boolean"`)."""

    tag_fields: ClassVar[tuple[str, ...]] = ("type",)
    type: Literal["boolean"] = Field(default="boolean", alias="type")
    session_id: SessionId = Field(alias="sessionId")
    config_id: SessionConfigId = Field(alias="configId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    value: bool


class SetSessionConfigOptionRequestOther(AcpModel):
    """Custom or future session configuration option value payload."""

    session_id: SessionId = Field(alias="sessionId")
    config_id: SessionConfigId = Field(alias="configId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    type: str
    value: Any


class PromptRequest(AcpModel):
    """Request parameters for sending a user prompt to the agent."""

    session_id: SessionId = Field(alias="sessionId")
    prompt: list[ContentBlock]
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class StartNesRequest(AcpModel):
    """Request to start an NES session."""

    workspace_uri: str | None = Field(default=None, alias="workspaceUri")
    workspace_folders: list[WorkspaceFolder] | None = Field(default=None, alias="workspaceFolders")
    repository: NesRepository | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class WorkspaceFolder(AcpModel):
    """A workspace folder."""

    uri: str
    name: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesRepository(AcpModel):
    """Repository metadata for an NES session."""

    name: str
    owner: str
    remote_url: str = Field(alias="remoteUrl")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class SuggestNesRequest(AcpModel):
    """Request for a code suggestion."""

    session_id: SessionId = Field(alias="sessionId")
    uri: str
    version: int
    position: Position
    selection: Range | None = None
    trigger_kind: NesTriggerKind = Field(alias="triggerKind")
    context: NesSuggestContext | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesSuggestContext(AcpModel):
    """Context attached to a suggestion request."""

    recent_files: list[NesRecentFile] | None = Field(default=None, alias="recentFiles")
    related_snippets: list[NesRelatedSnippet] | None = Field(default=None, alias="relatedSnippets")
    edit_history: list[NesEditHistoryEntry] | None = Field(default=None, alias="editHistory")
    user_actions: list[NesUserAction] | None = Field(default=None, alias="userActions")
    open_files: list[NesOpenFile] | None = Field(default=None, alias="openFiles")
    diagnostics: list[NesDiagnostic] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesRecentFile(AcpModel):
    """A recently accessed file."""

    uri: str
    language_id: str = Field(alias="languageId")
    text: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesRelatedSnippet(AcpModel):
    """A related code snippet from a file."""

    uri: str
    excerpts: list[NesExcerpt]
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesExcerpt(AcpModel):
    """A code excerpt from a file."""

    start_line: int = Field(alias="startLine")
    end_line: int = Field(alias="endLine")
    text: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesEditHistoryEntry(AcpModel):
    """An entry in the edit history."""

    uri: str
    diff: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesUserAction(AcpModel):
    """A user action (typing, cursor movement, etc.)."""

    action: str
    uri: str
    position: Position
    timestamp_ms: int = Field(alias="timestampMs")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesOpenFile(AcpModel):
    """An open file in the editor."""

    uri: str
    language_id: str = Field(alias="languageId")
    visible_range: Range | None = Field(default=None, alias="visibleRange")
    last_focused_ms: int | None = Field(default=None, alias="lastFocusedMs")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NesDiagnostic(AcpModel):
    """A diagnostic (error, warning, etc.)."""

    uri: str
    range: Range
    severity: NesDiagnosticSeverity
    message: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class CloseNesRequest(AcpModel):
    """Request to close an NES session."""

    session_id: SessionId = Field(alias="sessionId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ClientResponseResult(AcpModel):
    """A successful JSON-RPC response."""

    id: RequestId
    result: (
        RequestPermissionResponse
        | CreateElicitationResponse
        | ConnectMcpResponse
        | DisconnectMcpResponse
        | MessageMcpResponse
        | ExtResponse
    )


class ClientResponseError(AcpModel):
    """A failed JSON-RPC response."""

    id: RequestId
    error: Error


class RequestPermissionResponse(AcpModel):
    """Response to a permission request."""

    outcome: RequestPermissionOutcome
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class RequestPermissionOutcomeCancelled(AcpModel):
    """Active session work was cancelled before the user responded."""

    tag_fields: ClassVar[tuple[str, ...]] = ("outcome",)
    outcome: Literal["cancelled"] = Field(default="cancelled", alias="outcome")


class RequestPermissionOutcomeSelected(AcpModel):
    """The user selected one of the provided options."""

    tag_fields: ClassVar[tuple[str, ...]] = ("outcome",)
    outcome: Literal["selected"] = Field(default="selected", alias="outcome")
    option_id: PermissionOptionId = Field(alias="optionId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class RequestPermissionOutcomeOther(AcpModel):
    """Custom or future permission outcome."""

    outcome: str


class CreateElicitationResponseAccept(AcpModel):
    """The user accepted and provided content."""

    tag_fields: ClassVar[tuple[str, ...]] = ("action",)
    action: Literal["accept"] = Field(default="accept", alias="action")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    content: dict[str, ElicitationContentValue] | None = None


class CreateElicitationResponseDecline(AcpModel):
    """The user declined the elicitation."""

    tag_fields: ClassVar[tuple[str, ...]] = ("action",)
    action: Literal["decline"] = Field(default="decline", alias="action")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class CreateElicitationResponseCancel(AcpModel):
    """The elicitation was cancelled."""

    tag_fields: ClassVar[tuple[str, ...]] = ("action",)
    action: Literal["cancel"] = Field(default="cancel", alias="action")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class CreateElicitationResponseOther(AcpModel):
    """Custom or future elicitation action."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    action: str


class ConnectMcpResponse(AcpModel):
    """**UNSTABLE**"""

    connection_id: McpConnectionId = Field(alias="connectionId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class DisconnectMcpResponse(AcpModel):
    """**UNSTABLE**"""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ClientNotification(AcpModel):
    """A JSON-RPC notification object."""

    method: str
    params: (
        CancelSessionNotification
        | DidOpenDocumentNotification
        | DidChangeDocumentNotification
        | DidCloseDocumentNotification
        | DidSaveDocumentNotification
        | DidFocusDocumentNotification
        | AcceptNesNotification
        | RejectNesNotification
        | MessageMcpNotification
        | ExtNotification
        | None
    ) = None


class CancelSessionNotification(AcpModel):
    """Notification to cancel ongoing operations for a session."""

    session_id: SessionId = Field(alias="sessionId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class DidOpenDocumentNotification(AcpModel):
    """Notification sent when a file is opened in the editor."""

    session_id: SessionId = Field(alias="sessionId")
    uri: str
    language_id: str = Field(alias="languageId")
    version: int
    text: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class DidChangeDocumentNotification(AcpModel):
    """Notification sent when a file is edited."""

    session_id: SessionId = Field(alias="sessionId")
    uri: str
    version: int
    content_changes: list[TextDocumentContentChangeEvent] = Field(alias="contentChanges")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class TextDocumentContentChangeEvent(AcpModel):
    """A content change event for a document."""

    range: Range | None = None
    text: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class DidCloseDocumentNotification(AcpModel):
    """Notification sent when a file is closed."""

    session_id: SessionId = Field(alias="sessionId")
    uri: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class DidSaveDocumentNotification(AcpModel):
    """Notification sent when a file is saved."""

    session_id: SessionId = Field(alias="sessionId")
    uri: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class DidFocusDocumentNotification(AcpModel):
    """Notification sent when a file becomes the active editor tab."""

    session_id: SessionId = Field(alias="sessionId")
    uri: str
    version: int
    position: Position
    visible_range: Range = Field(alias="visibleRange")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class AcceptNesNotification(AcpModel):
    """Notification sent when a suggestion is accepted."""

    session_id: SessionId = Field(alias="sessionId")
    suggestion_id: NesSuggestionId = Field(alias="suggestionId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class RejectNesNotification(AcpModel):
    """Notification sent when a suggestion is rejected."""

    session_id: SessionId = Field(alias="sessionId")
    suggestion_id: NesSuggestionId = Field(alias="suggestionId")
    reason: NesRejectReason | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ProtocolLevelNotification(AcpModel):
    """A JSON-RPC notification object."""

    method: str
    params: CancelRequestNotification | None = None


class CancelRequestNotification(AcpModel):
    """Notification to cancel an ongoing request."""

    request_id: RequestId = Field(alias="requestId")
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


RequestId: TypeAlias = int | str | None
SessionId: TypeAlias = str
RequestPermissionSubject: TypeAlias = Annotated[
    Annotated[RequestPermissionSubjectToolCall, Tag("tool_call")]
    | Annotated[RequestPermissionSubjectCommand, Tag("command")]
    | Annotated[RequestPermissionSubjectOther, Tag("~other")],
    Discriminator(tag_picker("type", "type", ("tool_call", "command"), other=True, default=None)),
]
ToolCallId: TypeAlias = str
ToolKind: TypeAlias = (
    Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"] | str
)
ToolCallStatus: TypeAlias = Literal["pending", "in_progress", "completed", "failed", "cancelled"] | str
ToolCallContent: TypeAlias = Annotated[
    Annotated[ToolCallContentContent, Tag("content")]
    | Annotated[ToolCallContentDiff, Tag("diff")]
    | Annotated[ToolCallContentTerminal, Tag("terminal")]
    | Annotated[ToolCallContentOther, Tag("~other")],
    Discriminator(tag_picker("type", "type", ("content", "diff", "terminal"), other=True, default=None)),
]
ContentBlock: TypeAlias = Annotated[
    Annotated[ContentBlockText, Tag("text")]
    | Annotated[ContentBlockImage, Tag("image")]
    | Annotated[ContentBlockAudio, Tag("audio")]
    | Annotated[ContentBlockResourceLink, Tag("resource_link")]
    | Annotated[ContentBlockResource, Tag("resource")]
    | Annotated[ContentBlockOther, Tag("~other")],
    Discriminator(
        tag_picker("type", "type", ("text", "image", "audio", "resource_link", "resource"), other=True, default=None)
    ),
]
Role: TypeAlias = Literal["assistant", "user"] | str
MediaType: TypeAlias = str
IconTheme: TypeAlias = Literal["light", "dark"] | str
EmbeddedResourceResource: TypeAlias = TextResourceContents | BlobResourceContents
DiffChange: TypeAlias = Annotated[
    Annotated[DiffChangeAdd, Tag("add")]
    | Annotated[DiffChangeDelete, Tag("delete")]
    | Annotated[DiffChangeModify, Tag("modify")]
    | Annotated[DiffChangeMove, Tag("move")]
    | Annotated[DiffChangeCopy, Tag("copy")]
    | Annotated[DiffChangeOther, Tag("~other")],
    Discriminator(
        tag_picker("operation", "operation", ("add", "delete", "modify", "move", "copy"), other=True, default=None)
    ),
]
DiffFileType: TypeAlias = Literal["text", "binary", "directory", "symlink"] | str
AbsolutePath: TypeAlias = str
DiffPatchFormat: TypeAlias = Literal["git_patch"] | str
TerminalId: TypeAlias = str
PermissionOptionId: TypeAlias = str
PermissionOptionKind: TypeAlias = Literal["allow_once", "allow_always", "reject_once", "reject_always"] | str
CreateElicitationRequest: TypeAlias = Annotated[
    Annotated[CreateElicitationRequestForm, Tag("form")]
    | Annotated[CreateElicitationRequestUrl, Tag("url")]
    | Annotated[CreateElicitationRequestOther, Tag("~other")],
    Discriminator(tag_picker("mode", "mode", ("form", "url"), other=True, default=None)),
]
ElicitationSchemaType: TypeAlias = Literal["object"]
ElicitationPropertySchema: TypeAlias = Annotated[
    Annotated[ElicitationPropertySchemaString, Tag("string")]
    | Annotated[ElicitationPropertySchemaNumber, Tag("number")]
    | Annotated[ElicitationPropertySchemaInteger, Tag("integer")]
    | Annotated[ElicitationPropertySchemaBoolean, Tag("boolean")]
    | Annotated[ElicitationPropertySchemaArray, Tag("array")]
    | Annotated[ElicitationPropertySchemaOther, Tag("~other")],
    Discriminator(
        tag_picker("type", "type", ("string", "number", "integer", "boolean", "array"), other=True, default=None)
    ),
]
StringFormat: TypeAlias = Literal["email", "uri", "date", "date-time"] | str
MultiSelectItems: TypeAlias = Annotated[
    Annotated[MultiSelectItemsString, Tag("string")]
    | Annotated[MultiSelectItemsOther, Tag("~other")]
    | Annotated[MultiSelectItemsTitled, Tag("~default")],
    Discriminator(tag_picker("type", "type", ("string",), other=True, default="~default")),
]
ElicitationId: TypeAlias = str
McpServerAcpId: TypeAlias = str
McpConnectionId: TypeAlias = str
ExtRequest: TypeAlias = Any
AgentResponse: TypeAlias = AgentResponseResult | AgentResponseError
ProtocolVersion: TypeAlias = int
TextDocumentSyncKind: TypeAlias = Literal["full", "incremental"]
PositionEncodingKind: TypeAlias = Literal["utf-16", "utf-32", "utf-8"]
AuthMethod: TypeAlias = Annotated[
    Annotated[AuthMethodEnvVar, Tag("env_var")]
    | Annotated[AuthMethodTerminal, Tag("terminal")]
    | Annotated[AuthMethodAgent, Tag("agent")]
    | Annotated[AuthMethodOther, Tag("~other")],
    Discriminator(tag_picker("type", "type", ("env_var", "terminal", "agent"), other=True, default=None)),
]
AuthMethodId: TypeAlias = str
ProviderId: TypeAlias = str
LlmProtocol: TypeAlias = Literal["anthropic", "openai", "azure", "vertex", "bedrock"] | str
SessionConfigOption: TypeAlias = Annotated[
    Annotated[SessionConfigOptionSelect, Tag("select")]
    | Annotated[SessionConfigOptionBoolean, Tag("boolean")]
    | Annotated[SessionConfigOptionOther, Tag("~other")],
    Discriminator(tag_picker("type", "type", ("select", "boolean"), other=True, default=None)),
]
SessionConfigId: TypeAlias = str
SessionConfigOptionCategory: TypeAlias = Literal["mode", "model", "model_config", "thought_level"] | str
SessionConfigValueId: TypeAlias = str
SessionConfigSelectOptions: TypeAlias = list[SessionConfigSelectOption] | list[SessionConfigSelectGroup]
SessionConfigGroupId: TypeAlias = str
SessionListCursor: TypeAlias = str
NesSuggestion: TypeAlias = Annotated[
    Annotated[NesSuggestionEdit, Tag("edit")]
    | Annotated[NesSuggestionJump, Tag("jump")]
    | Annotated[NesSuggestionRename, Tag("rename")]
    | Annotated[NesSuggestionSearchAndReplace, Tag("searchAndReplace")]
    | Annotated[NesSuggestionOther, Tag("~other")],
    Discriminator(tag_picker("kind", "kind", ("edit", "jump", "rename", "searchAndReplace"), other=True, default=None)),
]
NesSuggestionId: TypeAlias = str
ExtResponse: TypeAlias = Any
MessageMcpResponse: TypeAlias = Any
ErrorCode: TypeAlias = Literal[-32700, -32600, -32601, -32602, -32603, -32800, -32000, -32002] | int
SessionUpdateStateUpdate: TypeAlias = Annotated[
    Annotated[SessionUpdateStateUpdateRunning, Tag("running")]
    | Annotated[SessionUpdateStateUpdateIdle, Tag("idle")]
    | Annotated[SessionUpdateStateUpdateRequiresAction, Tag("requires_action")]
    | Annotated[SessionUpdateStateUpdateOther, Tag("~other")],
    Discriminator(tag_picker("state", "state", ("running", "idle", "requires_action"), other=True, default=None)),
]
SessionUpdate: TypeAlias = Annotated[
    Annotated[SessionUpdateUserMessageChunk, Tag("user_message_chunk")]
    | Annotated[SessionUpdateUserMessage, Tag("user_message")]
    | Annotated[SessionUpdateAgentMessageChunk, Tag("agent_message_chunk")]
    | Annotated[SessionUpdateAgentMessage, Tag("agent_message")]
    | Annotated[SessionUpdateAgentThoughtChunk, Tag("agent_thought_chunk")]
    | Annotated[SessionUpdateAgentThought, Tag("agent_thought")]
    | Annotated[SessionUpdateStateUpdate, Tag("state_update")]
    | Annotated[SessionUpdateToolCallContentChunk, Tag("tool_call_content_chunk")]
    | Annotated[SessionUpdateToolCallUpdate, Tag("tool_call_update")]
    | Annotated[SessionUpdateTerminalUpdate, Tag("terminal_update")]
    | Annotated[SessionUpdateTerminalOutputChunk, Tag("terminal_output_chunk")]
    | Annotated[SessionUpdatePlanUpdate, Tag("plan_update")]
    | Annotated[SessionUpdatePlanRemoved, Tag("plan_removed")]
    | Annotated[SessionUpdateAvailableCommandsUpdate, Tag("available_commands_update")]
    | Annotated[SessionUpdateConfigOptionUpdate, Tag("config_option_update")]
    | Annotated[SessionUpdateSessionInfoUpdate, Tag("session_info_update")]
    | Annotated[SessionUpdateUsageUpdate, Tag("usage_update")]
    | Annotated[SessionUpdateOther, Tag("~other")],
    Discriminator(
        tag_picker(
            "sessionUpdate",
            "session_update",
            (
                "user_message_chunk",
                "user_message",
                "agent_message_chunk",
                "agent_message",
                "agent_thought_chunk",
                "agent_thought",
                "state_update",
                "tool_call_content_chunk",
                "tool_call_update",
                "terminal_update",
                "terminal_output_chunk",
                "plan_update",
                "plan_removed",
                "available_commands_update",
                "config_option_update",
                "session_info_update",
                "usage_update",
            ),
            other=True,
            default=None,
        )
    ),
]
MessageId: TypeAlias = str
StopReason: TypeAlias = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"] | str
PlanUpdateContent: TypeAlias = Annotated[
    Annotated[PlanUpdateContentItems, Tag("items")]
    | Annotated[PlanUpdateContentFile, Tag("file")]
    | Annotated[PlanUpdateContentMarkdown, Tag("markdown")]
    | Annotated[PlanUpdateContentOther, Tag("~other")],
    Discriminator(tag_picker("type", "type", ("items", "file", "markdown"), other=True, default=None)),
]
PlanId: TypeAlias = str
PlanEntryPriority: TypeAlias = Literal["high", "medium", "low"] | str
PlanEntryStatus: TypeAlias = Literal["pending", "in_progress", "completed", "cancelled"] | str
AvailableCommandInput: TypeAlias = Annotated[
    Annotated[AvailableCommandInputText, Tag("text")] | Annotated[AvailableCommandInputOther, Tag("~other")],
    Discriminator(tag_picker("type", "type", ("text",), other=True, default=None)),
]
ExtNotification: TypeAlias = Any
McpServer: TypeAlias = Annotated[
    Annotated[McpServerHttp, Tag("http")]
    | Annotated[McpServerAcp, Tag("acp")]
    | Annotated[McpServerStdio, Tag("stdio")]
    | Annotated[McpServerOther, Tag("~other")],
    Discriminator(tag_picker("type", "type", ("http", "acp", "stdio"), other=True, default=None)),
]
ReplayFrom: TypeAlias = Annotated[
    Annotated[ReplayFromStart, Tag("start")] | Annotated[ReplayFromOther, Tag("~other")],
    Discriminator(tag_picker("type", "type", ("start",), other=True, default=None)),
]
SetSessionConfigOptionRequest: TypeAlias = Annotated[
    Annotated[SetSessionConfigOptionRequestId, Tag("id")]
    | Annotated[SetSessionConfigOptionRequestBoolean, Tag("boolean")]
    | Annotated[SetSessionConfigOptionRequestOther, Tag("~other")],
    Discriminator(tag_picker("type", "type", ("id", "boolean"), other=True, default=None)),
]
NesTriggerKind: TypeAlias = Literal["automatic", "diagnostic", "manual"] | str
NesDiagnosticSeverity: TypeAlias = Literal["error", "warning", "information", "hint"] | str
ClientResponse: TypeAlias = ClientResponseResult | ClientResponseError
RequestPermissionOutcome: TypeAlias = Annotated[
    Annotated[RequestPermissionOutcomeCancelled, Tag("cancelled")]
    | Annotated[RequestPermissionOutcomeSelected, Tag("selected")]
    | Annotated[RequestPermissionOutcomeOther, Tag("~other")],
    Discriminator(tag_picker("outcome", "outcome", ("cancelled", "selected"), other=True, default=None)),
]
CreateElicitationResponse: TypeAlias = Annotated[
    Annotated[CreateElicitationResponseAccept, Tag("accept")]
    | Annotated[CreateElicitationResponseDecline, Tag("decline")]
    | Annotated[CreateElicitationResponseCancel, Tag("cancel")]
    | Annotated[CreateElicitationResponseOther, Tag("~other")],
    Discriminator(tag_picker("action", "action", ("accept", "decline", "cancel"), other=True, default=None)),
]
ElicitationContentValue: TypeAlias = str | int | float | bool | list[str]
NesRejectReason: TypeAlias = Literal["rejected", "ignored", "replaced", "cancelled"] | str


# Requests the agent answers: method → (params, result).
AGENT_REQUESTS: dict[str, tuple[Any, Any]] = {
    "mcp/message": (MessageMcpRequest, MessageMcpResponse),
    "initialize": (InitializeRequest, InitializeResponse),
    "auth/login": (LoginAuthRequest, LoginAuthResponse),
    "providers/list": (ListProvidersRequest, ListProvidersResponse),
    "providers/set": (SetProviderRequest, SetProviderResponse),
    "providers/disable": (DisableProviderRequest, DisableProviderResponse),
    "auth/logout": (LogoutAuthRequest, LogoutAuthResponse),
    "session/new": (NewSessionRequest, NewSessionResponse),
    "session/list": (ListSessionsRequest, ListSessionsResponse),
    "session/delete": (DeleteSessionRequest, DeleteSessionResponse),
    "session/fork": (ForkSessionRequest, ForkSessionResponse),
    "session/resume": (ResumeSessionRequest, ResumeSessionResponse),
    "session/close": (CloseSessionRequest, CloseSessionResponse),
    "session/set_config_option": (SetSessionConfigOptionRequest, SetSessionConfigOptionResponse),
    "session/prompt": (PromptRequest, PromptResponse),
    "nes/start": (StartNesRequest, StartNesResponse),
    "nes/suggest": (SuggestNesRequest, SuggestNesResponse),
    "nes/close": (CloseNesRequest, CloseNesResponse),
}
# Requests the client answers: method → (params, result).
CLIENT_REQUESTS: dict[str, tuple[Any, Any]] = {
    "session/request_permission": (RequestPermissionRequest, RequestPermissionResponse),
    "elicitation/create": (CreateElicitationRequest, CreateElicitationResponse),
    "mcp/connect": (ConnectMcpRequest, ConnectMcpResponse),
    "mcp/message": (MessageMcpRequest, MessageMcpResponse),
    "mcp/disconnect": (DisconnectMcpRequest, DisconnectMcpResponse),
}
# Notifications the agent handles: method → params.
AGENT_NOTIFICATIONS: dict[str, Any] = {
    "mcp/message": MessageMcpNotification,
    "session/cancel": CancelSessionNotification,
    "document/didOpen": DidOpenDocumentNotification,
    "document/didChange": DidChangeDocumentNotification,
    "document/didClose": DidCloseDocumentNotification,
    "document/didSave": DidSaveDocumentNotification,
    "document/didFocus": DidFocusDocumentNotification,
    "nes/accept": AcceptNesNotification,
    "nes/reject": RejectNesNotification,
}
# Notifications the client handles: method → params.
CLIENT_NOTIFICATIONS: dict[str, Any] = {
    "session/update": UpdateSessionNotification,
    "elicitation/complete": CompleteElicitationNotification,
    "mcp/message": MessageMcpNotification,
}
# Notifications either side handles: method → params.
PROTOCOL_NOTIFICATIONS: dict[str, Any] = {
    "$/cancel_request": CancelRequestNotification,
}
