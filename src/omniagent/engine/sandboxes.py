"""Per-session `exec` sandbox settings, the engine extension that sets them, and the policy one tool call gets.

A session's commands run `sandboxed` (the default where the platform has a sandbox; docs/security.md) or
`unsandboxed` (an explicit opt-in). The network is `off` in the sandbox unless the session turns it `on`, or to
`allowlist`: then only the session's allowed domains, through the sandbox's proxy (omniagent.sandbox); the list
starts as `sandbox.json`'s `network.allowed_domains` (sandbox_file.py). An unsandboxed `exec` asks first
in every permission mode, auto included, unless the user turned that off (`ask_unsandboxed: false`) or answered
"allow always" for exec (ACP).

A session may also show its workspace at another path, its `workdir` (a workspace view, e.g. `/app`, for a task
written for a container: `show_workspace_at`): its commands see the workspace there and start there (sandboxed, or
unsandboxed in a view of this machine), its file tools take paths under it as the workspace's, and its system
prompt names it. Set by the runtime when a session is opened with a workdir; not a select option.

The same settings say whether `fetch` may reach the session's private network (loopback and private addresses;
off by default, the sandbox's address rules), and so whether the allowlist proxy may; and they carry the session's
`exec` limits (sandbox_file.py: the defaults from sandbox.json, changed per session by `session.set_sandbox`'s
`limits`).

Like the permission mode, the settings live in memory for the life of the engine process (yuke has no field for
them): a restarted engine starts every session sandboxed, network off, the safe direction. They are set with the
engine extension method `session.set_sandbox` (docs/engine.md), or as the select options `SANDBOX_OPTIONS`
(`sandbox`, `network`, `fetch`) that ACP's config options and the runtime adapter's offer, in one wording.

What this is not: the sandbox itself (omniagent.sandbox builds and runs it) nor the ask
(interactions/permissions.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, NamedTuple

from omniagent.engine import sandbox_file
from omniagent.engine.errors import EngineError
from omniagent.engine.providers.catalog.builtins import KEY_ENV_ALIASES
from omniagent.engine.providers.catalog.table import Catalog
from omniagent.engine.sandbox_file import LimitsParams, SandboxDefaults, SandboxFileError, limits_of, params_of
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import SessionId
from omniagent.sandbox import (
    DomainRule,
    ExecLimits,
    NetworkRules,
    SandboxMode,
    SandboxPolicy,
    parse_rules,
    private_paths,
)

# The engine extension method that sets a session's sandbox settings (not in yuke's MethodName).
SET_SANDBOX_METHOD = "session.set_sandbox"
# Provider key variables every catalog knows even before providers.json names more.
BUILTIN_KEY_VARS = frozenset({"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"})
# A sandboxed command's network: none, only the allowed domains through the engine's proxy, or the host's.
NetworkMode = Literal["off", "allowlist", "on"]


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """One session's choice. `ask_unsandboxed`: an unsandboxed exec asks even in auto mode. `fetch_private`:
    `fetch` (and the allowlist proxy) may connect to loopback and private addresses. `allowed_domains`: what the
    network reaches in `allowlist` mode. `limits`: its commands' limits. `workdir`: where the model and its
    commands see the workspace (None: at its own path)."""

    mode: SandboxMode = SandboxPolicy().mode
    network: NetworkMode = "off"
    ask_unsandboxed: bool = True
    fetch_private: bool = False
    allowed_domains: tuple[DomainRule, ...] = ()
    limits: ExecLimits = field(default_factory=ExecLimits)
    workdir: Path | None = None


class SandboxOption(NamedTuple):
    """One sandbox setting as a select a face offers: its id, its name, its values as (value, label, what it
    means), and the sentence refusing a value it does not offer."""

    id: str
    name: str
    values: tuple[tuple[str, str, str], ...]
    refusal: str


SANDBOX_OPTIONS = (
    SandboxOption(
        "sandbox",
        "Sandbox",
        (
            ("sandboxed", "Sandboxed", "Commands can write only the workspace and /tmp, and cannot read credentials"),
            ("unsandboxed", "Unsandboxed", "Commands run as you, unconfined; every command asks first"),
        ),
        "the sandbox is sandboxed or unsandboxed",
    ),
    SandboxOption(
        "network",
        "Network",
        (
            ("off", "Off", "Sandboxed commands have no network"),
            ("allowlist", "Listed domains", "Sandboxed commands reach only the session's allowed domains"),
            ("on", "On", "Sandboxed commands may use the network"),
        ),
        "the network is off, allowlist or on",
    ),
    SandboxOption(
        "fetch",
        "Web fetch",
        (
            ("public", "Public", "The fetch tool reaches public addresses only"),
            ("private", "Private too", "The fetch tool may also reach this machine and private networks"),
        ),
        "web fetch is public or private",
    ),
)
SANDBOX_OPTION_IDS = frozenset(option.id for option in SANDBOX_OPTIONS)


def option_values(settings: SandboxSettings) -> dict[str, str]:
    """The value each of `SANDBOX_OPTIONS` has under `settings`."""
    return {
        "sandbox": settings.mode,
        "network": settings.network,
        "fetch": "private" if settings.fetch_private else "public",
    }


class SetSandboxParams(YukeModel):
    """Params of `session.set_sandbox` (engine extension): only the fields given change. `network` also takes the
    booleans of earlier clients (true: `on`, false: `off`); `allowed_domains` replaces the session's list."""

    session_id: SessionId
    mode: SandboxMode | None = None
    network: NetworkMode | bool | None = None
    ask_unsandboxed: bool | None = None
    fetch_private: bool | None = None
    allowed_domains: list[str] | None = None
    limits: LimitsParams | None = None


