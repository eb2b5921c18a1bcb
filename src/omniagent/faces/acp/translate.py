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
from collections.abc import Iterable
from typing import Any

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
from omniagent.protocols.acp import v2
from omniagent.protocols.yuke.content import ContentText, SkillInfo
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
from omniagent.serving.acp.builders import PLAN_ID, Update
from omniagent.serving.acp.shapes import Shapes


def message_id(engine_message_id: int) -> str:
    return message_ref(engine_message_id)


def thought_id(engine_message_id: int) -> str:
    return f"m{engine_message_id}.thought"


def tool_call_id(engine_message_id: int, part_id: int) -> str:
    return tool_call_ref(engine_message_id, part_id)


# Text ---------------------------------------------------------------------------------------------------------------


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


def plan(shapes: Shapes, entries: Iterable[PlanEntry]) -> Update:
    """The whole plan: v1 `plan{entries}`, v2 `plan_update{plan: items}`; the client replaces what it showed."""
    m = shapes.models
    listed = [m.PlanEntry(content=e.content, priority=e.priority, status=e.status) for e in entries]
    if shapes.plan_items:
        return m.SessionUpdatePlanUpdate(plan=m.PlanUpdateContentItems(plan_id=PLAN_ID, entries=listed))
    return m.SessionUpdatePlan(entries=listed)


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
