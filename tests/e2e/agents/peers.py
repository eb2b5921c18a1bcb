"""Per-agent facts for the real-agent tests: where the agent reads its LLM endpoint, which shell tool it offers the
model, and which body text marks its main model call. Source: each CLI observed offline at its pinned version.

Every agent gets the base env (docs/testing.md, "Isolation": fresh HOME and XDG dirs, no update notifier, CI=1)
plus its own variables and files below, all pointing at the fake LLM on 127.0.0.1 inside the namespace.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TEXT = "hello from fake llm"
TOUCHED = "fake_tool_ran.txt"
COMMAND = f"touch {TOUCHED}"
FAKE_KEY = "sk-fake-key-0000"
# Plain PATH for agents: node and the shells they run commands with; nothing from the developer's environment.
AGENT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
QUIET_SETTINGS = {
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
}


@dataclass(frozen=True, slots=True)
class Peer:
    """One real agent CLI as a test peer."""

    name: str
    """Catalog id = versions.json key."""
    shell_tool: str
    """The shell tool the agent offers the model (the one its main call picks)."""
    shell_arguments: dict[str, Any]
    main_marker: str
    """A body substring only the agent's own model call carries (its tool list), not side calls such as titles."""
    asks_permission: bool = True
    extra_env: dict[str, str] = field(default_factory=dict)
    package: str = ""
    """The versions.json key of the CLI; the catalog id when empty (`opencode-acp` runs the `opencode` package)."""
    forwarded: tuple[str, ...] = ()
    """Variables the launcher passes on from the environment the runtime starts it with (everything else in the
    agent's environment comes from here): what the adapter itself sets, such as opencode's server password."""

    @property
    def pinned(self) -> str:
        """The versions.json key."""
        return self.package or self.name

    def env(self, home: Path, origin: str) -> dict[str, str]:
        """The agent's whole environment (it is started with `env -i`)."""
        base = {
            "HOME": str(home),
            "PATH": AGENT_PATH,
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_STATE_HOME": str(home / ".local/state"),
            "NO_UPDATE_NOTIFIER": "1",
            "DO_NOT_TRACK": "1",
            "CI": "1",
            "TERM": "dumb",
            "LANG": "C.UTF-8",
        }
        return base | _ENV[self.name](home, origin) | self.extra_env

    def files(self, home: Path, origin: str) -> dict[Path, str]:
        """Config files to write under the fresh HOME before launch."""
        maker = _FILES.get(self.name)
        return maker(home, origin) if maker else {}


def _claude_env(home: Path, origin: str) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": origin,
        "ANTHROPIC_API_KEY": FAKE_KEY,
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_BUG_COMMAND": "1",
        "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
    }


def _codex_env(home: Path, origin: str) -> dict[str, str]:
    return {"CODEX_HOME": str(home / ".codex"), "FAKE_OPENAI_KEY": FAKE_KEY, "RUST_LOG": "warn"}


def _codex_files(home: Path, origin: str) -> dict[Path, str]:
    # The fake provider as a config file (the catalog launches codex-acp without -c flags). Retries capped so a broken
    # stream fails the turn instead of 30 backed-off requests; `untrusted` + full access so a write is asked for
    # (read-only mode runs commands in a sandbox without asking, and bwrap is not installed).
    return {
        home / ".codex" / "config.toml": f"""\
model_provider = "fake"
model = "gpt-5.5"
check_for_update_on_startup = false
approval_policy = "untrusted"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "fake"
base_url = "{origin}/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
"""
    }


def _codex_native_files(home: Path, origin: str) -> dict[Path, str]:
    # The app-server (codex 0.171.0) refuses `approval_policy = "untrusted"` in config.toml at start. With
    # `on-request` it asks when the model requests to leave the sandbox, which the scripted call does
    # (ESCALATED); bwrap is bundled, so the workspace-write sandbox works inside the namespace.
    return {
        home / ".codex" / "config.toml": _codex_files(home, origin)[home / ".codex" / "config.toml"]
        .replace('approval_policy = "untrusted"', 'approval_policy = "on-request"')
        .replace('sandbox_mode = "danger-full-access"', 'sandbox_mode = "workspace-write"')
    }


def _gemini_env(home: Path, origin: str) -> dict[str, str]:
    return {
        "GEMINI_API_KEY": FAKE_KEY,
        "GOOGLE_GEMINI_BASE_URL": origin,
        "GEMINI_CLI_NO_RELAUNCH": "true",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }


def _gemini_files(home: Path, origin: str) -> dict[Path, str]:
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}, **QUIET_SETTINGS}
    return {home / ".gemini" / "settings.json": json.dumps(settings)}


def _qwen_env(home: Path, origin: str) -> dict[str, str]:
    return {
        "OPENAI_API_KEY": FAKE_KEY,
        "OPENAI_BASE_URL": origin + "/v1",
        "OPENAI_MODEL": "fake-model",
        "QWEN_CODE_NO_RELAUNCH": "true",
    }