class SandboxResult(YukeModel):
    """Result of `session.set_sandbox`: the settings now in force."""

    session_id: SessionId
    mode: SandboxMode
    network: NetworkMode
    ask_unsandboxed: bool
    fetch_private: bool
    allowed_domains: list[str]
    limits: LimitsParams


class Sandboxes:
    """The sandbox settings of every session of one engine, and the paths no sandboxed command may read."""

    def __init__(self, data_dir: Path, config_dir: Path, home: Path | None = None) -> None:
        self._settings: dict[str, SandboxSettings] = {}
        self._private = private_paths(home or Path.home(), data_dir, config_dir)
        try:
            defaults = sandbox_file.load(config_dir)
        except SandboxFileError as exc:
            # Commands do not run rather than run under settings the user did not mean.
            refusal = f"the command was not run: {exc}; the user must fix or remove it and restart the engine"
            defaults = SandboxDefaults(limits=ExecLimits(refused=refusal))
        self._network = defaults.network
        self._defaults = SandboxSettings(allowed_domains=defaults.network.allowed_domains, limits=defaults.limits)

    def settings(self, session_id: str) -> SandboxSettings:
        """The session's settings (the defaults unless set)."""
        return self._settings.get(session_id, self._defaults)

    def update(self, params: SetSandboxParams) -> SandboxSettings:
        """Apply the given fields; they hold from the next tool call on.

        Raises:
            EngineError: an allowed domain is not a rule (nothing changes then).
        """
        current = self.settings(params.session_id)
        domains = current.allowed_domains
        if params.allowed_domains is not None:
            try:
                domains = parse_rules(params.allowed_domains)
            except ValueError as exc:
                raise EngineError.bad_request(f"allowed_domains: {exc}") from None
        changed = replace(
            current,
            mode=params.mode if params.mode is not None else current.mode,
            network=_network_mode(params.network) if params.network is not None else current.network,
            ask_unsandboxed=params.ask_unsandboxed if params.ask_unsandboxed is not None else current.ask_unsandboxed,
            fetch_private=params.fetch_private if params.fetch_private is not None else current.fetch_private,
            allowed_domains=domains,
            limits=limits_of(params.limits, current.limits) if params.limits is not None else current.limits,
        )
        self._settings[params.session_id] = changed
        return changed

    def choose(self, session_id: str, option_id: str, value: object) -> str | None:
        """Set one of `SANDBOX_OPTIONS` to one of its values; the option's refusal when `value` is not one."""
        option = next(o for o in SANDBOX_OPTIONS if o.id == option_id)
        if value not in [offered for offered, _, _ in option.values]:
            return option.refusal
        if option_id == "sandbox":
            self.update(
                SetSandboxParams(session_id=session_id, mode="unsandboxed" if value == "unsandboxed" else "sandboxed")
            )
        elif option_id == "network":
            network: NetworkMode = "on" if value == "on" else "allowlist" if value == "allowlist" else "off"
            self.update(SetSandboxParams(session_id=session_id, network=network))
        else:
            self.update(SetSandboxParams(session_id=session_id, fetch_private=value == "private"))
        return None

    def show_workspace_at(self, session_id: str, workdir: Path | None) -> None:
        """Show the session's workspace at `workdir` from the next tool call on (None: at its own path)."""
        self._settings[session_id] = replace(self.settings(session_id), workdir=workdir)

    def forget(self, session_id: str) -> None:
        """Drop a removed session's settings."""
        self._settings.pop(session_id, None)

    def exec_needs_confirm(self, session_id: str) -> bool:
        """Whether an exec in this session must be confirmed because it would run unsandboxed."""
        settings = self.settings(session_id)
        return settings.mode == "unsandboxed" and settings.ask_unsandboxed

    def policy(self, session_id: str, catalog: Catalog) -> SandboxPolicy:
        """The policy of one exec call: the session's choice, the private paths, every provider key's name."""
        settings = self.settings(session_id)
        allowlist = None
        if settings.network == "allowlist":
            allowlist = NetworkRules(settings.allowed_domains, settings.fetch_private, self._network.hosts, session_id)
        return SandboxPolicy(
            mode=settings.mode,
            network=settings.network == "on",
            hidden=self._private,
            secret_env=key_variables(catalog),
            allowlist=allowlist,
            limits=replace(settings.limits, session=session_id),
            workdir=settings.workdir,
        )

    async def set_method(self, params: SetSandboxParams) -> SandboxResult:
        """session.set_sandbox (the session's existence is checked by the engine)."""
        s = self.update(params)
        return SandboxResult(
            session_id=params.session_id,
            mode=s.mode,
            network=s.network,
            ask_unsandboxed=s.ask_unsandboxed,
            fetch_private=s.fetch_private,
            allowed_domains=[str(rule) for rule in s.allowed_domains],
            limits=params_of(s.limits),
        )


def _network_mode(value: NetworkMode | bool) -> NetworkMode:
    """The mode a `network` param asks for; a boolean is an earlier client's off/on."""
    if value is True:
        return "on"
    if value is False:
        return "off"
    return value


def key_variables(catalog: Catalog) -> frozenset[str]:
    """The environment variable names any provider reads its key from (providers.json's custom ones included)."""
    names = set(BUILTIN_KEY_VARS)
    for provider in catalog.providers:
        source = provider.auth.api_key.source if provider.auth and provider.auth.api_key else None
        if source is not None and source.env:
            names.update((source.env, *KEY_ENV_ALIASES.get(source.env, ())))
    return frozenset(names)
