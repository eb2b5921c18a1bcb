"""Queries over session trees: a child session's ancestors, depth and name path, a tree's members, the runs active
in it and the sessions in it that wait with queued input. Each takes the connection of the store's worker thread.

A tree is a root (or fork) session and every session below it through `parent_id`; the root itself is never a
child. "Active" counts the descendants of the root with an open run (in any process), which is what the
per-tree concurrency limit bounds.
"""

from __future__ import annotations

from omniagent.engine.store.connection import Connection

_SUBTREE = (
    "WITH RECURSIVE tree(id) AS"
    " (SELECT CAST(? AS TEXT) UNION ALL SELECT s.id FROM sessions s JOIN tree ON s.parent_id = tree.id)"
)

_CHILDREN = "SELECT id FROM sessions WHERE parent_id = ? ORDER BY created_at_ms, id"


def ancestors(conn: Connection, session_id: str) -> list[tuple[str, str | None]]:
    """(id, name) of the session and each session above it, the session first and the tree's root last."""
    out: list[tuple[str, str | None]] = []
    current: str | None = session_id
    while current is not None:
        row = conn.execute("SELECT parent_id, name FROM sessions WHERE id = ?", (current,)).fetchone()
        if row is None:
            break
        out.append((current, row["name"]))
        current = row["parent_id"]
    return out


def depth(conn: Connection, session_id: str) -> int:
    """How far below its tree's root the session is (0 for a root or a fork)."""
    return len(ancestors(conn, session_id)) - 1


def tree_root(conn: Connection, session_id: str) -> str:
    """The id of the root of the session's tree."""
    chain = ancestors(conn, session_id)
    return chain[-1][0] if chain else session_id


def name_path(conn: Connection, session_id: str) -> str:
    """The child names from below the root down to the session, joined with `/` (`review/tests`)."""
    names = [name for _, name in reversed(ancestors(conn, session_id)[:-1]) if name is not None]
    return "/".join(names)


def child_named(conn: Connection, parent_id: str, name: str) -> str | None:
    """The id of the parent's child called `name`, or None."""
    row = conn.execute("SELECT id FROM sessions WHERE parent_id = ? AND name = ?", (parent_id, name)).fetchone()
    return None if row is None else str(row[0])


def spawned_since(conn: Connection, parent_id: str, message_id: int) -> list[str]:
    """The parent's children spawned in message `message_id` or a later one, and every session below them, each
    session before its own children (a rewind before that message removes them: session/rewind.py)."""
    rows = conn.execute(
        "SELECT id FROM sessions WHERE parent_id = ? AND parent_message_id >= ? ORDER BY created_at_ms, id",
        (parent_id, message_id),
    ).fetchall()
    return with_descendants(conn, [str(r[0]) for r in rows])


def with_descendants(conn: Connection, session_ids: list[str]) -> list[str]:
    """`session_ids` and every session below them, breadth first: each session before its own children."""
    out, frontier = list(session_ids), list(session_ids)
    while frontier:
        frontier = [str(r[0]) for p in frontier for r in conn.execute(_CHILDREN, (p,))]
        out += frontier
    return out


def delete_unless_running(conn: Connection, doomed: list[str]) -> bool:
    """Delete the sessions `doomed` (each listed before its children) the deepest first; none, and False, when one
    has an open run: another process's (its marker is in the store, not in this process's live sessions)."""
    for session_id in doomed:
        row = conn.execute("SELECT open_run_id FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is not None and row[0] is not None:
            return False
    for session_id in reversed(doomed):
        conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
    return True


def subtree(conn: Connection, session_id: str) -> list[str]:
    """The session and every session below it."""
    return [str(r[0]) for r in conn.execute(f"{_SUBTREE} SELECT id FROM tree", (session_id,))]


def active_below(conn: Connection, root_id: str) -> int:
    """Descendants of the root (not the root itself) with an open run."""
    row = conn.execute(
        f"{_SUBTREE} SELECT count(*) FROM sessions WHERE id IN (SELECT id FROM tree) AND id != ?"
        " AND open_run_id IS NOT NULL",
        (root_id, root_id),
    ).fetchone()
    return int(row[0])


def waiting(conn: Connection, root_id: str) -> list[str]:
    """Sessions of the tree without an open run but with queued input, the one waiting longest first."""
    rows = conn.execute(
        f"{_SUBTREE} SELECT p.session_id FROM pending_inputs p JOIN sessions s ON s.id = p.session_id"
        " WHERE p.session_id IN (SELECT id FROM tree) AND s.open_run_id IS NULL"
        " GROUP BY p.session_id ORDER BY min(p.queued_at_ms), p.session_id",
        (root_id,),
    ).fetchall()
    return [str(r[0]) for r in rows]


def any_open_run(conn: Connection, session_id: str) -> bool:
    """Whether a session of the subtree (the session included) has an open run."""
    row = conn.execute(
        f"{_SUBTREE} SELECT EXISTS"
        " (SELECT 1 FROM sessions WHERE id IN (SELECT id FROM tree) AND open_run_id IS NOT NULL)",
        (session_id,),
    ).fetchone()
    return bool(row[0])
