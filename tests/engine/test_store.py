"""The engine store: WAL, migrations, one transaction per command (docs/yuke-rpc.md §10.1)."""

from __future__ import annotations

import sqlite3
from importlib import resources
from pathlib import Path

import pytest

from omniagent.engine.store import Store
from omniagent.engine.store import queries as q
from omniagent.engine.store.connection import Connection
from omniagent.protocols.yuke.messages import TokenUsage
from omniagent.protocols.yuke.sessions import OriginRoot, Session
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
