"""The model catalog: built-ins merged with providers.json and env base URLs; states, listing, revision, prices.

`Catalog` holds the current merged snapshot. `listing()` answers `catalog.list` (with `since_rev`), `reload()`
answers `catalog.reload` (a failed reload keeps the current catalog), `auth_list()` answers `auth.list`. The
revision is a SHA-512 of the canonical listing, states included, so setting a key changes it too.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec

from omniagent.engine.providers.auth.credentials import CredentialStore, Secret, resolve_api_key
from omniagent.engine.providers.catalog.builtins import BUILTIN_TABLE, env_base_urls
from omniagent.engine.providers.catalog.file import (
    CatalogError,
    FileProvider,
    KeySource,
    ModelEntry,
    ProviderEntry,
    load_providers_file,
    parse_providers,
)
from omniagent.engine.providers.catalog.missing_keys import MissingKey, key_variable

# The yuke models (and hashlib) are imported where a listing is built: `omniagent acp` answers `initialize` from the
# providers and their states alone, before any wire model, logging or asyncio is imported (docs/performance.md).
if TYPE_CHECKING:
    import logging

    from omniagent.engine.providers.neutral import Usage
    from omniagent.protocols.yuke.auth import AuthProvider
    from omniagent.protocols.yuke.catalog import (
        CatalogListResultFull,
        CatalogListResultUnchanged,
        ModelInfo,
        ProviderState,
    )

NO_REASONING = "off"  # the catalog name of the `null` reasoning level (reasoning disabled)
DEFAULT_REASONING = "medium"  # preferred default level when a model offers it
TOKENS_PER_PRICE_UNIT = 1_000_000  # catalog prices are USD per million tokens
# The built-ins, validated by providers.json's own schema.
BUILTIN_PROVIDERS = parse_providers(BUILTIN_TABLE)


class Catalog:
    """Providers and models the engine can call, with their states.

    Raises:
        CatalogError: (constructor, `reload`) providers.json is invalid; see `catalog.file.load_providers_file`.
    """

    def __init__(
        self, config_dir: Path | None, credentials: CredentialStore, env: Mapping[str, str] | None = None
    ) -> None:
        self._config_dir = config_dir
        self._credentials = credentials
        self._env = os.environ if env is None else env
        self._providers = self._load()

    def __repr__(self) -> str:
        return f"Catalog(providers={[p.id for p in self._providers]!r})"

    @property
    def providers(self) -> tuple[ProviderEntry, ...]:
        """The merged provider entries, built-ins first, in file order after them."""
        return self._providers

    def provider(self, provider_id: str) -> ProviderEntry | None:
        """The entry of `provider_id`, if known."""
        return next((p for p in self._providers if p.id == provider_id), None)

    def model(self, selector: str) -> tuple[ProviderEntry, ModelEntry] | None:
        """The provider and model of a `provider/model` selector (the model part may contain `/`)."""
        provider_id, _, model_id = selector.partition("/")
        provider = self.provider(provider_id)
        if provider is None or not model_id:
            return None
        model = next((m for m in provider.models or [] if m.id == model_id), None)
        if model is None and provider.models == [] and provider.auth is None and provider.api_key is None:
            # A keyless provider that lists no models is a local server (Ollama, llama.cpp): only the user knows
            # what it serves, so an explicit selector is taken as it is, with default limits.
            model = ModelEntry(id=model_id)
        return (provider, model) if model is not None else None

    @property
    def credentials(self) -> CredentialStore:
        """The stored keys and grants the catalog reads."""
        return self._credentials

    def api_key(self, provider: ProviderEntry) -> Secret | None:
        """The credential that would be sent to `provider`, if any."""
        source = provider.auth.api_key.source if provider.auth and provider.auth.api_key else None
        literal_text = provider.api_key or (source.literal if source else None)
        literal = Secret(literal_text) if literal_text else None
        return resolve_api_key(provider.id, self._credentials, self._env, self._key_variable(source), literal)

    def api_key_origin(self, provider: ProviderEntry) -> str | None:
        """Where the key `api_key` returns comes from, for a person (never the key): `"stored"` (saved with
        auth.set), `"providers.json"`, or the environment variable's name; None without a key. Raises:
        `CredentialError` as `api_key` does."""
        source = provider.auth.api_key.source if provider.auth and provider.auth.api_key else None
        if self._credentials.api_key(provider.id) is not None:
            return "stored"
        if provider.api_key or (source and source.literal):
            return "providers.json"
        variable = self._key_variable(source)
        if variable and self._env.get(variable):
            return variable
        return None

    def _key_variable(self, source: KeySource | None) -> str | None:
        """The variable a key is read from: the source's own, else the first of its aliases that is set."""
        return key_variable(source.env if source else None, self._env)

    def state(self, provider: ProviderEntry) -> ProviderState:
        """ready, needs_route (no base URL or endpoint), needs_credential (a key or login is required and none is
        set) or expired (the login's token lapsed and cannot be renewed)."""
        if not provider.base_url or not provider.endpoints:
            return "needs_route"
        if _logs_in(provider) and self.api_key(provider) is None:
            grant = self._credentials.grant(provider.id)
            if grant is None:
                return "needs_credential"
            return "expired" if grant.lapsed(int(time.time() * 1000)) else "ready"
        needs_key = provider.api_key is not None or (provider.auth is not None and provider.auth.api_key is not None)
        if needs_key and self.api_key(provider) is None:
            return "needs_credential"
        return "ready"

    def missing_keys(self) -> list[MissingKey]:
        """The providers that take a key from a variable and lack it (state `needs_credential`), in order."""
        out = []
        for provider in self._providers:
            source = provider.auth.api_key.source if provider.auth and provider.auth.api_key else None
            if source is None or not source.env or self.state(provider) != "needs_credential":
                continue
            out.append(MissingKey(provider.id, provider.name or provider.id, source.env))
        return out

    def listing(self, since_rev: str | None = None) -> CatalogListResultFull | CatalogListResultUnchanged:
        """The `catalog.list` result: `unchanged` when `since_rev` is current, else the full listing."""
        from omniagent.protocols.yuke.catalog import CatalogListResultUnchanged

        full = self._listing()
        if since_rev is not None and since_rev == full.catalog_rev:
            return CatalogListResultUnchanged(catalog_rev=full.catalog_rev)
        return full

    @property
    def rev(self) -> str:
        """The current catalog revision (128 lowercase hex)."""
        return self._listing().catalog_rev

    def reload(self) -> bool:
        """Re-read providers.json; returns whether the revision changed. On error the current catalog stays."""
        before = self.rev
        self._providers = self._load()
        return self.rev != before

    def auth_list(self) -> list[AuthProvider]:
        """The `auth.list` result: which providers have a key or a login (never the key itself), and which offer a
        device login."""
        return [self.auth_of(p) for p in self._providers]

    def auth_of(self, provider: ProviderEntry) -> AuthProvider:
        """One provider's public credential state."""
        from omniagent.protocols.yuke.auth import AuthProvider

        kind: Literal["api_key", "oauth"] | None = None
        if self.api_key(provider) is not None:
            kind = "api_key"
        elif _logs_in(provider) and self._credentials.grant(provider.id) is not None:
            kind = "oauth"
        return AuthProvider(provider_id=provider.id, credential_kind=kind, can_login=_logs_in(provider))

    def _load(self) -> tuple[ProviderEntry, ...]:
        file = load_providers_file(self._config_dir)
        env_urls = env_base_urls(self._env)
        merged = {
            p.id: msgspec.structs.replace(p, base_url=env_urls.get(p.id, p.base_url))
            for p in BUILTIN_PROVIDERS.providers
        }
        for given in file:
            entry = given.entry
            merged[entry.id] = _merge(merged[entry.id], given) if entry.id in merged else entry
        return tuple(merged.values())

    def _listing(self) -> CatalogListResultFull:
        import hashlib

        from omniagent.protocols.yuke.catalog import CatalogListResultFull, ProviderInfo

        providers = [ProviderInfo(id=p.id, name=p.name or p.id, state=self.state(p)) for p in self._providers]
        models = [_model_info(p, m) for p in self._providers for m in p.models or []]
        canonical = json.dumps(
            [[p.dump() for p in providers], [m.dump() for m in models]],
            sort_keys=True,
            separators=(",", ":"),
        )
        rev = hashlib.sha512(canonical.encode()).hexdigest()
        return CatalogListResultFull(catalog_rev=rev, providers=providers, models=models)


