"""In-memory state of resident sessions: activity, the active run, the queued count.

Durable facts live in the store; this holds only what a restart may lose (and recovery rebuilds).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from omniagent.protocols.yuke.activity import ActivityIdle, ActivityState, SessionActivity
from omniagent.protocols.yuke.messages import TokenUsage
from omniagent.protocols.yuke.runs import RunConfig, RunKind


@dataclass(slots=True)
class ActiveRun:
    """The one run a session may have open.

    `cancel` is set by session.cancel_run (or shutdown); the run loop checks it between steps, and the current
    interruptible step (a model call, a retry wait, a tool call) is cancelled so the loop sees it at once.
    """

    run_id: int
    kind: RunKind
    config: RunConfig
    started_at_ms: int
    cancel_reason: str | None = None  # "canceled" (user) or "interrupted" (engine shutdown)
    task: asyncio.Task[None] | None = None
    step: asyncio.Task[object] | None = None


@dataclass(slots=True)
class LiveSession:
    """A session touched since start: its activity and active run."""

    session_id: str
    queued: int = 0
    context_usage: TokenUsage = field(default_factory=TokenUsage)
    state: ActivityState = field(default_factory=ActivityIdle)
    run: ActiveRun | None = None
    pending_compaction: int | None = None  # a compaction run reserved to start when the active run ends

    def activity(self) -> SessionActivity:
        """The wire snapshot of this session's activity."""
        return SessionActivity(
            state=self.state,
            config=self.run.config if self.run is not None else None,
            queued=self.queued,
            context_usage=self.context_usage,
            pending_compaction=self.pending_compaction,
        )
