"""The engine store: WAL, migrations, one transaction per command (docs/engine.md "Where the data lives")."""

from __future__ import annotations

import sqlite3
from importlib import resources
from pathlib import Path

import pytest

from omniagent.engine.store import Store
from omniagent.engine.store import queries as q
from omniagent.engine.store.connection import Connection, StoreConflict, StoreError
from omniagent.protocols.yuke.messages import TokenUsage
from omniagent.protocols.yuke.sessions import OriginRoot, Session
from tests.postgres_server import PostgresServer
from tests.stores import open_test_store


def _session(sid: str = "a" * 32) -> Session:
    return Session(
        id=sid,
        root="/tmp",
        profile="default",
        model="p/m",
        reasoning="",
        config_rev=0,
        title="",
        message_count=0,
        usage_total=TokenUsage(),
        created_at_ms=1,
        updated_at_ms=1,
        origin=OriginRoot(),
    )


async def test_opening_a_store_applies_migrations_once_in_wal_mode(tmp_path: Path) -> None:
    """Our choice: migrations are .sql files applied in order under `PRAGMA user_version` (0001, 0002, …); WAL
    journal."""
    path = tmp_path / "engine.sqlite3"
    store = await Store.open(path)
    await store.aclose()
    store = await Store.open(path)  # a second open must not re-run 0001 (it would fail on CREATE TABLE)
    await store.aclose()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == _newest_migration()
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def _newest_migration() -> int:
    files = (resources.files("omniagent.engine.store.migrations") / "sqlite").iterdir()
    return max(int(f.name.split("_", 1)[0]) for f in files if f.name.endswith(".sql"))


@pytest.mark.usefixtures("each_store")
async def test_a_failing_command_leaves_nothing_behind(tmp_path: Path) -> None:
    """House rule: never a half-written store; a command is one transaction."""
    store = await open_test_store(tmp_path / "engine.sqlite3")

    def half(conn: Connection) -> None:
        q.insert_session(conn, _session(), None)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        await store.write(half)
    assert await store.read(q.get_session, "a" * 32) is None
    await store.write(q.insert_session, _session(), None)
    assert await store.write(q.bump_counter, "a" * 32, "seq_high") == 1
    assert await store.write(q.bump_counter, "a" * 32, "seq_high") == 2
    await store.aclose()


async def test_a_postgresql_store_applies_its_migrations_once_and_keeps_a_failed_command_out(
    postgres_server: PostgresServer,
) -> None:
    """The same numbered migrations as SQLite's, recorded in schema_version; a second open applies none."""
    url = postgres_server.database()
    store = await Store.open(url)
    await store.aclose()
    store = await Store.open(url)
    try:
        versions = await store.query(lambda conn: conn.execute("SELECT version FROM schema_version").fetchall())
        assert [row[0] for row in versions] == list(range(1, _newest_migration() + 1))
        await store.write(q.insert_session, _session(), None)
        with pytest.raises(StoreConflict):  # the primary key, as sqlite3.IntegrityError on SQLite
            await store.write(q.insert_session, _session(), None)
        assert await store.query(q.count_sessions, "all", None) == 1
    finally:
        await store.aclose()


async def test_a_store_query_runs_one_statement_and_no_second(postgres_server: PostgresServer) -> None:
    """`Store.query` skips the transaction a lone statement does not need, so it refuses a second one."""
    store = await Store.open(postgres_server.database())

    def two(conn: Connection) -> None:
        conn.execute("SELECT 1")
        conn.execute("SELECT 2")

    try:
        with pytest.raises(StoreError, match="more than its one statement"):
            await store.query(two)
    finally:
        await store.aclose()


async def test_a_store_that_cannot_be_reached_is_a_clear_error_without_its_password(tmp_path: Path) -> None:
    url = f"postgresql://someone:s3cret-pass@/nowhere?host={tmp_path}&connect_timeout=1"
    with pytest.raises(StoreError) as caught:
        await Store.open(url)
    assert "s3cret-pass" not in str(caught.value)
    assert str(caught.value).startswith(f"cannot open the store at postgresql://someone:***@/nowhere?host={tmp_path}")


async def test_leases_on_postgresql_are_judged_by_the_server_clock(postgres_server: PostgresServer) -> None:
    """An owner's lease is written from the server's now(): a registration reads back within the lease of it."""
    store = await Store.open(postgres_server.database(), lease_seconds=30)
    try:
        row = await store.query(
            lambda conn: conn.execute(
                "SELECT expires_at_ms - CAST(extract(epoch FROM now()) * 1000 AS BIGINT) FROM owners WHERE id = ?",
                (store.ownership.owner.id,),
            ).fetchone()
        )
        assert 29_000 <= row[0] <= 30_000
    finally:
        await store.aclose()
