"""What a pi session looks like to the runtime: the launch command, capabilities, the `model` and `effort` options
from pi's handshake, slash commands, and how to log in.

pi 0.73.1 answers `get_state` (current model, thinking level, session file), `get_available_models` (only models
whose provider has a key or login) and `get_commands` (extension commands, prompt templates, skills). It has no
command listing thinking levels: a model's levels follow pi's own rule (`getSupportedThinkingLevels`): a model
without `reasoning` has only "off"; one with it has off…high, plus "xhigh" only when its `thinkingLevelMap` names it,
minus any level that map sets to null.

pi has no permission protocol: it runs every tool, bash included, without asking. So `Permissions` is never a
capability, whatever permission mode the caller asked for. No I/O here beyond looking at files (a resume token, the
package's version).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omniagent.protocols.sidecar.agents import (
    AgentDetails,
    Authenticated,
    Capabilities,
    Capability,
    ConfigChoice,
    ConfigOption,
    ConfigValue,
    EnvVarLogin,
    LoginMethod,
    OtherAuth,
    SelectKind,
    SessionConfiguration,
    SlashCommand,
    TerminalLogin,
    ordered_features,
)
from omniagent.runtime import driver as d
from omniagent.runtime.errors import ResumeFailed, UnsupportedFeature

MODEL_OPTION = "model"
EFFORT_OPTION = "effort"
# pi's thinking levels, weakest first (pi-ai's EXTENDED_THINKING_LEVELS).
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
FEATURES = frozenset(
    {
        Capability.IMAGES,
        Capability.RESUME,
        Capability.STEER,
        Capability.QUESTIONS,
        Capability.FORK,
        Capability.COMPACT,
        Capability.SLASH_COMMANDS,
        Capability.CONTEXT_USAGE,
    }
)
# What pi prints on stderr when it exits for want of any usable model (auth-guidance.js): a login is missing.
NO_MODELS = "No models available"
# API-key variables pi reads for the common providers (pi docs, providers.md); `/login` covers the rest.
API_KEY_ENV = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY")
PACKAGE = "@mariozechner/pi-coding-agent"


def launch_argv(request: d.ConnectRequest, base: Sequence[str]) -> list[str]:
    """`pi --mode rpc` plus the session's flags: `--session FILE` to resume, `--fork FILE` to fork (pi copies the
    session into a new file at once), `--no-tools --no-session` for
    `generate`, and creation-time `model` / `effort` as `--model provider/id` / `--thinking LEVEL` (flags, not RPC:
    pi's `set_model` also rewrites the user's default model in settings.json)."""
    argv = [request.installation.executable_path, *base]
    if request.fork is not None:
        argv += ["--fork", request.fork]
    elif request.resume is not None:
        argv += ["--session", request.resume]
    if request.disable_tools:
        argv += ["--no-tools", "--no-session"]
    model = request.configure.get(MODEL_OPTION)
    if isinstance(model, str):
        argv += ["--model", model]
    effort = request.configure.get(EFFORT_OPTION)
    if isinstance(effort, str):
        argv += ["--thinking", effort]
    return argv


def source_file_of(request: d.ConnectRequest) -> str | None:
    """The session file to resume or fork from, absolute, or None for a new session.

    Raises: `UnsupportedFeature` (a fork point, MCP), `ResumeFailed` (a token that names no session file).
    """
    if request.fork_at is not None:
        raise UnsupportedFeature("fork at a point (pi's --fork copies the whole session)")
    if request.mcp_servers:
        raise UnsupportedFeature("MCP servers (pi has no MCP support)")
    token = request.fork if request.fork is not None else request.resume
    if token is not None and ("/" not in token or not os.path.isfile(token)):
        # pi would quietly start a new session at a path that does not exist, and match a bare id against every
        # project's sessions (asking on stdin when it finds one elsewhere): only an existing file is a token.
        raise ResumeFailed(f"no pi session file at {token!r} (pi writes it after the first answer)")
    return os.path.abspath(token) if token is not None else None


def login_methods(executable: str) -> list[LoginMethod]:
    """pi logs in from its own prompt (`/login`, OAuth or a key) or reads a provider's API-key variable."""
    terminal = TerminalLogin(command=[executable], env={}, description=f"Run `{executable}` and type /login")
    return [terminal, *(EnvVarLogin(name=name) for name in API_KEY_ENV)]


def package_version(executable: str) -> str | None:
    """pi's version from the package.json of the npm package its executable links into (npm, pnpm and bun global
    installs all link `bin/pi` to the package's `dist/cli.js`), or None for anything else (a wrapper script)."""
    try:
        path = Path(os.path.realpath(executable))
    except OSError:
        return None
    for parent in path.parents:
        manifest = parent / "package.json"
        if not manifest.is_file():
            continue
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        version = data.get("version") if isinstance(data, dict) and data.get("name") == PACKAGE else None
        return version if isinstance(version, str) else None
    return None


