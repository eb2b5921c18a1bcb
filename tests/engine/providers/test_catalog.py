"""Catalog: built-ins merged with providers.json and env, states, revision, prices (docs/providers.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omniagent.engine.providers.auth.credentials import CredentialStore
from omniagent.engine.providers.catalog.builtins import PROVIDERS_FILE
from omniagent.engine.providers.catalog.file import CatalogError
from omniagent.engine.providers.catalog.table import Catalog, cost_usd
from omniagent.engine.providers.neutral import Usage
from omniagent.protocols.yuke.catalog import CatalogListResultFull, CatalogListResultUnchanged


def write_providers(config: Path, value: object, mode: int = 0o600) -> None:
    config.mkdir(parents=True, exist_ok=True)
    path = config / PROVIDERS_FILE
    path.write_text(json.dumps(value))
    path.chmod(mode)


def make(tmp_path: Path, env: dict[str, str] | None = None) -> Catalog:
    return Catalog(tmp_path / "config", CredentialStore(tmp_path / "data"), env or {})


def states(catalog: Catalog) -> dict[str, str]:
    listing = catalog.listing()
    assert isinstance(listing, CatalogListResultFull)
    return {p.id: p.state for p in listing.providers}


def test_builtins_need_credentials_until_an_env_key_is_set(tmp_path: Path) -> None:
    """Built-in env keys; missing key ↔ needs_credential. Ollama takes no key; GitHub Copilot needs a
    device login (`auth.login`), whatever the environment holds. Gemini reads GEMINI_API_KEY, else GOOGLE_API_KEY (as
    Google's SDKs do), and says which one it used."""
    needs = "needs_credential"
    assert states(make(tmp_path)) == {
        "anthropic": needs,
        "openai": needs,
        "gemini": needs,
        "github-copilot": needs,
        "ollama": "ready",
    }
    ready = make(tmp_path, {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k", "GOOGLE_API_KEY": "g"})
    assert states(ready) == {
        "anthropic": "ready",
        "openai": "ready",
        "gemini": "ready",
        "github-copilot": needs,
        "ollama": "ready",
    }
    gemini = ready.provider("gemini")
    assert gemini is not None and ready.api_key_origin(gemini) == "GOOGLE_API_KEY"
    both = make(tmp_path, {"GEMINI_API_KEY": "first", "GOOGLE_API_KEY": "second"})
    key = both.api_key(gemini)
    assert key is not None and key.reveal() == "first" and both.api_key_origin(gemini) == "GEMINI_API_KEY"


def test_listing_models_carry_selector_limits_levels_and_cost(tmp_path: Path) -> None:
    """ModelInfo: selector provider/model, cost per 1M tokens, reasoning levels with null as "off"."""
    listing = make(tmp_path).listing()
    assert isinstance(listing, CatalogListResultFull)
    sonnet = next(m for m in listing.models if m.selector == "anthropic/claude-sonnet-4-5")
    assert sonnet.context_window == 200_000 and sonnet.cost.input == 3.0 and sonnet.cost.cache_write == 3.75
    assert sonnet.reasoning_levels[0] == "off" and sonnet.default_reasoning == "medium"
    assert len(listing.catalog_rev) == 128


def test_since_rev_current_answers_unchanged_and_a_new_key_changes_the_rev(tmp_path: Path) -> None:
    """since_rev == current → unchanged; states are part of the catalog, so setting a key bumps it."""
    catalog = make(tmp_path)
    rev = catalog.rev
    assert catalog.listing(since_rev=rev) == CatalogListResultUnchanged(catalog_rev=rev)
    CredentialStore(tmp_path / "data").set_api_key("anthropic", "sk-x")
    assert catalog.rev != rev
    assert isinstance(catalog.listing(since_rev=rev), CatalogListResultFull)


def test_providers_json_overrides_builtin_fields_and_merges_models_by_id(tmp_path: Path) -> None:
    """An entry with a built-in id overrides that built-in's fields."""
    write_providers(
        tmp_path / "config",
        {
            "providers": [
                {"id": "ollama", "base_url": "http://127.0.0.1:9/v1", "models": [{"id": "qwen3:8b"}]},
                {
                    "id": "lab",
                    "name": "Lab vLLM",
                    "base_url": "http://127.0.0.1:8000/v1",
                    "endpoints": [{"protocol": "openai_chat"}],
                    "auth": {"api_key": {"source": {"env": "LAB_KEY"}}},
                    "models": [{"id": "big", "cost": [{"input": 1, "output": 2}]}],
                },
            ]
        },
    )
    catalog = make(tmp_path)
    ollama = catalog.provider("ollama")
    assert ollama is not None and ollama.base_url == "http://127.0.0.1:9/v1" and ollama.name == "Ollama (local)"
    assert catalog.model("ollama/qwen3:8b") is not None
    assert states(catalog)["lab"] == "needs_credential"
    assert states(make(tmp_path, {"LAB_KEY": "x"}))["lab"] == "ready"


def test_provider_without_base_url_needs_a_route(tmp_path: Path) -> None:
    """ProviderState: needs_route when a route field is missing."""
    write_providers(tmp_path / "config", {"providers": [{"id": "half", "models": [{"id": "m"}]}]})
    assert states(make(tmp_path))["half"] == "needs_route"


def test_env_base_urls_redirect_builtins(tmp_path: Path) -> None:
    """Our choice: ANTHROPIC_BASE_URL (SDK form, /v1 appended), OPENAI_BASE_URL (with /v1), GOOGLE_GEMINI_BASE_URL
    (Gemini CLI's origin form, /v1beta appended), OLLAMA_HOST."""
    env = {
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:1",
        "OPENAI_BASE_URL": "http://127.0.0.1:2/v1/",
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:4/",
        "OLLAMA_HOST": "h:3",
    }
    catalog = make(tmp_path, env)
    urls = {p.id: p.base_url for p in catalog.providers if p.id != "github-copilot"}
    assert urls == {
        "anthropic": "http://127.0.0.1:1/v1",
        "openai": "http://127.0.0.1:2/v1",
        "gemini": "http://127.0.0.1:4/v1beta",
        "ollama": "http://h:3/v1",
    }


def test_unknown_field_is_rejected_naming_the_field_but_never_its_value(tmp_path: Path) -> None:
    """A strict schema; errors never echo values (they may be keys)."""
    write_providers(tmp_path / "config", {"providers": [{"id": "x", "apikey": "sk-leaked-value"}]})
    with pytest.raises(CatalogError) as caught:
        make(tmp_path)
    assert "apikey" in str(caught.value) and "sk-leaked-value" not in str(caught.value)


def test_an_off_list_value_is_refused_without_echoing_it_and_literal_keys_stay_out_of_reprs(tmp_path: Path) -> None:
    """A value outside an enum may be a pasted key, so the error names the place only; reprs hide keys."""
    write_providers(tmp_path / "config", {"providers": [{"id": "x", "endpoints": [{"protocol": "sk-pasted-here"}]}]})
    with pytest.raises(CatalogError) as caught:
        make(tmp_path)
    assert "protocol" in str(caught.value) and "sk-pasted-here" not in str(caught.value)
    literal = {"source": {"literal": "sk-literal-key"}}
    entry = {
        "id": "x",
        "api_key": "sk-flat-key",
        "auth": {"api_key": literal},
        "headers": [{"name": "h", "value": "sk-h"}],
    }
    write_providers(tmp_path / "config", {"providers": [entry]})
    shown = repr(make(tmp_path).providers)
    assert "sk-literal-key" not in shown and "sk-flat-key" not in shown and "sk-h" not in shown
    (tmp_path / "config" / PROVIDERS_FILE).write_text("{not json")
    with pytest.raises(CatalogError):
        make(tmp_path)


def test_an_explicit_null_in_providers_json_replaces_the_builtin_field(tmp_path: Path) -> None:
    """Only the fields given replace a built-in's, `null` included: `auth: null` makes Anthropic keyless."""
    write_providers(tmp_path / "config", {"providers": [{"id": "anthropic", "auth": None}]})
    assert states(make(tmp_path))["anthropic"] == "ready"
    write_providers(tmp_path / "config", {"providers": [{"id": "anthropic", "name": "Mine"}]})
    catalog = make(tmp_path)
    assert states(catalog)["anthropic"] == "needs_credential"
    anthropic = catalog.provider("anthropic")
    assert anthropic is not None and anthropic.name == "Mine" and anthropic.models


def test_providers_json_readable_by_others_or_symlinked_is_refused(tmp_path: Path) -> None:
    """File mode 0600 and not a symlink."""
    write_providers(tmp_path / "config", {"providers": []}, mode=0o644)
    with pytest.raises(CatalogError):
        make(tmp_path)
    real = tmp_path / "real.json"
    real.write_text("{}")
    real.chmod(0o600)
    (tmp_path / "config" / PROVIDERS_FILE).unlink()
    (tmp_path / "config" / PROVIDERS_FILE).symlink_to(real)
    with pytest.raises(CatalogError):
        make(tmp_path)


def test_failed_reload_keeps_the_current_catalog_and_a_good_one_reports_change(tmp_path: Path) -> None:
    """A failed reload keeps the current catalog; catalog.reload returns changed."""
    catalog = make(tmp_path)
    rev = catalog.rev
    write_providers(tmp_path / "config", {"providers": "not a list"})
    with pytest.raises(CatalogError):
        catalog.reload()
    assert catalog.rev == rev
    write_providers(tmp_path / "config", {"providers": [{"id": "ollama", "models": [{"id": "llama3.2"}]}]})
    assert catalog.reload() is True and catalog.reload() is False
    assert catalog.model("ollama/llama3.2") is not None


def test_cost_uses_the_last_band_the_prompt_reaches_and_unknown_prices_give_none(tmp_path: Path) -> None:
    """Cost bands; an absent price is unknown, not 0."""
    write_providers(
        tmp_path / "config",
        {
            "providers": [
                {
                    "id": "ollama",
                    "models": [
                        {
                            "id": "banded",
                            "cost": [
                                {"input": 1.0, "output": 2.0, "cache_read": 0.1},
                                {"min_prompt_tokens": 1000, "input": 10.0, "output": 20.0, "cache_read": 1.0},
                            ],
                        },
                        {"id": "free-ish", "cost": [{"input": 1.0}]},
                    ],
                }
            ]
        },
    )
    catalog = make(tmp_path)
    banded = catalog.model("ollama/banded")
    partial = catalog.model("ollama/free-ish")
    assert banded is not None and partial is not None
    small = Usage(input_tokens=500, output_tokens=100, cache_read_tokens=100)
    assert cost_usd(banded[1], small) == pytest.approx((400 * 1.0 + 100 * 2.0 + 100 * 0.1) / 1e6)
    large = Usage(input_tokens=2000, output_tokens=10)
    assert cost_usd(banded[1], large) == pytest.approx((2000 * 10.0 + 10 * 20.0) / 1e6)
    assert cost_usd(partial[1], small) is None
    # Float noise stays out of the wire: 1 fresh input token at 3.0 plus 7 cache reads at 0.3 is 5.1e-06, not
    # 5.0999999999999995e-06.
    sonnet = catalog.model("anthropic/claude-sonnet-4-5")
    assert sonnet is not None
    assert repr(cost_usd(sonnet[1], Usage(input_tokens=8, output_tokens=0, cache_read_tokens=7))) == "5.1e-06"


def test_auth_list_reports_key_presence_only(tmp_path: Path) -> None:
    """AuthProvider: public state; keys never returned."""
    catalog = make(tmp_path, {"OPENAI_API_KEY": "sk-env-secret"})
    listed = {a.provider_id: (a.credential_kind, a.can_login) for a in catalog.auth_list()}
    assert listed == {
        "anthropic": (None, False),
        "openai": ("api_key", False),
        "gemini": (None, False),
        "github-copilot": (None, True),
        "ollama": (None, False),
    }
    assert "sk-env-secret" not in repr(catalog.auth_list()) and "sk-env-secret" not in repr(catalog)
