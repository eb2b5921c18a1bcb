"""One typed function per statement. Each takes the connection of the store's worker thread.

Rows become wire models here (`Session`, messages) or small frozen records for engine-only fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omniagent.engine.store.connection import Connection
from omniagent.protocols.yuke.messages import TokenUsage
from omniagent.protocols.yuke.sessions import OriginChild, OriginFork, OriginRoot, Session, SessionOrigin

# A row of either dialect: `row[0]` and `row["column"]` (sqlite3.Row, or postgres.py's row).
Row = Any

# ---------------------------------------------------------------------------------------------------------------------
# Sessions


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A session row: the wire summary plus the engine-only fields."""

    session: Session
    system_prompt: str | None
    usage_last: TokenUsage
    open_run_id: int | None
    open_run_kind: str | None
    open_run_started_at_ms: int | None


def _usage(row: Row, prefix: str) -> TokenUsage:
    return TokenUsage(
        input=row[f"{prefix}_input"],
        output=row[f"{prefix}_output"],
        reasoning=row[f"{prefix}_reasoning"],
        cache_read=row[f"{prefix}_cache_read"],
        cache_write=row[f"{prefix}_cache_write"],
    )


def _origin(row: Row) -> SessionOrigin:
    if row["origin_type"] == "child":
        return OriginChild(
            parent_id=row["parent_id"],
            parent_message_id=row["parent_message_id"],
            parent_part_id=row["parent_part_id"],
        )
    if row["origin_type"] == "fork":
        return OriginFork(source_id=row["source_id"])
    return OriginRoot()


def session_from_row(row: Row) -> Session:
    """The wire `Session` of a sessions row."""
    return Session(
        id=row["id"],
        root=row["root"],
        profile=row["profile"],
        model=row["model"],
        reasoning=row["reasoning"],
        config_rev=row["config_rev"],
        max_rounds=row["max_rounds"],
        title=row["title"],
        message_count=row["message_count"],
        usage_total=_usage(row, "usage"),
        created_at_ms=row["created_at_ms"],
        updated_at_ms=row["updated_at_ms"],
        created_by=None,
        origin=_origin(row),
        agent=row["agent"],
        name=row["name"],
    )


def record_from_row(row: Row) -> SessionRecord:
    return SessionRecord(
        session=session_from_row(row),
        system_prompt=row["system_prompt"],
        usage_last=_usage(row, "last"),
        open_run_id=row["open_run_id"],
        open_run_kind=row["open_run_kind"],
        open_run_started_at_ms=row["open_run_started_at_ms"],
    )


def insert_session(conn: Connection, s: Session, system_prompt: str | None) -> None:
    origin = s.origin
    conn.execute(
        "INSERT INTO sessions (id, root, profile, model, reasoning, config_rev, max_rounds, system_prompt, title,"
        " created_at_ms, updated_at_ms, origin_type, parent_id, parent_message_id, parent_part_id, source_id,"
        " agent, name) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            s.id,
            s.root,
            s.profile,
            s.model,
            s.reasoning,
            s.config_rev,
            s.max_rounds,
            system_prompt,
            s.title,
            s.created_at_ms,
            s.updated_at_ms,
            origin.type,
            origin.parent_id if isinstance(origin, OriginChild) else None,
            origin.parent_message_id if isinstance(origin, OriginChild) else None,
            origin.parent_part_id if isinstance(origin, OriginChild) else None,
            origin.source_id if isinstance(origin, OriginFork) else None,
            s.agent,
            s.name,
        ),
    )


def get_session(conn: Connection, session_id: str) -> SessionRecord | None:
    row = conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return None if row is None else record_from_row(row)


def _population_filter(
    population: str, parent_id: str | None, only: list[str] | None
) -> tuple[str, tuple[object, ...]]:
    args: tuple[object, ...] = ()
    if population == "top_level":
        where = "origin_type IN ('root', 'fork')"
    elif population == "children":
        where, args = "parent_id = ?", (parent_id,)
    else:
        where = "TRUE"
    if only is not None:
        where += f" AND id IN ({','.join('?' * len(only))})"
        args = (*args, *only)
    return where, args


