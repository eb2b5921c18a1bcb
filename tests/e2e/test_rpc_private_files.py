"""Private files: the engine's data dir is 0700 and its store (with the WAL and shared-memory files) 0600, from the
first byte, whatever the umask; an existing store made readable by an older version is narrowed at start."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.engine.rpc_harness import RpcProcess

STORE_FILES = ("engine.sqlite3", "engine.sqlite3-wal", "engine.sqlite3-shm")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def _started(data: Path) -> RpcProcess:
    """A running engine that has opened (and migrated, so written) its store: `initialize` alone does not open it."""
    rpc = await RpcProcess.start(data)
    await rpc.call("session.list")
    return rpc


async def test_a_new_data_dir_is_0700_and_the_store_files_0600_under_a_permissive_umask(tmp_path: Path) -> None:
    data = tmp_path / "data"
    previous = os.umask(0o000)  # the child inherits it: a lax umask must not widen anything
    try:
        rpc = await _started(data)
    finally:
        os.umask(previous)
    try:
        # While the engine runs, SQLite holds all three files (WAL mode): each must be private.
        assert _mode(data) == 0o700
        for name in STORE_FILES:
            assert _mode(data / name) == 0o600, name
    finally:
        assert await rpc.close() == 0
    assert _mode(data / "engine.sqlite3") == 0o600


async def test_an_existing_world_readable_store_is_narrowed_to_0600(tmp_path: Path) -> None:
    data = tmp_path / "data"
    rpc = await _started(data)
    assert await rpc.close() == 0
    (data / "engine.sqlite3").chmod(0o644)
    rpc = await _started(data)
    try:
        for name in STORE_FILES:
            assert _mode(data / name) == 0o600, name
    finally:
        assert await rpc.close() == 0
