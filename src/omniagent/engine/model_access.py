"""The engine's access to its models: a thin adapter over the providers' `Catalog`, `resolve` and credentials.

What it is: the engine's one view of "which model does this selector mean, can it run now, what does it cost",
handing the run loop a `Provider` that shares one HTTP connection pool.
What it is not: the catalog itself (`providers/catalog/table.py`: built-ins + providers.json, states, revision, prices)
or the key store (`providers/auth/credentials.py`: the 0600 file). Refusals here become yuke error codes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import httpx

from omniagent.engine.errors import EngineError
from omniagent.engine.providers import neutral as n
from omniagent.engine.providers import resolve
from omniagent.engine.providers.auth.credentials import CredentialStore
from omniagent.engine.providers.catalog.file import ModelEntry, Protocol
from omniagent.engine.providers.catalog.table import (
    NO_REASONING,
    Catalog,
    cost_usd,
    default_reasoning,
    load_catalog,
    reasoning_levels,
)
from omniagent.engine.providers.clients.transport import new_client
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.messages import TokenUsage

log = logging.getLogger(__name__)

DEFAULT_MAX_OUTPUT = 8192  # tokens asked for when the catalog gives no limit


@dataclass(frozen=True, slots=True)
class RunModel:
    """What a run needs about its model: provenance, request limits, reasoning effort and prices."""

    selector: str
    protocol: Protocol
    upstream_id: str
    model: ModelEntry | None = None
    effort: str | None = None

    @property
    def max_output_tokens(self) -> int:
        limit = self.model.limits.max_output_tokens if self.model is not None else None
        return limit or DEFAULT_MAX_OUTPUT

    @property
    def context_window(self) -> int | None:
        """Tokens the model can hold in one request (prompt and answer), when the catalog knows it."""
        return self.model.limits.context_window if self.model is not None else None

    def cost_of(self, tokens: TokenUsage) -> float | None:
        """USD for one message; None when a needed price is unknown (absent is unknown, never zero)."""
        if self.model is None:
            return None
        usage = n.Usage(tokens.input, tokens.output, tokens.reasoning, tokens.cache_read, tokens.cache_write)
        return cost_usd(self.model, usage)


class ModelAccess:
    """Which model a selector means, whether it can run now, and a ready `Provider` per run: the catalog and
    credentials of one engine, and one shared HTTP client for every provider (built by the
    first run that needs it: its TLS context alone costs tens of ms that a session listing does not need)."""

    def __init__(self, catalog: Catalog, credentials: CredentialStore, config_dir: Path) -> None:
        self.catalog = catalog
        self.credentials = credentials
        self._config_dir = config_dir
        self._client: httpx.AsyncClient | None = None

    @classmethod
    def load(cls, data_dir: Path, config_dir: Path) -> ModelAccess:
        """Built-ins + `<config_dir>/providers.json`; a bad file is reported on stderr and the built-ins serve."""
        credentials = CredentialStore(data_dir)
        return cls(load_catalog(config_dir, credentials, log), credentials, config_dir)

    @property
    def catalog_rev(self) -> str:
        return self.catalog.rev

    def reload(self) -> bool:
        """Re-read providers.json; returns whether the revision moved.

        Raises:
            CatalogError: the file is invalid (the current catalog stays).
        """
        before = self.catalog.rev
        self.catalog = Catalog(self._config_dir, self.credentials)
        return self.catalog.rev != before

    def knows_provider(self, provider_id: str) -> bool:
        return self.catalog.provider(provider_id) is not None

    def choose(self, model: str | None, reasoning: str | None) -> tuple[str, str]:
        """The selector and reasoning a new config uses; raises unsupported_model / unsupported_reasoning."""
        if model is None:
            ready = [p for p in self.catalog.providers if self.catalog.state(p) == "ready" and p.models]
            if not ready:
                raise EngineError(ErrorCode.UNSUPPORTED_MODEL, "no model is ready: configure a provider first")
            model = f"{ready[0].id}/{ready[0].models[0].id}"  # type: ignore[index]
        found = self.catalog.model(model)
        if found is None:
            raise EngineError(ErrorCode.UNSUPPORTED_MODEL, "unknown model")
        entry = found[1]
        if reasoning is None:
            return model, default_reasoning(entry)
        if reasoning not in (*reasoning_levels(entry), "", NO_REASONING):
            raise EngineError(ErrorCode.UNSUPPORTED_REASONING, "the model does not support this reasoning level")
        return model, reasoning

    def choose_ready(self, model: str, reasoning: str | None) -> tuple[str, str]:
        """`choose`, for a model that must run unattended (an agents.json slot): its provider ready now, its
        model able to call tools; raises unsupported_model / auth_required / unsupported_reasoning."""
        model, reasoning = self.choose(model, reasoning)
        found = self.catalog.model(model)
        assert found is not None  # choose knew it
        provider, entry = found
        if self.catalog.state(provider) != "ready":
            raise EngineError(
                ErrorCode.AUTH_REQUIRED, "the model's provider is not ready: it needs a key or a base URL"
            )
        if not entry.flags.supports_tools:
            raise EngineError(ErrorCode.UNSUPPORTED_MODEL, "the model cannot call tools")
        return model, reasoning

    def open_provider(self, selector: str, reasoning: str) -> tuple[RunModel, n.Provider]:
        """The model as the run needs it and a provider client for one run (sharing the engine's connection pool).

        Raises:
            ResolveError: unknown model, no base URL or endpoint, no credential, or an unsupported reasoning level.
        """
        if self._client is None:
            self._client = new_client()
        provider, resolved = resolve.open_provider(self.catalog, selector, client=self._client)
        effort = resolve.reasoning_effort(resolved, reasoning)
        return RunModel(selector, resolved.protocol, resolved.upstream_model, resolved.model, effort), provider

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
