"""opencode's `/event` stream, filtered to one session, as driver events (docs/agents.md "opencode over HTTP").

- `message.part.delta` (`field: "text"`) of a text / reasoning part → `TextDelta` / `ReasoningDelta` (message id =
  opencode's); `message.part.updated` text / reasoning → whatever of the part was not streamed yet (a part may
  arrive whole); `message.part.updated` tool → `ToolUpdated` (kind, title, input, output capped at 16 KiB).
- `message.updated` of a completed assistant message → `MessageEnded` (when it streamed text; extension
  `opencode/fork_point`), then `ContextUsage`; its `finish` (`length`: the model's output limit) is a signal.
- `permission.asked` / `question.asked` → `RequestOpened` Permission (AllowOnce, AllowAlways, DenyOnce) / Question;
  `todo.updated` → `PlanUpdated`; `session.compacted` → `ContextCompacted`.
- `session.status` busy, `session.idle`, `session.error`, `session.updated` → `Signals` for the driver (admission,
  turn end, failure, title).

The user's own message parts and the compaction agent's summary are not news to the caller and are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from omniagent.protocols.sidecar.events import (
    Choice,
    CommandInput,
    CommandSpec,
    ContextCompacted,
    ContextUsage,
    Edit,
    EventKind,
    Execute,
    Fetch,
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
    QueryInput,
    Question,
    QuestionAsk,
    QuestionRequest,
    RawTool,
    Read,
    ReasoningDelta,
    RequestOpened,
    Search,
    StopLimit,
    Subagent,
    TextDelta,
    Think,
    ToolInput,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
    UrlInput,
)
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.acp.translate import cap_output
from omniagent.runtime.adapters.opencode.info import ServerFacts, context_window

FORK_POINT = "opencode/fork_point"
PERMISSION_OPTIONS = [PermissionChoice.ALLOW_ONCE, PermissionChoice.ALLOW_ALWAYS, PermissionChoice.DENY_ONCE]
# What each offered choice answers on `POST /permission/{id}/reply`.
PERMISSION_REPLIES = {
    PermissionChoice.ALLOW_ONCE: "once",
    PermissionChoice.ALLOW_ALWAYS: "always",
    PermissionChoice.DENY_ONCE: "reject",
    PermissionChoice.DENY_ALWAYS: "reject",
}
ABORTED = "MessageAbortedError"
_HIDDEN_AGENTS = frozenset({"compaction"})
_KINDS: dict[str, Callable[[], ToolKind]] = {
    "bash": Execute,
    "read": Read,
    "edit": Edit,
    "write": Edit,
    "patch": Edit,
    "multiedit": Edit,
    "apply_patch": Edit,
    "grep": Search,
    "glob": Search,
    "list": Search,
    "codesearch": Search,
    "webfetch": Fetch,
    "websearch": Fetch,
    "task": Subagent,
    "todowrite": Think,
    "todoread": Think,
}
_STATUSES = {
    "pending": ToolStatus.PENDING,
    "running": ToolStatus.RUNNING,
    "completed": ToolStatus.COMPLETED,
    "error": ToolStatus.FAILED,
}
_PLAN_STATUSES = {"in_progress": PlanStatus.IN_PROGRESS, "completed": PlanStatus.COMPLETED}


@dataclass(slots=True)
class Signals:
    """What one server event means for the turn, beside the events it maps to."""

    events: list[d.AdapterEvent] = field(default_factory=list)
    busy: bool = False
    idle: bool = False
    error: str | None = None
    aborted: bool = False
    session: Mapping[str, Any] | None = None
    """A `session.updated` info (title, model, agent)."""
    reply_ended: bool = False
    """An assistant message completed; `limit` is the one its `finish` says it stopped at (None: none)."""
    limit: StopLimit | None = None


class EventMapper:
    """Maps the events of one opencode session; keeps the part, message and tool state that needs."""

    def __init__(self, facts: ServerFacts, directory: str) -> None:
        self.session_id = ""
        self._facts = facts
        self._directory = directory
        self._roles: dict[str, str] = {}  # message id → "user" / "assistant" / "hidden"
        self._part_types: dict[str, str] = {}
        self._streamed: dict[str, int] = {}  # part id → characters already sent
        self._with_text: set[str] = set()  # messages that streamed text or reasoning
        self._ended: set[str] = set()
        self._tools: dict[str, ToolUpdate] = {}  # by call id
        self.history: set[str] = set()
        """Messages the session had when it was opened (resumed, or copied by a fork): not news, never shown."""

    def map(self, event: Mapping[str, Any]) -> Signals:
        """The driver events and signals of one `/event` object (nothing for other sessions' events)."""
        signals = Signals()
        kind, props = event.get("type"), event.get("properties")
        if not isinstance(props, Mapping) or self._session_of(kind, props) != self.session_id:
            return signals
        handler = _HANDLERS.get(str(kind))
        if handler is not None:
            handler(self, props, signals)
        return signals

    def _session_of(self, kind: Any, props: Mapping[str, Any]) -> Any:
        if "sessionID" in props:
            return props["sessionID"]
        part = props.get("part") or props.get("info")
        return part.get("sessionID") if isinstance(part, Mapping) else None

    # --- messages and parts --------------------------------------------------------------------------------

    def _message(self, props: Mapping[str, Any], signals: Signals) -> None:
        info = props.get("info")
        if not isinstance(info, Mapping):
            return
        message_id = str(info.get("id", ""))
        if message_id in self.history:
            return
        hidden = (
            info.get("agent") in _HIDDEN_AGENTS or info.get("mode") in _HIDDEN_AGENTS or info.get("summary") is True
        )
        role = "hidden" if hidden else str(info.get("role", ""))
        self._roles[message_id] = role
        if role != "assistant":
            return
        error = info.get("error")
        if isinstance(error, Mapping):
            signals.aborted = error.get("name") == ABORTED
            signals.error = _error_message(error)
        completed = isinstance(info.get("time"), Mapping) and info["time"].get("completed") is not None
        if not completed or message_id in self._ended:
            return
        self._ended.add(message_id)
        # opencode 1.18.33 says a reply cut at the model's output limit only here (`finish`, no error); its own
        # ACP face reads the same as `max_tokens`.
        signals.reply_ended = True
        signals.limit = StopLimit.MAX_TOKENS if info.get("finish") == "length" else None
        if message_id in self._with_text:
            signals.events.append(
                d.AdapterEvent(MessageEnded(message_id=message_id), extensions={FORK_POINT: message_id})
            )
        usage = self._usage(info)
        if usage is not None:
            signals.events.append(d.AdapterEvent(usage))

    def _usage(self, info: Mapping[str, Any]) -> ContextUsage | None:
        tokens = info.get("tokens")
        if not isinstance(tokens, Mapping):
            return None
        total = tokens.get("total")
        if not isinstance(total, int):
            cache = _mapping(tokens.get("cache"))
            parts = [tokens.get("input"), tokens.get("output"), cache.get("read"), cache.get("write")]
            total = sum(p for p in parts if isinstance(p, int))
        if total <= 0:
            return None
        window = context_window(self._facts, str(info.get("providerID", "")), str(info.get("modelID", "")))
        cost = info.get("cost")
        return ContextUsage(
            used_tokens=total, window_tokens=window, cost_usd=float(cost) if isinstance(cost, int | float) else None
        )

    def _part(self, props: Mapping[str, Any], signals: Signals) -> None:
        part = props.get("part")
        if not isinstance(part, Mapping):
            return
        part_id, message_id, part_type = str(part.get("id", "")), str(part.get("messageID", "")), part.get("type")
        self._part_types[part_id] = str(part_type)
        if message_id in self.history or self._roles.get(message_id, "assistant") != "assistant":
            return
        if part_type in ("text", "reasoning") and isinstance(part.get("text"), str):
            self._text(message_id, part_id, str(part_type), part["text"], whole=True, signals=signals)
        elif part_type == "tool":
            tool = self._tool(part)
            self._tools[tool.id] = tool
            signals.events.append(d.AdapterEvent(ToolUpdated(tool=tool)))

    def _delta(self, props: Mapping[str, Any], signals: Signals) -> None:
        part_id, message_id = str(props.get("partID", "")), str(props.get("messageID", ""))
        delta = props.get("delta")
        if props.get("field") != "text" or not isinstance(delta, str) or not delta:
            return
        if message_id in self.history or self._roles.get(message_id, "assistant") != "assistant":
            return
        part_type = self._part_types.get(part_id, "text")
        if part_type in ("text", "reasoning"):
            self._text(message_id, part_id, part_type, delta, whole=False, signals=signals)

    def _text(self, message_id: str, part_id: str, part_type: str, text: str, *, whole: bool, signals: Signals) -> None:
        sent = self._streamed.get(part_id, 0)
        new = text[sent:] if whole else text
        if not new:
            return
        self._streamed[part_id] = len(text) if whole else sent + len(text)
        self._with_text.add(message_id)
        kind: EventKind = (
            TextDelta(message_id=message_id, text=new)
            if part_type == "text"
            else ReasoningDelta(message_id=message_id, text=new)
        )
        signals.events.append(d.AdapterEvent(kind))

    def _tool(self, part: Mapping[str, Any]) -> ToolUpdate:
        name = str(part.get("tool", ""))
        state = _mapping(part.get("state"))
        args = _mapping(state.get("input"))
        status = _STATUSES.get(str(state.get("status")), ToolStatus.PENDING)
        metadata = _mapping(state.get("metadata"))
        output = state.get("output") if status is ToolStatus.COMPLETED else metadata.get("output")
        if status is ToolStatus.FAILED:
            output = state.get("error")
        title = state.get("title") if isinstance(state.get("title"), str) and state.get("title") else None
        return ToolUpdate(
            id=str(part.get("callID") or part.get("id", "")),
            kind=_KINDS.get(name, OtherTool)(),
            title=title or _title(name, args),
            status=status,
            input=self._input(name, args),
            output=cap_output(output) if isinstance(output, str) and output else None,
            locations=[str(args["filePath"])] if isinstance(args.get("filePath"), str) else [],
            raw=RawTool(name=name, input=dict(args)),
        )

    def _input(self, name: str, args: Mapping[str, Any]) -> ToolInput:
        if name == "bash" and isinstance(args.get("command"), str):
            return CommandInput(spec=CommandSpec(command=args["command"], cwd=self._directory))
        if isinstance(args.get("filePath"), str):
            return PathInput(path=args["filePath"])
        if isinstance(args.get("pattern"), str):
            return PatternInput(pattern=args["pattern"])
        if isinstance(args.get("url"), str):
            return UrlInput(url=args["url"])
        if isinstance(args.get("query"), str):
            return QueryInput(query=args["query"])
        return NoInput()

    # --- requests, plan, session ---------------------------------------------------------------------------

    def _permission(self, props: Mapping[str, Any], signals: Signals) -> None:
        request_id = str(props.get("id", ""))
        action = str(props.get("permission", ""))
        patterns = [str(p) for p in props.get("patterns") or []]
        call = _mapping(props.get("tool"))
        tool = self._tools.get(str(call.get("callID", "")))
        if tool is None:
            metadata = _mapping(props.get("metadata"))
            tool = ToolUpdate(
                id=str(call.get("callID") or request_id),
                kind=_KINDS.get(action, OtherTool)(),
                title=" ".join(patterns) or action,
                status=ToolStatus.PENDING,
                input=self._input(action, metadata),
                raw=RawTool(name=action, input=dict(metadata)),
            )
        detail = f"{action}: {', '.join(patterns)}" if patterns else action or None
        request = PermissionRequest(id=request_id, tool=tool, options=list(PERMISSION_OPTIONS), detail=detail)
        signals.events.append(d.AdapterEvent(RequestOpened(request=PermissionAsk(request=request))))

    def _question(self, props: Mapping[str, Any], signals: Signals) -> None:
        questions = []
        for index, raw in enumerate(props.get("questions") or []):
            if not isinstance(raw, Mapping):
                continue
            labels = [str(o.get("label", "")) for o in raw.get("options") or [] if isinstance(o, Mapping)]
            questions.append(
                Question(
                    id=f"q{index}",
                    text=str(raw.get("question", "")),
                    header=str(raw["header"]) if raw.get("header") else None,
                    choices=[Choice(id=label, label=label) for label in labels],
                    multi_select=raw.get("multiple") is True,
                    allows_free_text=raw.get("custom") is not False,  # opencode's default: custom answers allowed
                )
            )
        request = QuestionRequest(id=str(props.get("id", "")), questions=questions)
        signals.events.append(d.AdapterEvent(RequestOpened(request=QuestionAsk(request=request))))

    def _todos(self, props: Mapping[str, Any], signals: Signals) -> None:
        entries = [
            PlanEntry(
                text=str(t.get("content", "")), status=_PLAN_STATUSES.get(str(t.get("status")), PlanStatus.PENDING)
            )
            for t in props.get("todos") or []
            if isinstance(t, Mapping) and t.get("status") != "cancelled"
        ]
        signals.events.append(d.AdapterEvent(PlanUpdated(entries=entries)))

    def _status(self, props: Mapping[str, Any], signals: Signals) -> None:
        status = props.get("status")
        if isinstance(status, Mapping) and status.get("type") in ("busy", "retry"):
            signals.busy = True

    def _idle(self, props: Mapping[str, Any], signals: Signals) -> None:
        signals.idle = True

    def _error(self, props: Mapping[str, Any], signals: Signals) -> None:
        error = props.get("error")
        if isinstance(error, Mapping):
            signals.aborted = error.get("name") == ABORTED
            signals.error = _error_message(error)
        else:
            signals.error = "opencode reported a session error"

    def _compacted(self, props: Mapping[str, Any], signals: Signals) -> None:
        signals.events.append(d.AdapterEvent(ContextCompacted()))

    def _session(self, props: Mapping[str, Any], signals: Signals) -> None:
        info = props.get("info")
        if isinstance(info, Mapping):
            signals.session = info


_HANDLERS = {
    "message.updated": EventMapper._message,
    "message.part.updated": EventMapper._part,
    "message.part.delta": EventMapper._delta,
    "permission.asked": EventMapper._permission,
    "question.asked": EventMapper._question,
    "todo.updated": EventMapper._todos,
    "session.status": EventMapper._status,
    "session.idle": EventMapper._idle,
    "session.error": EventMapper._error,
    "session.compacted": EventMapper._compacted,
    "session.updated": EventMapper._session,
}


def _mapping(node: Any) -> Mapping[str, Any]:
    return node if isinstance(node, Mapping) else {}


def _title(name: str, args: Mapping[str, Any]) -> str:
    for key in ("command", "filePath", "pattern", "url", "query", "description"):
        if isinstance(args.get(key), str) and args[key]:
            return str(args[key]) if key == "command" else f"{name} {args[key]}"
    return name


def _error_message(error: Mapping[str, Any]) -> str:
    name = str(error.get("name") or "error")
    data = error.get("data")
    message = data.get("message") if isinstance(data, Mapping) else None
    return f"{message} ({name})" if isinstance(message, str) and message else name
