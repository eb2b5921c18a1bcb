"""What a Claude Code session looks like to the runtime: capabilities, options, commands and login, read from what
the CLI reports (the `initialize` control response, then `system/init` after the first prompt).

Observed with claude 2.1.197 offline:
- `initialize` answers `commands` (name, description, argumentHint), `agents` (subagent types), `models` (value,
  displayName, supportedEffortLevels) and `account` (`tokenSource`, `apiKeySource`, `subscriptionType` for a
  claude.ai login). It has no permission mode: that comes from the launch flags, `system/init` and `system/status`.
- `system/init` lists the tools (`AskUserQuestion` → Questions, `TodoWrite` → Plan) and the session id.

No I/O here; `ClaudeState.info()` is the `DriverInfo` the loop sees.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from omniagent.protocols.sidecar.agents import (
    AccountInfo,
    AgentDetails,
    ApiKey,
    Authenticated,
    AuthStatus,
    AuthUnknown,
    Capabilities,
    Capability,
    ConfigChoice,
    ConfigOption,
    ConfigValue,
    McpTransport,
    SelectKind,
    SessionConfiguration,
    SlashCommand,
    Subscription,
    ordered_features,
)
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.claude.launch import PERMISSION_MODES

# What the stream-json wire itself gives every session: image blocks, `--resume`, `can_use_tool`,
# `--fork-session`, `/compact`, and the usage in each `result`.
_WIRE_FEATURES = frozenset(
    {
        Capability.IMAGES,
        Capability.RESUME,
        Capability.PERMISSIONS,
        Capability.FORK,
        Capability.COMPACT,
        Capability.CONTEXT_USAGE,
    }
)
# Tools whose presence in `system/init` adds a feature.
_TOOL_FEATURES: Mapping[str, Capability] = {"AskUserQuestion": Capability.QUESTIONS, "TodoWrite": Capability.PLAN}
_MCP_TRANSPORTS = [McpTransport.STDIO, McpTransport.HTTP, McpTransport.SSE]
DEFAULT_MODEL = "default"
DEFAULT_MODE = "default"


@dataclass(slots=True)
class ClaudeState:
    """One Claude Code session as the runtime describes it."""

    session_id: str
    version: str | None = None
    account: Mapping[str, Any] = field(default_factory=dict)
    models: list[Mapping[str, Any]] = field(default_factory=list)
    commands: list[SlashCommand] = field(default_factory=list)
    subagents: bool = False
    tools: frozenset[str] = frozenset()
    mode: str = DEFAULT_MODE
    model: str = DEFAULT_MODEL
    effort: str | None = None
    tools_disabled: bool = False

    def apply_initialize(self, response: Mapping[str, Any]) -> None:
        """The `initialize` control response."""
        account = response.get("account")
        self.account = account if isinstance(account, Mapping) else {}
        self.models = [m for m in _list(response.get("models")) if isinstance(m.get("value"), str)]
        self.commands = [slash_command(c) for c in _list(response.get("commands")) if "name" in c]
        agents = response.get("agents")
        self.subagents = isinstance(agents, list) and bool(agents)

    def apply_init(self, frame: Mapping[str, Any]) -> bool:
        """A `system/init` frame; returns whether the info changed."""
        before = self.info()
        if isinstance(frame.get("session_id"), str):
            self.session_id = frame["session_id"]
        if isinstance(frame.get("permissionMode"), str):
            self.mode = frame["permissionMode"]
        tools = frame.get("tools")
        if isinstance(tools, list):
            self.tools = frozenset(t for t in tools if isinstance(t, str))
        if isinstance(frame.get("claude_code_version"), str):
            self.version = frame["claude_code_version"]
        return self.info() != before

    def apply_creation(self, option: str, value: ConfigValue) -> None:
        """A creation-time option the CLI was launched with (`--permission-mode`, `--model`, `--effort`)."""
        if option == "mode":
            self.mode = str(value)
        elif option == "model":
            self.model = str(value)
        elif option == "effort":
            self.effort = str(value)

    def apply_value(self, option: str, value: ConfigValue) -> bool:
        """A confirmed live change of `mode` or `model`; returns whether anything changed."""
        current = self.mode if option == "mode" else self.model
        if current == value:
            return False
        if option == "mode":
            self.mode = str(value)
        else:
            self.model = str(value)
        return True

    # --- what the loop sees --------------------------------------------------------------------------------

    @property
    def subscription(self) -> bool:
        """A claude.ai login (the only kind with a plan quota) rather than an API key."""
        return isinstance(self.account.get("subscriptionType"), str)

    @property
    def logged_in(self) -> bool:
        """Whether the CLI has any credential: a login token, an API key, or a cloud provider's own auth."""
        token = self.account.get("tokenSource")
        key = self.account.get("apiKeySource")
        provider = self.account.get("apiProvider", "firstParty")
        return (token not in (None, "none")) or (key not in (None, "none")) or provider != "firstParty"

    def auth(self) -> AuthStatus:
        if not self.account:
            return AuthUnknown()
        email = self.account.get("email")
        plan = self.account.get("subscriptionType")
        account = AccountInfo(
            email=email if isinstance(email, str) else None, plan=plan if isinstance(plan, str) else None
        )
        kind = Subscription() if self.subscription else ApiKey()
        return Authenticated(kind=kind, account=account if account.email or account.plan else None)

    def features(self) -> list[Capability]:
        features = set(_WIRE_FEATURES)
        features.update(feature for tool, feature in _TOOL_FEATURES.items() if tool in self.tools)
        if self.commands:
            features.add(Capability.SLASH_COMMANDS)
        if self.subagents:
            features.add(Capability.SUBAGENTS)
        if self.subscription:
            features.add(Capability.PLAN_USAGE)
        return ordered_features(features)

    def options(self) -> list[ConfigOption]:
        modes = [ConfigChoice(value=mode, label=mode) for mode in PERMISSION_MODES]
        options = [_select("mode", "Permission mode", "mode", modes, self.mode, live=True)]
        models = [
            ConfigChoice(value=str(m["value"]), label=str(m.get("displayName") or m["value"])) for m in self.models
        ]
        if models:
            options.append(_select("model", "Model", "model", models, self.model, live=True))
        levels = self._effort_levels()
        if levels:
            efforts = [ConfigChoice(value=level, label=level) for level in levels]
            options.append(_select("effort", "Effort", "thought_level", efforts, self.effort, live=False))
        return options

    def _effort_levels(self) -> list[str]:
        for model in self.models:
            if model["value"] == self.model:
                levels = model.get("supportedEffortLevels")
                return [str(level) for level in levels] if isinstance(levels, list) else []
        return []

    def info(self) -> d.DriverInfo:
        options = self.options()
        details = AgentDetails(
            version=self.version,
            auth=self.auth(),
            capabilities=Capabilities(features=self.features(), mcp_transports=list(_MCP_TRANSPORTS)),
            config_options=options,
            commands=list(self.commands),
        )
        current = {option.id: option.current for option in options if option.current is not None}
        return d.DriverInfo(
            details=details,
            configuration=SessionConfiguration(options=current),
            resume_token=self.session_id,
            deterministic_turn_end=True,  # every turn ends with exactly one `result`
            deterministic_agent_turn_end=True,  # the compaction turn ends with its `result` too
            tools_disabled=self.tools_disabled,
        )


def _select(
    option_id: str, name: str, category: str, choices: Sequence[ConfigChoice], current: str | None, *, live: bool
) -> ConfigOption:
    return ConfigOption(
        id=option_id, name=name, category=category, kind=SelectKind(choices=list(choices)), current=current, live=live
    )


def _list(value: Any) -> list[Mapping[str, Any]]:
    """The objects of a JSON list; anything else is empty."""
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def slash_command(raw: Mapping[str, Any]) -> SlashCommand:
    """An `initialize` command: `argumentHint` is the input hint (empty means none)."""
    hint = raw.get("argumentHint")
    return SlashCommand(
        name=str(raw["name"]),
        description=str(raw.get("description") or ""),
        input_hint=hint if isinstance(hint, str) and hint else None,
    )
