"""What a store command sees of its database: one connection inside one transaction, the same for every dialect.

Commands (`fn(conn, ...)`, composed from `queries.py`) are written once, in SQL both SQLite and PostgreSQL accept,
with `?` placeholders; the PostgreSQL connection (`postgres.py`) adapts the placeholders, SQLite's is the driver's
own connection. Rows answer both `row[0]` and `row["column"]`. A command never names its dialect.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Literal, Protocol

from omniagent.errors import OmniagentError

__all__ = ["CONFLICTS", "STORE_ERRORS", "Connection", "Mode", "StoreConflict", "StoreError"]

# How a command runs: a write transaction (one writer at a time), a read transaction (a snapshot), or one statement.
Mode = Literal["write", "read", "statement"]


class Connection(Protocol):
    """The connection a store command runs on (already inside the command's transaction)."""

    def execute(self, sql: str, parameters: Any = ..., /) -> Any:
        """Run one statement; the result has `fetchone()`, `fetchall()`, `rowcount` and iterates its rows."""

    def executemany(self, sql: str, parameters: Any, /) -> Any:
        """Run one statement once per parameter tuple."""


class StoreError(OmniagentError):
    """A shared store failed (its server went away, a statement was refused). SQLite raises `sqlite3.Error`."""


class StoreConflict(StoreError):
    """A write broke a uniqueness rule of a shared store (SQLite raises `sqlite3.IntegrityError`)."""


# What callers catch, whichever store they run on: "the store failed" and "a uniqueness rule was broken".
STORE_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, StoreError)
CONFLICTS: tuple[type[Exception], ...] = (sqlite3.IntegrityError, StoreConflict)