def model_id(model: Any) -> str | None:
    """A pi Model object as our choice value `provider/id`, the form `--model` takes."""
    if not isinstance(model, Mapping):
        return None
    provider, ident = model.get("provider"), model.get("id")
    return f"{provider}/{ident}" if isinstance(provider, str) and isinstance(ident, str) else None


def split_model(value: str) -> tuple[str, str]:
    """`provider/id` → (provider, id), split at the first "/" (model ids may contain more)."""
    provider, _, ident = value.partition("/")
    return provider, ident


def thinking_levels(model: Any) -> list[str]:
    """The levels `model` supports, by pi's rule (module docstring)."""
    if not isinstance(model, Mapping) or not model.get("reasoning"):
        return ["off"]
    mapping = model.get("thinkingLevelMap")
    levels: list[str] = []
    for level in THINKING_LEVELS:
        mapped = mapping.get(level, ...) if isinstance(mapping, Mapping) else ...
        if mapped is None or (level == "xhigh" and mapped is ...):
            continue
        levels.append(level)
    return levels


@dataclass(slots=True)
class PiState:
    """One pi session as the runtime describes it; `info()` is the `DriverInfo` the loop sees."""

    version: str | None = None
    models: list[Mapping[str, Any]] = field(default_factory=list)
    model: Mapping[str, Any] | None = None
    thinking: str | None = None
    session_file: str | None = None
    title: str | None = None
    commands: list[SlashCommand] = field(default_factory=list)
    tools_disabled: bool = False

    def apply_state(self, state: Any) -> None:
        """A `get_state` answer."""
        if not isinstance(state, Mapping):
            return
        if isinstance(state.get("model"), Mapping):
            self.model = state["model"]
        if isinstance(state.get("thinkingLevel"), str):
            self.thinking = state["thinkingLevel"]
        if isinstance(state.get("sessionFile"), str):
            self.session_file = state["sessionFile"]
        if isinstance(state.get("sessionName"), str):
            self.title = state["sessionName"]

    def apply_models(self, data: Any) -> None:
        """A `get_available_models` answer."""
        models = data.get("models") if isinstance(data, Mapping) else None
        self.models = [m for m in models if model_id(m) is not None] if isinstance(models, list) else []

    def apply_commands(self, data: Any) -> bool:
        """A `get_commands` answer; says whether the list changed."""
        raw = data.get("commands") if isinstance(data, Mapping) else None
        commands = [
            SlashCommand(name=item["name"], description=str(item.get("description") or ""), input_hint=None)
            for item in (raw if isinstance(raw, list) else [])
            if isinstance(item, Mapping) and isinstance(item.get("name"), str)
        ]
        changed = commands != self.commands
        self.commands = commands
        return changed

    def find_model(self, value: str) -> Mapping[str, Any] | None:
        return next((m for m in self.models if model_id(m) == value), None)

    @property
    def context_window(self) -> int | None:
        window = self.model.get("contextWindow") if self.model is not None else None
        return window if isinstance(window, int) and window >= 0 else None

    def options(self) -> list[ConfigOption]:
        """`model` (the available models) and `effort` (the current model's thinking levels), both live."""
        options: list[ConfigOption] = []
        if self.models:
            choices = [ConfigChoice(value=model_id(m) or "", label=str(m.get("name") or m["id"])) for m in self.models]
            options.append(
                ConfigOption(
                    id=MODEL_OPTION,
                    name="Model",
                    category="model",
                    kind=SelectKind(choices=choices),
                    current=model_id(self.model),
                    live=True,
                )
            )
        if self.model is not None:
            levels = [ConfigChoice(value=level, label=level) for level in thinking_levels(self.model)]
            options.append(
                ConfigOption(
                    id=EFFORT_OPTION,
                    name="Thinking level",
                    category="thought_level",
                    kind=SelectKind(choices=levels),
                    current=self.thinking,
                    live=True,
                )
            )
        return options

    def info(self) -> d.DriverInfo:
        options = self.options()
        provider = self.model.get("provider") if self.model is not None else None
        details = AgentDetails(
            version=self.version,
            # pi has no auth query over RPC; the open fails unless some model is usable, so an open session is
            # logged in with its model's provider (an API key or pi's own OAuth login: pi does not say which).
            auth=Authenticated(kind=OtherAuth(name=f"pi: {provider}" if isinstance(provider, str) else "pi")),
            capabilities=Capabilities(features=ordered_features(set(FEATURES)), mcp_transports=[]),
            config_options=options,
            commands=list(self.commands),
        )
        current: dict[str, ConfigValue] = {o.id: o.current for o in options if o.current is not None}
        return d.DriverInfo(
            details=details,
            configuration=SessionConfiguration(options=current),
            resume_token=None if self.tools_disabled else self.session_file,
            title=self.title,
            deterministic_turn_end=True,  # agent_end (or agent_settled) ends every prompted turn
            # pi's own runs end with agent_end, a compaction with its answer, an idle dialog with our answer.
            deterministic_agent_turn_end=True,
            tools_disabled=self.tools_disabled,
        )
