"""Statements that copy one session's durable state into a new session (`session.fork`).

Each runs on the store's worker thread inside the caller's write transaction, so a fork is all there or not at all.
"""

from __future__ import annotations

from omniagent.engine.store.connection import Connection


def message_exists(conn: Connection, session_id: str, message_id: int) -> bool:
    row = conn.execute("SELECT 1 FROM messages WHERE session_id = ? AND id = ?", (session_id, message_id)).fetchone()
    return row is not None


def message_payloads_before(conn: Connection, session_id: str, before_id: int) -> list[str]:
    """Every committed message payload with id < `before_id`, oldest first."""
    rows = conn.execute(
        "SELECT payload FROM messages WHERE session_id = ? AND id < ? ORDER BY id", (session_id, before_id)
    ).fetchall()
    return [r[0] for r in rows]


def copy_configs(conn: Connection, source_id: str, fork_id: str) -> None:
    """Every RunConfig revision: copied assistant messages keep pointing at the revision they ran with."""
    conn.execute(
        "INSERT INTO configs (session_id, config_rev, model, reasoning, max_rounds)"
        " SELECT ?, config_rev, model, reasoning, max_rounds FROM configs WHERE session_id = ?",
        (fork_id, source_id),
    )


def copy_messages(conn: Connection, source_id: str, fork_id: str, before_id: int) -> None:
    """Messages (and their parts) with id < `before_id`, ids unchanged."""
    conn.execute(
        "INSERT INTO messages (session_id, id, role, run_id, config_rev, payload)"
        " SELECT ?, id, role, run_id, config_rev, payload FROM messages WHERE session_id = ? AND id < ?",
        (fork_id, source_id, before_id),
    )
    conn.execute(
        "INSERT INTO parts (session_id, message_id, part_id, kind, payload)"
        " SELECT ?, message_id, part_id, kind, payload FROM parts WHERE session_id = ? AND message_id < ?",
        (fork_id, source_id, before_id),
    )


def copy_counters(conn: Connection, source_id: str, fork_id: str) -> None:
    """The source's message, run and input high-water marks: the fork's new ids come after every id the source
    ever gave, so an id names the same message in both sessions. The event `seq` starts afresh."""
    conn.execute(
        "UPDATE sessions SET (message_id_high, run_id_high, input_id_high) ="
        " (SELECT message_id_high, run_id_high, input_id_high FROM sessions WHERE id = ?) WHERE id = ?",
        (source_id, fork_id),
    )


def set_totals(
    conn: Connection,
    session_id: str,
    message_count: int,
    total: tuple[int, int, int, int, int],
    last: tuple[int, int, int, int, int],
) -> None:
    """Message count, lifetime usage and last-turn usage (input, output, reasoning, cache_read, cache_write)."""
    conn.execute(
        "UPDATE sessions SET message_count = ?,"
        " usage_input = ?, usage_output = ?, usage_reasoning = ?, usage_cache_read = ?, usage_cache_write = ?,"
        " last_input = ?, last_output = ?, last_reasoning = ?, last_cache_read = ?, last_cache_write = ?"
        " WHERE id = ?",
        (message_count, *total, *last, session_id),
    )
