"""Run ownership: which process may end which open run, when several processes serve one store.

The contract (any store implements it; `Ownership` states it as a Protocol; `SqliteOwnership` and
`PostgresOwnership` implement the same five steps with the same meaning):

1. **Register.** A process that opens the store registers as an *owner*: a fresh id, its pid and host, and a lease
   that expires `lease` seconds from now.
2. **Renew.** While the process lives it renews the lease (every third of the period). A renewal that finds its
   row gone means others judged it dead and may have ended its runs; it registers again and says so.
3. **Stamp.** Opening a run (or reserving a queued compaction) records the owner in the same transaction as the
   open-run marker, so a run is never open without an owner. Here the SQL function `run_owner()`, registered on the
   connection, supplies the id to `queries.set_open_run` and `queries.insert_run`.
4. **Reap.** An owner is *gone* when its lease lapsed, or when it is on this host and its pid no longer exists (a
   shortcut: a crash on the same machine is seen at once). Runs of gone owners (and unowned runs left by versions
   before leases) are *orphans*: any process may end them (`interrupted`); no process ends another's live run.
5. **Release.** A process that exits cleanly ends its own runs first, then deletes its row.

Clocks: on SQLite, expiry compares wall-clock milliseconds written and read by the processes of the one machine
sharing the file; on PostgreSQL (`PostgresOwnership`), the server's `now()` writes and judges every lease, so the
machines of a fleet need not agree on the time.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
import uuid
from dataclasses import dataclass
from typing import Protocol

from omniagent.engine.store.connection import Connection

# Seconds a lease lasts without renewal. A process renews every third of it, so a live but busy one (a long
# synchronous step, a loaded machine) has two chances before others may take its runs.
DEFAULT_LEASE_SECONDS = 30.0
LEASE_ENV = "OMNIAGENT_LEASE_SECONDS"


@dataclass(frozen=True, slots=True)
class Owner:
    """One process serving the store."""

    id: str
    pid: int
    host: str

    @classmethod
    def this_process(cls) -> Owner:
        return cls(id=uuid.uuid4().hex, pid=os.getpid(), host=_host_identity())


class Ownership(Protocol):
    """The run-ownership contract of a store (see the module docstring for the rules)."""

    owner: Owner
    lease_seconds: float

    def register(self, conn: Connection) -> None:
        """Step 1: record this owner with a fresh lease."""

    def renew(self, conn: Connection) -> bool:
        """Step 2: extend the lease; False when the row was gone (it is registered again)."""

    def orphaned_open_runs(self, conn: Connection) -> list[str]:
        """Step 4: ids of sessions whose open run belongs to a gone owner (or to none)."""

    def orphaned_reserved_runs(self, conn: Connection) -> list[tuple[str, int]]:
        """Step 4: (session, run) of queued compactions reserved by a gone owner (or by none)."""

    def owned_elsewhere(self, conn: Connection, session_id: str) -> bool:
        """Whether the session's open run belongs to another live owner (so this process must not touch it)."""

    def release(self, conn: Connection) -> None:
        """Step 5: forget this owner."""


def lease_from_env() -> float:
    """The lease period: `OMNIAGENT_LEASE_SECONDS` when a positive number, else the default."""
    try:
        value = float(os.environ.get(LEASE_ENV, ""))
    except ValueError:
        return DEFAULT_LEASE_SECONDS
    return value if 0 < value < float("inf") else DEFAULT_LEASE_SECONDS


class LeaseOwnership:
    """The contract over the `owners` table (migration 0002), with this machine's clock."""

    def __init__(self, owner: Owner, lease_seconds: float) -> None:
        self.owner = owner
        self.lease_seconds = lease_seconds

    def register(self, conn: Connection) -> None:
        now = self._now(conn)
        conn.execute(
            "INSERT INTO owners (id, pid, host, started_at_ms, expires_at_ms) VALUES (?,?,?,?,?)"
            " ON CONFLICT (id) DO UPDATE SET pid = excluded.pid, host = excluded.host,"
            " started_at_ms = excluded.started_at_ms, expires_at_ms = excluded.expires_at_ms",
            (self.owner.id, self.owner.pid, self.owner.host, now, now + self._lease_ms()),
        )

    def renew(self, conn: Connection) -> bool:
        cursor = conn.execute(
            "UPDATE owners SET expires_at_ms = ? WHERE id = ?", (self._now(conn) + self._lease_ms(), self.owner.id)
        )
        if cursor.rowcount == 1:
            return True
        self.register(conn)
        return False

    def orphaned_open_runs(self, conn: Connection) -> list[str]:
        live = self._live_owners(conn)
        rows = conn.execute("SELECT id, open_run_owner FROM sessions WHERE open_run_id IS NOT NULL").fetchall()
        return [row[0] for row in rows if row[1] not in live]

    def orphaned_reserved_runs(self, conn: Connection) -> list[tuple[str, int]]:
        live = self._live_owners(conn)
        rows = conn.execute(
            "SELECT session_id, run_id, owner FROM runs WHERE started_at_ms IS NULL AND outcome IS NULL"
        ).fetchall()
        return [(row[0], row[1]) for row in rows if row[2] not in live]

    def owned_elsewhere(self, conn: Connection, session_id: str) -> bool:
        row = conn.execute(
            "SELECT open_run_owner FROM sessions WHERE id = ? AND open_run_id IS NOT NULL", (session_id,)
        ).fetchone()
        return row is not None and row[0] != self.owner.id and row[0] in self._live_owners(conn)

    def release(self, conn: Connection) -> None:
        conn.execute("DELETE FROM owners WHERE id = ?", (self.owner.id,))

    def _live_owners(self, conn: Connection) -> set[str]:
        """Owners whose lease holds and whose process is not known dead; gone ones are deleted on the way."""
        now = self._now(conn)
        live, gone = set(), []
        for owner_id, pid, host, expires in conn.execute("SELECT id, pid, host, expires_at_ms FROM owners"):
            dead_here = host == self.owner.host and owner_id != self.owner.id and not _pid_alive(pid)
            if owner_id != self.owner.id and (expires < now or dead_here):
                gone.append(owner_id)
            else:
                live.add(owner_id)
        conn.executemany("DELETE FROM owners WHERE id = ?", [(g,) for g in gone])
        live.add(self.owner.id)  # never an orphan to itself, even late to renew
        return live

    def _lease_ms(self) -> int:
        return int(self.lease_seconds * 1000)

    def _now(self, conn: Connection) -> int:
        """The clock leases are judged by: this machine's, for a store only its processes share."""
        return _now_ms()


class SqliteOwnership(LeaseOwnership):
    """The contract on a SQLite file: `run_owner()` is a function registered on the connection."""

    def install(self, conn: sqlite3.Connection) -> None:
        """Make `run_owner()` name this owner on `conn` (step 3)."""
        conn.create_function("run_owner", 0, lambda: self.owner.id, deterministic=True)


class PostgresOwnership(LeaseOwnership):
    """The contract on a PostgreSQL store: the same table and rules, the server's clock. `run_owner()` is a SQL
    function reading the connection's setting (migration 0002, `postgres._configure`)."""

    def _now(self, conn: Connection) -> int:
        """The server's clock, in the caller's transaction (`now()` is its start)."""
        return int(conn.execute("SELECT CAST(extract(epoch FROM now()) * 1000 AS BIGINT)").fetchone()[0])


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _host_identity() -> str:
    """This machine (and pid namespace: two containers on one volume must not judge each other's pids)."""
    try:
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        namespace = 0
    return f"{socket.gethostname()}/{namespace}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process holds the pid
    return True
