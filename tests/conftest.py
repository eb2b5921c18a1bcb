"""Session-wide test setup: say up front what the real-agent tests will download, so a first run is no surprise."""

from __future__ import annotations

import pytest

from tests.e2e.agents.packages import installer

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
