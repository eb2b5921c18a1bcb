"""The fake LLM's prompt cache: hits computed from the prefixes and breakpoints each request actually carries, as the
real APIs compute them (src/omniagent/testing/prompt_cache.py), and reported in each API's usage fields."""

from __future__ import annotations

import json
from typing import Any

import httpx

from omniagent.testing import FakeLLMServer, FakeUsage, Reply, Scenario
from omniagent.testing.prompt_cache import MIN_CACHED_TOKENS, RUN_TOKENS, PromptCache

LONG = "x" * (MIN_CACHED_TOKENS * 4 * 2)  # a system prompt of about 2048 tokens
OUT = FakeUsage(output=5)
EPHEMERAL = {"type": "ephemeral"}


def _anthropic(*texts: str, marks: tuple[int, ...] = (-1,), system_mark: bool = True) -> dict[str, Any]:
    """A Messages body: the long system prompt, one user message per text, breakpoints on the chosen messages."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": t}]} for t in texts]
    for mark in marks:
        messages[mark]["content"][-1]["cache_control"] = EPHEMERAL
    system: dict[str, Any] = {"type": "text", "text": LONG}
    if system_mark:
        system["cache_control"] = EPHEMERAL
    return {"model": "m", "system": [system], "messages": messages}


def _tokens(body: dict[str, Any], upto: int) -> int:
    """Tokens of the system block and the first `upto` message blocks, as the cache counts them."""
    cache = PromptCache()
    trimmed = {**body, "messages": body["messages"][:upto]}
    return cache.usage("anthropic", trimmed, None, OUT).input


def test_anthropic_writes_at_breakpoints_and_reads_the_longest_cached_prefix() -> None:
    cache = PromptCache()
    first = _anthropic("one")
    usage = cache.usage("anthropic", first, "k", OUT)
    assert (usage.cache_read, usage.cache_write) == (0, usage.input)  # everything up to the last breakpoint
    second = _anthropic("one", "two")
    again = cache.usage("anthropic", second, "k", OUT)
    assert again.cache_read == usage.input and again.cache_write == again.input - usage.input
    assert again.output == 5
    # The same request under another key, or with the system prompt changed by one character, reads nothing.
    assert cache.usage("anthropic", second, "other", OUT).cache_read == 0
    changed = {**second, "system": [{"type": "text", "text": LONG + "!", "cache_control": EPHEMERAL}]}
    assert cache.usage("anthropic", changed, "k", OUT).cache_read == 0


def test_anthropic_caches_nothing_without_breakpoints_or_below_the_minimum() -> None:
    cache = PromptCache()
    plain = _anthropic("one", marks=(), system_mark=False)
    for _ in range(2):
        usage = cache.usage("anthropic", plain, None, OUT)
        assert (usage.cache_read, usage.cache_write) == (0, 0)
    short = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": EPHEMERAL}]}],
    }
    for _ in range(2):
        assert cache.usage("anthropic", short, None, OUT).cache_read == 0


def test_anthropic_looks_back_twenty_blocks_from_each_breakpoint() -> None:
    """A prefix cached 21 blocks before the only breakpoint is not found; a second breakpoint near it finds it."""
    far = ["start", *(f"m{n}" for n in range(21))]
    cache = PromptCache()
    cache.usage("anthropic", _anthropic("start", system_mark=False), None, OUT)
    assert cache.usage("anthropic", _anthropic(*far, system_mark=False), None, OUT).cache_read == 0
    cache = PromptCache()
    cache.usage("anthropic", _anthropic("start", system_mark=False), None, OUT)
    found = cache.usage("anthropic", _anthropic(*far, marks=(1, -1), system_mark=False), None, OUT)
    assert found.cache_read == _tokens(_anthropic(*far), 1)


def test_openai_and_gemini_read_the_shared_prefix_in_128_token_runs_per_key() -> None:
    cache = PromptCache()
    messages = [{"role": "system", "content": LONG}, {"role": "user", "content": "question one"}]
    first = cache.usage("openai_chat", {"model": "m", "messages": messages, "prompt_cache_key": "s1"}, None, OUT)
    assert (first.cache_read, first.cache_write) == (0, 0)
    longer = {"model": "m", "messages": [*messages, {"role": "user", "content": "two"}], "prompt_cache_key": "s1"}
    hit = cache.usage("openai_chat", longer, None, OUT)
    assert hit.cache_read >= MIN_CACHED_TOKENS and hit.cache_read % RUN_TOKENS == 0
    assert hit.input - hit.cache_read < RUN_TOKENS * 2 and hit.cache_write == 0
    assert cache.usage("openai_chat", {**longer, "prompt_cache_key": "s2"}, None, OUT).cache_read == 0
    gemini = {"model": "g", "systemInstruction": {"parts": [{"text": LONG}]}, "contents": []}
    assert cache.usage("gemini", gemini, None, OUT).cache_read == 0
    assert cache.usage("gemini", gemini, None, OUT).cache_read >= MIN_CACHED_TOKENS


def test_the_server_reports_computed_cache_tokens_in_each_wire_and_refuses_five_breakpoints() -> None:
    replies = [Reply(text="a", usage=FakeUsage(input=1, output=3)) for _ in range(5)]
    with FakeLLMServer(Scenario(replies, prompt_cache=True)) as llm:
        headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
        for _ in range(2):
            whole = httpx.post(f"{llm.url}/v1/messages", json=_anthropic("one"), headers=headers).json()
        assert whole["usage"]["cache_read_input_tokens"] > MIN_CACHED_TOKENS and whole["usage"]["output_tokens"] == 3
        assert whole["usage"]["input_tokens"] == 0 and whole["usage"]["cache_creation_input_tokens"] == 0
        five = _anthropic("a", "b", "c", "d", marks=(0, 1, 2, 3))
        refused = httpx.post(f"{llm.url}/v1/messages", json=five, headers=headers)
        assert refused.status_code == 400
        assert (
            refused.json()["error"]["message"] == "A maximum of 4 blocks with cache_control may be provided. Found 5."
        )
        body = {"model": "m", "input": [{"role": "user", "content": LONG}], "stream": True}
        for _ in range(2):
            stream = httpx.post(f"{llm.url}/v1/responses", json=body).text
    completed = [json.loads(line[6:]) for line in stream.splitlines() if '"response.completed"' in line]
    usage = completed[0]["response"]["usage"]
    assert usage["input_tokens_details"]["cached_tokens"] >= MIN_CACHED_TOKENS
    assert Scenario.from_json({"prompt_cache": True}).prompt_cache is True
