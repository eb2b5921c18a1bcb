"""The SQLite store: one file in WAL mode, owned by one worker thread (the default, embedded store).

Every command runs as one transaction on that thread (`write` = BEGIN IMMEDIATE … COMMIT, `read` = a deferred
read transaction), so callers see a consistent snapshot and a crash leaves either all of a command or none of it.
Processes sharing the file take turns writing through SQLite's lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from omniagent.engine.store.connection import Mode
from omniagent.engine.store.migrations import migrations
from omniagent.engine.store.ownership import SqliteOwnership

__all__ = ["MEMORY", "SqliteDatabase", "migrate"]

T = TypeVar("T")

# The store holds every transcript: only its owner may read it (SQLite gives the -wal/-shm files the mode of the
# database file, so creating that file private makes all three private from their first byte).
DIR_MODE = 0o700
FILE_MODE = 0o600
_SIDE_FILES = ("-wal", "-shm", "-journal")

MEMORY = ":memory:"  # SQLite's name for a database that lives in its connection only

# Milliseconds a writer waits for another process's lock before SQLite reports busy.
BUSY_TIMEOUT_MS = 5000


class SqliteDatabase:
    """One SQLite connection on its own worker thread. Use `await SqliteDatabase.open(path, ownership)`."""

    def __init__(self, executor: ThreadPoolExecutor, conn: sqlite3.Connection) -> None:
        self._executor = executor
        self._conn = conn

    @classmethod
    async def open(cls, path: Path | str, ownership: SqliteOwnership) -> SqliteDatabase:
        """Open (creating if needed, private) the file at `path`, or `MEMORY`, and apply pending migrations."""
        if path != MEMORY:
            _create_private(Path(path))
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store")
        loop = asyncio.get_running_loop()
        conn = await loop.run_in_executor(executor, _connect, path, ownership)
        return cls(executor, conn)

    async def run(self, mode: Mode, fn: Callable[..., T], args: tuple[object, ...]) -> T:
        """`fn(conn, *args)` in one transaction on the worker thread (a lone statement too: in-process, a read
        transaction costs nothing worth saving)."""
        begin = "BEGIN IMMEDIATE" if mode == "write" else "BEGIN"
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, _in_transaction, self._conn, begin, fn, args)

    async def listen(self) -> AsyncIterator[tuple[str, int]]:
        """Events other machines commit: none, no other machine shares the file (waits until cancelled)."""
        await asyncio.Event().wait()
        return
        yield

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._conn.close)
        self._executor.shutdown(wait=True)


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
    for version, script in migrations("sqlite"):
        if version <= current:
            continue
        conn.execute("BEGIN IMMEDIATE")
        # Read again under the write lock: another process opening the same store may have just applied it.
        current = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version <= current:
            conn.execute("ROLLBACK")
            continue
        try:
            for statement in _statements(script):
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
