"""Statements over the file checkpoints (`file_checkpoints`, migration 0003): the content a file had before the
engine's tools first changed it during one message, kept so `session.rewind` can put the workspace back.

Each runs on the store's worker thread inside the caller's transaction.
"""

from __future__ import annotations

from dataclasses import dataclass

from omniagent.engine.store.connection import Connection


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A file's image before a change: `kept` False when its content was withheld (it held a secret answer)."""

    path: str
    content: bytes | None
    mode: int | None
    kept: bool


def insert(
    conn: Connection,
    session_id: str,
    message_id: int,
    path: str,
    content: bytes | None,
    mode: int | None,
    kept: bool,
) -> None:
    """Record a file's image before a change in `message_id`; only the first change of a message counts (the
    image of the file as the message found it)."""
    conn.execute(
        "INSERT INTO file_checkpoints (session_id, message_id, path, content, mode, kept)"
        " VALUES (?,?,?,?,?,?) ON CONFLICT DO NOTHING",
        (session_id, message_id, path, content, mode, int(kept)),
    )


def images_at(conn: Connection, session_id: str, message_id: int) -> list[Checkpoint]:
    """What each changed path held at `message_id`: per path, its earliest checkpoint from that message on, in the
    order the tools first changed them."""
    firsts = conn.execute(
        "SELECT path, min(message_id) AS first FROM file_checkpoints WHERE session_id = ? AND message_id >= ?"
        " GROUP BY path ORDER BY first, path",
        (session_id, message_id),
    ).fetchall()
    out = []
    for path, first in firsts:  # only the contents a rewind puts back are read, not every later one
        content, mode, kept = conn.execute(
            "SELECT content, mode, kept FROM file_checkpoints WHERE session_id = ? AND message_id = ? AND path = ?",
            (session_id, first, path),
        ).fetchone()
        out.append(Checkpoint(path, content, mode, bool(kept)))
    return out
