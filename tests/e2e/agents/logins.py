"""Logged-in worlds for the plan-usage tests: codex and claude launchers with a chosen login, in one namespace.

The turn tests (`harness.agent_world`) give every agent an API key pointed at the fake LLM. Plan usage depends on
the login instead, so this world builds one launcher per (agent, login), each with its own fresh HOME, all in the
network namespace of one fake LLM whose scenario holds the plan quota:

    async with login_world(tmp_path, quota) as world:
        codex = world.launcher("codex", "chatgpt")     # …/bin-codex-chatgpt/codex
        Runtime(env=world.runtime_env(codex=codex))    # discovery finds that launcher as `codex`
        world.spawns(codex)                            # how many times it was started

Logins:
- codex `chatgpt`: an `auth.json` holding ChatGPT tokens (unsigned JWTs: codex reads their claims, never checks a
  signature) and `chatgpt_base_url` at the fake, whose usage route answers `account/rateLimits/read`;
  `apikey`: an `auth.json` with an API key; `provider`: a custom model provider (the turn tests' setup) and no
  login; `none`: nothing.
- claude `apikey`: `ANTHROPIC_API_KEY`; `oauth`: a claude.ai OAuth credentials file (its usage endpoint is fixed
  to https://api.anthropic.com, unreachable here); `none`: nothing.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omniagent.runtime.catalog import PROFILES, env_override_names
from tests.e2e.agents import packages
from tests.e2e.agents.harness import namespaced_llm
from tests.e2e.agents.peers import AGENT_PATH, FAKE_KEY

# The ChatGPT access token the codex `chatgpt` login sends (the fake records only its fingerprint).
CHATGPT_ACCOUNT = "acct-fake-0001"
_QUIET_CODEX = """\
check_for_update_on_startup = false

[features]
plugins = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
"""


def _jwt(claims: dict[str, Any]) -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.unsigned"


def chatgpt_token() -> str:
    """A ChatGPT id/access token as codex reads it: a JWT whose claims name the plan and account."""
    auth = {"chatgpt_plan_type": "plus", "chatgpt_account_id": CHATGPT_ACCOUNT, "chatgpt_user_id": "user-fake"}
    claims = {"email": "person@example.com", "https://api.openai.com/auth": auth, "exp": int(time.time()) + 86400}
    return _jwt(claims)


@dataclass(slots=True)
class LoginWorld:
    root: Path
    origin: str
    log: Path
    enter: list[str]
    _launchers: dict[Path, Path] = field(default_factory=dict)

    def launcher(self, agent: str, login: str) -> Path:
        """A launcher for `agent` (`codex` or `claude`) with `login`; it counts its starts (see `spawns`)."""
        home = self.root / f"home-{agent}-{login}"
        bin_dir = self.root / f"bin-{agent}-{login}"
        home.mkdir(parents=True)
        bin_dir.mkdir()
        env = {
            "HOME": str(home),
            "PATH": AGENT_PATH,
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "NO_UPDATE_NOTIFIER": "1",
            "CI": "1",
            "TERM": "dumb",
            "LANG": "C.UTF-8",
        }
        env |= self._codex(home, login) if agent == "codex" else self._claude(home, login)
        spawns = bin_dir / "spawns"
        command = [*self.enter, "env", "-i", *(f"{k}={v}" for k, v in env.items()), str(packages.entry(agent))]
        launcher = bin_dir / agent
        launcher.write_text(
            f'#!/bin/sh\necho $$ >> {shlex.quote(str(spawns))}\nexec {shlex.join(command)} "$@"\n', encoding="utf-8"
        )
        launcher.chmod(0o755)
        self._launchers[launcher] = spawns
        return launcher

    def spawns(self, launcher: Path) -> int:
        """How many times `launcher` started its agent."""
        path = self._launchers[launcher]
        return len(path.read_text().split()) if path.exists() else 0

    def runtime_env(self, **launchers: Path) -> dict[str, str]:
        """Env for `Runtime(env=…)` or an `omniagent` child: each catalog agent's override names the given launcher
        (or nothing), no login shell, and a HOME and PATH where discovery finds no other agent CLI."""
        env = dict(os.environ)
        for row in PROFILES:
            for name in env_override_names(row.id):
                env[name] = ""
        for agent, launcher in launchers.items():
            env[env_override_names(agent)[0]] = str(launcher)
        home = self.root / "runtime-home"
        home.mkdir(exist_ok=True)
        env |= {"HOME": str(home), "OMNIAGENT_NO_LOGIN_SHELL": "1"}
        env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"])
        return env

    def usage_requests(self) -> list[dict[str, Any]]:
        """The fake's logged requests to its ChatGPT usage route."""
        try:
            lines = self.log.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        return [r for r in map(json.loads, lines) if r["api"] == "chatgpt_usage"]

    def _codex(self, home: Path, login: str) -> dict[str, str]:
        codex_home = home / ".codex"
        codex_home.mkdir()
        config = f'chatgpt_base_url = "{self.origin}/backend-api/"\n'
        if login == "provider":
            config += f"""model_provider = "fake"
model = "gpt-5.5"

[model_providers.fake]
name = "fake"
base_url = "{self.origin}/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
"""
        (codex_home / "config.toml").write_text(config + _QUIET_CODEX, encoding="utf-8")
        auth: dict[str, Any] | None = None
        if login == "chatgpt":
            token = chatgpt_token()
            tokens = {
                "id_token": token,
                "access_token": token,
                "refresh_token": "rt-fake",
                "account_id": CHATGPT_ACCOUNT,
            }
            auth = {"OPENAI_API_KEY": None, "tokens": tokens, "last_refresh": time.strftime("%Y-%m-%dT%H:%M:%SZ")}
        elif login == "apikey":
            auth = {"OPENAI_API_KEY": FAKE_KEY}
        if auth is not None:
            (codex_home / "auth.json").write_text(json.dumps(auth), encoding="utf-8")
        return {"CODEX_HOME": str(codex_home), "FAKE_OPENAI_KEY": FAKE_KEY, "RUST_LOG": "warn"}

    def _claude(self, home: Path, login: str) -> dict[str, str]:
        config = home / ".claude"
        config.mkdir()
        env = {
            "ANTHROPIC_BASE_URL": self.origin,
            "CLAUDE_CONFIG_DIR": str(config),
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_BUG_COMMAND": "1",
            "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
        }
        if login == "apikey":
            env["ANTHROPIC_API_KEY"] = FAKE_KEY
        elif login == "oauth":
            expires = int(time.time() * 1000) + 86_400_000
            oauth = {
                "accessToken": "oauth-access-fake",
                "refreshToken": "oauth-refresh-fake",
                "expiresAt": expires,
                "scopes": ["user:inference", "user:profile"],
                "subscriptionType": "max",
            }
            (config / ".credentials.json").write_text(json.dumps({"claudeAiOauth": oauth}), encoding="utf-8")
        return env


@asynccontextmanager
async def login_world(root: Path, quota: dict[str, Any] | None = None) -> AsyncIterator[LoginWorld]:
    """A fake LLM in a fresh loopback-only namespace whose scenario reports `quota` (scenario `plan_quota`)."""
    scenario = {"fallback": {"kind": "reply", "text": "hello"}} | ({"plan_quota": quota} if quota else {})
    async with namespaced_llm(root, scenario) as llm:
        yield LoginWorld(root, llm.origin, llm.log, llm.enter)
