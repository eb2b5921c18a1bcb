"""Tool calls of one round: run each tool part in order, with state broadcasts and live output deltas.

Tool states go pending → running → completed | error (or canceled when the run stops). In ask mode a guarded
call first waits, still `pending` with the activity at `running_tool`, for the frontend's answer
(`permissions.py`); a refused call goes to `error` with a sentence the model reads, and the run goes on.
The tool's view hints become the state's `view` list; live output becomes `tool.output_delta` with `offset` =
bytes sent so far.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter

from omniagent.engine.journal import now_ms
from omniagent.engine.permissions import Decision
from omniagent.engine.tools import ToolContext, ToolResult
from omniagent.engine.tools import View as ToolView
from omniagent.protocols.yuke.activity import ActivityRunning, ActivityRunningTool
from omniagent.protocols.yuke.messages import PartDelta, ToolStateChangedData
from omniagent.protocols.yuke.tools import (
    ToolState,
    ToolStateCanceled,
    ToolStateCompleted,
    ToolStateError,
    ToolStateRunning,
    View,
)

if TYPE_CHECKING:
    from omniagent.engine.draft import Draft
    from omniagent.engine.runs import RunLoop

_VIEW = TypeAdapter[View](View)


async def run_tools(loop: RunLoop, draft: Draft, root: str, part_ids: list[int]) -> None:
    """Run the tool parts `part_ids` of `draft` one after another. Raises `Interrupted` when the run stops."""
    engine, live, run = loop.engine, loop.live, loop.run
    for part_id in part_ids:
        buf = draft.parts[part_id]
        started = now_ms()
        sent = 0

        def on_output(text: str, part_id: int = part_id) -> None:
            nonlocal sent
            engine.broadcaster.emit(
                "tool.output_delta",
                PartDelta(
                    session_id=live.session_id, message_id=draft.message_id, part_id=part_id, delta=text, offset=sent
                ),
            )
            sent += len(text.encode())

        loop.set_activity(
            ActivityRunningTool(
                run_id=run.run_id,
                message_id=draft.message_id,
                part_id=part_id,
                tool_name=buf.name,
                started_at_ms=started,
            )
        )
        refusal = await _permission(loop, draft, part_id)
        if refusal is not None:
            # Never started: straight from pending to error, the refusal being what the model reads.
            _set_state(loop, draft, part_id, ToolStateError(error=refusal, duration_ms=0))
            continue
        started = now_ms()  # the tool's own time starts once it may run
        _set_state(loop, draft, part_id, ToolStateRunning(started_at_ms=started))
        try:
            sandbox = engine.sandboxes.policy(live.session_id, engine.routes.catalog)
            ctx = ToolContext.for_workspace(
                root, on_output=on_output, limits=engine.config.tool_limits, sandbox=sandbox
            )
        except OSError:
            result = ToolResult.error("the session workspace is not available")
        else:
            result = await loop.step(engine.tools.run_json(buf.name, buf.text, ctx))
        duration = now_ms() - started
        views = [_wire_view(v) for v in result.views] or None
        state: ToolState = (
            ToolStateError(error=result.output, view=views, duration_ms=duration)
            if result.is_error
            else ToolStateCompleted(output=result.output, view=views, duration_ms=duration)
        )
        _set_state(loop, draft, part_id, state)
    loop.set_activity(ActivityRunning(run_id=run.run_id, started_at_ms=now_ms()))


async def _permission(loop: RunLoop, draft: Draft, part_id: int) -> str | None:
    """Ask before a guarded call in ask mode, or an unsandboxed exec in any mode (the part stays `pending`
    meanwhile); the refusal text, or None.

    The wait is an interruptible step: cancelling the run answers the ask `canceled` and raises `Interrupted`.
    """
    permissions, sid, buf = loop.engine.permissions, loop.live.session_id, draft.parts[part_id]
    unsandboxed = buf.name == "exec" and loop.engine.sandboxes.exec_asks(sid)
    if not permissions.must_ask(sid, buf.name, unsandboxed=unsandboxed):
        return None
    asking = permissions.ask(sid, draft.message_id, part_id, buf.name, buf.text, unsandboxed=unsandboxed)
    decision = await loop.step(asking)
    if decision.allowed:
        return None
    if decision is Decision.CANCELED:
        return "the user dismissed the permission request; the tool did not run"
    return "the user rejected this tool call; it did not run"


def cancel_open_tools(loop: RunLoop, draft: Draft) -> None:
    """Close every tool part still pending or running as canceled."""
    for part_id in draft.tool_parts():
        state = draft.parts[part_id].state
        if isinstance(state, ToolStateRunning):
            _set_state(loop, draft, part_id, ToolStateCanceled(duration_ms=now_ms() - state.started_at_ms))
        elif state.type == "pending":
            _set_state(loop, draft, part_id, ToolStateCanceled())


def _set_state(loop: RunLoop, draft: Draft, part_id: int, state: ToolState) -> None:
    draft.parts[part_id].state = state
    loop.engine.broadcaster.emit(
        "tool.state_changed",
        ToolStateChangedData(
            session_id=loop.live.session_id, message_id=draft.message_id, part_id=part_id, state=state
        ),
    )


def _wire_view(view: ToolView) -> View:
    """The tools' frozen view mirrors carry the yuke field names; only the `type` tags need adding."""
    data: dict[str, Any] = {"type": view.TYPE, **dataclasses.asdict(view)}
    if isinstance(data.get("source"), dict):
        data["source"] = {"type": "blob", **data["source"]}
    return _VIEW.validate_python(data)
