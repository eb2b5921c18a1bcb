"""The durable store: one SQLite file in WAL mode, owned by one worker thread. The only sqlite3 user.

Every command runs as one transaction on that thread (`write` = BEGIN IMMEDIATE … COMMIT, `read` = a deferred
read transaction), so callers see a consistent snapshot and a crash leaves either all of a command or none of it.
Statements live in `queries.py`; callers compose them into a command function `fn(conn, ...)`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import ParamSpec, TypeVar

from omniagent.engine.store.ownership import DEFAULT_LEASE_SECONDS, Owner, SqliteOwnership

__all__ = ["Store", "open_store"]

T = TypeVar("T")
P = ParamSpec("P")

# The store holds every transcript: only its owner may read it (SQLite gives the -wal/-shm files the mode of the
# database file, so creating that file private makes all three private from their first byte).
DIR_MODE = 0o700
FILE_MODE = 0o600
_SIDE_FILES = ("-wal", "-shm", "-journal")

MEMORY = ":memory:"  # SQLite's name for a database that lives in its connection only

# Milliseconds a writer waits for another process's lock before SQLite reports busy.
BUSY_TIMEOUT_MS = 5000


class Store:
    """An open store. Use `await Store.open(path)`; close with `aclose()`."""

    def __init__(
        self, path: Path, executor: ThreadPoolExecutor, conn: sqlite3.Connection, ownership: SqliteOwnership
    ) -> None:
        self.path = path
        self.ownership = ownership
        self._executor = executor
        self._conn = conn

    @classmethod
    async def open(cls, path: Path, *, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> Store:
        """Open (creating if needed) the store at `path`, apply pending migrations, and register this process as a
        run owner with a `lease_seconds` lease (see `ownership.py`; the caller renews it)."""
        _create_private(path)
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store")
        loop = asyncio.get_running_loop()
        ownership = SqliteOwnership(Owner.this_process(), lease_seconds)
        conn = await loop.run_in_executor(executor, _connect, path, ownership)
        store = cls(path, executor, conn, ownership)
        await store.write(ownership.register)
        return store

    @classmethod
    async def open_in_memory(cls, *, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> Store:
        """A private store in memory only (for unit tests of the engine's parts): the same schema, transactions
        and ownership as a file store, nothing on disk, gone when closed."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store")
        loop = asyncio.get_running_loop()
        ownership = SqliteOwnership(Owner.this_process(), lease_seconds)
        conn = await loop.run_in_executor(executor, _connect, MEMORY, ownership)
        store = cls(Path(MEMORY), executor, conn, ownership)
        await store.write(ownership.register)
        return store

    async def write(self, fn: Callable[..., T], *args: object) -> T:
        """Run `fn(conn, *args)` in one write transaction. A cancelled caller does not abort the commit."""
        loop = asyncio.get_running_loop()
        fut = loop.run_in_executor(self._executor, _in_transaction, self._conn, "BEGIN IMMEDIATE", fn, args)
        return await asyncio.shield(fut)

    async def read(self, fn: Callable[..., T], *args: object) -> T:
        """Run `fn(conn, *args)` in one read transaction (a consistent snapshot)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, _in_transaction, self._conn, "BEGIN", fn, args)

    async def aclose(self) -> None:
        """Release this owner (its runs have ended), close the connection and stop the worker thread."""
        loop = asyncio.get_running_loop()
        with contextlib.suppress(sqlite3.Error):  # else the lease lapses on its own
            await self.write(self.ownership.release)
        await loop.run_in_executor(self._executor, self._conn.close)
        self._executor.shutdown(wait=True)


async def open_store(path: Path) -> Store:
    """Open the store at `path` (see `Store.open`)."""
    return await Store.open(path)


def _create_private(path: Path) -> None:
    """Create the data dir (0700) and the database file (0600) before SQLite touches them.

    An existing data dir keeps its mode (it may be a directory the user chose); existing store files are ours
    and are narrowed to 0600, so a store made by an older version stops being readable by others.
    """
    path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    # os.open's mode applies from the first byte (no umask race with other threads, unlike os.umask).
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    for suffix in _SIDE_FILES:
        side = path.with_name(path.name + suffix)
        with contextlib.suppress(FileNotFoundError):
            os.chmod(side, FILE_MODE)


def _in_transaction(conn: sqlite3.Connection, begin: str, fn: Callable[..., T], args: tuple[object, ...]) -> T:
    conn.execute(begin)
    try:
        result = fn(conn, *args)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return result


def _connect(path: Path | str, ownership: SqliteOwnership) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    ownership.install(conn)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode = WAL")
    # NORMAL in WAL mode: a commit survives a process crash (kill -9); only an OS crash may lose the last commits.
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    migrate(conn)
    return conn


def migrate(conn: sqlite3.Connection) -> int:
    """Apply every migration newer than `PRAGMA user_version`, each in its own transaction; returns the version."""
    current = int(conn.execute("PRAGMA user_version").fetchone()[0])
    files = sorted(
        (f for f in resources.files("omniagent.engine.store.migrations").iterdir() if f.name.endswith(".sql")),
        key=lambda f: f.name,
    )
    for f in files:
        version = int(f.name.split("_", 1)[0])
        if version <= current:
            continue
        conn.execute("BEGIN IMMEDIATE")
        # Read again under the write lock: another process opening the same store may have just applied it.
        current = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version <= current:
            conn.execute("ROLLBACK")
            continue
        try:
            for statement in _statements(f.read_text(encoding="utf-8")):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        current = version
    return current


def _statements(script: str) -> list[str]:
    # executescript would COMMIT on its own; split so the migration and its version bump share one transaction.
    lines = [line for line in script.splitlines() if not line.lstrip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
