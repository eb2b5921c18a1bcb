"""Prompt caching as the providers do it, for the fake LLM server: input and cache tokens computed from the request.

With `Scenario.prompt_cache` on, a reply's `input`, `cache_read` and `cache_write` are not taken from the script:
they are computed from the request body the way each API computes them, against the prefixes earlier requests
left in the cache. So a client's cache figure measured against the fake means something: it moves with what the
client actually sends (a changed system prompt, a breakpoint in the wrong place, a tool list reordered).

Tokens are estimated as characters / 4 (rounded up) of each unit's compact, key-sorted JSON. A unit is what the API
caches by: a block for Anthropic (each tool, system block and message content block, in the API's order tools →
system → messages), a 128-token run of the serialized prompt for OpenAI and Gemini.

- Anthropic (explicit): a prefix is cached only up to a block marked `cache_control` (at most 4 per request: more
  is the API's 400). Reading, each breakpoint looks back over itself and the 19 blocks before it for the longest
  cached prefix (`cache_read_input_tokens`). Writing, every breakpoint whose prefix holds at least
  `MIN_CACHED_TOKENS` is cached; what the last one adds beyond the read is `cache_creation_input_tokens`.
- OpenAI (automatic): every prompt of at least `MIN_CACHED_TOKENS` is cached in 128-token runs; a later prompt reads
  the leading runs it shares (`cached_tokens`), counted only from `MIN_CACHED_TOKENS` on. Nothing is billed as a
  write. The cache is kept per `prompt_cache_key` (no key: one shared cache), as the API routes lookups by it.
- Gemini (implicit): as OpenAI (`cachedContentTokenCount`), one cache per model.

Every cache is also per credential and per model, as the real ones are, and never expires (a test is shorter than
any provider's time to live).
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Iterable

from omniagent.errors import OmniagentError
from omniagent.testing.scenario import FakeUsage

__all__ = ["CacheRefusal", "PromptCache"]

MIN_CACHED_TOKENS = 1024  # the smallest prefix any of the three caches (Claude Sonnet, OpenAI, Gemini Flash)
RUN_TOKENS = 128  # OpenAI's cache granularity, used for Gemini too
MAX_BREAKPOINTS = 4  # Anthropic's limit per request
LOOKBACK_BLOCKS = 20  # blocks an Anthropic breakpoint checks, itself included
_CHARS_PER_TOKEN = 4


class CacheRefusal(OmniagentError):
    """The request breaks a caching rule the real API enforces; the message is the API's error sentence."""


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _tokens(text: str) -> int:
    return math.ceil(len(text) / _CHARS_PER_TOKEN)


def _chain(previous: str, unit: str) -> str:
    return hashlib.sha256(f"{previous}\x00{unit}".encode()).hexdigest()


class PromptCache:
    """The cache state of one fake server; `usage()` is called once per model request, from any handler thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._prefixes: set[str] = set()  # chained hashes of cached prefixes, scoped by their first link

    def usage(self, api: str, request: dict[str, object], credential: str | None, output: FakeUsage) -> FakeUsage:
        """`output`'s output and reasoning counts with the input side computed from `request`.

        Raises:
            CacheRefusal: the request breaks a rule of the API (more than four Anthropic breakpoints).
        """
        scope = _canonical([api, credential, request.get("model")])
        with self._lock:
            if api == "anthropic":
                total, read, write = self._anthropic(scope, request)
            else:
                if api in ("openai_chat", "openai_responses"):
                    scope = _canonical([scope, request.get("prompt_cache_key")])
                total, read = self._automatic(scope, _prompt_text(api, request))
                write = 0
        return FakeUsage(
            input=total, output=output.output, cache_read=read, cache_write=write, reasoning=output.reasoning
        )

    # Anthropic ---------------------------------------------------------------------------------------------------

    def _anthropic(self, scope: str, request: dict[str, object]) -> tuple[int, int, int]:
        blocks = _anthropic_blocks(request)
        marks = [i for i, (_, marked) in enumerate(blocks) if marked]
        if len(marks) > MAX_BREAKPOINTS:
            raise CacheRefusal(
                f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {len(marks)}."
            )
        hashes, sizes = [], []
        link, size = _chain("", scope), 0
        for unit, _ in blocks:
            link, size = _chain(link, unit), size + _tokens(unit)
            hashes.append(link)
            sizes.append(size)
        total = sizes[-1] if sizes else 0
        read = 0
        for mark in marks:
            for position in range(mark, max(mark - LOOKBACK_BLOCKS, -1), -1):
                if hashes[position] in self._prefixes:
                    read = max(read, sizes[position])
                    break
        write = 0
        for mark in marks:
            if sizes[mark] >= MIN_CACHED_TOKENS and hashes[mark] not in self._prefixes:
                self._prefixes.add(hashes[mark])
                write = max(write, sizes[mark] - read)
        return total, read, write

    # OpenAI and Gemini --------------------------------------------------------------------------------------------

    def _automatic(self, scope: str, prompt: str) -> tuple[int, int]:
        total = _tokens(prompt)
        size = RUN_TOKENS * _CHARS_PER_TOKEN
        link, matched, runs = _chain("", scope), 0, []
        for start in range(0, len(prompt) - size + 1, size):
            link = _chain(link, prompt[start : start + size])
            runs.append(link)
        while matched < len(runs) and runs[matched] in self._prefixes:
            matched += 1
        if total >= MIN_CACHED_TOKENS:
            self._prefixes.update(runs)
        read = matched * RUN_TOKENS
        return total, read if read >= MIN_CACHED_TOKENS else 0


def _anthropic_blocks(request: dict[str, object]) -> list[tuple[str, bool]]:
    """Every cacheable unit in the API's order (tools, system, message blocks), without its `cache_control`, and
    whether it carries one. A message's role is part of its first block, so moving a block across messages is a
    different prefix."""
    out: list[tuple[str, bool]] = []

    def add(value: object, prefix: object = None) -> None:
        if isinstance(value, dict):
            marked = "cache_control" in value
            value = {k: v for k, v in value.items() if k != "cache_control"}
        else:
            marked = False
        out.append((_canonical([prefix, value]), marked))

    for tool in _list(request.get("tools")):
        add(tool)
    for block in _blocks(request.get("system")):
        add(block)
    for message in _list(request.get("messages")):
        for number, block in enumerate(_blocks(message.get("content"))):
            add(block, message.get("role") if number == 0 else None)
    return out


def _blocks(content: object) -> list[dict[str, object]]:
    """A system prompt's or a message's blocks (a plain string is one text block)."""
    return [{"type": "text", "text": content}] if isinstance(content, str) else _list(content)


def _prompt_text(api: str, request: dict[str, object]) -> str:
    """The prompt as one string in the order the API reads it (what comes first is what a prefix shares)."""
    keys = {
        "openai_chat": ("tools", "messages"),
        "openai_responses": ("instructions", "tools", "input"),
        "gemini": ("systemInstruction", "tools", "contents"),
    }[api]
    return "".join(_units(request.get(key) for key in keys))


def _units(values: Iterable[object]) -> Iterable[str]:
    for value in values:
        if isinstance(value, list):
            yield from (_canonical(item) for item in value)
        elif value is not None:
            yield _canonical(value)


def _list(value: object) -> list[dict[str, object]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
