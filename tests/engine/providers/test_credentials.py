"""API key storage: 0600 file, keys never in listings, reprs or errors (brief: secrets rule)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omniagent.engine.providers.auth.credentials import (
    CREDENTIALS_FILE,
    CredentialError,
    CredentialStore,
    Secret,
    file_mode,
    resolve_api_key,
)

KEY = "sk-ant-very-secret-0000"


def test_stored_key_file_is_mode_0600_and_lists_providers_without_keys(tmp_path: Path) -> None:
    """brief: files holding secrets are mode 0600; listings never return the key."""
    store = CredentialStore(tmp_path / "data")
    store.set_api_key("anthropic", KEY)
    path = tmp_path / "data" / CREDENTIALS_FILE
    assert file_mode(path) == 0o600
    assert store.providers() == ["anthropic"]
    assert KEY not in repr(store.providers()) and KEY not in repr(store)
    assert store.api_key("anthropic") == Secret(KEY)


def test_rewriting_a_loose_file_restores_mode_0600(tmp_path: Path) -> None:
    """Our choice: every write leaves the file 0600, even if someone loosened it."""
    store = CredentialStore(tmp_path)
    store.set_api_key("openai", "k1")
    (tmp_path / CREDENTIALS_FILE).chmod(0o644)
    store.set_api_key("openai", "k2")
    assert file_mode(tmp_path / CREDENTIALS_FILE) == 0o600


def test_secret_repr_and_str_are_redacted() -> None:
    """brief: give the key holder a redacting __repr__."""
    secret = Secret(KEY)
    assert KEY not in repr(secret) and KEY not in str(secret) and KEY not in f"{secret}"
    assert secret.reveal() == KEY


def test_remove_forgets_the_key_and_reports_whether_there_was_one(tmp_path: Path) -> None:
    """yuke auth.remove: removes the API key."""
    store = CredentialStore(tmp_path)
    store.set_api_key("anthropic", KEY)
    assert store.remove("anthropic") is True
    assert store.remove("anthropic") is False
    assert store.api_key("anthropic") is None
    assert KEY not in (tmp_path / CREDENTIALS_FILE).read_text()


def test_stored_key_wins_over_the_environment(tmp_path: Path) -> None:
    """Our choice: a key set through auth.set_api_key beats ANTHROPIC_API_KEY."""
    store = CredentialStore(tmp_path)
    env = {"ANTHROPIC_API_KEY": "from-env"}
    assert resolve_api_key("anthropic", store, env, "ANTHROPIC_API_KEY") == Secret("from-env")
    store.set_api_key("anthropic", "stored")
    assert resolve_api_key("anthropic", store, env, "ANTHROPIC_API_KEY") == Secret("stored")
    assert resolve_api_key("anthropic", store, {}, None) == Secret("stored")


def test_corrupt_file_error_names_no_key(tmp_path: Path) -> None:
    """Errors are fixed sentences: no key, no path."""
    (tmp_path / CREDENTIALS_FILE).write_text(json.dumps({"anthropic": 42, "note": KEY}))
    with pytest.raises(CredentialError) as caught:
        CredentialStore(tmp_path).api_key("anthropic")
    assert KEY not in str(caught.value) and str(tmp_path) not in str(caught.value)


def test_symlinked_credential_file_is_refused(tmp_path: Path) -> None:
    """Our choice (as yuke for providers.json): never follow a symlink to a key file."""
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    (tmp_path / CREDENTIALS_FILE).symlink_to(target)
    with pytest.raises(CredentialError):
        CredentialStore(tmp_path).providers()
