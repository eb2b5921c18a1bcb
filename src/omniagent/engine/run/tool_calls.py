"""Tool calls of one round: run each tool part in order, with state broadcasts and live output deltas.

Tool states go pending → running → completed | error (or canceled when the run stops). In ask mode a guarded
call first waits, still `pending` with the activity at `running_tool`, for the frontend's answer
(`engine/interactions/permissions.py`); a refused call goes to `error` with a sentence the model reads, and the run goes
on. The tool's view hints become the state's `view` list (`tools/wire.py`); live output becomes `tool.output_delta` with
`offset` = bytes sent so far; a new plan (the `plan` tool) becomes `plan.updated` just before the call's terminal state.
An exec whose command line names a secret answer's variable asks in every mode, one call at a time, and only an
approved one gets the variables it names (engine/interactions/secrets.py); the session's secret answers are masked in
the output and the states. Everything here goes through the run's `RunContext`.
"""

from __future__ import annotations

import json

from omniagent.engine.interactions.permissions import Decision
from omniagent.engine.interactions.secrets import Scrubber
from omniagent.engine.run.context import RunContext
from omniagent.engine.run.draft import Draft
from omniagent.engine.store.journal import now_ms
from omniagent.engine.tools import ToolResult
from omniagent.engine.tools.plan import PLAN_UPDATED, plan_updated
from omniagent.engine.tools.wire import terminal_state
from omniagent.protocols.yuke.activity import ActivityRunning, ActivityRunningTool
from omniagent.protocols.yuke.messages import PartDelta, ToolStateChangedData
from omniagent.protocols.yuke.tools import ToolState, ToolStateCanceled, ToolStateError, ToolStateRunning


async def run_tools(ctx: RunContext, draft: Draft, root: str, part_ids: list[int]) -> bool:
    """Run the tool parts `part_ids` of `draft` one after another; whether a call that succeeded asks the run to
    end after this round (a spawned child). Raises `Interrupted` when the run stops."""
    run = ctx.run
    ends_turn = False
    for part_id in part_ids:
        buf = draft.parts[part_id]
        ctx.set_activity(
            ActivityRunningTool(
                run_id=run.run_id,
                message_id=draft.message_id,
                part_id=part_id,
                tool_name=buf.name,
                started_at_ms=now_ms(),
            )
        )
        secrets = _secrets_named(ctx, buf.name, buf.text)
        refusal = await _permission(ctx, draft, part_id, secrets)
        if refusal is not None:
            # Never started: straight from pending to error, the refusal being what the model reads.
            _set_state(ctx, draft, part_id, ToolStateError(error=refusal, duration_ms=0))
            continue
        started = now_ms()  # the tool's own time starts once it may run
        _set_state(ctx, draft, part_id, ToolStateRunning(started_at_ms=started))
        # Read per call: an ask_user earlier in this round may have just taken a secret answer.
        scrubber = ctx.scrubber()
        output = _Output(ctx, draft.message_id, part_id, scrubber)
        try:
            tool_ctx = ctx.tool_context(root, output, draft.message_id, part_id, secrets)
        except OSError:
            result = ToolResult.error("the session workspace is not available")
        else:
            result = await ctx.step(ctx.tools.run_json(buf.name, buf.text, tool_ctx))
        output.flush()
        # Masked before anything records or sends it: the state is stored, broadcast and read by the model.
        result = scrubber.result(result)
        if result.plan is not None:
            ctx.emit(PLAN_UPDATED, plan_updated(ctx.session_id, draft.message_id, part_id, result.plan))
        ends_turn |= result.ends_turn and not result.is_error
        _set_state(ctx, draft, part_id, terminal_state(result, now_ms() - started))
    ctx.set_activity(ActivityRunning(run_id=run.run_id, started_at_ms=now_ms()))
    return ends_turn


class _Output:
    """One call's live output as `tool.output_delta`s: secrets masked, `offset` = bytes sent so far."""

    def __init__(self, ctx: RunContext, message_id: int, part_id: int, scrubber: Scrubber) -> None:
        self._ctx = ctx
        self._message_id = message_id
        self._part_id = part_id
        self._scrubber = scrubber
        self._masking = scrubber.stream()
        self._sent = 0

    def __call__(self, text: str) -> None:
        self._emit(self._masking.feed(text) if self._scrubber else text)

    def flush(self) -> None:
        """Send what the masking held back (the call ended: no secret can complete it)."""
        self._emit(self._masking.flush())

    def _emit(self, text: str) -> None:
        if not text:
            return
        ctx = self._ctx
        delta = PartDelta(
            session_id=ctx.session_id,
            message_id=self._message_id,
            part_id=self._part_id,
            delta=text,
            offset=self._sent,
        )
        ctx.emit("tool.output_delta", delta)
        self._sent += len(text.encode())


def _secrets_named(ctx: RunContext, tool_name: str, arguments: str) -> tuple[str, ...]:
    """The secret variables an exec call's command names (none for other tools, or arguments that do not parse:
    such a call fails on its arguments before it runs anything)."""
    if tool_name != "exec":
        return ()
    try:
        command = json.loads(arguments).get("command")
    except (ValueError, AttributeError):
        return ()
    return ctx.secrets_named(command) if isinstance(command, str) else ()


async def _permission(ctx: RunContext, draft: Draft, part_id: int, secrets: tuple[str, ...]) -> str | None:
    """Ask before a guarded call in ask mode, an unsandboxed exec in any mode, or an exec given `secrets` in any
    mode and every time (the part stays `pending` meanwhile); the refusal text, or None.

    The wait is an interruptible step: cancelling the run answers the ask `canceled` and raises `Interrupted`.
    """
    permissions, sid, buf = ctx.permissions, ctx.session_id, draft.parts[part_id]
    if ctx.tools.get(buf.name) is None:
        return None  # nothing would run: the call is an error result naming the tools there are
    unsandboxed = buf.name == "exec" and ctx.exec_needs_confirm()
    if not secrets and not permissions.needs_confirm(sid, buf.name, unsandboxed=unsandboxed):
        return None
    asking = permissions.open_interaction(
        sid, draft.message_id, part_id, buf.name, buf.text, unsandboxed=unsandboxed, secrets=secrets
    )
    decision = await ctx.step(asking)
    if decision.allowed:
        return None
    if secrets:
        return (
            f"the user did not give {', '.join('$' + name for name in secrets)} to this command; it did not run. "
            "Only commands the user approves get a secret"
        )
    if decision is Decision.CANCELED:
        return "the user dismissed the permission request; the tool did not run"
    return "the user rejected this tool call; it did not run"


def cancel_open_tools(ctx: RunContext, draft: Draft) -> None:
    """Close every tool part still pending or running as canceled."""
    for part_id in draft.tool_parts():
        state = draft.parts[part_id].state
        if isinstance(state, ToolStateRunning):
            _set_state(ctx, draft, part_id, ToolStateCanceled(duration_ms=now_ms() - state.started_at_ms))
        elif state.type == "pending":
            _set_state(ctx, draft, part_id, ToolStateCanceled())


def _set_state(ctx: RunContext, draft: Draft, part_id: int, state: ToolState) -> None:
    draft.parts[part_id].state = state
    ctx.emit(
        "tool.state_changed",
        ToolStateChangedData(session_id=ctx.session_id, message_id=draft.message_id, part_id=part_id, state=state),
    )
