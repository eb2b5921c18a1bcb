"""Engine facts → ACP `session/update` payloads and requests, for v1 or v2: pure functions over yuke models, no I/O.

What it is: the shapes. `acp/relay.py` decides *when* an update is sent; this module says *what* it looks like in
the negotiated version, built from that version's generated models (`Shapes.models`, `protocols/acp/v1.py` or
`v2.py`); `wire` gives the JSON to send. The v1/v2 differences are the fields of `Shapes`, never
a version test. A function without a `Shapes` builds what both versions spell alike (a text chunk, usage, a title,
an elicitation form) or what only v2 has (`state_update`), with v2's models: the JSON is the same either way.

Ids: ACP message ids are strings the agent mints; ours derive from the engine's per-session ids so a
replay repeats them: `m<message id>` for a message, `m<message id>.thought` for its reasoning, and
`t<message id>.<part id>` for a tool call.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, overload

import msgspec
from msgspec import UNSET

from omniagent.engine.api import (
    PLAN_TOOL,
    Answered,
    CannotAsk,
    Dismissed,
    PlanEntry,
    Question,
    ToolCall,
    message_ref,
    plan_of_part,
    read_tool_call,
    tool_call_ref,
)
from omniagent.faces.acp.shapes import Shapes
from omniagent.protocols.acp import v2
from omniagent.protocols.acp._base import AcpModel
from omniagent.protocols.yuke.content import ContentPart, ContentText, SkillInfo
from omniagent.protocols.yuke.messages import (
    AssistantMessage,
    Message,
    ReasoningPart,
    TextPart,
    ToolPart,
    UserMessage,
)
from omniagent.protocols.yuke.runs import RunOutcome, RunOutcomeCanceled, RunOutcomeFailed, RunOutcomeTurn
from omniagent.protocols.yuke.tools import (
    DiffFile,
    ToolState,
    ToolStateCanceled,
    ToolStateCompleted,
    ToolStateError,
    ToolStateRunning,
    ViewDiff,
)

# A `session/update` (or another ACP object) as one version's model; `wire` gives its JSON.
Update = AcpModel


@overload
def wire(value: Update) -> dict[str, Any]: ...
@overload
def wire(value: list[Update]) -> list[dict[str, Any]]: ...
def wire(value: Update | list[Update]) -> Any:
    """The wire JSON of a model built here, or of a list of them.

    msgspec's own conversion, not `AcpModel.dump()`: the same JSON (wire names, unset fields left out, an explicit
    None kept as null), about 5x faster, which a `session/update` per streamed text chunk feels. It equals `dump()`
    only because nothing built here holds a parsed model, whose kept JSON `dump()` would give back instead.
    """
    return msgspec.to_builtins(value)


def message_id(engine_message_id: int) -> str:
    return message_ref(engine_message_id)


def thought_id(engine_message_id: int) -> str:
    return f"m{engine_message_id}.thought"


def tool_call_id(engine_message_id: int, part_id: int) -> str:
    return tool_call_ref(engine_message_id, part_id)


def iso_time(ms: int) -> str:
    """RFC 3339 UTC time of an engine millisecond timestamp."""
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# Text ---------------------------------------------------------------------------------------------------------------


def text_block(text: str) -> v2.ContentBlockText:
    """A text content block (the same in v1 and v2)."""
    return v2.ContentBlockText(text=text)


_CHUNKS: dict[str, Callable[..., Update]] = {
    "agent_message_chunk": v2.SessionUpdateAgentMessageChunk,
    "agent_thought_chunk": v2.SessionUpdateAgentThoughtChunk,
    "user_message_chunk": v2.SessionUpdateUserMessageChunk,
}


def chunk(kind: str, msg_id: str, text: str) -> Update:
    """`agent_message_chunk` / `agent_thought_chunk` / `user_message_chunk` with one text block."""
    return _CHUNKS[kind](message_id=msg_id, content=text_block(text))


def user_message(shapes: Shapes, message: UserMessage) -> list[Update]:
    """The user message as a whole `user_message` (v2) or one chunk per text part (v1); a skill the user ran
    shows as the command they typed, not as the instructions it expanded to."""
    m = shapes.models
    if message.skill is not None:
        texts = [f"/{message.skill.name} {message.skill.arguments}".rstrip()]
    else:
        texts = [p.text for p in message.content if isinstance(p, ContentText)]
    blocks = [m.ContentBlockText(text=text) for text in texts]
    mid = message_id(message.id)
    if shapes.whole_messages:
        return [m.SessionUpdateUserMessage(message_id=mid, content=blocks)]
    return [m.SessionUpdateUserMessageChunk(message_id=mid, content=b) for b in blocks]


def available_commands(shapes: Shapes, skills: list[SkillInfo]) -> Update:
    """The session's skills as its slash commands; a skill's argument hint is its command's input hint."""
    m = shapes.models
    hinted = m.AvailableCommandInputText if shapes.typed_command_input else m.UnstructuredCommandInput
    command = m.AvailableCommandCommand if shapes.typed_command_input else m.AvailableCommand
    commands = [
        command(
            name=skill.name,
            description=skill.description,
            input=hinted(hint=skill.argument_hint) if skill.argument_hint else UNSET,
        )
        for skill in skills
    ]
    return m.SessionUpdateAvailableCommandsUpdate(available_commands=commands)


