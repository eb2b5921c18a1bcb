"""A real PostgreSQL server for the tests, from the distribution's package (`.ci/run` installs `postgresql`).

`PostgresServer.start()` runs initdb in a fresh temporary folder and starts the server listening on a unix socket in
that folder only (no TCP port to collide on); `database()` makes an empty database and gives its URL; `stop()`
stops the server and removes the folder. As root (CI), the server runs as the package's `postgres` user, since
PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any

import psycopg

SUPERUSER = "postgres"
START_TIMEOUT = 60  # seconds for pg_ctl to see the server accept connections


def _bindir() -> Path:
    """The newest installed server's bin dir (Debian keeps them in /usr/lib/postgresql/N/bin)."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parent.parent.name))
    if candidates:
        return Path(candidates[-1]).parent
    found = shutil.which("initdb")
    if found is None:
        raise RuntimeError("no PostgreSQL server installed (Debian: apt-get install postgresql)")
    return Path(found).resolve().parent


class PostgresServer:
    """One running server in a temporary folder."""

    def __init__(self, folder: Path, bindir: Path, as_user: list[str]) -> None:
        self.folder = folder
        self._bindir = bindir
        self._as_user = as_user

    @classmethod
    def start(cls) -> PostgresServer:
        bindir = _bindir()
        folder = Path(tempfile.mkdtemp(prefix="omniagent-pg-"))
        as_user: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(folder, user=SUPERUSER)
            as_user = ["runuser", "-u", SUPERUSER, "--"]
        server = cls(folder, bindir, as_user)
        data = folder / "data"
        server._run("initdb", "-D", str(data), "-U", SUPERUSER, "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
        # Unix socket only, in the folder; fsync off: the tests kill our processes, never the machine.
        options = f"-c listen_addresses='' -k {folder} -c fsync=off -c max_connections=200"
        log = str(folder / "server.log")
        server._run("pg_ctl", "-D", str(data), "-l", log, "-o", options, "-w", "-t", str(START_TIMEOUT), "start")
        return server

    def url(self, database: str = SUPERUSER) -> str:
        """The URL of one database of this server (the unix socket's folder as the host)."""
        return f"postgresql://{SUPERUSER}@/{database}?host={self.folder}"

    def database(self) -> str:
        """A new empty database's URL."""
        name = f"t_{uuid.uuid4().hex[:16]}"
        self.sql(f"CREATE DATABASE {name}")
        return self.url(name)

    def sql(self, statement: str, database: str = SUPERUSER) -> list[tuple[Any, ...]]:
        """Run one statement (autocommit); its rows, if it returns any."""
        with psycopg.connect(self.url(database), autocommit=True) as conn:
            cursor = conn.execute(statement.encode())
            return cursor.fetchall() if cursor.description is not None else []

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run("pg_ctl", "-D", str(self.folder / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.folder, ignore_errors=True)

    def _run(self, program: str, *args: str) -> None:
        subprocess.run([*self._as_user, str(self._bindir / program), *args], check=True, capture_output=True)
