"""The providers.json schema (yuke §10.6) and its strict loader.

The file lives in the config dir, must be mode 0600 (it may hold literal keys) and not a symlink. Unknown fields
are errors, so a typo never silently drops a setting. `catalog.py` merges the entries over the built-ins.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from omniagent.errors import OmniagentError

PROVIDERS_FILE = "providers.json"  # name of the catalog file inside the config dir

Protocol = Literal["anthropic_messages", "openai_chat", "openai_responses", "gemini"]
ReasoningLevel = Literal["minimal", "low", "medium", "high", "xhigh", "max"] | None


class CatalogError(OmniagentError):
    """providers.json is unreadable or invalid. The message says which rule failed, never a key."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EndpointEntry(_Strict):
    protocol: Protocol
    key_header: Literal["x_api_key", "authorization_bearer"] = "authorization_bearer"
    cache: Literal["unsupported", "automatic", "anthropic_breakpoint", "openai_breakpoint"] = "automatic"
    responses_dialect: str | None = None


class KeySource(_Strict):
    env: str | None = None
    literal: str | None = Field(default=None, repr=False)


class ApiKeyAuth(_Strict):
    source: KeySource


class OAuthEntry(_Strict):
    """A device login (OAuth 2.0 device authorization grant), optionally followed by a token exchange.

    `device_code_url` hands out the code a person enters at the verification URL; `token_url` is polled until they
    did. With `exchange_url` (GitHub Copilot's), the OAuth token is not the API's bearer: a GET there with
    `Authorization: token <oauth token>` answers the short-lived API token (`token`, `expires_at`, `refresh_in`,
    `endpoints.api`), fetched again before it lapses.
    """

    device_code_url: str
    token_url: str
    client_id: str
    scope: str = ""
    exchange_url: str | None = None


class AuthEntry(_Strict):
    api_key: ApiKeyAuth | None = None
    oauth: OAuthEntry | None = None


class HeaderEntry(_Strict):
    name: str
    value: str = Field(repr=False)


class LimitsEntry(_Strict):
    context_window: int | None = Field(default=None, ge=1)
    max_output_tokens: int | None = Field(default=None, ge=1)


class CostBandEntry(_Strict):
    min_prompt_tokens: int = Field(default=0, ge=0)
    input: float | None = None
    output: float | None = None
    reasoning: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None


class FlagsEntry(_Strict):
    supports_tools: bool = True
    supports_vision: bool = False
    thinking_format: str | None = None
    reasoning_replay: bool | None = None
    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] | None = None


class ModelEntry(_Strict):
    id: str = Field(min_length=1)
    upstream_id: str | None = None
    name: str | None = None
    protocol: Protocol | None = None
    limits: LimitsEntry = LimitsEntry()
    cost: list[CostBandEntry] = []
    reasoning_levels: list[ReasoningLevel] = []
    flags: FlagsEntry = FlagsEntry()


class ProviderEntry(_Strict):
    id: str = Field(min_length=1, max_length=128, pattern=r"^[^/\s]+$")
    name: str | None = None
    base_url: str | None = None
    endpoints: list[EndpointEntry] | None = None
    auth: AuthEntry | None = None
    api_key: str | None = Field(default=None, repr=False)
    headers: list[HeaderEntry] | None = None
    session_header: str | None = None
    models: list[ModelEntry] | None = None


class ProvidersFile(_Strict):
    providers: list[ProviderEntry] = []


def load_providers_file(config_dir: Path | None) -> ProvidersFile:
    """Read `<config_dir>/providers.json`; an absent file (or no config dir) is an empty catalog.

    Raises:
        CatalogError: the file is a symlink, readable by others, not JSON, or breaks the schema.
    """
    if config_dir is None:
        return ProvidersFile()
    path = config_dir / PROVIDERS_FILE
    if path.is_symlink():
        raise CatalogError("providers.json must not be a symlink.")
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        text = path.read_bytes()
    except FileNotFoundError:
        return ProvidersFile()
    except OSError as exc:
        raise CatalogError("providers.json cannot be read.") from exc
    if mode & 0o077:
        raise CatalogError("providers.json must be mode 0600 (run: chmod 600 providers.json).")
    try:
        return ProvidersFile.model_validate_json(text)
    except ValidationError as exc:
        # Field paths only: pydantic's text would echo input values, which may be keys.
        where = "; ".join(".".join(str(p) for p in error["loc"]) + f": {error['type']}" for error in exc.errors())
        raise CatalogError(f"providers.json is invalid ({where}).") from None
