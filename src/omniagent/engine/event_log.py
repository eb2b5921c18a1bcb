"""A session's event log read back by its sequence: the `session.events` extension (replay what a client missed,
through any process of the store) and, on a shared store, the relay of the events other processes commit.

Every durable broadcast is a row of the log with the session's next `seq` (store/journal.py). A client that kept
the last `seq` it saw reads what it missed with `session.events` from any process serving the store, the same
events with the same `seq`, in order. On a PostgreSQL store (docs/fleet.md) every committed event notifies the
fleet with its session and sequence only; `RemoteEvents` reads the events it has not seen from the log and emits
them through this process's broadcaster, so a client attached here follows a run executing elsewhere. What is
durable crosses (run.started, message.committed, run.done, input.queued, …); a run's streaming deltas stay on the
process that runs it. A SQLite store has no other machine: `Store.notices()` never yields.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

import msgspec

from omniagent.engine.broadcast import EXTENSION_BROADCASTS
from omniagent.engine.errors import EngineError
from omniagent.engine.live import LiveSessions
from omniagent.engine.store import Store
from omniagent.engine.store import queries as q
from omniagent.engine.store.connection import STORE_ERRORS
from omniagent.protocols.yuke.base import YukeModel, decode_json
from omniagent.protocols.yuke.ids import SessionId
from omniagent.protocols.yuke.methods import BROADCASTS

log = logging.getLogger(__name__)

SESSION_EVENTS_METHOD = "session.events"
EVENTS_DEFAULT = 200  # events per page when the client names no limit
EVENTS_MAX = 1000


class SessionEventsParams(YukeModel):
    """Params of `session.events` (engine extension): the session's logged events after `after_seq` (none: from
    the start)."""

    session_id: SessionId
    after_seq: Annotated[int, msgspec.Meta(ge=0)] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=EVENTS_MAX)] | None = None


class LoggedEvent(YukeModel):
    """One logged event as its broadcast line had it: the broadcast's name and params (which carry its `seq`)."""

    method: str
    params: dict[str, Any]


class SessionEventsResult(YukeModel):
    """The events in `seq` order; `has_more` when a later page holds more."""

    events: list[LoggedEvent]
    has_more: bool


async def session_events(store: Store, params: SessionEventsParams) -> SessionEventsResult:
    """session.events: a page of the session's event log after a sequence, whichever process wrote it."""
    limit = params.limit or EVENTS_DEFAULT
    rows = await store.query(q.events_after, params.session_id, params.after_seq or 0, limit + 1)
    if not rows and await store.query(q.get_session, params.session_id) is None:  # an event implies its session
        raise EngineError.unknown_session()
    events = [LoggedEvent(method=name, params=msgspec.json.decode(payload)) for _, name, payload in rows[:limit]]
    return SessionEventsResult(events=events, has_more=len(rows) > limit)


class RemoteEvents:
    """Relays other processes' events of a shared store to this process's subscribers (`follow` runs it)."""

    def __init__(self, store: Store, live: LiveSessions) -> None:
        self._store = store
        self._live = live
        self._seen: dict[str, int] = {}  # session → the last seq relayed (or written here)

    async def follow(self) -> None:
        """Relay until cancelled."""
        async for session_id, seq in self._store.notices():
            try:
                await self._catch_up(session_id, seq)
            except STORE_ERRORS as exc:  # the next notice of the session reads from the same cursor again
                log.warning("reading another process's events failed: %s", exc)

    async def _catch_up(self, session_id: str, seq: int) -> None:
        after = self._seen.get(session_id, seq - 1)
        if seq <= after:
            return
        owner = self._store.ownership.owner.id
        for row_seq, name, payload in await self._store.query(q.events_by_others, session_id, after, owner):
            self._seen[session_id] = row_seq
            kind = BROADCASTS.get(name) or EXTENSION_BROADCASTS.get(name)
            if kind is None:
                continue  # an event a newer version writes: nothing this one can show
            try:
                data = decode_json(kind, payload)
            except msgspec.ValidationError:
                log.warning("an event of another process could not be read: %s", name)
                continue
            self._live.emit(name, data)
