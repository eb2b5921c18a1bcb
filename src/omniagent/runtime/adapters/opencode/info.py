"""What an opencode session looks like to the runtime: capabilities, options, commands and auth, read once from the
server at open (`/config`, `/config/providers`, `/agent`, `/command`) and kept per session.

The providers opencode can use now are those `/config/providers` lists (configured, or logged in, or free); none at
all means logged out. `/provider` would say the same as `connected`, but it loads opencode's whole model catalogue
first (about 10 s on a busy machine, measured with 1.18.33), so it is not asked.

- `model` (category `model`): `provider/id` for every model of every provider opencode offers; sent with each prompt.
- `mode` (category `mode`): the primary agents (`build`, `plan`, …); sent with each prompt as `agent`.
- `effort` (category `thought_level`): the current model's variants, when it has any; sent as `variant`.

Only names and ids are read: `/config` and `/config/providers` also carry provider keys, which never leave here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from omniagent.protocols.sidecar.agents import (
    AgentDetails,
    ApiKey,
    Authenticated,
    Capabilities,
    Capability,
    ConfigChoice,
    ConfigOption,
    ConfigValue,
    LoginMethod,
    SelectKind,
    SessionConfiguration,
    SlashCommand,
    Unauthenticated,
    ordered_features,
)
from omniagent.runtime import driver as d

MODEL_OPTION, MODE_OPTION, EFFORT_OPTION = "model", "mode", "effort"
# opencode's placeholder titles ("New session - 2026-…") are not worth showing.
_PLACEHOLDER_TITLES = ("New session - ", "Child session - ")
DEFAULT_AGENT = "build"
# Observed with opencode 1.18.33 over its HTTP face: no Steer (its loop queues a prompt sent while a
# turn runs), no MCP servers from the caller (opencode reads its own config), no Subagents (child sessions are not
# followed yet), no plan usage.
FEATURES = frozenset(
    {
        Capability.IMAGES,
        Capability.RESUME,
        Capability.PERMISSIONS,
        Capability.QUESTIONS,
        Capability.ROLLBACK,
        Capability.FORK,
        Capability.COMPACT,
        Capability.SLASH_COMMANDS,
        Capability.PLAN,
        Capability.CONTEXT_USAGE,
    }
)


@dataclass(frozen=True, slots=True)
class ModelFacts:
    selector: str
    """`provider/id`."""
    name: str
    context_window: int | None
    variants: tuple[str, ...]


@dataclass(slots=True)
class ServerFacts:
    """What the server said at open; the session's live choices are in `settings`."""

    version: str | None
    models: dict[str, ModelFacts] = field(default_factory=dict)
    agents: list[tuple[str, str]] = field(default_factory=list)
    commands: list[SlashCommand] = field(default_factory=list)
    connected: frozenset[str] = frozenset()
    default_model: str | None = None
    default_agent: str = DEFAULT_AGENT


@dataclass(slots=True)
class SessionSettings:
    """The session's current model, agent and variant, and what the server told us about the session."""

    model: str | None
    agent: str
    variant: str | None = None
    session_id: str = ""
    title: str | None = None

    def model_ref(self) -> dict[str, str] | None:
        """The prompt body's `model`: `{providerID, modelID}`."""
        if self.model is None or "/" not in self.model:
            return None
        provider, _, model = self.model.partition("/")
        return {"providerID": provider, "modelID": model}