def prompt_parts(blocks: list[Any]) -> list[ContentPart] | str:
    """ACP prompt blocks as engine text parts, or the sentence saying why they cannot be sent.

    Text is kept; a resource link or an embedded text resource becomes a text mention (the engine has no blob
    store, so images, audio and binary resources are refused).
    """
    parts: list[ContentPart] = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(ContentText(text=block["text"]))
        elif kind == "resource_link" and isinstance(block.get("uri"), str):
            parts.append(ContentText(text=f"[{block.get('name') or block['uri']}]({block['uri']})"))
        elif kind == "resource" and isinstance(block.get("resource"), dict) and "text" in block["resource"]:
            resource = block["resource"]
            parts.append(ContentText(text=f"{resource.get('uri', '')}\n```\n{resource['text']}\n```"))
        else:
            return f"{kind or 'this'} content is not supported: omniagent takes text and resource links"
    if not parts:
        return "the prompt has no content"
    return parts


# Tool calls ---------------------------------------------------------------------------------------------------------


def _abs(root: str, path: str) -> str:
    return os.path.normpath(os.path.join(root, path))


def _call_fields(shapes: Shapes, root: str, call: ToolCall, status: str) -> dict[str, Any]:
    """What a tool call says about itself (title, kind, raw input, file locations), as model fields."""
    m = shapes.models
    return {
        "tool_call_id": tool_call_id(call.message_id, call.part_id),
        "title": call.title,
        "kind": call.kind,
        "status": status,
        "raw_input": call.args,
        "locations": [m.ToolCallLocation(path=_abs(root, call.path))] if call.path is not None else UNSET,
    }


def _opening(shapes: Shapes, **fields: Any) -> Update:
    """The version's update that creates a tool call: v1 `tool_call`, v2 the first `tool_call_update`."""
    m = shapes.models
    created = m.SessionUpdateToolCall if shapes.tool_create == "tool_call" else m.SessionUpdateToolCallUpdate
    return created(**fields)


def tool_opened(shapes: Shapes, root: str, call: ToolCall, status: str = "pending") -> Update:
    """The update that creates a tool call (title, kind, raw input, file locations), from the engine's one
    reading of the call (`engine.feed.ToolCall`)."""
    return _opening(shapes, **_call_fields(shapes, root, call, status))


def tool_subject(shapes: Shapes, root: str, call: ToolCall) -> Update:
    """The ToolCallUpdate a permission request names."""
    return shapes.models.ToolCallUpdate(**_call_fields(shapes, root, call, "pending"))


