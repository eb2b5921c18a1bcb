"""Plan usage from the real codex 0.171.0 and claude 2.1.197, in a loopback-only namespace (see `logins.py`).

codex reads its rate limits from its ChatGPT backend: with ChatGPT tokens in `auth.json` and `chatgpt_base_url` at
the fake, the real `codex app-server` answers `account/rateLimits/read` from the fake's usage route. claude reads
its own from https://api.anthropic.com only, so here the real claude shows the login cases (API key, none, a
subscription it cannot reach); its numbers are covered over recorded frames in tests/runtime/test_plan_usage.py.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from omniagent.faces.cli.usage import EXIT_SHOWN
from omniagent.protocols.sidecar.agents import EnvVarLogin, TerminalLogin
from omniagent.runtime.errors import AuthRequired, ProtocolFailed, UnsupportedFeature
from omniagent.runtime.plan_usage import NO_PLAN_QUOTA
from omniagent.runtime.runtime import Runtime
from tests.e2e.agents.logins import CHATGPT_ACCOUNT, LoginWorld, login_world
from tests.e2e.sidecar_client import Sidecar
from tests.pty_terminal import Terminal
from tests.sidecar_schema import validate

# 42 % of a 5 h window resetting in 3 h 12 min, 7 % of a week resetting in 3.5 days.
QUOTA: dict[str, Any] = {
    "plan": "plus",
    "windows": [
        {"used_percent": 42, "minutes": 300, "resets_in": 3 * 3600 + 12 * 60},
        {"used_percent": 7, "minutes": 10080, "resets_in": 302400},
    ],
}
# Bound on the `omniagent usage` process (two agents launched; each answers in about a second).
CLI_WAIT = 60.0


async def test_codex_reads_the_chatgpt_plan_once_per_minute(tmp_path: Path) -> None:
    """Issue acceptance (plan usage): the real codex app-server answers `account/rateLimits/read` from the fake
    account; the windows are labelled by duration; a second ask within 60 s launches nothing and asks nobody."""
    async with login_world(tmp_path, QUOTA) as world:
        codex = world.launcher("codex", "chatgpt")
        async with Runtime(env=world.runtime_env(codex=codex)) as runtime:
            asked = time.time()
            usage = await runtime.plan_usage("codex")
            again = await runtime.plan_usage("codex")
        (request,) = world.usage_requests()
        assert world.spawns(codex) == 1
    assert again == usage
    assert usage.plan == "plus"
    assert [(w.label, w.used_percent) for w in usage.windows] == [("Session", 42), ("Week", 7)]
    session_reset = usage.windows[0].resets_at
    assert session_reset is not None
    assert abs(session_reset.secs_since_epoch - (asked + QUOTA["windows"][0]["resets_in"])) < 30
    # codex asked with the login's token and account (the fake records only the token's fingerprint).
    assert request["credential"] is not None and request["headers"]["chatgpt-account-id"] == CHATGPT_ACCOUNT


@pytest.mark.parametrize("login", ["apikey", "provider"])
async def test_codex_login_without_a_plan_is_unsupported(tmp_path: Path, login: str) -> None:
    """An API key, or a custom model provider with no OpenAI login (`requiresOpenaiAuth: false`): no plan quota."""
    async with login_world(tmp_path) as world:
        codex = world.launcher("codex", login)
        async with Runtime(env=world.runtime_env(codex=codex)) as runtime:
            with pytest.raises(UnsupportedFeature) as raised:
                await runtime.plan_usage("codex")
    assert raised.value.detail == NO_PLAN_QUOTA


async def test_codex_without_a_login_is_auth_required_with_its_login_methods(tmp_path: Path) -> None:
    async with login_world(tmp_path) as world:
        codex = world.launcher("codex", "none")
        async with Runtime(env=world.runtime_env(codex=codex)) as runtime:
            with pytest.raises(AuthRequired) as raised:
                await runtime.plan_usage("codex")
    terminal, key = raised.value.login
    assert isinstance(terminal, TerminalLogin) and terminal.command == [str(codex), "login"]
    assert key == EnvVarLogin(name="OPENAI_API_KEY")


async def test_claude_logins_without_reachable_plan_numbers(tmp_path: Path) -> None:
    """The real claude's `get_usage`: an API key has no plan quota; no login is AuthRequired; a subscription
    whose backend is out of reach is a protocol failure, not an empty plan."""
    async with login_world(tmp_path) as world:
        launchers = {login: world.launcher("claude", login) for login in ("apikey", "none", "oauth")}
        for login, claude in launchers.items():
            async with Runtime(env=world.runtime_env(claude=claude)) as runtime:
                with pytest.raises((UnsupportedFeature, AuthRequired, ProtocolFailed)) as raised:
                    await runtime.plan_usage("claude")
            error = raised.value
            if login == "apikey":
                assert isinstance(error, UnsupportedFeature) and error.detail == NO_PLAN_QUOTA
            elif login == "none":
                assert isinstance(error, AuthRequired)
                assert [m.command for m in error.login if isinstance(m, TerminalLogin)] == [
                    [str(claude), "auth", "login"]
                ]
            else:
                assert isinstance(error, ProtocolFailed) and "could not fetch" in error.detail
        assert not world.usage_requests()


async def test_sidecar_plan_usage_from_the_real_codex(tmp_path: Path) -> None:
    """The sidecar's `plan_usage` line for the real codex, validated against the wire schema."""
    async with login_world(tmp_path, QUOTA) as world:
        codex = world.launcher("codex", "chatgpt")
        async with Sidecar.running(env=world.runtime_env(codex=codex)) as sidecar:
            usage = await sidecar.ok("plan_usage", agent="codex")
    validate("PlanUsage", usage)
    assert [(w["label"], w["used_percent"]) for w in usage["windows"]] == [("Session", 42), ("Week", 7)]