def _logs_in(provider: ProviderEntry) -> bool:
    return provider.auth is not None and provider.auth.oauth is not None


# Decimal places a cost keeps: below a billionth of a dollar is float noise (0.00042300000000000004), not money.
COST_DIGITS = 9


def cost_usd(model: ModelEntry, usage: Usage) -> float | None:
    """USD cost of one call, or None when a needed price is unknown (then omit `cost`).

    The last cost band whose `min_prompt_tokens` the prompt reaches prices the whole request.
    """
    bands = [band for band in model.cost if usage.input_tokens >= band.min_prompt_tokens]
    if not bands:
        return None
    band = bands[-1]
    fresh = usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens
    parts = [(fresh, band.input), (usage.output_tokens, band.output)]
    parts += [(usage.cache_read_tokens, band.cache_read), (usage.cache_write_tokens, band.cache_write)]
    total = 0.0
    for tokens, price in parts:
        if tokens == 0:
            continue
        if price is None:
            return None
        total += tokens * price
    return round(total / TOKENS_PER_PRICE_UNIT, COST_DIGITS)


def reasoning_levels(model: ModelEntry) -> list[str]:
    """The model's reasoning levels as wire strings (`null` → `off`)."""
    return [level or NO_REASONING for level in model.reasoning_levels]