def tool_state(shapes: Shapes, root: str, call: ToolCall, state: ToolState) -> Update | None:
    """The `tool_call_update` for a state change (None for `pending`, which the creating update already said)."""
    fields = _state_fields(shapes, root, call, state)
    if fields is None:
        return None
    call_id = tool_call_id(call.message_id, call.part_id)
    return shapes.models.SessionUpdateToolCallUpdate(tool_call_id=call_id, **fields)


def _state_fields(shapes: Shapes, root: str, call: ToolCall, state: ToolState) -> dict[str, Any] | None:
    """What a state change sets: the status, and at the end the output (and diffs) and the raw output."""
    m = shapes.models
    if isinstance(state, ToolStateRunning):
        return {"status": "in_progress"}
    if isinstance(state, ToolStateCompleted | ToolStateError):
        text = state.output if isinstance(state, ToolStateCompleted) else state.error
        content = [m.ToolCallContentContent(content=m.ContentBlockText(text=text))]
        if isinstance(state, ToolStateCompleted):
            content += _diffs(shapes, root, call, state)
        return {
            "status": "completed" if isinstance(state, ToolStateCompleted) else "failed",
            "content": content,
            "raw_output": {"output": text},
        }
    if isinstance(state, ToolStateCanceled):
        return {"status": shapes.cancelled_status}
    return None


def _diffs(shapes: Shapes, root: str, call: ToolCall, state: ToolStateCompleted) -> list[Update]:
    m = shapes.models
    files = [f for view in state.view or [] if isinstance(view, ViewDiff) for f in view.files]
    if not files:
        return []
    if shapes.structured_diffs:
        changes = [(m.DiffChangeAdd if _created(f) else m.DiffChangeModify)(path=_abs(root, f.path)) for f in files]
        patch = m.DiffPatch(format="git_patch", text="".join(_patch(root, f) for f in files))
        return [m.ToolCallContentDiff(changes=changes, patch=patch)]
    # v1 wants old and new text: the edit's own strings, or the whole new content of a write.
    args = call.args
    path = _abs(root, files[0].path)
    if call.name == "edit" and isinstance(args.get("new_string"), str):
        return [m.ToolCallContentDiff(path=path, old_text=args.get("old_string"), new_text=args["new_string"])]
    if call.name == "write" and isinstance(args.get("content"), str):
        return [m.ToolCallContentDiff(path=path, old_text=None, new_text=args["content"])]
    return []


def _created(file: DiffFile) -> bool:
    return all(h.old_lines == 0 and h.old_start == 0 for h in file.hunks) and bool(file.hunks)


def _patch(root: str, file: DiffFile) -> str:
    """One file of a git-style patch from the engine's diff hunks (paths absolute, as v2 asks)."""
    path = _abs(root, file.path)
    out = [f"diff --git a{path} b{path}\n", "--- /dev/null\n" if _created(file) else f"--- a{path}\n", f"+++ b{path}\n"]
    for h in file.hunks:
        out.append(f"@@ -{h.old_start},{h.old_lines} +{h.new_start},{h.new_lines} @@\n")
        out += [line if line.endswith("\n") else line + "\n" for line in h.lines]
    return "".join(out)


def agent_call_update(shapes: Shapes, tool_call_id: str, status: str, text: str) -> Update:
    """The `tool_call_update` of a `spawn_agent` call: its status and what its child did so far, as one text."""
    m = shapes.models
    content = [m.ToolCallContentContent(content=m.ContentBlockText(text=text))]
    return m.SessionUpdateToolCallUpdate(tool_call_id=tool_call_id, status=status, content=content)


# Permission asks ----------------------------------------------------------------------------------------------------

# The options of every ask, as (kind, name): each option's id is its kind, so any client can read them.
PERMISSION_OPTIONS: tuple[tuple[str, str], ...] = (
    ("allow_once", "Allow once"),
    ("allow_always", "Always allow"),
    ("reject_once", "Reject"),
)


