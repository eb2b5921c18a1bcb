"""Which providers lack their key: the built-in table read without msgspec (for `omniagent acp`'s first reply) says
what the catalog says, whatever the environment and the stored keys and logins; with a providers.json it defers to
the catalog."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from omniagent.engine.providers.auth.credentials import CredentialStore, Grant, Secret
from omniagent.engine.providers.catalog.builtins import PROVIDERS_FILE
from omniagent.engine.providers.catalog.missing_keys import MissingKey, builtin_missing_keys
from omniagent.engine.providers.catalog.table import Catalog

ENVS = [
    {},
    {"ANTHROPIC_API_KEY": "k"},
    {"OPENAI_API_KEY": "k", "GEMINI_API_KEY": ""},  # an empty variable is no key
    {"GOOGLE_API_KEY": "g"},  # Gemini's alias
    {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k", "GEMINI_API_KEY": "k"},
]
STORED = [(), ("openai",), ("anthropic", "gemini")]


@pytest.mark.parametrize(("env", "stored", "copilot_login"), list(itertools.product(ENVS, STORED, [False, True])))
def test_the_built_in_table_read_without_msgspec_says_what_the_catalog_says(
    tmp_path: Path, env: dict[str, str], stored: tuple[str, ...], copilot_login: bool
) -> None:
    config, credentials = tmp_path / "config", CredentialStore(tmp_path / "data")
    for provider_id in stored:
        credentials.set_api_key(provider_id, "sk-stored")
    if copilot_login:
        credentials.set_grant("github-copilot", Grant(access_token=Secret("gho_x")))
    early = builtin_missing_keys(config, credentials, env)
    assert early == Catalog(config, credentials, env).missing_keys()
    assert early is not None and {key.provider_id for key in early} <= {"anthropic", "openai", "gemini"}


def test_with_a_providers_file_the_catalog_decides(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    path = config / PROVIDERS_FILE
    path.write_text(json.dumps({"providers": [{"id": "anthropic", "auth": None}]}))
    path.chmod(0o600)
    credentials = CredentialStore(tmp_path / "data")
    assert builtin_missing_keys(config, credentials, {}) is None
    # What it would have got wrong: the file took Anthropic's key requirement away.
    assert [key.provider_id for key in Catalog(config, credentials, {}).missing_keys()] == ["openai", "gemini"]


def test_a_missing_key_names_the_provider_and_its_variable(tmp_path: Path) -> None:
    missing = builtin_missing_keys(tmp_path / "config", CredentialStore(tmp_path / "data"), {})
    assert missing is not None and missing[0] == MissingKey("anthropic", "Anthropic", "ANTHROPIC_API_KEY")
