"""In-memory state of resident sessions: activity, the active run, the queued count, locks and broadcasts.

Durable facts live in the store; this holds only what a restart may lose (and recovery rebuilds).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from omniagent.engine.broadcast import Broadcaster
from omniagent.engine.store.queries import SessionRecord
from omniagent.protocols.yuke.activity import ActivityIdle, ActivityState, SessionActivity, SessionActivityChangedData
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.messages import TokenUsage
from omniagent.protocols.yuke.runs import RunConfig, RunKind
from omniagent.protocols.yuke.sessions import Session, SessionRemovedData, SessionSummaryChangedData


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
    # "canceled" (user), "interrupted" (engine shutdown) or "removed" (its session is being removed)
    cancel_reason: str | None = None
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


class LiveSessions:
    """The resident sessions of one engine: each one's live record and lock, the session revision, and the
    broadcaster every part emits through. Parts that change live state take this object, never the engine.

    A session's lock serialises its admission and run transitions (`inputs.Inputs`), so a run ending never races
    a request on the same session.
    """

    def __init__(self, broadcaster: Broadcaster) -> None:
        self.broadcaster = broadcaster
        self.revision = 0  # SessionRevision: in-memory, restarts at 0 per process
        self._live: dict[str, LiveSession] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._on_removed: list[Callable[[str], None]] = []

    def emit(self, name: str, data: YukeModel) -> None:
        """Send one broadcast (durable ones only after their transaction committed)."""
        self.broadcaster.emit(name, data)

    def get(self, session_id: str) -> LiveSession:
        """The live record of a session, created on first touch."""
        live = self._live.get(session_id)
        if live is None:
            live = self._live[session_id] = LiveSession(session_id)
        return live

    def find(self, session_id: str) -> LiveSession | None:
        """The live record of a session touched since start, or None."""
        return self._live.get(session_id)

    def lock(self, session_id: str) -> asyncio.Lock:
        """The lock of one session's admission and run transitions."""
        return self._locks.setdefault(session_id, asyncio.Lock())

    def is_busy(self, session_id: str) -> bool:
        """Whether this process runs a run of the session now."""
        live = self._live.get(session_id)
        return live is not None and live.run is not None

    def busy_ids(self) -> list[str]:
        """The sessions with a run in this process."""
        return [sid for sid, live in self._live.items() if live.run is not None]

    def active_runs(self) -> list[ActiveRun]:
        """Every run open in this process."""
        return [live.run for live in self._live.values() if live.run is not None]

    def activity_of(self, record: SessionRecord, queued: int) -> SessionActivity:
        """Live activity of a resident session, else the durable idle activity."""
        live = self._live.get(record.session.id)
        if live is not None:
            return live.activity()
        return SessionActivity(state=ActivityIdle(), queued=queued, context_usage=record.usage_last)

    def activity_changed(self, live: LiveSession) -> None:
        self.emit(
            "session.activity_changed", SessionActivityChangedData(session_id=live.session_id, activity=live.activity())
        )

    def summary_changed(self, session: Session) -> None:
        self.revision += 1
        self.emit("session.summary_changed", SessionSummaryChangedData(revision=self.revision, session=session))

    def on_removed(self, forget: Callable[[str], None]) -> None:
        """Call `forget(session_id)` when a session is removed (per-session settings kept elsewhere)."""
        self._on_removed.append(forget)

    def removed(self, session_id: str) -> None:
        """A session left the store: drop what is kept about it and broadcast `session.removed`."""
        self._live.pop(session_id, None)
        for forget in self._on_removed:
            forget(session_id)
        self.revision += 1
        self.emit("session.removed", SessionRemovedData(revision=self.revision, session_id=session_id))
