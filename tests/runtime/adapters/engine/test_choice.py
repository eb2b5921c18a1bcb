"""`Runtime.engine_choice`: the model a new engine session would run and what lets its provider run it, in the
words `run` and `chat` print (issue 26): the variable that is set, the stored key, providers.json, or a provider
that needs no key; never a key's value. Read from this process's environment and data dir, as `run` reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omniagent.engine.providers.auth.credentials import CredentialStore
from omniagent.runtime.runtime import EngineChoice, Runtime
from tests.runtime.adapters.engine.harness import ENGINE_VARS

KEY = "sk-ant-choice-test-key-0123456789"


@pytest.fixture
def data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No key anywhere: an empty data (and config) dir of the test's own, no key variable."""
    for var in (*ENGINE_VARS, "GEMINI_API_KEY", "XAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OMNIAGENT_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    return tmp_path / "data"


def test_nothing_ready_is_no_choice_and_a_mock_runtime_never_chooses_the_engine(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Runtime().engine_choice() is None and not Runtime().engine_ready()
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    assert Runtime(mock=Runtime.load_mock("turn")).engine_choice() is None


def test_a_key_variable_names_the_variable_and_the_first_model_of_the_first_ready_provider(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    choice = Runtime().engine_choice()
    assert choice == EngineChoice("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY is set")
    assert KEY not in repr(choice)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("GOOGLE_API_KEY", "AIza-choice-test-key-0123456789")  # an alias of GEMINI_API_KEY
    choice = Runtime().engine_choice()
    assert choice is not None and choice.model.startswith("gemini/"), choice
    assert choice.because == "GOOGLE_API_KEY is set"


def test_a_stored_key_and_a_providers_json_key_say_where_the_key_is(data: Path) -> None:
    CredentialStore(data).set_api_key("openai", "sk-stored-choice-key-0123456789")
    choice = Runtime().engine_choice()
    assert choice is not None and choice.model.startswith("openai/"), choice
    assert choice.because == "the openai key stored with omniagent"
    local = {
        "id": "local",
        "base_url": "http://127.0.0.1:9/v1",
        "endpoints": [{"protocol": "openai_chat", "key_header": "authorization_bearer"}],
        "api_key": "local-key-0123456789",
        "models": [{"id": "tiny"}],
    }
    (data / "providers.json").write_text(json.dumps({"providers": [local]}))
    (data / "providers.json").chmod(0o600)
    assert Runtime().engine_choice("local/tiny") == EngineChoice("local/tiny", "the local key in providers.json")


def test_a_named_model_is_described_by_its_own_provider_and_one_that_cannot_run_is_none(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    assert Runtime().engine_choice("ollama/qwen3:8b") == EngineChoice("ollama/qwen3:8b", "ollama needs no key")
    assert Runtime().engine_choice("openai/gpt-4.1") is None  # no OPENAI_API_KEY
    assert Runtime().engine_choice("anthropic/no-such-model") is None