# --- `omniagent usage` on a terminal -----------------------------------------------------------------------


def _run_on_a_terminal(env: dict[str, str], cwd: Path) -> tuple[int, str]:
    """`omniagent usage` on a pseudo-terminal (120 columns); returns (exit code, what it showed)."""
    with Terminal("usage", cwd=cwd, env=env) as terminal:
        code = terminal.wait()
        return code, terminal.screen


async def _usage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`omniagent usage` with its output captured."""
    argv = [sys.executable, "-m", "omniagent", "usage", *args]
    return await asyncio.to_thread(subprocess.run, argv, env=env, capture_output=True, text=True, timeout=CLI_WAIT)


def _codex_and_claude(world: LoginWorld) -> dict[str, str]:
    return world.runtime_env(codex=world.launcher("codex", "chatgpt"), claude=world.launcher("claude", "apikey"))


async def test_usage_command_shows_bars_on_a_terminal(tmp_path: Path) -> None:
    """Issue acceptance: `omniagent usage` rendered on a terminal — Codex's windows as bars with the used share and
    the time to reset, and one line each for the agents that cannot show theirs; exit 0."""
    async with login_world(tmp_path, QUOTA) as world:
        env = _codex_and_claude(world)
        code, shown = await asyncio.to_thread(_run_on_a_terminal, env, tmp_path)
    assert code == EXIT_SHOWN, shown
    lines = shown.splitlines()
    assert "Codex (codex) · plan plus" in lines
    (session,) = [line for line in lines if line.strip().startswith("Session")]
    (week,) = [line for line in lines if line.strip().startswith("Week")]
    assert "━" in session and "42% used" in session and session.endswith("resets in 3h 12m")
    assert "7% used" in week and week.endswith("resets in 3d 12h")
    assert f"Claude Code (claude): {NO_PLAN_QUOTA}" in lines
    assert "omniagent (omniagent): cannot report plan usage" in lines


async def test_usage_command_json_and_exit_codes(tmp_path: Path) -> None:
    """`--json` is one document of schema-valid answers; an agent that cannot show its plan exits 1."""
    async with login_world(tmp_path, QUOTA) as world:
        env = _codex_and_claude(world)
        shown = await _usage(env, "--json")
        claude = await _usage(env, "--agent", "claude")
    assert shown.returncode == EXIT_SHOWN, shown.stderr
    answers = {answer["id"]: answer for answer in json.loads(shown.stdout)["agents"]}
    assert set(answers) == {"omniagent", "claude", "codex"}
    validate("PlanUsage", answers["codex"]["usage"])
    assert answers["codex"]["error"] is None
    validate("ErrorBody", answers["claude"]["error"])
    assert answers["claude"]["usage"] is None and answers["claude"]["error"]["detail"] == NO_PLAN_QUOTA
    assert claude.returncode == 1
    assert claude.stdout.strip() == f"Claude Code (claude): {NO_PLAN_QUOTA}"
