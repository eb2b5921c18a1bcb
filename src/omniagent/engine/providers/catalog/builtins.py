"""Built-in providers and models, in providers.json form (a providers.json entry with the same id overrides them).

Prices are USD per million tokens as published by the vendors; base URLs follow the providers.json convention (the
version prefix included, the endpoint path appended by the client). The table is plain JSON data (the catalog
parses it with providers.json's own schema): `missing_keys.py` reads it without msgspec, for `omniagent acp`'s
first reply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omniagent._version import __version__

PROVIDERS_FILE = "providers.json"  # name of the catalog file inside the config dir (overrides these)
ANTHROPIC_DEFAULT_BASE = "https://api.anthropic.com/v1"
OPENAI_DEFAULT_BASE = "https://api.openai.com/v1"
GEMINI_DEFAULT_BASE = "https://generativelanguage.googleapis.com/v1beta"
OLLAMA_DEFAULT_BASE = "http://127.0.0.1:11434/v1"
COPILOT_DEFAULT_BASE = "https://api.githubcopilot.com"
# GitHub's device login and the Copilot token exchange, with the public client id of GitHub's Copilot editor
# plugins (the one other open-source agents use too; a device login has no client secret). providers.json can
# name another app or other endpoints.
COPILOT_OAUTH = {
    "device_code_url": "https://github.com/login/device/code",
    "token_url": "https://github.com/login/oauth/access_token",
    "client_id": "Iv1.b507a08c87ecfe98",
    "scope": "read:user",
    "exchange_url": "https://api.github.com/copilot_internal/v2/token",
}
# Key variables read when a provider's own is unset: Google's SDKs and CLIs take either name.
KEY_ENV_ALIASES: Mapping[str, tuple[str, ...]] = {"GEMINI_API_KEY": ("GOOGLE_API_KEY",)}

_CLAUDE_LEVELS = [None, "low", "medium", "high", "max"]
_GPT5_LEVELS = ["minimal", "low", "medium", "high"]
_GEMINI_WINDOW, _GEMINI_MAX_OUT = 1_048_576, 65_536


def _claude(model_id: str, name: str, max_out: int, price: tuple[float, float, float, float]) -> dict[str, object]:
    cost = {"input": price[0], "output": price[1], "cache_read": price[2], "cache_write": price[3]}
    return {
        "id": model_id,
        "name": name,
        "limits": {"context_window": 200_000, "max_output_tokens": max_out},
        "cost": [cost],
        "reasoning_levels": _CLAUDE_LEVELS,
        "flags": {"supports_vision": True},
    }


def _copilot(model_id: str, name: str, window: int, max_out: int) -> dict[str, object]:
    # No prices: Copilot is a subscription, so a message's cost is unknown rather than zero.
    return {"id": model_id, "name": name, "limits": {"context_window": window, "max_output_tokens": max_out}}


def _gpt(model_id: str, name: str, window: int, max_out: int, price: tuple[float, float, float]) -> dict[str, object]:
    return {
        "id": model_id,
        "name": name,
        "limits": {"context_window": window, "max_output_tokens": max_out},
        "cost": [{"input": price[0], "output": price[1], "cache_read": price[2]}],
        "reasoning_levels": _GPT5_LEVELS,
        "flags": {"supports_vision": True},
    }


def _gemini(model_id: str, name: str, levels: list[str | None], bands: list[dict[str, float]]) -> dict[str, object]:
    return {
        "id": model_id,
        "name": name,
        "limits": {"context_window": _GEMINI_WINDOW, "max_output_tokens": _GEMINI_MAX_OUT},
        "cost": bands,
        "reasoning_levels": levels,
        "flags": {"supports_vision": True},
    }


BUILTIN_TABLE: dict[str, Any] = {
    "providers": [
        {
            "id": "anthropic",
            "name": "Anthropic",
            "base_url": ANTHROPIC_DEFAULT_BASE,
            "endpoints": [
                {"protocol": "anthropic_messages", "key_header": "x_api_key", "cache": "anthropic_breakpoint"}
            ],
            "auth": {"api_key": {"source": {"env": "ANTHROPIC_API_KEY"}}},
            "models": [
                _claude("claude-sonnet-4-5", "Claude Sonnet 4.5", 64_000, (3.0, 15.0, 0.30, 3.75)),
                _claude("claude-opus-4-1", "Claude Opus 4.1", 32_000, (15.0, 75.0, 1.50, 18.75)),
                _claude("claude-haiku-4-5", "Claude Haiku 4.5", 64_000, (1.0, 5.0, 0.10, 1.25)),
            ],
        },
        {
            "id": "openai",
            "name": "OpenAI",
            "base_url": OPENAI_DEFAULT_BASE,
            # OpenAI caches prefixes itself; the session's `prompt_cache_key` keeps its calls on one cache.
            "endpoints": [
                {"protocol": "openai_responses", "cache": "openai_breakpoint"},
                {"protocol": "openai_chat", "cache": "openai_breakpoint"},
            ],
            "auth": {"api_key": {"source": {"env": "OPENAI_API_KEY"}}},
            "models": [
                _gpt("gpt-5", "GPT-5", 400_000, 128_000, (1.25, 10.0, 0.125)),
                _gpt("gpt-5-mini", "GPT-5 mini", 400_000, 128_000, (0.25, 2.0, 0.025)),
                {
                    "id": "gpt-4.1",
                    "name": "GPT-4.1",
                    "protocol": "openai_chat",
                    "limits": {"context_window": 1_047_576, "max_output_tokens": 32_768},
                    "cost": [{"input": 2.0, "output": 8.0, "cache_read": 0.5}],
                    "flags": {"supports_vision": True},
                },
            ],
        },
        {
            "id": "gemini",
            "name": "Google Gemini",
            "base_url": GEMINI_DEFAULT_BASE,
            # Gemini caches repeated prefixes on its own (implicit caching) and reports the hits.
            "endpoints": [{"protocol": "gemini", "key_header": "x_api_key", "cache": "automatic"}],
            "auth": {"api_key": {"source": {"env": "GEMINI_API_KEY"}}},
            "models": [
                # Prompts over 200k tokens are priced higher on Pro. Pro always thinks; on Flash `minimal`
                # turns thinking off; Flash-Lite does not think unless asked.
                _gemini(
                    "gemini-2.5-pro",
                    "Gemini 2.5 Pro",
                    ["low", "medium", "high"],
                    [
                        {"input": 1.25, "output": 10.0, "cache_read": 0.125},
                        {"min_prompt_tokens": 200_001, "input": 2.5, "output": 15.0, "cache_read": 0.25},
                    ],
                ),
                _gemini(
                    "gemini-2.5-flash",
                    "Gemini 2.5 Flash",
                    ["minimal", "low", "medium", "high"],
                    [{"input": 0.30, "output": 2.50, "cache_read": 0.03}],
                ),
                _gemini(
                    "gemini-2.5-flash-lite",
                    "Gemini 2.5 Flash-Lite",
                    [None, "low", "medium", "high"],
                    [{"input": 0.10, "output": 0.40, "cache_read": 0.01}],
                ),
            ],
        },
        {
            # GitHub Copilot's OpenAI-compatible API, signed in with `auth.login` (a GitHub device login).
            "id": "github-copilot",
            "name": "GitHub Copilot",
            "base_url": COPILOT_DEFAULT_BASE,
            "endpoints": [{"protocol": "openai_chat", "cache": "unsupported"}],
            "auth": {"oauth": COPILOT_OAUTH},
            "headers": [
                {"name": "copilot-integration-id", "value": "vscode-chat"},
                {"name": "editor-version", "value": f"omniagent/{__version__}"},
            ],
            "models": [
                _copilot("gpt-4.1", "GPT-4.1 (Copilot)", 128_000, 16_384),
                _copilot("gpt-5-mini", "GPT-5 mini (Copilot)", 128_000, 64_000),
                _copilot("claude-sonnet-4", "Claude Sonnet 4 (Copilot)", 128_000, 16_000),
            ],
        },
        {
            # A local OpenAI-compatible server (Ollama by default). It needs no key; add models in
            # providers.json with the names you pulled (`ollama list`).
            "id": "ollama",
            "name": "Ollama (local)",
            "base_url": OLLAMA_DEFAULT_BASE,
            "endpoints": [{"protocol": "openai_chat", "cache": "unsupported"}],
            "models": [],
        },
    ]
}


def env_base_urls(env: Mapping[str, str]) -> dict[str, str]:
    """Base-URL overrides of the built-ins from the environment, in providers.json form.

    `ANTHROPIC_BASE_URL` follows the Anthropic SDK convention (no `/v1`; it is appended), `OPENAI_BASE_URL` the
    OpenAI SDK one (`/v1` included), `GOOGLE_GEMINI_BASE_URL` Gemini CLI's (the origin; `/v1beta` appended),
    `OLLAMA_HOST` Ollama's (`host:port` or a URL, `/v1` appended).
    """
    overrides: dict[str, str] = {}
    if env.get("ANTHROPIC_BASE_URL"):
        base = env["ANTHROPIC_BASE_URL"].rstrip("/")
        overrides["anthropic"] = base if base.endswith("/v1") else base + "/v1"
    if env.get("OPENAI_BASE_URL"):
        overrides["openai"] = env["OPENAI_BASE_URL"].rstrip("/")
    if env.get("GOOGLE_GEMINI_BASE_URL"):
        base = env["GOOGLE_GEMINI_BASE_URL"].rstrip("/")
        overrides["gemini"] = base if base.endswith(("/v1beta", "/v1")) else base + "/v1beta"
    if env.get("OLLAMA_HOST"):
        host = env["OLLAMA_HOST"].rstrip("/")
        overrides["ollama"] = (host if "://" in host else "http://" + host) + "/v1"
    return overrides