def permission_request(
    shapes: Shapes,
    session_id: str,
    subject: Update,
    title: str,
    options: Iterable[tuple[str, str]] = PERMISSION_OPTIONS,
) -> Update:
    """The `session/request_permission` params asking to run a tool call (`subject`, from `tool_subject`): v2
    with `title` and the call as its subject, v1 with the call alone."""
    m = shapes.models
    offered = [m.PermissionOption(option_id=kind, name=name, kind=kind) for kind, name in options]
    if shapes.permission_subject:
        named = m.RequestPermissionSubjectToolCall(tool_call=subject)
        return m.RequestPermissionRequest(session_id=session_id, title=title, subject=named, options=offered)
    return m.RequestPermissionRequest(session_id=session_id, tool_call=subject, options=offered)


# Questions (elicitation) --------------------------------------------------------------------------------------------

# The one field of every question form.
ANSWER_FIELD = "answer"


def elicitation(session_id: str, call: ToolCall, question: Question) -> Update:
    """The `elicitation/create` params (form mode) that put the model's question to the user: one
    required field, a boolean for a confirm, a string among the options for a select, a string for an input."""
    field: v2.ElicitationPropertySchemaBoolean | v2.ElicitationPropertySchemaString
    if question.kind == "confirm":
        field = v2.ElicitationPropertySchemaBoolean(title=question.title, description=question.detail or UNSET)
    elif question.kind == "select":
        field = v2.ElicitationPropertySchemaString(title=question.title, enum=list(question.options))
    else:
        example = f"For example: {question.placeholder}" if question.placeholder else UNSET
        field = v2.ElicitationPropertySchemaString(title=question.title, description=example)
    message = f"{question.title}\n\n{question.detail}" if question.detail else question.title
    return v2.CreateElicitationRequestForm(
        session_id=session_id,
        tool_call_id=tool_call_id(call.message_id, call.part_id),
        message=message,
        requested_schema=v2.ElicitationSchema(type="object", properties={ANSWER_FIELD: field}, required=[ANSWER_FIELD]),
    )


def elicited(question: Question, result: Any) -> Answered | Dismissed | CannotAsk:
    """The client's answer to `elicitation`: accepted with a value that fits the question, or dismissed
    (declined, cancelled, an unknown action); a value that does not fit is a failure the model reads."""
    if not isinstance(result, dict) or result.get("action") != "accept":
        return Dismissed()
    content = result.get("content")
    value = content.get(ANSWER_FIELD) if isinstance(content, dict) else None
    if question.kind == "confirm":
        fits = isinstance(value, bool)
    else:
        fits = isinstance(value, str) and (question.kind != "select" or value in question.options)
    if not fits:
        return CannotAsk("the client's answer does not fit the question")
    assert isinstance(value, bool | str)
    return Answered(value)


# Turns, sessions, replay --------------------------------------------------------------------------------------------


_IDLE: dict[str, Callable[..., Update]] = {
    "end_turn": v2.SessionUpdateStateUpdateIdleEndTurn,
    "max_tokens": v2.SessionUpdateStateUpdateIdleMaxTokens,
    "max_turn_requests": v2.SessionUpdateStateUpdateIdleMaxTurnRequests,
    "refusal": v2.SessionUpdateStateUpdateIdleRefusal,
    "cancelled": v2.SessionUpdateStateUpdateIdleCancelled,
}


def state_update(state: str, stop_reason: str | None = None) -> Update:
    """v2's `state_update`: `running`, `requires_action`, or `idle` with the turn's stop reason (see `failed_idle`
    for `error`)."""
    if state == "idle" and stop_reason is not None:
        return _IDLE[stop_reason]()
    if state == "running":
        return v2.SessionUpdateStateUpdateRunning()
    if state == "requires_action":
        return v2.SessionUpdateStateUpdateRequiresAction()
    raise ValueError(f"no session state {state!r}")


