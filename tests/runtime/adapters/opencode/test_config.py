"""opencode's permission rules per session mode, merged into the host's OPENCODE_CONFIG_CONTENT (issue 8 part 4;
docs/agents.md "opencode over HTTP"): Ask puts `{"*":"ask","question":"allow"}` before the user's own rules,
AutoApprove allows all, the rest of the user's config is kept, and a config that is not a JSON object is refused
before anything starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omniagent.protocols.sidecar.commands import PermissionMode
from omniagent.runtime.adapters.opencode.server import ConfigProblem, config_content
from omniagent.runtime.errors import InvalidConfiguration
from omniagent.runtime.runtime import Runtime

ASK, AUTO = PermissionMode.ASK, PermissionMode.AUTO_APPROVE


def test_ask_without_a_host_config_asks_for_every_tool_but_the_question_tool() -> None:
    assert json.loads(config_content(None, ASK)) == {"permission": {"*": "ask", "question": "allow"}}


def test_ask_keeps_the_users_config_and_lets_the_users_own_rules_win() -> None:
    host = {"model": "fake/fake-model", "provider": {"fake": {}}, "permission": {"bash": "allow", "edit": "deny"}}
    merged = json.loads(config_content(json.dumps(host), ASK))
    assert merged["model"] == "fake/fake-model" and merged["provider"] == {"fake": {}}
    assert merged["permission"] == {"*": "ask", "question": "allow", "bash": "allow", "edit": "deny"}
    assert list(merged["permission"])[:2] == ["*", "question"]  # later rules win in opencode: the user's come last


def test_a_bare_permission_action_applies_to_every_tool() -> None:
    merged = json.loads(config_content(json.dumps({"permission": "allow"}), ASK))
    assert merged["permission"] == {"*": "allow", "question": "allow"}


def test_auto_approve_allows_everything_and_keeps_the_rest() -> None:
    host = {"theme": "x", "permission": {"bash": "ask"}}
    assert json.loads(config_content(json.dumps(host), AUTO)) == {"theme": "x", "permission": {"*": "allow"}}


@pytest.mark.parametrize("host", ["{not json", "[1, 2]", '"text"'])
def test_a_host_config_that_is_not_a_json_object_is_refused(host: str) -> None:
    with pytest.raises(ConfigProblem, match="OPENCODE_CONFIG_CONTENT"):
        config_content(host, ASK)


async def test_open_refuses_a_broken_host_config_as_invalid_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refusal reaches the caller as `InvalidConfiguration` before any server is started (the executable here
    could not serve anyway)."""
    monkeypatch.setenv("OPENCODE_CONFIG_CONTENT", "{not json")
    env = {"OMNIAGENT_OPENCODE_BIN": "/bin/false", "OMNIAGENT_NO_LOGIN_SHELL": "1", "PATH": "", "HOME": str(tmp_path)}
    async with Runtime(env=env) as runtime:
        with pytest.raises(InvalidConfiguration, match="OPENCODE_CONFIG_CONTENT is not valid JSON"):
            await runtime.open("opencode", tmp_path)
