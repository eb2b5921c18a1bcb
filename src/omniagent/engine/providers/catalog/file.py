"""The providers.json schema (docs/providers.md "providers.json") and its strict loader.

The file lives in the config dir, must be mode 0600 (it may hold literal keys) and not a symlink. Unknown fields
are errors, so a typo never silently drops a setting. `table.py` merges the entries over the built-ins.

The entries are frozen `msgspec.Struct`s, not pydantic models: `omniagent acp` reads this file to answer
`initialize`, and defining them costs well under a millisecond where pydantic's took ~85 ms (docs/performance.md).
"""

from __future__ import annotations

import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import msgspec

from omniagent.engine.providers.catalog.builtins import PROVIDERS_FILE
from omniagent.errors import OmniagentError

Protocol = Literal["anthropic_messages", "openai_chat", "openai_responses", "gemini"]
ReasoningLevel = Literal["minimal", "low", "medium", "high", "xhigh", "max"] | None
PositiveInt = Annotated[int, msgspec.Meta(ge=1)]


class CatalogError(OmniagentError):
    """providers.json is unreadable or invalid. The message says which rule failed, never a key."""


class _Strict(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    # Fields whose values a repr must not show (they may be keys).
    hidden: ClassVar[frozenset[str]] = frozenset()

    def __repr__(self) -> str:
        shown = (f"{name}={getattr(self, name)!r}" for name in self.__struct_fields__ if name not in self.hidden)
        return f"{type(self).__name__}({', '.join(shown)})"


class EndpointEntry(_Strict, frozen=True, kw_only=True):
    protocol: Protocol
    key_header: Literal["x_api_key", "authorization_bearer"] = "authorization_bearer"
    cache: Literal["unsupported", "automatic", "anthropic_breakpoint", "openai_breakpoint"] = "automatic"
    responses_dialect: str | None = None


class KeySource(_Strict, frozen=True, kw_only=True):
    hidden: ClassVar[frozenset[str]] = frozenset({"literal"})
    env: str | None = None
    literal: str | None = None


class ApiKeyAuth(_Strict, frozen=True, kw_only=True):
    source: KeySource


class OAuthEntry(_Strict, frozen=True, kw_only=True):
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


class AuthEntry(_Strict, frozen=True, kw_only=True):
    api_key: ApiKeyAuth | None = None
    oauth: OAuthEntry | None = None


class HeaderEntry(_Strict, frozen=True, kw_only=True):
    hidden: ClassVar[frozenset[str]] = frozenset({"value"})
    name: str
    value: str


class LimitsEntry(_Strict, frozen=True, kw_only=True):
    context_window: PositiveInt | None = None
    max_output_tokens: PositiveInt | None = None


class CostBandEntry(_Strict, frozen=True, kw_only=True):
    min_prompt_tokens: Annotated[int, msgspec.Meta(ge=0)] = 0
    input: float | None = None
    output: float | None = None
    reasoning: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None


class FlagsEntry(_Strict, frozen=True, kw_only=True):
    supports_tools: bool = True
    supports_vision: bool = False
    thinking_format: str | None = None
    reasoning_replay: bool | None = None
    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] | None = None


class ModelEntry(_Strict, frozen=True, kw_only=True):
    id: Annotated[str, msgspec.Meta(min_length=1)]
    upstream_id: str | None = None
    name: str | None = None
    protocol: Protocol | None = None
    limits: LimitsEntry = msgspec.field(default_factory=LimitsEntry)
    cost: list[CostBandEntry] = []
    reasoning_levels: list[ReasoningLevel] = []
    flags: FlagsEntry = msgspec.field(default_factory=FlagsEntry)


class ProviderEntry(_Strict, frozen=True, kw_only=True):
    hidden: ClassVar[frozenset[str]] = frozenset({"api_key"})
    id: Annotated[str, msgspec.Meta(min_length=1, max_length=128, pattern=r"^[^/\s]+$")]
    name: str | None = None
    base_url: str | None = None
    endpoints: list[EndpointEntry] | None = None
    auth: AuthEntry | None = None
    api_key: str | None = None
    headers: list[HeaderEntry] | None = None
    session_header: str | None = None
    models: list[ModelEntry] | None = None


class ProvidersFile(_Strict, frozen=True, kw_only=True):
    providers: list[ProviderEntry] = []


@dataclass(frozen=True, slots=True)
class FileProvider:
    """A providers.json entry and the fields the file gave: only those replace a built-in's (an explicit `null`
    included)."""

    entry: ProviderEntry
    given: frozenset[str]


def parse_providers(raw: Any) -> ProvidersFile:
    """Validate providers.json's JSON value (also the built-ins, written in the same form).

    Raises:
        CatalogError: it breaks the schema (the message names the rule and the place, never a value).
    """
    try:
        return msgspec.convert(raw, ProvidersFile)
    except msgspec.ValidationError as exc:
        raise CatalogError(f"providers.json is invalid ({_without_values(str(exc))}).") from None


def _without_values(message: str) -> str:
    # msgspec quotes an off-list value ("Invalid enum value 'sk-…'"): drop it, keep the rule and the path.
    return re.sub(r"^Invalid enum value .*?(?= - at |$)", "Invalid enum value", message)


def load_providers_file(config_dir: Path | None) -> list[FileProvider]:
    """Read `<config_dir>/providers.json`; an absent file (or no config dir) is an empty catalog.

    Raises:
        CatalogError: the file is a symlink, readable by others, not JSON, or breaks the schema.
    """
    if config_dir is None:
        return []
    path = config_dir / PROVIDERS_FILE
    if path.is_symlink():
        raise CatalogError("providers.json must not be a symlink.")
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        text = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise CatalogError("providers.json cannot be read.") from exc
    if mode & 0o077:
        raise CatalogError("providers.json must be mode 0600 (run: chmod 600 providers.json).")
    try:
        raw = msgspec.json.decode(text)
    except msgspec.DecodeError:
        raise CatalogError("providers.json is not JSON.") from None
    entries = parse_providers(raw).providers
    given = raw.get("providers", [])  # a dict: it passed the schema
    return [FileProvider(entry, frozenset(keys)) for entry, keys in zip(entries, given, strict=True)]
