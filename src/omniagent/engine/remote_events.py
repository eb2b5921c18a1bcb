"""Events of runs executing in other processes of a shared store, broadcast here as if this process had run them.

On a PostgreSQL store (docs/fleet.md) every committed event notifies the fleet with its session and sequence only;
this process reads the events it has not seen from the store, in sequence order, and emits them through its own
broadcaster, so a client attached here follows a run executing elsewhere. What is durable crosses (run.started,
message.committed, run.done, input.queued, …); a run's streaming deltas stay on the process that runs it. The
sequence is the session's own event `seq`, the cursor a reattaching client replays from. A SQLite store has no
other machine: `Store.notices()` never yields.
"""

from __future__ import annotations

import logging

import msgspec

from omniagent.engine.broadcast import EXTENSION_BROADCASTS
from omniagent.engine.live import LiveSessions
from omniagent.engine.store import Store
from omniagent.engine.store import queries as q
from omniagent.engine.store.connection import STORE_ERRORS
from omniagent.protocols.yuke.base import decode_json
from omniagent.protocols.yuke.methods import BROADCASTS

log = logging.getLogger(__name__)


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
        for row_seq, name, payload in await self._store.read(q.events_by_others, session_id, after, owner):
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
