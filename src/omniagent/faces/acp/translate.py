"""Engine facts → ACP `session/update` payloads, for v1 or v2: pure functions over yuke models, no I/O.

What it is: the shapes. `acp/relay.py` decides *when* an update is sent; this module says *what* it looks like in
the negotiated version. The v1/v2 differences (acp.md §3.2, §3.3) are the fields of `Shapes`, never a version test.

Ids: ACP message ids are strings the agent mints (acp.md §5.2); ours derive from the engine's per-session ids so a
replay repeats them: `m<message id>` for a message, `m<message id>.thought` for its reasoning, and
`t<message id>.<part id>` for a tool call.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from omniagent.engine.events import ToolCall, read_tool_call
from omniagent.engine.run.plans import plan_of_part
from omniagent.engine.tools.context import Answered, CannotAsk, Dismissed, PlanEntry, Question
from omniagent.engine.tools.plan import PLAN_TOOL
from omniagent.faces.acp.shapes import Shapes
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

Update = dict[str, Any]


def message_id(engine_message_id: int) -> str:
    return f"m{engine_message_id}"


def thought_id(engine_message_id: int) -> str:
    return f"m{engine_message_id}.thought"


def tool_call_id(engine_message_id: int, part_id: int) -> str:
    return f"t{engine_message_id}.{part_id}"


def iso_time(ms: int) -> str:
    """RFC 3339 UTC time of an engine millisecond timestamp."""
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# Text ---------------------------------------------------------------------------------------------------------------


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def chunk(kind: str, msg_id: str, text: str) -> Update:
    """`agent_message_chunk` / `agent_thought_chunk` / `user_message_chunk` with one text block."""
    return {"sessionUpdate": kind, "messageId": msg_id, "content": text_block(text)}


def user_message(shapes: Shapes, message: UserMessage) -> list[Update]:
    """The user message as a whole `user_message` (v2) or one chunk per text part (v1); a skill the user ran
    shows as the command they typed, not as the instructions it expanded to."""
    if message.skill is not None:
        blocks = [text_block(f"/{message.skill.name} {message.skill.arguments}".rstrip())]
    else:
        blocks = [text_block(p.text) for p in message.content if isinstance(p, ContentText)]
    mid = message_id(message.id)
    if shapes.whole_messages:
        return [{"sessionUpdate": "user_message", "messageId": mid, "content": blocks}]
    return [{"sessionUpdate": "user_message_chunk", "messageId": mid, "content": b} for b in blocks]


def available_commands(shapes: Shapes, skills: list[SkillInfo]) -> Update:
    """The session's skills as its slash commands; a skill's argument hint is its command's input hint."""
    commands: list[dict[str, Any]] = []
    for skill in skills:
        command: dict[str, Any] = {"name": skill.name, "description": skill.description}
        if skill.argument_hint:
            hint = {"hint": skill.argument_hint}
            command["input"] = {"type": "text", **hint} if shapes.typed_command_input else hint
        commands.append(command)
    return {"sessionUpdate": "available_commands_update", "availableCommands": commands}


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


def tool_opened(shapes: Shapes, root: str, call: ToolCall, status: str = "pending") -> Update:
    """The update that creates a tool call (title, kind, raw input, file locations), from the engine's one
    reading of the call (`engine.feed.ToolCall`)."""
    update: Update = {
        "sessionUpdate": shapes.tool_create,
        "toolCallId": tool_call_id(call.message_id, call.part_id),
        "title": call.title,
        "kind": call.kind,
        "status": status,
        "rawInput": call.args,
    }
    if call.path is not None:
        update["locations"] = [{"path": _abs(root, call.path)}]
    return update


def tool_subject(shapes: Shapes, root: str, call: ToolCall) -> dict[str, Any]:
    """The ToolCallUpdate a permission request names."""
    update = tool_opened(shapes, root, call)
    del update["sessionUpdate"]
    return update


def tool_state(shapes: Shapes, root: str, call: ToolCall, state: ToolState) -> Update | None:
    """The `tool_call_update` for a state change (None for `pending`, which the creating update already said)."""
    update: Update = {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id(call.message_id, call.part_id)}
    if isinstance(state, ToolStateRunning):
        update["status"] = "in_progress"
    elif isinstance(state, ToolStateCompleted | ToolStateError):
        update["status"] = "completed" if isinstance(state, ToolStateCompleted) else "failed"
        text = state.output if isinstance(state, ToolStateCompleted) else state.error
        content: list[dict[str, Any]] = [{"type": "content", "content": text_block(text)}]
        if isinstance(state, ToolStateCompleted):
            content += _diffs(shapes, root, call, state)
        update["content"] = content
        update["rawOutput"] = {"output": text}
    elif isinstance(state, ToolStateCanceled):
        update["status"] = shapes.cancelled_status
    else:
        return None
    return update


