"""The PostgreSQL store: one database shared by every process of a fleet (`omniagent[postgres]`: psycopg 3 and its
pool). Imported only when a store URL names PostgreSQL.

Commands are the same `fn(conn, ...)` bodies the SQLite store runs, on a pooled connection in a worker thread:
`?` placeholders become psycopg's, rows answer by index and by name. A write transaction first takes one
transaction-scoped advisory lock, so writes across the fleet are one at a time exactly as SQLite's writer lock
makes them; a read runs at REPEATABLE READ, a snapshot like SQLite's read transaction. That keeps every command's
meaning (claims of runs and queued inputs included) identical on both stores.

Live events: every committed event row notifies channel `omniagent_events` with "OWNER SEQ SESSION" (migration
0002); `listen` delivers the other owners' notices, and the caller reads the events from the table.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg_pool import ConnectionPool

from omniagent.engine.store.connection import Mode, StoreConflict, StoreError
from omniagent.engine.store.migrations import migrations
from omniagent.engine.store.ownership import Owner

__all__ = ["EVENTS_CHANNEL", "EventNotice", "PostgresDatabase", "safe_url"]

T = TypeVar("T")

EVENTS_CHANNEL = "omniagent_events"
# Connections per process: one per worker thread. Commands are short; a handful keeps reads parallel while writes
# queue on the write lock.
POOL_SIZE = 4
# Seconds to wait for the first connection before the store reports it cannot reach the server.
CONNECT_TIMEOUT = 10.0
# Advisory lock keys (any fixed bigints): the fleet's one writer at a time, and one process migrating.
WRITE_LOCK = 0x6F6D6E6901
MIGRATE_LOCK = 0x6F6D6E6902

# Milliseconds a command waits for the write lock before it fails (SQLite's busy timeout), and a transaction may sit
# idle before the server ends it and its session.
LOCK_TIMEOUT_MS = 10_000
IDLE_IN_TRANSACTION_MS = 10_000

EventNotice = tuple[str, int]  # (session id, seq) of an event another owner committed


def safe_url(url: str) -> str:
    """The URL without its password, for logs and errors."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


