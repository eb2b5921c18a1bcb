"""The `plan` tool: the model keeps a visible plan (a todo list) by sending the whole list each time.

The tool only checks and echoes the list; the plan itself travels in `ToolResult.plan`, which the run loop
broadcasts (`plan.updated`, docs/engine.md) and every face shows (ACP `plan`, the sidecar's `PlanUpdated`). Whole-list
replacement, as ACP plans and Claude Code's todo list work, so a lost update never leaves a stale entry: the newest
call is the plan. It never asks for permission: it changes nothing outside the conversation.

The session's plan on the yuke wire is here too, beside the tool that sets it (so the broadcaster's table of
extension broadcasts needs nothing above the tools): yuke has no plan, so the engine adds one broadcast,
`plan.updated`, carrying the whole new list with the tool part that set it. It is not journaled (it has no `seq`):
the call's arguments are in the committed message, so `plan_of_part` reads the plan back from a stored call, which
is how a replay (ACP `session/load`) shows it again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import get_args

from omniagent.engine.tools.context import PlanEntry, PlanPriority, PlanStatus, ToolContext, ToolError, ToolResult
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import MessageId, PartId, SessionId, Str
from omniagent.protocols.yuke.messages import ToolPart

__all__ = [
    "PLAN_TOOL",
    "PLAN_UPDATED",
    "PlanEntryData",
    "PlanTool",
    "PlanUpdatedData",
    "parse_plan",
    "plan_of_part",
    "plan_updated",
]

PLAN_TOOL = "plan"
# The engine extension broadcast (not in yuke's BroadcastName).
PLAN_UPDATED = "plan.updated"
# Entries one plan may hold, and characters of one entry: a plan is a short checklist, not a document.
MAX_ENTRIES = 50
MAX_ENTRY_CHARS = 500
_MARKS: Mapping[str, str] = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
_STATUSES: Mapping[object, PlanStatus] = {s: s for s in get_args(PlanStatus)}
_PRIORITIES: Mapping[object, PlanPriority] = {p: p for p in get_args(PlanPriority)}


class PlanTool:
    """Replace the session's plan with the list given."""

    name = PLAN_TOOL
    description = (
        "Keep a plan (a todo list) the user can see, for work with several steps. Send the whole list every time, "
        "each entry with its status: pending, in_progress or completed. Mark an entry in_progress when you start "
        "it and completed as soon as it is done; keep at most one entry in_progress. An empty list clears the plan."
    )
    input_schema: Mapping[str, object] = {
        "type": "object",
        "properties": {
            "entries": {
                "type": "array",
                "maxItems": MAX_ENTRIES,
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "The step, in a short sentence."},
                        "status": {"type": "string", "enum": list(get_args(PlanStatus))},
                        "priority": {"type": "string", "enum": list(get_args(PlanPriority))},
                    },
                    "required": ["content", "status"],
                },
            }
        },
        "required": ["entries"],
    }

    async def run(self, args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        try:
            entries = parse_plan(args)
        except ToolError as exc:
            return ToolResult.error(str(exc))
        if not entries:
            return ToolResult("The plan is cleared.", plan=())
        lines = [f"{_MARKS[e.status]} {e.content}" for e in entries]
        return ToolResult("The plan is now:\n" + "\n".join(lines), plan=entries)


def parse_plan(args: Mapping[str, object]) -> tuple[PlanEntry, ...]:
    """The entries of a `plan` call's arguments (also how a stored call is read back for replay).

    Raises:
        ToolError: the list or an entry is missing, mistyped, too long, or has an unknown status or priority.
    """
    raw = args.get("entries")
    if not isinstance(raw, list):
        raise ToolError("the argument 'entries' must be a list of {content, status} objects")
    if len(raw) > MAX_ENTRIES:
        raise ToolError(f"a plan holds at most {MAX_ENTRIES} entries")
    return tuple(_entry(number, item) for number, item in enumerate(raw, 1))


def _entry(number: int, item: object) -> PlanEntry:
    if not isinstance(item, dict):
        raise ToolError(f"entry {number} must be an object with 'content' and 'status'")
    content, status, priority = item.get("content"), item.get("status"), item.get("priority", "medium")
    if not isinstance(content, str) or not content.strip():
        raise ToolError(f"entry {number} needs a non-empty 'content' string")
    if len(content) > MAX_ENTRY_CHARS:
        raise ToolError(f"entry {number} is longer than {MAX_ENTRY_CHARS} characters")
    if not isinstance(status, str) or status not in _STATUSES:
        raise ToolError(f"entry {number} has status {status!r}; use pending, in_progress or completed")
    if not isinstance(priority, str) or priority not in _PRIORITIES:
        raise ToolError(f"entry {number} has priority {priority!r}; use high, medium or low")
    return PlanEntry(content.strip(), _STATUSES[status], _PRIORITIES[priority])


class PlanEntryData(YukeModel):
    """One entry of the plan: ACP's `PlanEntry` fields."""

    content: Str
    status: PlanStatus
    priority: PlanPriority


class PlanUpdatedData(YukeModel):
    """`plan.updated`: the session's whole plan now, set by the tool part (`message_id`, `part_id`)."""

    session_id: SessionId
    message_id: MessageId
    part_id: PartId
    entries: list[PlanEntryData]


def plan_updated(session_id: str, message_id: int, part_id: int, entries: Iterable[PlanEntry]) -> PlanUpdatedData:
    """The broadcast for a plan the tool part `message_id`/`part_id` set."""
    wire = [PlanEntryData(content=e.content, status=e.status, priority=e.priority) for e in entries]
    return PlanUpdatedData(session_id=session_id, message_id=message_id, part_id=part_id, entries=wire)


def plan_of_part(part: ToolPart) -> tuple[PlanEntry, ...] | None:
    """The plan a stored tool part set: its entries when it is a completed `plan` call, else None."""
    if part.name != PLAN_TOOL or part.state.type != "completed":
        return None
    try:
        args = json.loads(part.arguments or "{}")
        return parse_plan(args) if isinstance(args, dict) else None
    except (ValueError, ToolError):
        return None
