"""What an engine session looks like to the runtime: capabilities, config options, auth, and whether the engine is
ready to run at all. Read from the engine's catalog and permission state; no I/O beyond the catalog's own reads
(providers.json, the 0600 key file).

- `model`: every model of a ready provider (plus the session's own, even if its provider is not ready now).
- `reasoning` (category `thought_level`): the levels of the session's model, when it has any.
- `mode`: `ask` (confirm exec, write and edit) or `auto` (never ask): the engine's own permission mode.
- `sandbox` (`sandboxed` / `unsandboxed`), `network` (`off` / `allowlist` / `on`) and `fetch` (`public` /
  `private`): the engine's sandbox settings, worded as `engine/sandboxes.py` `SANDBOX_OPTIONS` says.
- Slash commands: the session's skills (`/name arguments` runs one; the adapter sends it as a skill input).
- Auth: `Authenticated(ApiKey)` when the session's provider has a key; the login methods are the `EnvVar`s of the
  providers that need a key and have none (names only: a key is never read into a message).
"""

from __future__ import annotations

from omniagent._version import __version__
from omniagent.engine.api import (
    SANDBOX_OPTION_IDS,
    SANDBOX_OPTIONS,
    Catalog,
    CatalogError,
    CredentialError,
    CredentialStore,
    EngineApi,
    PermissionMode,
    SkillCatalog,
    option_values,
)
from omniagent.protocols.sidecar.agents import (
    AgentDetails,
    ApiKey,
    Authenticated,
    Capabilities,
    Capability,
    ConfigChoice,
    ConfigOption,
    ConfigValue,
    EnvVarLogin,
    LoginMethod,
    McpTransport,
    SelectKind,
    SessionConfiguration,
    SlashCommand,
    Unauthenticated,
    ordered_features,
)
from omniagent.protocols.yuke.catalog import CatalogListResultFull
from omniagent.protocols.yuke.sessions import Session
from omniagent.runtime import driver as d

MODEL_OPTION, REASONING_OPTION, MODE_OPTION = "model", "reasoning", "mode"
# Options the engine keeps in memory per session (not in session.create): applied after a session is made.
IN_MEMORY_OPTIONS = frozenset({MODE_OPTION, *SANDBOX_OPTION_IDS})
MODES: tuple[tuple[PermissionMode, str], ...] = (("ask", "Ask before commands and edits"), ("auto", "Never ask"))
# The key variables named when the catalog names none (every provider ready, or none with an env source).
FALLBACK_KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY")
# The MCP servers the engine's client speaks (engine/mcp): a caller's SSE server is refused.
MCP_TRANSPORTS = (McpTransport.STDIO, McpTransport.HTTP)
# Features every engine session has: durable sessions resume by id, guarded tools ask, the model may ask the user
# (`ask_user`) and hand tasks to child sessions (`spawn_agent`), the plan tool's plan is shown, usage comes with
# each reply. Not Images: the engine refuses media input (no blob store yet), whatever the model could read.
_ALWAYS = frozenset(
    {
        Capability.RESUME,
        Capability.PERMISSIONS,
        Capability.QUESTIONS,
        Capability.PLAN,
        Capability.SUBAGENTS,
        Capability.CONTEXT_USAGE,
    }
)


def session_info(engine: EngineApi, session: Session, skills: SkillCatalog) -> d.DriverInfo:
    """The `DriverInfo` of one engine session as it is now (its slash commands are `skills`)."""
    catalog = engine.catalog
    features = set(_ALWAYS)
    if engine.serves("session.fork"):
        features.add(Capability.FORK)
    if engine.serves("session.compact"):
        features.add(Capability.COMPACT)
    if engine.serves("session.rewind"):
        features |= {Capability.ROLLBACK, Capability.ROLLBACK_FILES}
    options = config_options(engine, session)
    commands = [
        SlashCommand(name=s.name, description=s.description, input_hint=s.argument_hint or None)
        for s in skills.commands()
    ]
    details = AgentDetails(
        version=__version__,
        auth=_auth(catalog, session.model),
        capabilities=Capabilities(features=ordered_features(features), mcp_transports=list(MCP_TRANSPORTS)),
        config_options=options,
        commands=commands,
    )
    current: dict[str, ConfigValue] = {o.id: o.current for o in options if o.current is not None}
    return d.DriverInfo(
        details=details,
        configuration=SessionConfiguration(options=current),
        resume_token=session.id,
        title=session.title or None,
        deterministic_turn_end=True,  # every run ends with run.done
        deterministic_agent_turn_end=True,  # the engine starts no run on its own
    )


