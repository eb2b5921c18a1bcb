"""pi RPC events → driver events: streamed text and thinking, tool snapshots, compaction, context usage, and the
extension-UI dialogs as typed questions.

Translation only (its one I/O: reading a prompt's image attachments), no turn rules (the adapter decides what ends
a turn). pi gives messages no ids, so each assistant message gets `m<n>` at its `message_start`. User messages are
not forwarded: they echo the caller's own prompt or steer (anyagent: UserMessage is never a replay of the caller's
input).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from omniagent.protocols.sidecar.base import Diagnostic, DiagnosticLevel
from omniagent.protocols.sidecar.commands import Answer, ChoicesAnswer, QuestionsAnswer, TextAnswer
from omniagent.protocols.sidecar.events import (
    Choice,
    CommandInput,
    CommandSpec,
    ContextCompacted,
    ContextUsage,
    DiagnosticEvent,
    Edit,
    EventKind,
    Execute,
    MessageEnded,
    NoInput,
    OtherTool,
    PathInput,
    PatternInput,
    Question,
    QuestionAsk,
    QuestionRequest,
    RawTool,
    Read,
    ReasoningDelta,
    RequestOpened,
    Search,
    TextDelta,
    ToolInput,
    ToolKind,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
)
from omniagent.runtime.adapters.acp.info import AgentFacts
from omniagent.runtime.adapters.acp.prompt import prompt_blocks
from omniagent.runtime.adapters.acp.translate import cap_output
from omniagent.runtime.driver import PromptInput

# Extension key carrying a frame we do not map, and the diagnostic that carries it (as the ACP adapter does).
RAW_FRAME = "pi/raw_event"
UNHANDLED = "unhandled pi event"
# Frames that only mark structure the loop already has (turn start, the run's own start, queue bookkeeping).
_SILENT = frozenset(
    {"agent_start", "turn_start", "turn_end", "queue_update", "auto_retry_start", "auto_retry_end", "compaction_start"}
)
# Dialog methods that wait for an answer (the rest of extension UI is fire-and-forget).
DIALOGS = frozenset({"select", "confirm", "input", "editor"})
CONFIRM_CHOICES = (Choice(id="yes", label="Yes"), Choice(id="no", label="No"))
_KINDS: Mapping[str, Callable[[], ToolKind]] = {
    "bash": Execute,
    "read": Read,
    "ls": Read,
    "edit": Edit,
    "write": Edit,
    "grep": Search,
    "find": Search,
}
_NOTIFY_LEVELS = {"info": DiagnosticLevel.INFO, "warning": DiagnosticLevel.WARNING, "error": DiagnosticLevel.ERROR}


@dataclass(slots=True)
class _Tool:
    id: str
    name: str
    args: Any = None
    status: ToolStatus = ToolStatus.PENDING
    output: str = ""

    def snapshot(self) -> ToolUpdate:
        return ToolUpdate(
            id=self.id,
            kind=_KINDS.get(self.name, OtherTool)(),
            title=_title(self.name, self.args),
            status=self.status,
            input=_input(self.name, self.args),
            output=cap_output(self.output) if self.output else None,
            locations=[path] if (path := _path(self.args)) is not None else [],
            raw=RawTool(name=self.name, input=self.args),
        )


@dataclass(slots=True)
class EventMapper:
    """Maps one pi session's events; keeps the open message, its streamed text and the tool snapshots."""

    messages: int = 0
    message_id: str | None = None
    sent: dict[tuple[str, int], str] = field(default_factory=dict)  # (kind, contentIndex) → text already sent
    tools: dict[str, _Tool] = field(default_factory=dict)
    cost: float = 0.0  # this process's spend, summed over assistant messages

    def map(self, frame: Mapping[str, Any]) -> list[EventKind]:
        """The events for one frame (empty for structural frames); unknown frames become an Info diagnostic."""
        kind = frame.get("type")
        if kind in _SILENT:
            return []
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            return [_diagnostic(DiagnosticLevel.INFO, f"{UNHANDLED} {kind!s}")]
        return handler(self, frame)

    # --- messages ------------------------------------------------------------------------------------------

    def _message_start(self, frame: Mapping[str, Any]) -> list[EventKind]:
        if _role(frame) == "assistant":
            self.messages += 1
            self.message_id = f"m{self.messages}"
            self.sent.clear()
        return []

    def _message_update(self, frame: Mapping[str, Any]) -> list[EventKind]:
        event = frame.get("assistantMessageEvent")
        if not isinstance(event, Mapping) or self.message_id is None:
            return []
        kind, index = event.get("type"), event.get("contentIndex", 0)
        if kind in ("text_delta", "thinking_delta") and isinstance(event.get("delta"), str):
            return self._text(kind.removesuffix("_delta"), index, event["delta"], whole=False)
        if kind == "text_end" and isinstance(event.get("content"), str):
            return self._text("text", index, event["content"], whole=True)
        if kind == "thinking_end" and isinstance(event.get("content"), str):
            return self._text("thinking", index, event["content"], whole=True)
        if kind == "toolcall_end" and isinstance(event.get("toolCall"), Mapping):
            call = event["toolCall"]
            tool = self._tool(str(call.get("id", "")), str(call.get("name", "")), call.get("arguments"))
            return [ToolUpdated(tool=tool.snapshot())]
        return []

    def _text(self, kind: str, index: Any, text: str, *, whole: bool) -> list[EventKind]:
        """A delta, or a block's end carrying the whole text: send only what was not streamed yet."""
        assert self.message_id is not None
        key = (kind, index if isinstance(index, int) else 0)
        sent = self.sent.get(key, "")
        new = (text[len(sent) :] if text.startswith(sent) else "") if whole else text
        self.sent[key] = sent + new
        if not new:
            return []
        make = TextDelta if kind == "text" else ReasoningDelta
        return [make(message_id=self.message_id, text=new)]

    def _message_end(self, frame: Mapping[str, Any]) -> list[EventKind]:
        message = frame.get("message")
        if _role(frame) != "assistant" or self.message_id is None or not isinstance(message, Mapping):
            return []
        ended, self.message_id = self.message_id, None
        usage = message.get("usage")
        cost = usage.get("cost") if isinstance(usage, Mapping) else None
        total = cost.get("total") if isinstance(cost, Mapping) else None
        if isinstance(total, int | float):
            self.cost += float(total)
        return [MessageEnded(message_id=ended)]

    def usage(self, message: Mapping[str, Any] | None, window: int | None) -> ContextUsage | None:
        """Context use after a run, as pi counts it: the last assistant message's tokens (input + output + cache)."""
        usage = message.get("usage") if message is not None else None
        if not isinstance(usage, Mapping):
            return None
        total = usage.get("totalTokens")
        if not isinstance(total, int):
            total = sum(v for k in ("input", "output", "cacheRead", "cacheWrite") if isinstance(v := usage.get(k), int))
        return ContextUsage(used_tokens=max(total, 0), window_tokens=window, cost_usd=self.cost)

    # --- tools ---------------------------------------------------------------------------------------------

    def _tool(self, tool_id: str, name: str, args: Any) -> _Tool:
        tool = self.tools.get(tool_id)
        if tool is None:
            tool = self.tools[tool_id] = _Tool(tool_id, name)
        if args is not None:
            tool.args = args
        return tool

    def _tool_event(self, frame: Mapping[str, Any]) -> list[EventKind]:
        tool = self._tool(str(frame.get("toolCallId", "")), str(frame.get("toolName", "")), frame.get("args"))
        kind = frame.get("type")
        if kind == "tool_execution_end":
            tool.status = ToolStatus.FAILED if frame.get("isError") else ToolStatus.COMPLETED
            result = frame.get("result")
        else:
            tool.status = ToolStatus.RUNNING
            result = frame.get("partialResult")
        # Each update carries the whole output so far (pi docs): send what extends what was sent.
        text = _content_text(result) if result is not None else tool.output
        appended = text[len(tool.output) :] if text.startswith(tool.output) else text
        tool.output = text
        events: list[EventKind] = [ToolOutputDelta(tool_id=tool.id, text=appended)] if appended else []
        snapshot = tool.snapshot()
        if kind == "tool_execution_end":
            del self.tools[tool.id]
        return [*events, ToolUpdated(tool=snapshot)]

    # --- the rest ------------------------------------------------------------------------------------------

    def _compaction_end(self, frame: Mapping[str, Any]) -> list[EventKind]:
        if frame.get("aborted") or not isinstance(frame.get("result"), Mapping):
            message = frame.get("errorMessage")
            return [_diagnostic(DiagnosticLevel.WARNING, f"compaction failed: {message}")] if message else []
        return [ContextCompacted()]

    def _extension_ui(self, frame: Mapping[str, Any]) -> list[EventKind]:
        method = frame.get("method")
        if method in DIALOGS:
            return [RequestOpened(request=QuestionAsk(request=question(frame)))]
        if method == "notify":
            level = _NOTIFY_LEVELS.get(str(frame.get("notifyType") or "info"), DiagnosticLevel.INFO)
            return [_diagnostic(level, str(frame.get("message") or ""))]
        return []  # status lines, widgets, the terminal title, editor text: a TUI's business


