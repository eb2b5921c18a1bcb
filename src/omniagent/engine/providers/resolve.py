"""From a model selector to a ready `Provider`: the catalog row, its protocol, its credential, its client.

This is the only place a key leaves `Secret`: `Secret.reveal()` goes straight into the provider's HTTP header. A
provider signed in with a device login gets a `GrantAuth` instead, which sets a fresh token on each request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import httpx

from omniagent.engine.providers.auth.grants import GrantAuth
from omniagent.engine.providers.catalog.file import ModelEntry, Protocol
from omniagent.engine.providers.catalog.table import NO_REASONING, Catalog
from omniagent.engine.providers.clients.anthropic import AnthropicProvider
from omniagent.engine.providers.clients.gemini import GeminiProvider
from omniagent.engine.providers.clients.openai_chat import OpenAIChatProvider
from omniagent.engine.providers.clients.openai_responses import OpenAIResponsesProvider
from omniagent.engine.providers.neutral import Provider, RunErrorCode
from omniagent.errors import OmniagentError

ResolveFailure = Literal["unknown_model", "needs_route", "needs_credential", "unsupported_reasoning"]

_RUN_CODES: dict[ResolveFailure, RunErrorCode] = {
    "unknown_model": RunErrorCode.UNKNOWN_MODEL,
    "needs_route": RunErrorCode.UNKNOWN_MODEL,
    "needs_credential": RunErrorCode.AUTH,
    "unsupported_reasoning": RunErrorCode.UNSUPPORTED_REASONING,
}


class ResolveError(OmniagentError):
    """No provider can be built for a selector. `reason` maps to yuke errors: unknown_model and needs_route →
    unsupported_model (-31019), needs_credential → auth_required (-31028), unsupported_reasoning (-31020);
    `code` is the RunErrorCode a run ends `failed` with."""

    _SENTENCES: dict[ResolveFailure, str] = {
        "unknown_model": "The catalog has no such model.",
        "needs_route": "The provider has no base URL or endpoint configured.",
        "needs_credential": "The provider needs an API key.",
        "unsupported_reasoning": "The model does not offer this reasoning level.",
    }

    def __init__(self, reason: ResolveFailure) -> None:
        super().__init__(self._SENTENCES[reason])
        self.reason = reason
        self.message = self._SENTENCES[reason]

    @property
    def code(self) -> RunErrorCode:
        """The run's failure code for this reason."""
        return _RUN_CODES[self.reason]


@dataclass(frozen=True, slots=True)
class ResolvedModel:
    """What a selector resolves to: its provider, the protocol it is called with, the model's upstream id and catalog
    entry (what a run needs to know about its model besides the `Provider`: provenance, limits, prices)."""

    selector: str
    provider_id: str
    protocol: Protocol
    upstream_model: str
    model: ModelEntry


def resolve_model(catalog: Catalog, selector: str) -> ResolvedModel:
    """What `selector` resolves to, without building a client (for validation at `session.create`/`patch`).

    Raises:
        ResolveError: unknown model, or a provider without base URL/endpoint, or without its required key.
    """
    found = catalog.model(selector)
    if found is None:
        raise ResolveError("unknown_model")
    provider, model = found
    state = catalog.state(provider)
    if state != "ready":
        raise ResolveError("needs_credential" if state in ("needs_credential", "expired") else "needs_route")
    assert provider.endpoints, "a ready provider has endpoints"
    protocol = model.protocol or provider.endpoints[0].protocol
    return ResolvedModel(selector, provider.id, protocol, model.upstream_id or model.id, model)


def open_provider(
    catalog: Catalog, selector: str, *, client: httpx.AsyncClient | None = None
) -> tuple[Provider, ResolvedModel]:
    """A ready `Provider` for `selector` and its `ResolvedModel`. Close the provider with `aclose()` when done.

    `client` shares one connection pool across providers; without it each provider owns one.

    Raises:
        ResolveError: see `resolve_model`; also needs_route when the model's protocol has no endpoint.
    """
    resolved = resolve_model(catalog, selector)
    provider_entry = catalog.provider(resolved.provider_id)
    assert provider_entry is not None and provider_entry.base_url is not None
    endpoint = next((e for e in provider_entry.endpoints or [] if e.protocol == resolved.protocol), None)
    if endpoint is None:
        raise ResolveError("needs_route")
    secret = catalog.api_key(provider_entry)
    key = secret.reveal() if secret is not None else None
    headers = {h.name: h.value for h in provider_entry.headers or []}
    base = provider_entry.base_url
    oauth = provider_entry.auth.oauth if provider_entry.auth is not None else None
    auth = None
    if key is None and oauth is not None:
        grant = catalog.credentials.grant(provider_entry.id)
        base = grant.api_base if grant is not None and grant.api_base else base
        auth = GrantAuth(provider_entry.id, oauth, catalog.credentials)
    # Prompt caching as the endpoint declares it: Anthropic breakpoints, OpenAI's cache-routing key.
    keyed = endpoint.cache == "openai_breakpoint"
    provider: Provider
    if resolved.protocol == "anthropic_messages":
        cache = endpoint.cache in ("anthropic_breakpoint", "automatic")
        provider = AnthropicProvider(
            base,
            key or "",
            key_header=endpoint.key_header,
            extra_headers=headers,
            cache_breakpoints=cache,
            client=client,
            auth=auth,
        )
    elif resolved.protocol == "openai_chat":
        field = resolved.model.flags.max_tokens_field or (
            "max_completion_tokens" if resolved.provider_id == "openai" else "max_tokens"
        )
        provider = OpenAIChatProvider(
            base,
            key,
            max_tokens_field=field,
            prompt_cache_key=keyed,
            extra_headers=headers,
            client=client,
            auth=auth,
        )
    elif resolved.protocol == "gemini":
        provider = GeminiProvider(base, key, extra_headers=headers, client=client)
    else:
        provider = OpenAIResponsesProvider(
            base, key, prompt_cache_key=keyed, extra_headers=headers, client=client, auth=auth
        )
    return provider, resolved


def reasoning_effort(resolved: ResolvedModel, level: str) -> str | None:
    """The `ModelRequest.reasoning_effort` for a session's reasoning level (`""`/`off` → None).

    Raises:
        ResolveError: unsupported_reasoning when the model does not list `level`.
    """
    if level in ("", NO_REASONING):
        return None
    if level not in [lvl for lvl in resolved.model.reasoning_levels if lvl is not None]:
        raise ResolveError("unsupported_reasoning")
    return level