def list_records(
    conn: Connection,
    population: str,
    parent_id: str | None,
    after: tuple[int, str] | None,
    limit: int,
    only: list[str] | None = None,
) -> tuple[list[tuple[SessionRecord, int]], int | None]:
    """A page ordered by `updated_at_ms DESC, id DESC`, strictly after the keyset `after`, each session with its
    count of queued inputs, and the population's size (None when the page is empty): one statement, so a shared
    store answers it in one round trip. `only` restricts ids."""
    population_where, population_args = _population_filter(population, parent_id, only)
    where, args = population_where, population_args
    if after is not None:
        where += " AND (updated_at_ms, id) < (?, ?)"
        args = (*args, after[0], after[1])
    rows = conn.execute(
        "SELECT *, (SELECT count(*) FROM pending_inputs p WHERE p.session_id = sessions.id) AS queued,"
        f" (SELECT count(*) FROM sessions WHERE {population_where}) AS total"
        f" FROM sessions WHERE {where} ORDER BY updated_at_ms DESC, id DESC LIMIT ?",
        (*population_args, *args, limit),
    ).fetchall()
    return [(record_from_row(r), int(r["queued"])) for r in rows], (int(rows[0]["total"]) if rows else None)


def count_sessions(conn: Connection, population: str, parent_id: str | None, only: list[str] | None = None) -> int:
    where, args = _population_filter(population, parent_id, only)
    return int(conn.execute(f"SELECT count(*) FROM sessions WHERE {where}", args).fetchone()[0])


def delete_session(conn: Connection, session_id: str) -> None:
    conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))


def set_session_config(
    conn: Connection,
    session_id: str,
    config_rev: int,
    model: str,
    reasoning: str,
    max_rounds: int | None,
    now_ms: int,
) -> None:
    conn.execute(
        "UPDATE sessions SET config_rev = ?, model = ?, reasoning = ?, max_rounds = ?, updated_at_ms = ? WHERE id = ?",
        (config_rev, model, reasoning, max_rounds, now_ms, session_id),
    )


def bump_counter(conn: Connection, session_id: str, column: str) -> int:
    """Increment one high-water mark (`seq_high`, `message_id_high`, `run_id_high`, `input_id_high`)."""
    assert column in ("seq_high", "message_id_high", "run_id_high", "input_id_high")
    row = conn.execute(
        f"UPDATE sessions SET {column} = {column} + 1 WHERE id = ? RETURNING {column}", (session_id,)
    ).fetchone()
    return int(row[0])


def note_message(conn: Connection, session_id: str, usage: TokenUsage | None, title: str | None, now_ms: int) -> None:
    """Count one committed message: message count, usage totals, last-turn usage, title if still empty."""
    u = usage or TokenUsage()
    last = (
        ", last_input = ?, last_output = ?, last_reasoning = ?, last_cache_read = ?, last_cache_write = ?"
        if usage is not None
        else ""
    )
    last_args = (u.input, u.output, u.reasoning, u.cache_read, u.cache_write) if usage is not None else ()
    conn.execute(
        "UPDATE sessions SET message_count = message_count + 1, updated_at_ms = ?,"
        " usage_input = usage_input + ?, usage_output = usage_output + ?, usage_reasoning = usage_reasoning + ?,"
        " usage_cache_read = usage_cache_read + ?, usage_cache_write = usage_cache_write + ?,"
        " title = CASE WHEN title = '' AND CAST(? AS TEXT) IS NOT NULL THEN ? ELSE title END" + last + " WHERE id = ?",
        (now_ms, u.input, u.output, u.reasoning, u.cache_read, u.cache_write, title, title, *last_args, session_id),
    )


def set_last_usage(conn: Connection, session_id: str, usage: TokenUsage) -> None:
    """Set the context gauge (last-turn usage) without counting a message."""
    conn.execute(
        "UPDATE sessions SET last_input = ?, last_output = ?, last_reasoning = ?, last_cache_read = ?,"
        " last_cache_write = ? WHERE id = ?",
        (usage.input, usage.output, usage.reasoning, usage.cache_read, usage.cache_write, session_id),
    )


def set_open_run(
    conn: Connection, session_id: str, run_id: int | None, kind: str | None, started_at_ms: int | None
) -> None:
    """Set (or clear, with None) the open-run marker; a set marker names this process as its owner (`run_owner()`,
    see `ownership.py`)."""
    conn.execute(
        "UPDATE sessions SET open_run_id = ?, open_run_kind = ?, open_run_started_at_ms = ?,"
        " open_run_owner = CASE WHEN CAST(? AS BIGINT) IS NULL THEN NULL ELSE run_owner() END WHERE id = ?",
        (run_id, kind, started_at_ms, run_id, session_id),
    )