def config_options(engine: EngineApi, session: Session) -> list[ConfigOption]:
    """model, reasoning (when the model has levels), mode, sandbox, network and fetch; all live."""
    listing = engine.catalog.listing(None)
    assert isinstance(listing, CatalogListResultFull)
    ready = {p.id for p in listing.providers if p.state == "ready"}
    models = [m for m in listing.models if m.provider in ready or m.selector == session.model]
    choices = [ConfigChoice(value=m.selector, label=m.name) for m in models]
    if session.model not in {m.selector for m in models}:
        choices.append(ConfigChoice(value=session.model, label=session.model))
    options = [_select(MODEL_OPTION, "Model", "model", choices, session.model)]
    current = next((m for m in listing.models if m.selector == session.model), None)
    levels = list(current.reasoning_levels) if current is not None else []
    if levels:
        if session.reasoning and session.reasoning not in levels:
            levels.append(session.reasoning)
        reasoning = [ConfigChoice(value=level, label=level) for level in levels]
        options.append(_select(REASONING_OPTION, "Reasoning effort", "thought_level", reasoning, session.reasoning))
    modes = [ConfigChoice(value=mode, label=label) for mode, label in MODES]
    options.append(_select(MODE_OPTION, "Mode", "mode", modes, engine.permission_mode(session.id)))
    now = option_values(engine.sandbox_settings(session.id))
    for option in SANDBOX_OPTIONS:
        choices = [ConfigChoice(value=value, label=label, description=text) for value, label, text in option.values]
        options.append(_select(option.id, option.name, None, choices, now[option.id]))
    return options


def _select(option_id: str, name: str, category: str | None, choices: list[ConfigChoice], current: str) -> ConfigOption:
    return ConfigOption(
        id=option_id, name=name, category=category, kind=SelectKind(choices=choices), current=current or None, live=True
    )


# --- auth and readiness ------------------------------------------------------------------------------------


def login_methods(catalog: Catalog, refused: str | None = None) -> list[LoginMethod]:
    """One `EnvVar` per provider that needs a key and has none (first the `refused` provider's, whose key the
    provider turned down); the usual two when the catalog names none."""
    names: list[str] = []
    for provider in catalog.providers:
        source = provider.auth.api_key.source if provider.auth and provider.auth.api_key else None
        if source is None or not source.env:
            continue
        if provider.id == refused:
            names.insert(0, source.env)
        elif _state(catalog, provider.id) == "needs_credential":
            names.append(source.env)
    return [EnvVarLogin(name=name) for name in dict.fromkeys(names or FALLBACK_KEY_VARS)]


def refused_credential(catalog: Catalog, provider_id: str) -> str:
    """How to name, for a person, the key a provider just refused: its variable, or where it is kept."""
    origin = _key_origin(catalog, provider_id)
    if origin in _KEY_PLACES:
        return _KEY_PLACES[origin].format(provider_id)
    return origin or f"the {provider_id} key"


def has_ready_model(catalog: Catalog) -> bool:
    """Whether some provider with at least one model can run now (what `session.create` needs for its default)."""
    return _default_model(catalog) is not None


def _default_model(catalog: Catalog) -> str | None:
    """The model `session.create` gives a new session: the first model of the first ready provider."""
    ready = next((p for p in catalog.providers if p.models and _state(catalog, p.id) == "ready"), None)
    return f"{ready.id}/{ready.models[0].id}" if ready is not None and ready.models else None


def engine_choice(model: str | None = None) -> tuple[str, str] | None:
    """The model a new engine session would run (`model`, else the default `session.create` picks: the first
    model of the first ready provider) and what lets its provider run it, in words for a person (e.g.
    "ANTHROPIC_API_KEY is set": where the key is, never the key); None when it cannot run now (no ready provider,
    an unknown model, a provider without its key, base URL or endpoint). Read without opening the engine's store,
    from the same data and config dirs and environment an engine of this process would use."""
    catalog = _catalog()
    if model is None:
        model = _default_model(catalog)
        if model is None:
            return None
    found = catalog.model(model)
    if found is None or _state(catalog, found[0].id) != "ready":
        return None
    return model, _credential(catalog, found[0].id)


def _catalog() -> Catalog:
    config = EngineApi.config(None)
    credentials = CredentialStore(config.data_dir)
    try:
        return Catalog(config.config_dir, credentials)
    except CatalogError:
        return Catalog(None, credentials)  # what the engine does with a bad providers.json


# Where a key other than an environment variable is kept, in words (`{}`: the provider).
_KEY_PLACES = {"stored": "the {} key stored with omniagent", "providers.json": "the {} key in providers.json"}


def _key_origin(catalog: Catalog, provider_id: str) -> str | None:
    """Where the provider's key comes from: `stored`, `providers.json`, its variable's name, or None (no key, or a
    key file gone unreadable)."""
    provider = catalog.provider(provider_id)
    try:
        return catalog.api_key_origin(provider) if provider is not None else None
    except CredentialError:
        return None


def _credential(catalog: Catalog, provider_id: str) -> str:
    """What makes a ready provider ready, for a person: where its key is, its login, or that it needs none."""
    origin = _key_origin(catalog, provider_id)
    if origin in _KEY_PLACES:
        return _KEY_PLACES[origin].format(provider_id)
    if origin is not None:
        return f"{origin} is set"
    if catalog.credentials.grant(provider_id) is not None:
        return f"signed in to {provider_id}"
    return f"{provider_id} needs no key"


def _auth(catalog: Catalog, selector: str) -> Authenticated | Unauthenticated:
    provider_id = selector.partition("/")[0]
    if _state(catalog, provider_id) == "ready":
        return Authenticated(kind=ApiKey())
    return Unauthenticated(login=login_methods(catalog))


def _state(catalog: Catalog, provider_id: str) -> str:
    provider = catalog.provider(provider_id)
    if provider is None:
        return "needs_route"
    try:
        return catalog.state(provider)
    except CredentialError:  # an unreadable key file counts as no key
        return "needs_credential"