def server_facts(version: str | None, config: Any, providers: Any, agents: Any, commands: Any) -> ServerFacts:
    """Build the facts from the raw answers of `/config`, `/config/providers`, `/agent` and `/command`."""
    facts = ServerFacts(version=version)
    connected: set[str] = set()
    for provider in _items(_get(providers, "providers")):
        provider_id = str(provider.get("id", ""))
        connected.add(provider_id)
        for model_id, model in _get(provider, "models", {}).items():
            if not isinstance(model, Mapping):
                continue
            selector = f"{provider_id}/{model_id}"
            limit = _get(_get(model, "limit", {}), "context")
            variants = tuple(str(v) for v in _get(model, "variants", {}) or {})
            window = limit if isinstance(limit, int) and limit > 0 else None
            facts.models[selector] = ModelFacts(selector, str(model.get("name") or model_id), window, variants)
    configured = _get(config, "model")
    defaults = _get(providers, "default", {})
    if isinstance(configured, str) and configured:
        facts.default_model = configured
    elif isinstance(defaults, Mapping) and defaults:
        provider_id, model_id = next(iter(defaults.items()))
        facts.default_model = f"{provider_id}/{model_id}"
    default_agent = _get(config, "default_agent")
    if isinstance(default_agent, str) and default_agent:
        facts.default_agent = default_agent
    for agent in _items(agents):
        if agent.get("mode") in ("primary", "all") and not agent.get("hidden"):
            facts.agents.append((str(agent["name"]), str(agent.get("description") or agent["name"])))
    for command in _items(commands):
        hints = [str(h) for h in command.get("hints") or []]
        facts.commands.append(
            SlashCommand(
                name=str(command.get("name", "")),
                description=str(command.get("description") or ""),
                input_hint=" ".join(hints) or None,
            )
        )
    facts.connected = frozenset(connected)
    return facts


def driver_info(facts: ServerFacts, settings: SessionSettings, logins: list[LoginMethod]) -> d.DriverInfo:
    """The session as the runtime shows it now."""
    options = config_options(facts, settings)
    current: dict[str, ConfigValue] = {o.id: o.current for o in options if o.current is not None}
    provider = (settings.model or "").partition("/")[0]
    auth = Authenticated(kind=ApiKey()) if provider in facts.connected else Unauthenticated(login=logins)
    details = AgentDetails(
        version=facts.version,
        auth=auth,
        capabilities=Capabilities(features=ordered_features(set(FEATURES))),
        config_options=options,
        commands=list(facts.commands),
    )
    return d.DriverInfo(
        details=details,
        configuration=SessionConfiguration(options=current),
        resume_token=settings.session_id or None,
        title=settings.title,
        deterministic_turn_end=True,  # `session.idle` ends every turn
        deterministic_agent_turn_end=True,
    )


def config_options(facts: ServerFacts, settings: SessionSettings) -> list[ConfigOption]:
    models = [ConfigChoice(value=m.selector, label=m.name) for m in facts.models.values()]
    if settings.model is not None and settings.model not in facts.models:
        models.append(ConfigChoice(value=settings.model, label=settings.model))
    options = [_select(MODEL_OPTION, "Model", "model", models, settings.model)]
    agents = [ConfigChoice(value=name, label=name) for name, _ in facts.agents]
    if settings.agent not in {name for name, _ in facts.agents}:
        agents.append(ConfigChoice(value=settings.agent, label=settings.agent))
    options.append(_select(MODE_OPTION, "Mode", "mode", agents, settings.agent))
    model = facts.models.get(settings.model or "")
    if model is not None and model.variants:
        variants = [ConfigChoice(value=v, label=v) for v in model.variants]
        options.append(_select(EFFORT_OPTION, "Reasoning effort", "thought_level", variants, settings.variant))
    return options


def apply_option(facts: ServerFacts, settings: SessionSettings, option: str, value: ConfigValue) -> None:
    """Take a checked option value into the settings (opencode applies them per prompt, so nothing is sent now)."""
    text = str(value)
    if option == MODEL_OPTION:
        if text != settings.model:
            settings.variant = None  # variants belong to a model
        settings.model = text
    elif option == MODE_OPTION:
        settings.agent = text
    elif option == EFFORT_OPTION:
        settings.variant = text


def real_title(title: object) -> str | None:
    """A session title worth showing, or None for a missing one or opencode's placeholder."""
    if not isinstance(title, str) or not title or title.startswith(_PLACEHOLDER_TITLES):
        return None
    return title


def context_window(facts: ServerFacts, provider_id: str, model_id: str) -> int | None:
    found = facts.models.get(f"{provider_id}/{model_id}")
    return found.context_window if found is not None else None


def _select(option_id: str, name: str, category: str, choices: list[ConfigChoice], current: str | None) -> ConfigOption:
    return ConfigOption(
        id=option_id, name=name, category=category, kind=SelectKind(choices=choices), current=current, live=True
    )


def _get(node: Any, key: str, default: Any = None) -> Any:
    return node.get(key, default) if isinstance(node, Mapping) else default


def _items(node: Any) -> Sequence[Mapping[str, Any]]:
    return [item for item in node if isinstance(item, Mapping)] if isinstance(node, list) else []
