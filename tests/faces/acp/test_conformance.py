"""`omniagent acp` against the ACP conformance checks (`tests/faces/acp/conformance.py`), v1 and the current v2
draft: every MANDATORY check, the CAPABILITY checks of what it advertises, and the ADVISORY ones, which it holds itself
to (issue 21 part 10). The agent is the real subprocess; the model behind it is the fake LLM.

To run the same checks against another ACP agent, build a `conformance.Launcher` for its command (its versions and
the capabilities it advertises) and parametrize a test over `conformance.cases(...)` as below.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from omniagent.testing import FakeLLMServer, FakeToolCall, Reply, Scenario
from tests.faces.acp import conformance
from tests.faces.acp.agent_harness import agent_env, prepare

VERSIONS = (1, 2)
# What `omniagent acp` advertises (its own check compares these with its initialize answers). `logout`: the test
# environment has no provider keys, so auth methods are listed.
SHARED = frozenset({"list", "resume", "close", "delete", "fork", "embeddedContext", "logout"})
CAPABILITIES = {1: SHARED | {"load"}, 2: SHARED | {"session"}}
FAKE_AGENT = Path(__file__).resolve().parents[2] / "fixtures" / "acp_agents" / "fake_agent.py"


@pytest.fixture
async def omniagent(tmp_path: Path) -> AsyncIterator[conformance.Launcher]:
    """`omniagent acp` with its model the fake LLM: a short turn is one reply; a long one streams a little, then
    holds until the turn is cancelled; a permission turn writes a file (asked first: the default mode asks), then
    replies whatever the answer."""
    async with FakeLLMServer(Scenario()) as llm:
        data, workspace, _ = prepare(tmp_path, llm)
        gates = itertools.count()

        async def script(kind: conformance.Turn) -> None:
            if kind == "short":
                llm.enqueue(Reply(text="Hello."))
            elif kind == "permission":
                write = FakeToolCall("write", {"path": "kit-permission.txt", "content": "one\n"}, "call_kit")
                llm.enqueue(Reply(tool_calls=(write,)), Reply(text="Done."))
            else:
                llm.enqueue(Reply(text="1\n2\n3\n" * 40, chunk_size=6, gate=f"long-{next(gates)}"))

        yield conformance.Launcher(
            name="omniagent acp",
            argv=[sys.executable, "-m", "omniagent", "acp", "--data-dir", str(data)],
            workspace=workspace,
            versions=VERSIONS,
            capabilities=CAPABILITIES,
            env=agent_env(),
            prepare=script,
            advisory=True,
            logout=True,
        )


@pytest.mark.parametrize(
    ("version", "check"),
    [pytest.param(v, c, id=f"v{v}-{c.tier.value}-{c.id}") for v, c in conformance.cases(VERSIONS, CAPABILITIES)],
)
async def test_omniagent_acp_conforms(omniagent: conformance.Launcher, version: int, check: conformance.Check) -> None:
    await conformance.run(check, omniagent, version)


def test_the_suite_covers_every_tier_and_each_advertised_capability() -> None:
    """The parametrization above is not empty where it matters: every tier runs in both versions, and each
    capability `omniagent acp` declares has a check."""
    cases = conformance.cases(VERSIONS, CAPABILITIES)
    for version in VERSIONS:
        assert {c.tier for v, c in cases if v == version} == set(conformance.Tier)
        assert CAPABILITIES[version] <= {c.gate for v, c in cases if v == version}


async def test_an_agent_answering_the_alpha2_prompt_receipt_fails_the_v2_turn_check(tmp_path: Path) -> None:
    """The kit can fail: the fixture agent (an alpha.2-era v2 agent) answers `session/prompt` with `{}`, which the
    current draft's receipt (`messageId`) check refuses."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    launcher = conformance.Launcher(
        name="fake agent",
        argv=[sys.executable, str(FAKE_AGENT), "--max-version", "2"],
        workspace=workspace,
        versions=(2,),
        capabilities={2: frozenset({"session"})},
        prompts={"short": "hello", "long": "wait", "permission": "ask"},
    )
    turn = next(c for v, c in conformance.cases((2,), launcher.capabilities) if c.id == "prompt.turn")
    with pytest.raises(AssertionError, match="no messageId"):
        await conformance.run(turn, launcher, 2)