class PostgresDatabase:
    """A connection pool on a PostgreSQL database. Use `await PostgresDatabase.open(url, owner)`."""

    def __init__(self, url: str, owner: Owner, pool: ConnectionPool[Any], executor: ThreadPoolExecutor) -> None:
        self._url = url
        self._owner = owner
        self._pool = pool
        self._executor = executor

    @classmethod
    async def open(cls, url: str, owner: Owner) -> PostgresDatabase:
        """Connect, and apply pending migrations. Raises StoreError (without the password) when it cannot."""
        executor = ThreadPoolExecutor(max_workers=POOL_SIZE, thread_name_prefix="store")
        pool: ConnectionPool[Any] = ConnectionPool(
            url,
            min_size=1,
            max_size=POOL_SIZE,
            open=False,
            kwargs={"autocommit": True, "row_factory": _row_factory},
            configure=functools.partial(_configure, owner.id),
            name="omniagent-store",
        )
        loop = asyncio.get_running_loop()
        try:
            # One plain connection first: a server that is not there, or refuses us, answers at once with its
            # reason, where the pool would keep retrying until its timeout.
            await loop.run_in_executor(executor, _reach, url)
            await loop.run_in_executor(executor, functools.partial(pool.open, wait=True, timeout=CONNECT_TIMEOUT))
            await loop.run_in_executor(executor, _migrate, pool)
        except BaseException as exc:
            await loop.run_in_executor(executor, pool.close)
            executor.shutdown(wait=False)
            raise _store_error(exc, f"cannot open the store at {safe_url(url)}") from None
        return cls(url, owner, pool, executor)

    async def run(self, mode: Mode, fn: Callable[..., T], args: tuple[object, ...]) -> T:
        """`fn(conn, *args)` on a pooled connection: in one transaction, or (`statement`) as one statement."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, _on_connection, self._pool, mode, fn, args)

    async def listen(self) -> AsyncIterator[EventNotice]:
        """(session, seq) of each event other owners commit, in commit order, while the caller iterates. A lost
        connection is opened again; the caller catches up from the table (notices only say where to read)."""
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self._url, autocommit=True)
            except psycopg.Error:
                await asyncio.sleep(1.0)
                continue
            async with conn:
                await conn.execute(f"LISTEN {EVENTS_CHANNEL}")
                try:
                    async for notice in conn.notifies():
                        owner, seq, session_id = notice.payload.split(" ", 2)
                        if owner != self._owner.id:
                            yield session_id, int(seq)
                except psycopg.OperationalError:
                    continue

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._pool.close)
        self._executor.shutdown(wait=True)


def _reach(url: str) -> None:
    with psycopg.connect(url, connect_timeout=int(CONNECT_TIMEOUT)):
        pass


def _configure(owner_id: str, conn: psycopg.Connection[Any]) -> None:
    """Every pooled connection names this process as `run_owner()` (migration 0002), waits for the write lock no
    longer than SQLite waits for its writer lock, and has the server abort a transaction of it left idle (a process
    paused mid-command must not hold the fleet's write lock)."""
    conn.execute("SELECT set_config('omniagent.run_owner', %s, false)", (owner_id,))
    conn.execute(f"SET lock_timeout = {LOCK_TIMEOUT_MS}")
    conn.execute(f"SET idle_in_transaction_session_timeout = {IDLE_IN_TRANSACTION_MS}")


def _on_connection(pool: ConnectionPool[Any], mode: Mode, fn: Callable[..., T], args: tuple[object, ...]) -> T:
    try:
        with pool.connection() as conn:
            if mode == "statement":
                return fn(_Adapted(conn, statements=1), *args)
            return _transaction(conn, mode == "write", fn, args)
    except psycopg.Error as exc:
        raise _store_error(exc, "the store failed") from exc


def _transaction(conn: psycopg.Connection[Any], write: bool, fn: Callable[..., T], args: tuple[object, ...]) -> T:
    conn.execute(b"BEGIN" if write else b"BEGIN ISOLATION LEVEL REPEATABLE READ")
    try:
        if write:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        result = fn(_Adapted(conn), *args)
    except BaseException:
        if not conn.closed:
            conn.execute(b"ROLLBACK")
        raise
    conn.execute(b"COMMIT")
    return result


def _store_error(exc: BaseException, context: str) -> BaseException:
    """psycopg's errors as the store's (a conflict, or a failure), worded without values; others unchanged."""
    if isinstance(exc, psycopg.errors.IntegrityError):
        return StoreConflict(f"{context}: {type(exc).__name__}")
    if isinstance(exc, psycopg.Error | TimeoutError):  # the pool's PoolTimeout is a psycopg.OperationalError
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return StoreError(f"{context}: {first_line}")
    return exc


def _migrate(pool: ConnectionPool[Any]) -> None:
    """Apply every migration newer than the recorded version, each in its own transaction, one process at a time."""
    with pool.connection() as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATE_LOCK,))
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)")
            row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
            current = int(row[0]) if row is not None and row[0] is not None else 0
            for version, script in migrations("postgres"):
                if version <= current:
                    continue
                with conn.transaction():
                    conn.execute(script.encode())  # several statements (function bodies hold `;`): one simple query
                    conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
                current = version
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATE_LOCK,))


class _Adapted:
    """A pooled connection as a store command sees it (`connection.Connection`): `?` placeholders; `statements`
    bounds how many it may run (a `Store.query` outside a transaction runs one)."""

    __slots__ = ("_conn", "_left")

    def __init__(self, conn: psycopg.Connection[Any], statements: int | None = None) -> None:
        self._conn = conn
        self._left = statements

    def execute(self, sql: str, parameters: Sequence[object] = ()) -> Any:
        if self._left is not None:
            if self._left == 0:
                raise StoreError("a store query ran more than its one statement")
            self._left -= 1
        if not parameters:
            return self._conn.execute(_plain(sql))
        return self._conn.execute(_placeholders(sql), parameters)

    def executemany(self, sql: str, parameters: Sequence[Sequence[object]]) -> Any:
        cursor = self._conn.cursor()
        cursor.executemany(_placeholders(sql), parameters)
        return cursor


@functools.lru_cache(maxsize=1024)
def _placeholders(sql: str) -> bytes:
    # The store's statements hold no `?` or `%` inside string literals, so a plain replacement is exact.
    return sql.replace("%", "%%").replace("?", "%s").encode()


@functools.lru_cache(maxsize=256)
def _plain(sql: str) -> bytes:
    return sql.encode()


class _Row:
    """One row: `row[0]`, `row["column"]`, unpacking."""

    __slots__ = ("_names", "_values")

    def __init__(self, names: dict[str, int], values: Sequence[Any]) -> None:
        self._names = names
        self._values = values

    def __getitem__(self, key: int | str) -> Any:
        return self._values[key if isinstance(key, int) else self._names[key]]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


def _row_factory(cursor: Any) -> Callable[[Sequence[Any]], _Row]:
    names = {column.name: index for index, column in enumerate(cursor.description or ())}
    return lambda values: _Row(names, values)
