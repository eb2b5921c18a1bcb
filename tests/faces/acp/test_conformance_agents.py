"""`omniagent acp --agent ID` against the ACP conformance checks (`tests/faces/acp/conformance.py`), v1 and the
current v2 draft (issue 21): real Claude Code, Codex and claude-code-acp (an ACP agent, relayed ACP to ACP) served
through the in-process hub, each offline against the fake LLM in a loopback-only network namespace
(tests/e2e/agents/harness.py).

What runs, within a CI budget of about 3 minutes on 2 cores: every check starts the face afresh (a new connection is
a new process), and one that opens a session starts the agent too (~1 s for Claude Code or Codex, ~5 s for
claude-code-acp, which starts Claude Code itself). So claude and codex run every tier in both versions (MANDATORY,
the CAPABILITY checks of what the face advertises, and ADVISORY, which the face holds itself to); claude-code-acp
runs MANDATORY in both and CAPABILITY in v2. The fake LLM of each agent is started once for all its checks: its
answers depend on the prompt only (see `scenario`).

For another command serving the hub's ACP face (the network `/acp` through a stdio relay, `omniagent acp --hub
URL`): `launcher(name, argv, workspace, env, capabilities=SERVER_CAPABILITIES)` is its launcher, and
`cases(label, SERVER_CAPABILITIES, {}, ALL_TIERS)` its params, for a fixture (indirect, by `label`) that starts
the hub and the world of its agent.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.e2e.agents.harness import agent_world
from tests.e2e.agents.peers import PEERS, TEXT
from tests.faces.acp import conformance

VERSIONS = (1, 2)
# The long prompt carries this marker: the fake LLM's answer to a call naming it streams a few text events, then
# holds (the turn runs until cancelled). The fake LLM lives in the agents' network namespace, another process, so it
# is scripted by what the prompts say, not per turn (`Launcher.prepare` stays unset).
LONG = "kit-long-turn"
# The permission prompt carries this one: the fake LLM's answer to the first call naming it is the agent's shell call
# (which the agent asks to run), and later calls answer TEXT whatever the client chose.
ASK = "kit-permission-turn"
PROMPTS: Mapping[conformance.Turn, str] = {
    "short": "Reply with the single word: hello.",
    "long": f"Count from 1 to 100000, one number per line ({LONG}).",
    "permission": f"Run the shell command you are given ({ASK}).",
}
# What the ACP face advertises for these agents (init.negotiates compares these with its initialize answers). Over
# stdio a later connection is a later process, which resumes the session by its agent's resume token (the hub's
# session index in the data dir); the hub keeps events in memory, so that process replays only the history the agent
# tells (our engine's conversation, an ACP agent's load replay; Claude Code and Codex natively tell none), and v1
# offers resume but not load (which promises the conversation). A hub server's own sessions outlive a connection with
# their events, so its face offers both. v2's `capabilities.session` opens the whole baseline; delete is every
# agent's (the session leaves the hub and its index), fork our engine's only.
_V2 = frozenset({"session", "list", "resume", "close", "delete", "embeddedContext"})
_V1 = frozenset({"list", "resume", "close", "delete", "embeddedContext"})
STDIO_CAPABILITIES: Mapping[int, frozenset[str]] = {1: _V1, 2: _V2}
SERVER_CAPABILITIES: Mapping[int, frozenset[str]] = {1: STDIO_CAPABILITIES[1] | {"load"}, 2: _V2}
# Checks the stdio face fails today, by (version, check id), and why. Strict: one that passes fails the run, so the
# entry goes once the gap is closed.
KNOWN_GAPS_STDIO: Mapping[tuple[int, str], str] = {}
# An agent whose adapter tells a resumed session's history (an ACP agent's load replay; the runtime's open option
# `history`, which the hub asks for) replays the earlier process's prompts under the agent's message ids, not the
# receipt ids (`prompt.p<n>`) that process gave: no later process knows them. A gap of serving/acp's receipts.
KNOWN_GAPS_HISTORY: Mapping[tuple[int, str], str] = {
    (2, "session.resume"): "a later process replays the earlier prompts under the agent's ids, not their receipts'",
}


def scenario(agent: str) -> dict[str, Any]:
    """Every model call of `agent` answers TEXT, except one naming the long prompt: a few text events, then silence;
    and the first naming the permission prompt: the agent's shell call (once: the calls after it, which name the
    prompt too, answer TEXT)."""
    long = {"kind": "reply", "text": "1\n2\n3\n4\n5\n", "chunk_size": 2, "stall_after_events": 6, "match": LONG}
    peer = PEERS[agent]
    ask = {"kind": "reply", "tool_calls": [{"name": peer.shell_tool, "arguments": peer.shell_arguments}], "match": ASK}
    return {"steps": [long | {"sticky": True}, ask], "fallback": {"kind": "reply", "text": TEXT}}


def launcher(
    name: str,
    argv: Sequence[str],
    workspace: Path,
    env: Mapping[str, str],
    *,
    capabilities: Mapping[int, frozenset[str]] = STDIO_CAPABILITIES,
    advisory: bool = True,
) -> conformance.Launcher:
    """The kit's launcher for a command serving the hub's ACP face (`argv`: `omniagent acp --agent ID`, or a relay
    to a hub's `/acp`), whose agents' model answers `scenario(agent)`."""
    return conformance.Launcher(
        name=name,
        argv=list(argv),
        workspace=workspace,
        versions=VERSIONS,
        capabilities=capabilities,
        env=env,
        prompts=PROMPTS,
        advisory=advisory,
    )


Tiers = Mapping[int, frozenset[conformance.Tier]]
ALL_TIERS: Tiers = {version: frozenset(conformance.Tier) for version in VERSIONS}


def cases(
    label: str, capabilities: Mapping[int, frozenset[str]], gaps: Mapping[tuple[int, str], str], tiers: Tiers
) -> list[Any]:
    """The (label, version, check, advisory) params of one launcher: the checks of `tiers` (per version) that its
    `capabilities` open, its known `gaps` marked strict xfail (where ADVISORY is not run, they are left out: the
    launchers that run them show the gap). `advisory`: whether ADVISORY checks are run (then they must pass)."""
    out = []
    for version, check in conformance.cases(VERSIONS, capabilities):
        gap = gaps.get((version, check.id))
        advisory = conformance.Tier.ADVISORY in tiers.get(version, frozenset())
        if check.tier not in tiers.get(version, frozenset()) or (gap is not None and not advisory):
            continue
        marks = [pytest.mark.xfail(reason=gap, strict=True, raises=AssertionError)] if gap else []
        name = f"{label}-v{version}-{check.tier.value}-{check.id}"
        out.append(pytest.param(label, version, check, advisory, id=name, marks=marks))
    return out


M, C = conformance.Tier.MANDATORY, conformance.Tier.CAPABILITY
CASES = [
    *cases("claude", STDIO_CAPABILITIES, KNOWN_GAPS_STDIO, ALL_TIERS),
    *cases("codex", STDIO_CAPABILITIES, KNOWN_GAPS_STDIO, ALL_TIERS),
    # The CI budget (~3 minutes for this file): v1's capability checks here are the face's own code, which claude
    # and codex run in v1 and this agent in v2.
    *cases("claude-code-acp", STDIO_CAPABILITIES, KNOWN_GAPS_HISTORY, {1: frozenset({M}), 2: frozenset({M, C})}),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world_of(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[Path, dict[str, str]]]:
    """The agent's world (its fake LLM, HOME and launcher), once for all of its checks: its work dir and the
    environment `omniagent acp --agent` runs in (a data dir of its own: the hub's session index, which a later
    process reads to resume a session)."""
    agent = str(request.param)
    root = tmp_path_factory.mktemp(agent)
    async with agent_world(agent, root, scenario(agent)) as world:
        yield world.work, {**world.runtime_env, "OMNIAGENT_DATA_DIR": str(root / "omniagent-data")}


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(("world_of", "version", "check", "advisory"), CASES, indirect=["world_of"])
async def test_hub_agent_conforms(
    request: pytest.FixtureRequest,
    world_of: tuple[Path, dict[str, str]],
    version: int,
    check: conformance.Check,
    advisory: bool,
) -> None:
    agent = request.node.callspec.params["world_of"]
    workspace, env = world_of
    argv = [sys.executable, "-m", "omniagent", "acp", "--agent", agent]
    await conformance.run(
        check, launcher(f"omniagent acp --agent {agent}", argv, workspace, env, advisory=advisory), version
    )


def test_each_agent_runs_mandatory_in_both_versions_and_together_every_tier_and_capability() -> None:
    """The parametrization is not thinner than it says: every agent runs the MANDATORY checks of both versions and
    the CAPABILITY checks of v2; per version, the agents together run every tier and a check of each advertised
    capability."""
    params = [p.values for p in CASES]
    for agent in ("claude", "codex", "claude-code-acp"):
        for version in VERSIONS:
            tiers = {check.tier for label, v, check, _ in params if (label, v) == (agent, version)}
            assert conformance.Tier.MANDATORY in tiers and (version == 1 or conformance.Tier.CAPABILITY in tiers)
    for version in VERSIONS:
        assert {check.tier for _, v, check, _ in params if v == version} == set(conformance.Tier)
        assert STDIO_CAPABILITIES[version] <= {check.gate for _, v, check, _ in params if v == version}


# The hub's network `/acp`, through `omniagent acp --hub URL` (the stdio bridge to its WebSocket): the same checks
# against a real `omniagent hub` serving Codex. Its sessions outlive a connection with their events, so it advertises
# v1 load too.
HUB_CASES = cases("hub-codex", SERVER_CAPABILITIES, {}, ALL_TIERS)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hub_of(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Path, dict[str, str], str]]:
    """A real `omniagent hub --agent codex` in Codex's world: (work dir, the bridge's environment, the hub's URL)."""
    root = tmp_path_factory.mktemp("hub-codex")
    async with agent_world("codex", root / "world", scenario("codex")) as world:
        data = root / "data"
        data.mkdir()
        with (root / "hub.stderr").open("wb") as stderr:
            hub = await asyncio.create_subprocess_exec(
                *[sys.executable, "-m", "omniagent", "hub", "--port", "0", "--data-dir", str(data)],
                *["--agent", "codex"],
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                env=world.runtime_env,
            )
        try:
            assert hub.stdout is not None
            async with asyncio.timeout(30):
                banner = (await hub.stdout.readline()).decode()
            url = banner.split()[-1]
            assert url.startswith("http://127.0.0.1:"), (banner, (root / "hub.stderr").read_text())
            token = (data / "hub" / "token").read_text().strip()
            yield world.work, {**world.runtime_env, "OMNIAGENT_HUB_TOKEN": token}, url
        finally:
            hub.terminate()
            await hub.wait()


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(("label", "version", "check", "advisory"), HUB_CASES)
async def test_the_hubs_acp_conforms_through_the_bridge(
    hub_of: tuple[Path, dict[str, str], str], label: str, version: int, check: conformance.Check, advisory: bool
) -> None:
    workspace, env, url = hub_of
    argv = [sys.executable, "-m", "omniagent", "acp", "--hub", url]
    name = "omniagent acp --hub (omniagent hub --agent codex)"
    await conformance.run(
        check, launcher(name, argv, workspace, env, capabilities=SERVER_CAPABILITIES, advisory=advisory), version
    )
