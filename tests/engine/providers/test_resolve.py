"""From a selector to a Provider that reaches the configured endpoint with the right key (docs/providers.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniagent.engine.providers.auth.credentials import CredentialStore
from omniagent.engine.providers.catalog.table import Catalog
from omniagent.engine.providers.clients.anthropic import AnthropicProvider
from omniagent.engine.providers.clients.openai_responses import OpenAIResponsesProvider
from omniagent.engine.providers.neutral import StreamEnd
from omniagent.engine.providers.resolve import ResolveError, open_provider, reasoning_effort, resolve_model
from omniagent.testing import FakeLLMServer, Reply, fingerprint
from tests.engine.providers.helpers import collect, texts


async def test_an_anthropic_model_uses_env_base_url_and_stored_key(llm: FakeLLMServer, tmp_path: Path) -> None:
    """A stored key (auth.set_api_key) reaches the endpoint as x-api-key; ANTHROPIC_BASE_URL redirects it."""
    store = CredentialStore(tmp_path)
    store.set_api_key("anthropic", "sk-ant-stored")
    catalog = Catalog(None, store, {"ANTHROPIC_BASE_URL": llm.url})
    llm.enqueue(Reply(text="resolved"))
    provider, resolved = open_provider(catalog, "anthropic/claude-haiku-4-5")
    assert isinstance(provider, AnthropicProvider) and resolved.protocol == "anthropic_messages"
    assert resolved.upstream_model == "claude-haiku-4-5"
    events = await collect(provider)
    assert texts(events) == "resolved" and isinstance(events[-1], StreamEnd)
    assert llm.requests[0].credential == fingerprint("sk-ant-stored")


async def test_an_openai_model_defaults_to_responses_and_reads_the_env_key(llm: FakeLLMServer, tmp_path: Path) -> None:
    """Built-in OpenAI models use the Responses endpoint with a bearer key from OPENAI_API_KEY."""
    env = {"OPENAI_BASE_URL": llm.openai_base_url, "OPENAI_API_KEY": "sk-openai-env"}
    catalog = Catalog(None, CredentialStore(tmp_path), env)
    llm.enqueue(Reply(text="r"))
    provider, _ = open_provider(catalog, "openai/gpt-5")
    assert isinstance(provider, OpenAIResponsesProvider)
    await collect(provider)
    assert llm.requests[0].path == "/v1/responses" and llm.requests[0].credential == fingerprint("sk-openai-env")


def test_unknown_model_and_missing_key_are_resolve_errors(tmp_path: Path) -> None:
    """yuke: unknown selector → unsupported_model; provider needing a credential → auth_required."""
    catalog = Catalog(None, CredentialStore(tmp_path), {})
    with pytest.raises(ResolveError) as unknown:
        resolve_model(catalog, "anthropic/claude-nope")
    assert unknown.value.reason == "unknown_model"
    with pytest.raises(ResolveError) as keyless:
        resolve_model(catalog, "anthropic/claude-sonnet-4-5")
    assert keyless.value.reason == "needs_credential"


def test_reasoning_level_maps_to_effort_or_is_rejected(tmp_path: Path) -> None:
    """yuke unsupported_reasoning: a level the model does not list is refused; off/"" mean no reasoning."""
    resolved = resolve_model(Catalog(None, CredentialStore(tmp_path), {"OPENAI_API_KEY": "k"}), "openai/gpt-5")
    assert reasoning_effort(resolved, "high") == "high"
    assert reasoning_effort(resolved, "") is None
    with pytest.raises(ResolveError) as caught:
        reasoning_effort(resolved, "max")
    assert caught.value.reason == "unsupported_reasoning"
