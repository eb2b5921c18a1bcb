"""Agents as the wire describes them: installations, discovery reports, details, auth, configuration."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

from msgspec import Meta

from omniagent.protocols.sidecar.base import Diagnostic, Newtype, SidecarModel, SystemTime, Variant, tagged


class InstallationSource(StrEnum):
    """Where discovery found the executable, in search order."""

    ENV_OVERRIDE = "EnvOverride"
    PATH = "Path"
    LOGIN_SHELL_PATH = "LoginShellPath"
    VERSION_MANAGER = "VersionManager"
    KNOWN_LOCATION = "KnownLocation"
    PINNED = "Pinned"


class MissingAgent(SidecarModel):
    id: str
    name: str
    searched: list[str]
    install_hint: str


class AgentInstallation(SidecarModel, omit_defaults=True):
    """The wire omits `upgrade` and `acp_args` when absent (the only optionals it omits)."""

    id: str
    name: str
    executable_path: str
    source: InstallationSource
    upgrade: MissingAgent | None = None
    acp_args: list[str] | None = None


class DiscoveryReport(SidecarModel):
    agents: list[AgentInstallation]
    missing: list[MissingAgent]
    diagnostics: list[Diagnostic]


# --- auth -------------------------------------------------------------------------------------------------


class Subscription(Variant):
    TAG = "Subscription"


class ApiKey(Variant):
    TAG = "ApiKey"


class CloudProvider(Variant):
    TAG = "CloudProvider"


class OtherAuth(Newtype):
    TAG = "Other"
    name: str


_AUTH_KINDS = Subscription | ApiKey | CloudProvider | OtherAuth
if TYPE_CHECKING:
    AuthKind = _AUTH_KINDS
else:
    AuthKind = tagged("AuthKind", _AUTH_KINDS)


class AccountInfo(SidecarModel):
    email: str | None = None
    plan: str | None = None


class TerminalLogin(Variant):
    """Run `command` in a terminal to log in."""

    TAG = "Terminal"
    command: list[str]
    env: dict[str, str] = {}
    description: str


class EnvVarLogin(Variant):
    """Set environment variable `name` (an API key) to log in."""

    TAG = "EnvVar"
    name: str


_LOGIN_METHODS = TerminalLogin | EnvVarLogin
if TYPE_CHECKING:
    LoginMethod = _LOGIN_METHODS
else:
    LoginMethod = tagged("LoginMethod", _LOGIN_METHODS)


class AuthUnknown(Variant):
    TAG = "Unknown"


class Authenticated(Variant):
    TAG = "Authenticated"
    kind: AuthKind
    account: AccountInfo | None = None


class Unauthenticated(Variant):
    TAG = "Unauthenticated"
    login: list[LoginMethod]


_AUTH_STATUSES = AuthUnknown | Authenticated | Unauthenticated
if TYPE_CHECKING:
    AuthStatus = _AUTH_STATUSES
else:
    AuthStatus = tagged("AuthStatus", _AUTH_STATUSES)


# --- capabilities and configuration ------------------------------------------------------------------------


class Capability(StrEnum):
    """Features an agent may have. Declaration order is the wire's set order."""

    IMAGES = "Images"
    RESUME = "Resume"
    STEER = "Steer"
    PERMISSIONS = "Permissions"
    QUESTIONS = "Questions"
    ROLLBACK = "Rollback"
    ROLLBACK_FILES = "RollbackFiles"
    FORK = "Fork"
    COMPACT = "Compact"
    SLASH_COMMANDS = "SlashCommands"
    PLAN = "Plan"
    SUBAGENTS = "Subagents"
    CONTEXT_USAGE = "ContextUsage"
    PLAN_USAGE = "PlanUsage"


_CAPABILITY_ORDER = {cap: index for index, cap in enumerate(Capability)}


def ordered_features(features: set[Capability] | list[Capability]) -> list[Capability]:
    """The wire's `features` set: no duplicates, in declaration order."""
    return sorted(set(features), key=_CAPABILITY_ORDER.__getitem__)


class McpTransport(StrEnum):
    STDIO = "Stdio"
    HTTP = "Http"
    SSE = "Sse"


class Capabilities(SidecarModel):
    features: list[Capability] = []
    mcp_transports: list[McpTransport] = []

    def has(self, feature: Capability) -> bool:
        return feature in self.features


ConfigValue = str | bool


class ConfigChoice(SidecarModel):
    value: str
    label: str
    description: str | None = None


class BooleanKind(Variant):
    TAG = "Boolean"


class SelectKind(Variant):
    TAG = "Select"
    choices: list[ConfigChoice]


_CONFIG_KINDS = BooleanKind | SelectKind
if TYPE_CHECKING:
    ConfigKind = _CONFIG_KINDS
else:
    ConfigKind = tagged("ConfigKind", _CONFIG_KINDS)


class ConfigOption(SidecarModel):
    id: str
    name: str
    category: str | None = None
    kind: ConfigKind
    current: ConfigValue | None = None
    live: bool


class SlashCommand(SidecarModel):
    name: str
    description: str
    input_hint: str | None = None


class AgentDetails(SidecarModel):
    version: str | None = None
    auth: AuthStatus
    capabilities: Capabilities
    config_options: list[ConfigOption] = []
    commands: list[SlashCommand] = []


class SessionConfiguration(SidecarModel):
    options: dict[str, ConfigValue] = {}


class SessionStatus(StrEnum):
    IDLE = "Idle"
    WORKING = "Working"
    NEEDS_INPUT = "NeedsInput"


class SessionInfo(SidecarModel):
    id: str
    agent: AgentInstallation
    details: AgentDetails
    configuration: SessionConfiguration
    resume_token: str | None = None
    title: str | None = None
    status: SessionStatus = SessionStatus.IDLE


# --- plan usage --------------------------------------------------------------------------------------------


class UsageWindow(SidecarModel):
    label: str
    used_percent: Annotated[int, Meta(ge=0, le=255)]
    resets_at: SystemTime | None = None


class PlanUsage(SidecarModel):
    plan: str | None = None
    windows: list[UsageWindow]
    fetched_at: SystemTime
