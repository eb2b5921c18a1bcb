"""The session's plan on the yuke wire: the `plan.updated` broadcast, an engine extension (docs/engine.md).

yuke has no plan, so the engine adds one broadcast: each successful `plan` tool call (`tools/plan.py`) replaces
the session's plan, and `plan.updated` carries the whole new list with the tool part that set it. It is not
journaled (it has no `seq`): the call's arguments are in the committed message, so `plan_of_part` reads the plan
back from a stored call, which is how a replay (ACP `session/load`) shows it again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from omniagent.engine.tools.context import PlanEntry, PlanPriority, PlanStatus, ToolError
from omniagent.engine.tools.plan import PLAN_TOOL, parse_plan
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import MessageId, PartId, SessionId, Str
from omniagent.protocols.yuke.messages import ToolPart

# The engine extension broadcast (not in yuke's BroadcastName).
PLAN_UPDATED = "plan.updated"


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