def _diffs(shapes: Shapes, root: str, call: ToolCall, state: ToolStateCompleted) -> list[dict[str, Any]]:
    files = [f for view in state.view or [] if isinstance(view, ViewDiff) for f in view.files]
    if not files:
        return []
    if shapes.structured_diffs:
        return [
            {
                "type": "diff",
                "changes": [_change(root, f) for f in files],
                "patch": {"format": "git_patch", "text": "".join(_patch(root, f) for f in files)},
            }
        ]
    # v1 wants old and new text: the edit's own strings, or the whole new content of a write.
    args = call.args
    path = _abs(root, files[0].path)
    if call.name == "edit" and isinstance(args.get("new_string"), str):
        return [{"type": "diff", "path": path, "oldText": args.get("old_string"), "newText": args["new_string"]}]
    if call.name == "write" and isinstance(args.get("content"), str):
        return [{"type": "diff", "path": path, "oldText": None, "newText": args["content"]}]
    return []


def _change(root: str, file: DiffFile) -> dict[str, Any]:
    created = all(h.old_lines == 0 and h.old_start == 0 for h in file.hunks) and bool(file.hunks)
    return {"operation": "add" if created else "modify", "path": _abs(root, file.path)}


def _patch(root: str, file: DiffFile) -> str:
    """One file of a git-style patch from the engine's diff hunks (paths absolute, as v2 asks)."""
    path = _abs(root, file.path)
    created = all(h.old_lines == 0 and h.old_start == 0 for h in file.hunks) and bool(file.hunks)
    out = [f"diff --git a{path} b{path}\n", "--- /dev/null\n" if created else f"--- a{path}\n", f"+++ b{path}\n"]
    for h in file.hunks:
        out.append(f"@@ -{h.old_start},{h.old_lines} +{h.new_start},{h.new_lines} @@\n")
        out += [line if line.endswith("\n") else line + "\n" for line in h.lines]
    return "".join(out)


# Questions (elicitation) --------------------------------------------------------------------------------------------

# The one field of every question form.
ANSWER_FIELD = "answer"


def elicitation(session_id: str, call: ToolCall, question: Question) -> dict[str, Any]:
    """The `elicitation/create` params (form mode, acp.md §5.8) that put the model's question to the user: one
    required field, a boolean for a confirm, a string among the options for a select, a string for an input."""
    field: dict[str, Any] = {"title": question.title}
    if question.kind == "confirm":
        field["type"] = "boolean"
        if question.detail:
            field["description"] = question.detail
    else:
        field["type"] = "string"
        if question.kind == "select":
            field["enum"] = list(question.options)
        elif question.placeholder:
            field["description"] = f"For example: {question.placeholder}"
    message = f"{question.title}\n\n{question.detail}" if question.detail else question.title
    return {
        "sessionId": session_id,
        "toolCallId": tool_call_id(call.message_id, call.part_id),
        "mode": "form",
        "message": message,
        "requestedSchema": {"type": "object", "properties": {ANSWER_FIELD: field}, "required": [ANSWER_FIELD]},
    }


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


def state_update(state: str, stop_reason: str | None = None) -> Update:
    update: Update = {"sessionUpdate": "state_update", "state": state}
    if stop_reason is not None:
        update["stopReason"] = stop_reason
    return update


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
    return {"sessionUpdate": "session_info_update", "title": title or None, "updatedAt": iso_time(updated_at_ms)}


# The one plan of a session, in v2's plan-id terms (the engine keeps one plan per session).
PLAN_ID = "plan"


def plan(shapes: Shapes, entries: Iterable[PlanEntry]) -> Update:
    """The whole plan: v1 `plan{entries}`, v2 `plan_update{plan: items}`; the client replaces what it showed."""
    listed = [{"content": e.content, "priority": e.priority, "status": e.status} for e in entries]
    if shapes.plan_items:
        return {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": PLAN_ID, "entries": listed}}
    return {"sessionUpdate": "plan", "entries": listed}


def usage(used: int, size: int) -> Update:
    return {"sessionUpdate": "usage_update", "used": used, "size": size}


def replay(shapes: Shapes, root: str, message: Message) -> list[Update]:
    """One stored message as the updates a client needs to rebuild it (acp.md §5.9)."""
    if isinstance(message, UserMessage):
        return user_message(shapes, message)
    if not isinstance(message, AssistantMessage):
        return []  # a compaction summary is not part of the visible conversation
    out: list[Update] = []
    texts = [text_block(p.text) for p in message.content if isinstance(p, TextPart) and p.text]
    thoughts = [text_block(p.text) for p in message.content if isinstance(p, ReasoningPart) and p.text]
    for kind, mid, blocks in (
        ("agent_thought", thought_id(message.id), thoughts),
        ("agent_message", message_id(message.id), texts),
    ):
        if not blocks:
            continue
        if shapes.whole_messages:
            out.append({"sessionUpdate": kind, "messageId": mid, "content": blocks})
        else:
            out += [{"sessionUpdate": f"{kind}_chunk", "messageId": mid, "content": b} for b in blocks]
    for part in message.content:
        if isinstance(part, ToolPart) and part.name == PLAN_TOOL:
            # Shown as the plan it set, as it was live (a failed call set none).
            entries = plan_of_part(part)
            out += [plan(shapes, entries)] if entries is not None else []
        elif isinstance(part, ToolPart):
            call = read_tool_call(message.id, part.id, part.name, part.arguments)
            opened = tool_opened(shapes, root, call)
            final = tool_state(shapes, root, call, part.state)
            if final is not None:
                opened.update({k: v for k, v in final.items() if k != "sessionUpdate"})
            out.append(opened)
    return out