def default_reasoning(model: ModelEntry) -> str:
    """`medium` when offered, else the first level, else `""` (the model does not reason)."""
    levels = reasoning_levels(model)
    if DEFAULT_REASONING in levels:
        return DEFAULT_REASONING
    return levels[0] if levels else ""


def _model_info(provider: ProviderEntry, model: ModelEntry) -> ModelInfo:
    from omniagent.protocols.yuke.catalog import ModelCost, ModelInfo

    first = next((band for band in model.cost if band.min_prompt_tokens == 0), None)
    cost = ModelCost()
    if first is not None:
        cost = ModelCost(
            input=first.input, output=first.output, cache_read=first.cache_read, cache_write=first.cache_write
        )
    return ModelInfo(
        id=model.id,
        provider=provider.id,
        selector=f"{provider.id}/{model.id}",
        name=model.name or model.id,
        context_window=model.limits.context_window,
        max_output_tokens=model.limits.max_output_tokens,
        reasoning_levels=reasoning_levels(model),
        default_reasoning=default_reasoning(model),
        supports_vision=model.flags.supports_vision,
        supports_tools=model.flags.supports_tools,
        cost=cost,
    )


def _merge(builtin: ProviderEntry, override: FileProvider) -> ProviderEntry:
    """Fields set in the file replace the built-in's; models merge by id (a file model replaces a built-in one)."""
    entry = override.entry
    update = {name: getattr(entry, name) for name in override.given if name != "models"}
    if entry.models is not None:
        models = {m.id: m for m in builtin.models or []}
        models.update({m.id: m for m in entry.models})
        update["models"] = list(models.values())
    return msgspec.structs.replace(builtin, **update)


def load_catalog(config_dir: Path, credentials: CredentialStore, log: logging.Logger | None) -> Catalog:
    """Built-ins + `<config_dir>/providers.json`; a bad file is reported to `log` (None: not reported, the caller's
    engine will) and the built-ins serve."""
    try:
        return Catalog(config_dir, credentials)
    except CatalogError as exc:
        if log is not None:
            log.warning("%s", exc)
        return Catalog(None, credentials)