def failed_idle(code: int, message: str) -> Update:
    """The idle `state_update` of a turn that failed: the draft's `error` stop reason with the failure as a JSON-RPC
    error object (an alpha.2 client reads `error` as a stop reason it does not know; the relay also says the failure
    as agent text)."""
    return v2.SessionUpdateStateUpdateIdleError(error=v2.Error(code=code, message=message))


def stop_reason(outcome: RunOutcome) -> str:
    """The ACP stop reason of a finished run (a failure other than max_rounds ends the turn as end_turn)."""
    if isinstance(outcome, RunOutcomeCanceled):
        return "cancelled"
    if isinstance(outcome, RunOutcomeFailed):
        return "max_turn_requests" if outcome.code == "max_rounds" else "end_turn"
    if isinstance(outcome, RunOutcomeTurn):
        return {"length": "max_tokens", "refusal": "refusal", "content_filter": "refusal", "canceled": "cancelled"}.get(
            outcome.finish, "end_turn"
        )
    return "end_turn"


def session_info(title: str, updated_at_ms: int) -> Update:
    """The `session_info_update` of a retitled session (no title is an explicit null: the client clears it)."""
    return v2.SessionUpdateSessionInfoUpdate(title=title or None, updated_at=iso_time(updated_at_ms))


# The one plan of a session, in v2's plan-id terms (the engine keeps one plan per session).
PLAN_ID = "plan"


def plan(shapes: Shapes, entries: Iterable[PlanEntry]) -> Update:
    """The whole plan: v1 `plan{entries}`, v2 `plan_update{plan: items}`; the client replaces what it showed."""
    m = shapes.models
    listed = [m.PlanEntry(content=e.content, priority=e.priority, status=e.status) for e in entries]
    if shapes.plan_items:
        return m.SessionUpdatePlanUpdate(plan=m.PlanUpdateContentItems(plan_id=PLAN_ID, entries=listed))
    return m.SessionUpdatePlan(entries=listed)


def usage(used: int, size: int) -> Update:
    """The `usage_update` of the session's context window."""
    return v2.SessionUpdateUsageUpdate(used=used, size=size)


def replay(shapes: Shapes, root: str, message: Message) -> list[Update]:
    """One stored message as the updates a client needs to rebuild it."""
    if isinstance(message, UserMessage):
        return user_message(shapes, message)
    if not isinstance(message, AssistantMessage):
        return []  # a compaction summary is not part of the visible conversation
    m = shapes.models
    out: list[Update] = []
    texts = [m.ContentBlockText(text=p.text) for p in message.content if isinstance(p, TextPart) and p.text]
    thoughts = [m.ContentBlockText(text=p.text) for p in message.content if isinstance(p, ReasoningPart) and p.text]
    thought, said = thought_id(message.id), message_id(message.id)
    if shapes.whole_messages:
        out += [m.SessionUpdateAgentThought(message_id=thought, content=thoughts)] if thoughts else []
        out += [m.SessionUpdateAgentMessage(message_id=said, content=texts)] if texts else []
    else:
        out += [m.SessionUpdateAgentThoughtChunk(message_id=thought, content=b) for b in thoughts]
        out += [m.SessionUpdateAgentMessageChunk(message_id=said, content=b) for b in texts]
    for part in message.content:
        if isinstance(part, ToolPart) and part.name == PLAN_TOOL:
            # Shown as the plan it set, as it was live (a failed call set none).
            entries = plan_of_part(part)
            out += [plan(shapes, entries)] if entries is not None else []
        elif isinstance(part, ToolPart):
            call = read_tool_call(message.id, part.id, part.name, part.arguments)
            final = _state_fields(shapes, root, call, part.state) or {}
            out.append(_opening(shapes, **(_call_fields(shapes, root, call, "pending") | final)))
    return out
