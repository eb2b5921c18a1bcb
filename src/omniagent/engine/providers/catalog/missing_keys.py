"""Which providers lack the API key they take: what `omniagent acp` offers as auth methods in its first reply.

The rule is `Catalog.state`'s: a provider that takes a key (`auth.api_key.source`) and has none (stored, literal,
or in its variable or an alias of it) `needs_credential`. `Catalog.missing_keys` reads it off a catalog.
`builtin_missing_keys` applies it to the built-in table when there is no providers.json, with the standard library
only, so that the ACP face answers `initialize` before msgspec and the catalog are imported (docs/performance.md).
With a providers.json it answers None: what the file means is for its strict parser (the catalog) to say.
`tests/engine/providers/test_missing_keys.py` checks that both agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from omniagent.engine.providers.auth.credentials import CredentialStore, resolve_api_key
from omniagent.engine.providers.catalog.builtins import BUILTIN_TABLE, KEY_ENV_ALIASES, PROVIDERS_FILE


class MissingKey(NamedTuple):
    """A provider that takes an API key and has none: its id, its name for a person, the variable to set."""

    provider_id: str
    name: str
    env: str


def key_variable(env_name: str | None, env: Mapping[str, str]) -> str | None:
    """The variable a provider's key is read from: its own, else the first of its aliases that is set."""
    if not env_name:
        return None
    names = (env_name, *KEY_ENV_ALIASES.get(env_name, ()))
    return next((name for name in names if env.get(name)), env_name)


def builtin_missing_keys(
    config_dir: Path, credentials: CredentialStore, env: Mapping[str, str]
) -> list[MissingKey] | None:
    """`Catalog.missing_keys` of the catalog these arguments would load, when it holds only the built-ins (no
    providers.json in `config_dir`); None when there is a providers.json (or may be: the catalog then decides)."""
    try:
        if (config_dir / PROVIDERS_FILE).is_symlink() or (config_dir / PROVIDERS_FILE).exists():
            return None
    except OSError:
        return None
    out = []
    for provider in BUILTIN_TABLE["providers"]:
        env_name = _key_env(provider)
        if env_name is None or not provider.get("base_url") or not provider.get("endpoints"):
            continue
        if resolve_api_key(provider["id"], credentials, env, key_variable(env_name, env)) is not None:
            continue  # it has its key
        if (provider.get("auth") or {}).get("oauth") and credentials.grant(provider["id"]) is not None:
            continue  # logged in instead (the grant may have lapsed: `expired`, not missing)
        out.append(MissingKey(provider["id"], provider.get("name") or provider["id"], env_name))
    return out


def _key_env(provider: Mapping[str, Any]) -> str | None:
    source = ((provider.get("auth") or {}).get("api_key") or {}).get("source") or {}
    env_name = source.get("env")
    return env_name if isinstance(env_name, str) and env_name else None