def _qwen_files(home: Path, origin: str) -> dict[Path, str]:
    settings = {"security": {"auth": {"selectedType": "openai"}}, **QUIET_SETTINGS}
    return {home / ".qwen" / "settings.json": json.dumps(settings)}


def _opencode_config(origin: str) -> dict[str, Any]:
    return {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "model": "fake/fake-model",
        "small_model": "fake/fake-model",
        "provider": {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake",
                "options": {"baseURL": origin + "/v1", "apiKey": FAKE_KEY},
                "models": {"fake-model": {"name": "Fake Model"}},
            }
        },
    }


def _opencode_acp_env(home: Path, origin: str) -> dict[str, str]:
    # The default `build` agent runs bash without asking; `ask` makes it request permission.
    config = _opencode_config(origin) | {"permission": {"bash": "ask"}}
    return {"OPENCODE_CONFIG_CONTENT": json.dumps(config)} | _opencode_env(home, origin)


def _opencode_files(home: Path, origin: str) -> dict[Path, str]:
    # The native adapter sets OPENCODE_CONFIG_CONTENT itself (permission rules); the provider comes from the
    # global config file, which opencode merges under it.
    return {home / ".config" / "opencode" / "opencode.json": json.dumps(_opencode_config(origin))}


def _opencode_env(home: Path, origin: str) -> dict[str, str]:
    return {
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_SHARE": "1",
    }


def _pi_env(home: Path, origin: str) -> dict[str, str]:
    # No startup network (update check, install telemetry); config and sessions under the fresh HOME.
    return {
        "PI_OFFLINE": "1",
        "PI_SKIP_VERSION_CHECK": "1",
        "PI_TELEMETRY": "0",
        "PI_CODING_AGENT_DIR": str(home / ".pi" / "agent"),
    }


PI_MODELS = ("fake-model", "fake-reasoner")


def _pi_files(home: Path, origin: str) -> dict[Path, str]:
    # A custom provider `fake` on the Chat Completions wire. Two models, so `model` has a choice, and one
    # that reasons, so `effort` has levels beyond "off". The defaults pick the first (no --provider/--model needed).
    compat = {"supportsDeveloperRole": False, "supportsReasoningEffort": False}
    models = [{"id": PI_MODELS[0], "contextWindow": 32000}, {"id": PI_MODELS[1], "reasoning": True}]
    provider = {"baseUrl": origin + "/v1", "api": "openai-completions", "apiKey": FAKE_KEY, "compat": compat}
    settings = {"enableInstallTelemetry": False, "defaultProvider": "fake", "defaultModel": PI_MODELS[0]}
    agent_dir = home / ".pi" / "agent"
    return {
        agent_dir / "models.json": json.dumps({"providers": {"fake": provider | {"models": models}}}),
        agent_dir / "settings.json": json.dumps(settings),
    }


_ENV = {
    "pi": _pi_env,
    "claude": _claude_env,
    "claude-code-acp": _claude_env,
    "codex": _codex_env,
    "codex-acp": _codex_env,
    "gemini": _gemini_env,
    "qwen": _qwen_env,
    "opencode-acp": _opencode_acp_env,
    "opencode": _opencode_env,
}
_FILES = {
    "pi": _pi_files,
    "codex": _codex_native_files,
    "codex-acp": _codex_files,
    "gemini": _gemini_files,
    "qwen": _qwen_files,
    "opencode": _opencode_files,
}

_DESCRIBED = {"command": COMMAND, "description": "Create the marker file"}
# codex's exec_command asking to run outside the sandbox: under `on-request` that is what needs an approval.
ESCALATED = {"cmd": COMMAND, "sandbox_permissions": "require_escalated", "justification": "create the marker file"}
PEERS: dict[str, Peer] = {
    peer.name: peer
    for peer in (
        Peer("claude", "Bash", _DESCRIBED, main_marker='"Bash"'),
        Peer("claude-code-acp", "Bash", _DESCRIBED, main_marker='"Bash"'),
        Peer("codex", "exec_command", ESCALATED, main_marker='"exec_command"'),
        Peer("codex-acp", "exec_command", {"cmd": COMMAND}, main_marker='"exec_command"'),
        Peer("gemini", "run_shell_command", _DESCRIBED, main_marker='"run_shell_command"'),
        Peer("qwen", "run_shell_command", _DESCRIBED, main_marker='"run_shell_command"'),
        Peer("opencode-acp", "bash", _DESCRIBED, main_marker='"bash"', package="opencode"),
        Peer(
            "opencode",
            "bash",
            _DESCRIBED,
            main_marker='"bash"',
            forwarded=("OPENCODE_SERVER_USERNAME", "OPENCODE_SERVER_PASSWORD", "OPENCODE_CONFIG_CONTENT"),
        ),
        # pi's own JSONL RPC, no permission protocol (it runs bash without asking).
        Peer("pi", "bash", {"command": COMMAND}, main_marker='"bash"', asks_permission=False),
    )
}
