"""Auth methods of `omniagent acp` (issue "One system" part 1: "auth methods for providers that need a key"):
each provider whose key is missing is a method naming its variable (v1 `env_var`, v2 `agent`, the draft having no
`env_var`); a key is never on the wire."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from omniagent.runtime.adapters.acp.client import open_acp_client
from omniagent.wire.messages import AUTH_REQUIRED, RpcError
from tests.faces.acp.agent_harness import agent_argv, agent_env, check_transcript

WAIT = 30.0
SECRET = "sk-test-never-on-the-wire-4242"


@pytest.mark.parametrize("version", [1, 2])
async def test_providers_without_a_key_are_auth_methods_naming_their_variable_and_keys_never_travel(
    tmp_path: Path, version: int
) -> None:
    """OpenAI has its key (from the environment) so it is not offered; Anthropic and Gemini lack one: each is a
    method naming its variable (v1 env_var `vars`, v2 an `agent` method's description). Logging in with it answers
    -32000 (auth required) until the key is there; logging in with a ready provider succeeds. The key's value
    appears nowhere in the traffic."""
    data, ws, log = tmp_path / "data", tmp_path / "ws", tmp_path / "acp.log"
    ws.mkdir()
    env = {**agent_env(), "OPENAI_API_KEY": SECRET}
    async with asyncio.timeout(WAIT), open_acp_client(agent_argv(data, log), env=env, protocol_version=version) as acp:
        methods = acp.init_result["authMethods"]
        if version == 1:
            assert [(m["type"], m["id"], [v["name"] for v in m["vars"]]) for m in methods] == [
                ("env_var", "anthropic", ["ANTHROPIC_API_KEY"]),
                ("env_var", "gemini", ["GEMINI_API_KEY"]),
            ]
        else:
            assert [(m["type"], m["methodId"], m["description"]) for m in methods] == [
                ("agent", "anthropic", "Set ANTHROPIC_API_KEY in the agent's environment, then restart it"),
                ("agent", "gemini", "Set GEMINI_API_KEY in the agent's environment, then restart it"),
            ]
        with pytest.raises(RpcError) as missing:
            await acp.authenticate("anthropic")
        assert missing.value.code == AUTH_REQUIRED
        await acp.authenticate("openai")
        await acp.logout()
    assert SECRET not in log.read_text()
    check_transcript(log)


async def test_a_new_session_without_any_ready_model_asks_for_auth(tmp_path: Path) -> None:
    """ACP's -32000 (auth required) for `session/new` when no provider has a key, as real agents do
    (Gemini CLI answers -32000 without credentials)."""
    data, ws, log = tmp_path / "data", tmp_path / "ws", tmp_path / "acp.log"
    ws.mkdir()
    async with asyncio.timeout(WAIT), open_acp_client(agent_argv(data, log), env=agent_env()) as acp:
        with pytest.raises(RpcError) as refused:
            await acp.new_session(str(ws))
    assert refused.value.code == AUTH_REQUIRED
    check_transcript(log)
