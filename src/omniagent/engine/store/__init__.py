"""The durable store: every session, message, run and event, behind one seam with two databases.

SQLite (`sqlite.py`, the default: one file beside the engine's data) or PostgreSQL (`postgres.py`, a database a
fleet of processes on several machines shares), chosen by where the store is (`Store.open`). Callers never name
the dialect: each command is a function `fn(conn, ...)` composed of the statements in `queries.py` (and its
siblings), run whole in one transaction by `write` (one writer at a time) or `read` (a consistent snapshot), so a
crash leaves either all of a command or none of it. Run ownership (`ownership.py`) keeps processes that share a
store from ending each other's live runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import ParamSpec, Protocol, TypeVar

from omniagent.engine.store.connection import STORE_ERRORS, Mode
from omniagent.engine.store.ownership import (
    DEFAULT_LEASE_SECONDS,
    LeaseOwnership,
    Owner,
    PostgresOwnership,
    SqliteOwnership,
)
from omniagent.engine.store.sqlite import MEMORY, SqliteDatabase

__all__ = ["STORE_ENV", "Store", "is_shared", "open_store"]

T = TypeVar("T")
P = ParamSpec("P")

# Where the engine's store is, when not the SQLite file in its data dir: a PostgreSQL URL (docs/fleet.md).
STORE_ENV = "OMNIAGENT_STORE"


class _Database(Protocol):
    async def run(self, mode: Mode, fn: Callable[..., T], args: tuple[object, ...]) -> T: ...

    def listen(self) -> AsyncIterator[tuple[str, int]]: ...

    async def aclose(self) -> None: ...


class Store:
    """An open store. Use `await Store.open(where)`; close with `aclose()`."""

    def __init__(self, location: str, database: _Database, ownership: LeaseOwnership) -> None:
        self.location = location  # the file, or the URL without its password
        self.ownership = ownership
        self._database = database

    @classmethod
    async def open(cls, where: Path | str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> Store:
        """Open the store at `where`: a PostgreSQL URL (`postgresql://…`, needs `omniagent[postgres]`) or a SQLite
        file path (created private if needed). Pending migrations are applied, and this process registers as a run
        owner with a `lease_seconds` lease (see `ownership.py`; the caller renews it)."""
        owner = Owner.this_process()
        if is_shared(where):
            from omniagent.engine.store.postgres import PostgresDatabase, safe_url

            pg_ownership = PostgresOwnership(owner, lease_seconds)
            store = cls(safe_url(str(where)), await PostgresDatabase.open(str(where), owner), pg_ownership)
        else:
            ownership = SqliteOwnership(owner, lease_seconds)
            store = cls(str(where), await SqliteDatabase.open(where, ownership), ownership)
        await store.write(store.ownership.register)
        return store

    @classmethod
    async def open_in_memory(cls, *, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> Store:
        """A private SQLite store in memory only (for unit tests of the engine's parts): the same schema,
        transactions and ownership as a file store, nothing on disk, gone when closed."""
        return await cls.open(MEMORY, lease_seconds=lease_seconds)

    async def write(self, fn: Callable[..., T], *args: object) -> T:
        """Run `fn(conn, *args)` in one write transaction. A cancelled caller does not abort the commit."""
        return await asyncio.shield(self._database.run("write", fn, args))

    async def read(self, fn: Callable[..., T], *args: object) -> T:
        """Run `fn(conn, *args)` in one read transaction (a consistent snapshot)."""
        return await self._database.run("read", fn, args)

    async def query(self, fn: Callable[..., T], *args: object) -> T:
        """Run `fn(conn, *args)`, which runs exactly one statement (a statement is its own snapshot): on a shared
        store without a transaction around it, so one round trip instead of three. A second statement fails."""
        return await self._database.run("statement", fn, args)

    def notices(self) -> AsyncIterator[tuple[str, int]]:
        """(session, seq) of each event other processes commit to a shared store, as they commit; a SQLite store,
        which no other machine shares, has none (the iteration just waits)."""
        return self._database.listen()

    async def aclose(self) -> None:
        """Release this owner (its runs have ended) and close the database."""
        with contextlib.suppress(*STORE_ERRORS):  # else the lease lapses on its own
            await self.write(self.ownership.release)
        await self._database.aclose()


def is_shared(where: Path | str) -> bool:
    """Whether a store location names a shared (PostgreSQL) store rather than a SQLite file."""
    return isinstance(where, str) and where.startswith(("postgresql://", "postgres://"))


async def open_store(where: Path | str) -> Store:
    """Open the store at `where` (see `Store.open`)."""
    return await Store.open(where)
