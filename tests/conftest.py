"""Session-wide test setup: say up front what the real-agent tests will download, so a first run is no surprise;
one real PostgreSQL server for the tests that run on each store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from omniagent.engine.store import STORE_ENV
from tests.e2e.agents.packages import installer
from tests.postgres_server import PostgresServer

# What the pinned agent CLIs weigh together once installed (measured with `du` over the cache; README says so too).
INSTALLED_SIZE = "~1.8 GB"


def pytest_report_header(config: pytest.Config) -> list[str]:
    module = installer()
    cache = module.cache_dir()
    missing = [name for name, package in module.pinned().items() if not module.is_installed(package, cache)]
    if not missing:
        return [f"real agent CLIs: all pinned packages installed in {cache}"]
    return [
        f"real agent CLIs: {len(missing)} pinned npm packages not installed yet ({', '.join(missing)});",
        f"  the tests that need them download them from npm into {cache} ({INSTALLED_SIZE} for all),",
        "  once. Pre-install with `python scripts/install_agents.py`; move the cache with OMNIAGENT_AGENTS_CACHE.",
    ]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server (the distribution's), started once for the whole run, stopped and removed at its end."""
    server = PostgresServer.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def each_store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test once on each store. On PostgreSQL a new empty database is the engine's store for the test: its
    URL in OMNIAGENT_STORE, which every process the test starts inherits. Returns "sqlite" or that URL."""
    if request.param == "sqlite":
        monkeypatch.delenv(STORE_ENV, raising=False)
        return "sqlite"
    server: PostgresServer = request.getfixturevalue("postgres_server")
    url = server.database()
    monkeypatch.setenv(STORE_ENV, url)
    return url
