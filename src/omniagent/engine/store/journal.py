"""Appending durable events: each gets the session's next `seq` and a row in the event log, in the caller's
transaction. The caller broadcasts the returned payloads only after that transaction committed."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TypeVar

from omniagent.engine.store import queries as q
from omniagent.engine.store.connection import Connection
from omniagent.protocols.yuke.base import YukeModel

M = TypeVar("M", bound=YukeModel)
Broadcast = tuple[str, YukeModel]


def now_ms() -> int:
    """Wall-clock milliseconds since the epoch."""
    return time.time_ns() // 1_000_000


def record(conn: Connection, session_id: str, name: str, make: Callable[[int], M]) -> M:
    """Append one durable event built by `make(seq)`; returns its payload."""
    seq = q.bump_counter(conn, session_id, "seq_high")
    data = make(seq)
    q.insert_event(conn, session_id, seq, now_ms(), name, json.dumps(data.dump(), separators=(",", ":")))
    return data
