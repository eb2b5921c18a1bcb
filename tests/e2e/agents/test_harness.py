"""The real-agent harness itself: the pinned installs and the isolation every agent test relies on (docs/testing.md,
"Installing" and "Isolation"). Fast: no agent is started."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from asyncio.subprocess import PIPE
from pathlib import Path

import pytest

from tests.e2e.agents import packages
from tests.e2e.agents.harness import agent_world, plain_scenario
from tests.e2e.agents.peers import PEERS

PROBE = """
import socket, sys, urllib.request
answer = urllib.request.urlopen(sys.argv[1] + "/v1/models", timeout=5).read()
try:
    socket.create_connection(("1.1.1.1", 443), timeout=5)
    print("outside reachable")
except OSError as exc:
    print(f"outside: {exc.errno}")
print(sorted(name for _, name in socket.if_nameindex()))
print(b"fake-model" in answer)
"""


@pytest.mark.timeout(600)  # a cold install of all six (~1 GB) when CI's install step did not run first
def test_every_pinned_package_is_installed_at_its_pinned_version() -> None:
    """Acceptance: pinned versions recorded in the repo. The installer (run by CI before pytest, here on first use)
    leaves each package at exactly the version versions.json names; a second run changes nothing."""
    module = packages.installer()
    entries = module.install_all()
    assert set(entries) == set(module.pinned()) >= {*(peer.pinned for peer in PEERS.values()), "acp-sdk"}
    for name, package in module.pinned().items():
        manifest = module.prefix(package) / "node_modules" / package.package / "package.json"
        assert json.loads(manifest.read_text())["version"] == package.version, name
        assert entries[name].exists()
    before = {name: module.prefix(package).stat().st_mtime_ns for name, package in module.pinned().items()}
    assert module.install_all() == entries
    assert {name: module.prefix(p).stat().st_mtime_ns for name, p in module.pinned().items()} == before


def test_the_installer_rejects_a_name_that_is_not_pinned() -> None:
    """A typo on the command line is an error naming the package, not a silent no-op."""
    done = subprocess.run(
        [sys.executable, str(packages.SCRIPT), "no-such-agent"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1 and "no-such-agent" in done.stderr


async def test_inside_the_namespace_only_loopback_exists_and_the_fake_llm_answers(tmp_path: Path) -> None:
    """Agents run where only `lo` exists (up), so the fake LLM on 127.0.0.1 answers and any
    outside address is unreachable (ENETUNREACH = 101), whatever an agent tries to phone."""
    async with agent_world("acp-sdk", tmp_path, plain_scenario()) as world:
        probe = await asyncio.create_subprocess_exec(
            *world.enter, sys.executable, "-c", PROBE, world.origin, stdout=PIPE, stderr=PIPE
        )
        async with asyncio.timeout(30):
            out, err = await probe.communicate()
    assert probe.returncode == 0, err.decode()
    assert out.decode().split("\n")[:3] == ["outside: 101", "['lo']", "True"]
