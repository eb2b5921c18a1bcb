"""The store a test of the engine's parts opens, on whichever store the test runs (`each_store` in conftest.py)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from typing import Any

import psycopg

from omniagent.engine.store import STORE_ENV, Store


async def open_test_store(sqlite_path: Path | None = None) -> Store:
    """The store a test of the engine's parts opens: the shared one `each_store` set, else the SQLite file at
    `sqlite_path`, else SQLite in memory."""
    url = os.environ.get(STORE_ENV)
    if url:
        return await Store.open(url)
    return await (Store.open(sqlite_path) if sqlite_path is not None else Store.open_in_memory())


def store_rows(data_dir: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of one query (`?` placeholders) on the store of the engine whose data dir is `data_dir`: the shared one
    `each_store` set, else `data_dir/engine.sqlite3`."""
    url = os.environ.get(STORE_ENV)
    if url:
        with psycopg.connect(url) as conn:
            return [tuple(row) for row in conn.execute(sql.replace("?", "%s").encode(), params)]
    with contextlib.closing(sqlite3.connect(data_dir / "engine.sqlite3")) as db:
        return [tuple(row) for row in db.execute(sql, params)]


def store_bytes(data_dir: Path) -> bytes:
    """Everything the store of the engine whose data dir is `data_dir` holds, to search for what must not be there:
    every value of every table of the shared store `each_store` set (bytes as they are), else the bytes of the
    SQLite files (the database, its WAL and shared memory)."""
    url = os.environ.get(STORE_ENV)
    if not url:
        files = [p for p in data_dir.iterdir() if p.name.startswith("engine.sqlite3")]
        assert files, "no store in the data dir"
        return b"".join(p.read_bytes() for p in files)
    out = []
    with psycopg.connect(url) as conn:
        tables = conn.execute(b"SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
        for (table,) in tables:
            for row in conn.execute(f"SELECT * FROM {table}".encode()):
                out += [value if isinstance(value, bytes) else str(value).encode() for value in row]
    return b"\n".join(out)
