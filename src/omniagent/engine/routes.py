"""Model routes: the merged catalog (built-ins + providers.json), provider states, prices, and open providers.

What it is: the engine's adapter over `providers.catalog_file` (the providers.json schema) and
`providers.credentials` (the 0600 key file). It answers "which model does this selector mean, can it run now,
and what does it cost", and hands the run loop a `Provider` with its key in a header.
What it is not: an HTTP client (that is `providers/*`) or a wire (that is `accounts.py`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from omniagent.engine.errors import EngineError
from omniagent.engine.providers import neutral as n
from omniagent.engine.providers.anthropic import AnthropicProvider
from omniagent.engine.providers.catalog_file import (
    CatalogError,
    CostBandEntry,
    ModelEntry,
    ProviderEntry,
    ProvidersFile,
    load_providers_file,
)
from omniagent.engine.providers.credentials import CredentialStore
from omniagent.engine.providers.neutral import RunErrorCode
from omniagent.engine.providers.openai_chat import OpenAIChatProvider
from omniagent.engine.providers.openai_responses import OpenAIResponsesProvider
from omniagent.engine.providers.transport import new_client
from omniagent.protocols.yuke.catalog import ModelCost, ModelInfo, ProviderInfo, ProviderState
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.messages import TokenUsage

Protocol = Literal["anthropic_messages", "openai_chat", "openai_responses"]
DEFAULT_MAX_OUTPUT = 8192  # tokens asked for when the catalog gives no limit

# Built-in providers: usable with nothing but the usual environment variable; providers.json entries override them.
BUILTINS = ProvidersFile.model_validate(
    {
        "providers": [
            {
                "id": "anthropic",
                "name": "Anthropic",
                "base_url": "https://api.anthropic.com/v1",
                "endpoints": [{"protocol": "anthropic_messages", "key_header": "x_api_key"}],
                "auth": {"api_key": {"source": {"env": "ANTHROPIC_API_KEY"}}},
                "models": [
                    {
                        "id": "claude-sonnet-4-5",
                        "name": "Claude Sonnet 4.5",
                        "limits": {"context_window": 200000, "max_output_tokens": 64000},
                        "cost": [{"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}],
                        "reasoning_levels": [None, "low", "medium", "high"],
                    }
                ],
            },
            {
                "id": "openai",
                "name": "OpenAI",
                "base_url": "https://api.openai.com/v1",
                "endpoints": [{"protocol": "openai_responses"}, {"protocol": "openai_chat"}],
                "auth": {"api_key": {"source": {"env": "OPENAI_API_KEY"}}},
                "models": [
                    {
                        "id": "gpt-5",
                        "name": "GPT-5",
                        "limits": {"context_window": 400000, "max_output_tokens": 128000},
                        "cost": [{"input": 1.25, "output": 10.0, "cache_read": 0.125}],
                        "reasoning_levels": ["minimal", "low", "medium", "high"],
                    }
                ],
            },
        ]
    }
)


class RouteError(Exception):
    """A run cannot call its model; `code` is the RunErrorCode for run.done."""

    def __init__(self, code: RunErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class ModelRoute:
    """One selectable model and how to reach it."""

    selector: str
    provider_id: str
    protocol: Protocol
    upstream_id: str
    info: ModelInfo
    bands: tuple[CostBandEntry, ...] = ()
    max_output_tokens: int = DEFAULT_MAX_OUTPUT

    def cost_of(self, tokens: TokenUsage) -> float | None:
        """USD for one message; None when a needed price is unknown (absent is unknown, never zero)."""
        band = None
        for b in self.bands:
            if tokens.input >= b.min_prompt_tokens:
                band = b
        if band is None or band.input is None or band.output is None:
            return None
        fresh = tokens.input - tokens.cache_read - tokens.cache_write
        total = fresh * band.input + tokens.output * band.output
        for count, price in ((tokens.cache_read, band.cache_read), (tokens.cache_write, band.cache_write)):
            if count:
                if price is None:
                    return None
                total += count * price
        return total / 1_000_000


@dataclass(slots=True)
class Routes:
    """The merged catalog and the credential store of one engine."""

    config_dir: Path
    credentials: CredentialStore
    providers: dict[str, ProviderEntry] = field(default_factory=dict)
    models: dict[str, ModelRoute] = field(default_factory=dict)
    catalog_rev: str = ""
    _open: dict[str, n.Provider] = field(default_factory=dict)

    @classmethod
    def load(cls, data_dir: Path, config_dir: Path) -> Routes:
        """Build from built-ins and `<config_dir>/providers.json`; a bad file is reported and ignored."""
        routes = cls(config_dir, CredentialStore(data_dir))
        try:
            routes._rebuild(load_providers_file(config_dir))
        except CatalogError as exc:
            print(f"omniagent rpc: {exc}", file=sys.stderr)
            routes._rebuild(ProvidersFile())
        return routes

    def reload(self) -> bool:
        """Re-read providers.json; returns whether the revision moved.

        Raises:
            CatalogError: the file is invalid (the current catalog stays).
        """
        before = self.catalog_rev
        self._rebuild(load_providers_file(self.config_dir))
        return before != self.catalog_rev

    def refresh_states(self) -> bool:
        """Recompute provider states after a credential change; returns whether the revision moved."""
        before = self.catalog_rev
        self._rebuild(ProvidersFile(providers=list(self.providers.values())), merge=False)
        return before != self.catalog_rev

    def _rebuild(self, file: ProvidersFile, *, merge: bool = True) -> None:
        merged: dict[str, ProviderEntry] = {p.id: p for p in BUILTINS.providers} if merge else {}
        for entry in file.providers:
            base = merged.get(entry.id)
            merged[entry.id] = base.model_copy(update=entry.model_dump(exclude_unset=True)) if base else entry
        self.providers = merged
        self.models = {r.selector: r for p in merged.values() for r in self._routes_of(p)}
        for provider in self._open.values():
            _ = provider  # pooled clients close in aclose(); a rebuilt route opens a fresh provider
        self._open = {}
        canonical = json.dumps(
            [self.provider_infos_dump(), [m.info.dump() for m in self.models.values()]],
            sort_keys=True,
            separators=(",", ":"),
        )
        self.catalog_rev = hashlib.sha512(canonical.encode()).hexdigest()

    def _routes_of(self, p: ProviderEntry) -> list[ModelRoute]:
        out = []
        default_protocol = p.endpoints[0].protocol if p.endpoints else None
        for m in p.models or []:
            protocol = m.protocol or default_protocol
            if protocol is None:
                continue
            out.append(_route(p, m, protocol))
        return out

    # Queries --------------------------------------------------------------------------------------------------------

    def state(self, provider_id: str) -> ProviderState:
        p = self.providers[provider_id]
        if not p.base_url or not p.endpoints:
            return "needs_route"
        return "ready" if self._key(p) is not None else "needs_credential"

    def provider_infos(self) -> list[ProviderInfo]:
        return [ProviderInfo(id=p.id, name=p.name or p.id, state=self.state(p.id)) for p in self.providers.values()]

    def provider_infos_dump(self) -> list[dict[str, object]]:
        return [i.dump() for i in self.provider_infos()]

    def model_infos(self) -> list[ModelInfo]:
        return [r.info for r in self.models.values()]

    def has_stored_key(self, provider_id: str) -> bool:
        return provider_id in self.credentials.providers()

    def _key(self, p: ProviderEntry) -> str | None:
        stored = self.credentials.api_key(p.id)
        if stored is not None:
            return stored.reveal()
        if p.api_key:
            return p.api_key
        source = p.auth.api_key.source if p.auth and p.auth.api_key else None
        if source is not None:
            if source.literal:
                return source.literal
            if source.env:
                return os.environ.get(source.env) or None
        return None

    def choose(self, model: str | None, reasoning: str | None) -> tuple[str, str]:
        """The selector and reasoning a new config uses; raises unsupported_model / unsupported_reasoning."""
        if model is None:
            ready = [r for r in self.models.values() if self.state(r.provider_id) == "ready"]
            if not ready:
                raise EngineError(ErrorCode.UNSUPPORTED_MODEL, "no model is ready: configure a provider first")
            model = ready[0].selector
        route = self.models.get(model)
        if route is None:
            raise EngineError(ErrorCode.UNSUPPORTED_MODEL, "unknown model")
        if reasoning is None:
            return model, route.info.default_reasoning
        if reasoning not in route.info.reasoning_levels and reasoning != route.info.default_reasoning:
            raise EngineError(ErrorCode.UNSUPPORTED_REASONING, "the model does not support this reasoning level")
        return model, reasoning

    def open_provider(self, selector: str, reasoning: str) -> tuple[ModelRoute, n.Provider]:
        """The route and a (pooled) provider client for a run. Raises RouteError."""
        route = self.models.get(selector)
        if route is None:
            raise RouteError(RunErrorCode.UNKNOWN_MODEL, "the session's model is not in the catalog")
        p = self.providers[route.provider_id]
        key = self._key(p)
        if not p.base_url or key is None:
            raise RouteError(RunErrorCode.AUTH, "the provider has no credential or no route")
        cache_key = f"{p.id}:{route.protocol}"
        provider = self._open.get(cache_key)
        if provider is None:
            provider = self._open[cache_key] = _provider(p, route, key)
        return route, provider

    async def aclose(self) -> None:
        for provider in self._open.values():
            await provider.aclose()
        self._open = {}


def _route(p: ProviderEntry, m: ModelEntry, protocol: Protocol) -> ModelRoute:
    levels = [level or "" for level in m.reasoning_levels]
    bands = tuple(sorted(m.cost, key=lambda b: b.min_prompt_tokens))
    first = bands[0] if bands else None
    info = ModelInfo(
        id=m.id,
        provider=p.id,
        selector=f"{p.id}/{m.id}",
        name=m.name or m.id,
        context_window=m.limits.context_window,
        max_output_tokens=m.limits.max_output_tokens,
        reasoning_levels=levels,
        default_reasoning=levels[0] if levels else "",
        supports_vision=m.flags.supports_vision,
        supports_tools=m.flags.supports_tools,
        cost=ModelCost(
            input=first.input, output=first.output, cache_read=first.cache_read, cache_write=first.cache_write
        )
        if first
        else ModelCost(),
    )
    return ModelRoute(
        selector=info.selector,
        provider_id=p.id,
        protocol=protocol,
        upstream_id=m.upstream_id or m.id,
        info=info,
        bands=bands,
        max_output_tokens=m.limits.max_output_tokens or DEFAULT_MAX_OUTPUT,
    )


def _provider(p: ProviderEntry, route: ModelRoute, key: str) -> n.Provider:
    assert p.base_url is not None
    endpoint = next((e for e in p.endpoints or [] if e.protocol == route.protocol), None)
    headers = {h.name: h.value for h in p.headers or []}
    client = new_client()
    if route.protocol == "anthropic_messages":
        key_header = endpoint.key_header if endpoint else "x_api_key"
        return AnthropicProvider(p.base_url, key, key_header=key_header, extra_headers=headers, client=client)
    if route.protocol == "openai_chat":
        return OpenAIChatProvider(p.base_url, key, extra_headers=headers, client=client)
    return OpenAIResponsesProvider(p.base_url, key, extra_headers=headers, client=client)