async def prompt_fields(prompt: PromptInput) -> tuple[dict[str, Any], list[str]]:
    """A `prompt` / `steer` command's fields: the text naming every attachment, and the images pi takes inline
    (ACP's image block is pi's ImageContent); plus warnings about attachments that could not be read."""
    blocks, problems = await prompt_blocks(prompt, AgentFacts(image=True))
    images = [block for block in blocks if block["type"] == "image"]
    return {"message": str(blocks[-1]["text"]), **({"images": images} if images else {})}, problems


def question(frame: Mapping[str, Any]) -> QuestionRequest:
    """A dialog as one question: `select` offers its options, `confirm` Yes/No, `input` and `editor` free text."""
    method, request_id = frame.get("method"), str(frame.get("id", ""))
    title = str(frame.get("title") or "")
    text = f"{title}\n{frame['message']}" if method == "confirm" and frame.get("message") else title
    choices: list[Choice] = []
    if method == "select":
        options = frame.get("options")
        choices = [Choice(id=o, label=o) for o in options if isinstance(o, str)] if isinstance(options, list) else []
    elif method == "confirm":
        choices = list(CONFIRM_CHOICES)
    free = method in ("input", "editor")
    return QuestionRequest(
        id=request_id,
        questions=[Question(id=request_id, text=text, header=None, choices=choices, allows_free_text=free)],
    )