def sessions_with_open_run(conn: Connection) -> list[SessionRecord]:
    rows = conn.execute("SELECT * FROM sessions WHERE open_run_id IS NOT NULL").fetchall()
    return [record_from_row(r) for r in rows]


# ---------------------------------------------------------------------------------------------------------------------
# Event log


def insert_event(conn: Connection, session_id: str, seq: int, now_ms: int, name: str, payload: str) -> None:
    conn.execute(
        "INSERT INTO events (session_id, seq, committed_at_ms, name, payload, owner) VALUES (?,?,?,?,?,run_owner())",
        (session_id, seq, now_ms, name, payload),
    )


def events_after(conn: Connection, session_id: str, after_seq: int, limit: int) -> list[tuple[int, str, str]]:
    """(seq, name, payload) of up to `limit` of the session's events after `after_seq`, in order."""
    rows = conn.execute(
        "SELECT seq, name, payload FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
        (session_id, after_seq, limit),
    ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def events_by_others(conn: Connection, session_id: str, after_seq: int, owner_id: str) -> list[tuple[int, str, str]]:
    """(seq, name, payload) of the session's events after `after_seq` that another owner wrote, in order."""
    rows = conn.execute(
        "SELECT seq, name, payload FROM events WHERE session_id = ? AND seq > ? AND (owner IS NULL OR owner <> ?)"
        " ORDER BY seq",
        (session_id, after_seq, owner_id),
    ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


# ---------------------------------------------------------------------------------------------------------------------
# Configs


def insert_config(
    conn: Connection, session_id: str, config_rev: int, model: str, reasoning: str, max_rounds: int | None
) -> None:
    conn.execute(
        "INSERT INTO configs (session_id, config_rev, model, reasoning, max_rounds) VALUES (?,?,?,?,?)",
        (session_id, config_rev, model, reasoning, max_rounds),
    )


def get_configs(conn: Connection, session_id: str, revs: list[int]) -> list[tuple[int, str, str]]:
    if not revs:
        return []
    marks = ",".join("?" * len(revs))
    rows = conn.execute(
        f"SELECT config_rev, model, reasoning FROM configs WHERE session_id = ? AND config_rev IN ({marks})"
        " ORDER BY config_rev",
        (session_id, *revs),
    ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


# ---------------------------------------------------------------------------------------------------------------------
# Messages and parts


def insert_message(
    conn: Connection,
    session_id: str,
    message_id: int,
    role: str,
    run_id: int | None,
    config_rev: int | None,
    payload: str,
) -> None:
    conn.execute(
        "INSERT INTO messages (session_id, id, role, run_id, config_rev, payload) VALUES (?,?,?,?,?,?)",
        (session_id, message_id, role, run_id, config_rev, payload),
    )


def insert_part(conn: Connection, session_id: str, message_id: int, part_id: int, kind: str, payload: str) -> None:
    conn.execute(
        "INSERT INTO parts (session_id, message_id, part_id, kind, payload) VALUES (?,?,?,?,?)",
        (session_id, message_id, part_id, kind, payload),
    )


def messages_before(conn: Connection, session_id: str, before_id: int, limit: int) -> list[tuple[int, str]]:
    """Up to `limit` message payloads with id < `before_id`, newest first."""
    rows = conn.execute(
        "SELECT id, payload FROM messages WHERE session_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
        (session_id, before_id, limit),
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def history_page(
    conn: Connection, session_id: str, before_id: int, limit: int
) -> list[tuple[int, str, tuple[int, str, str] | None]]:
    """Up to `limit` messages with id < `before_id`, newest first: (id, payload, the (rev, model, reasoning) of the
    config revision it ran with, None for a user message), in one statement."""
    rows = conn.execute(
        "SELECT m.id, m.payload, c.config_rev, c.model, c.reasoning FROM"
        " (SELECT id, payload, config_rev FROM messages WHERE session_id = ? AND id < ? ORDER BY id DESC LIMIT ?) m"
        " LEFT JOIN configs c ON c.session_id = ? AND c.config_rev = m.config_rev ORDER BY m.id DESC",
        (session_id, before_id, limit, session_id),
    ).fetchall()
    return [(r[0], r[1], (r[2], r[3], r[4]) if r[2] is not None else None) for r in rows]


def delete_messages_from(conn: Connection, session_id: str, first_id: int) -> None:
    """Remove the messages with id >= `first_id` (their parts go with them)."""
    conn.execute("DELETE FROM messages WHERE session_id = ? AND id >= ?", (session_id, first_id))


def set_transcript_summary(
    conn: Connection, session_id: str, message_count: int, title: str, last: TokenUsage, now_ms: int
) -> None:
    """After the transcript lost messages: its count, title and context gauge (lifetime usage stays: it was spent)."""
    conn.execute(
        "UPDATE sessions SET message_count = ?, title = ?, last_input = ?, last_output = ?, last_reasoning = ?,"
        " last_cache_read = ?, last_cache_write = ?, updated_at_ms = ? WHERE id = ?",
        (
            message_count,
            title,
            last.input,
            last.output,
            last.reasoning,
            last.cache_read,
            last.cache_write,
            now_ms,
            session_id,
        ),
    )


def assistant_payloads_of_run(conn: Connection, session_id: str, run_id: int) -> list[str]:
    """The assistant messages one run committed, newest first."""
    rows = conn.execute(
        "SELECT payload FROM messages WHERE session_id = ? AND run_id = ? AND role = 'assistant' ORDER BY id DESC",
        (session_id, run_id),
    ).fetchall()
    return [r[0] for r in rows]


def all_messages(conn: Connection, session_id: str) -> list[str]:
    rows = conn.execute("SELECT payload FROM messages WHERE session_id = ? ORDER BY id", (session_id,)).fetchall()
    return [r[0] for r in rows]


# ---------------------------------------------------------------------------------------------------------------------
# Runs


def insert_run(
    conn: Connection, session_id: str, run_id: int, kind: str, config_rev: int, started_at_ms: int | None
) -> None:
    """A run row; `started_at_ms` None reserves a run that has not started (a queued compaction)."""
    conn.execute(
        "INSERT INTO runs (session_id, run_id, kind, config_rev, started_at_ms, owner) VALUES (?,?,?,?,?,run_owner())",
        (session_id, run_id, kind, config_rev, started_at_ms),
    )


def start_run(conn: Connection, session_id: str, run_id: int, config_rev: int, started_at_ms: int) -> None:
    conn.execute(
        "UPDATE runs SET config_rev = ?, started_at_ms = ? WHERE session_id = ? AND run_id = ?",
        (config_rev, started_at_ms, session_id, run_id),
    )


def reserved_runs(conn: Connection) -> list[tuple[str, int, str]]:
    """(session, run, kind) of every run reserved and never started nor ended."""
    rows = conn.execute(
        "SELECT session_id, run_id, kind FROM runs WHERE started_at_ms IS NULL AND outcome IS NULL"
    ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def end_run(conn: Connection, session_id: str, run_id: int, ended_at_ms: int, outcome: str) -> None:
    conn.execute(
        "UPDATE runs SET ended_at_ms = ?, outcome = ? WHERE session_id = ? AND run_id = ?",
        (ended_at_ms, outcome, session_id, run_id),
    )


def get_run_outcome(conn: Connection, session_id: str, run_id: int) -> str | None:
    row = conn.execute("SELECT outcome FROM runs WHERE session_id = ? AND run_id = ?", (session_id, run_id)).fetchone()
    return None if row is None else row[0]


# ---------------------------------------------------------------------------------------------------------------------
# Input queue


def insert_pending(conn: Connection, session_id: str, input_id: int, seq: int, queued_at_ms: int, payload: str) -> None:
    conn.execute(
        "INSERT INTO pending_inputs (session_id, input_id, seq, queued_at_ms, payload) VALUES (?,?,?,?,?)",
        (session_id, input_id, seq, queued_at_ms, payload),
    )


def delete_pending(conn: Connection, session_id: str, input_id: int) -> bool:
    cur = conn.execute("DELETE FROM pending_inputs WHERE session_id = ? AND input_id = ?", (session_id, input_id))
    return bool(cur.rowcount > 0)


def list_pending(conn: Connection, session_id: str) -> list[str]:
    rows = conn.execute(
        "SELECT payload FROM pending_inputs WHERE session_id = ? ORDER BY input_id", (session_id,)
    ).fetchall()
    return [r[0] for r in rows]


def count_pending(conn: Connection, session_id: str) -> int:
    row = conn.execute("SELECT count(*) FROM pending_inputs WHERE session_id = ?", (session_id,)).fetchone()
    return int(row[0])