def dialog_response(request_id: str, method: str, answer: Answer | None) -> dict[str, Any]:
    """The `extension_ui_response` for a dialog: the chosen option, yes/no, the typed text, or `cancelled`."""
    reply = answer.answers[0] if isinstance(answer, QuestionsAnswer) and answer.answers else None
    if isinstance(reply, TextAnswer):
        return {"type": "extension_ui_response", "id": request_id, "value": reply.text}
    if isinstance(reply, ChoicesAnswer) and reply.ids:
        if method == "confirm":
            return {"type": "extension_ui_response", "id": request_id, "confirmed": reply.ids[0] == "yes"}
        return {"type": "extension_ui_response", "id": request_id, "value": reply.ids[0]}
    return {"type": "extension_ui_response", "id": request_id, "cancelled": True}


def last_assistant(messages: Any) -> Mapping[str, Any] | None:
    """The last assistant message of an `agent_end`'s messages."""
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            return message
    return None


def _diagnostic(level: DiagnosticLevel, message: str) -> DiagnosticEvent:
    return DiagnosticEvent(diagnostic=Diagnostic(level=level, message=message))


def _role(frame: Mapping[str, Any]) -> Any:
    message = frame.get("message")
    return message.get("role") if isinstance(message, Mapping) else None


def _content_text(result: Any) -> str:
    content = result.get("content") if isinstance(result, Mapping) else None
    blocks = content if isinstance(content, list) else []
    return "\n".join(str(b["text"]) for b in blocks if isinstance(b, Mapping) and isinstance(b.get("text"), str))


def _path(args: Any) -> str | None:
    path = args.get("path") if isinstance(args, Mapping) else None
    return path if isinstance(path, str) else None


def _title(name: str, args: Any) -> str:
    command = args.get("command") if isinstance(args, Mapping) else None
    detail = command if isinstance(command, str) else _path(args)
    return f"{name}: {detail}" if detail else name


def _input(name: str, args: Any) -> ToolInput:
    fields = args if isinstance(args, Mapping) else {}
    if name == "bash" and isinstance(fields.get("command"), str):
        return CommandInput(spec=CommandSpec(command=fields["command"], cwd=None))
    if isinstance(fields.get("pattern"), str):
        return PatternInput(pattern=fields["pattern"])
    path = _path(args)
    return PathInput(path=path) if path is not None else NoInput()


_Handler = Callable[[EventMapper, Mapping[str, Any]], list[EventKind]]
_HANDLERS: Mapping[str, _Handler] = {
    "message_start": EventMapper._message_start,
    "message_update": EventMapper._message_update,
    "message_end": EventMapper._message_end,
    "tool_execution_start": EventMapper._tool_event,
    "tool_execution_update": EventMapper._tool_event,
    "tool_execution_end": EventMapper._tool_event,
    "compaction_end": EventMapper._compaction_end,
    "extension_ui_request": EventMapper._extension_ui,
    "extension_error": lambda m, f: [_diagnostic(DiagnosticLevel.WARNING, f"pi extension error: {f.get('error')}")],
}
