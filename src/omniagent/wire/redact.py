"""Secrets out of what other programs wrote, before their words go into one of our messages.

An agent's stderr and a provider's error answer arrive over the pipes and sockets this package reads, and both are
worth showing (why the agent died, what the provider disliked), but both can carry a key: a provider repeating the
key it refused, an agent logging its environment. Whatever of them we show passes through `redact` first: the
secret values we know of (the credential headers we sent, the variables of the environment named like secrets) and
anything shaped like a well-known API key become `[redacted]`. `clip` then bounds what is left; redact before
clipping, so a cut never leaves a key's tail that no longer matches it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

MASK = "[redacted]"
# Shorter values are not keys (a flag, a port, a name), and masking them would garble ordinary words.
MIN_SECRET = 8
# Variable names that say their value is a secret: ANTHROPIC_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, ….
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE", re.IGNORECASE)
# The shapes of common keys, for the ones we were never told about (a provider echoing a masked key keeps its
# `sk-…` prefix, so `*` counts as a key character). A bearer token is masked after the word `Bearer`.
_KEY_SHAPED = re.compile(
    r"\bsk-[A-Za-z0-9_*\-]{8,}"  # OpenAI, Anthropic (sk-ant-…), OpenRouter, DeepSeek
    r"|\b[rs]k_(?:live|test)_[A-Za-z0-9]{8,}"  # Stripe
    r"|\bAIza[0-9A-Za-z_\-]{20,}"  # Google
    r"|\b(?:gh[pousr]_|github_pat_|glpat-|gsk_|xai-|hf_)[A-Za-z0-9_\-]{16,}"  # GitHub, GitLab, Groq, xAI, HF
    r"|\bxox[abprs]-[A-Za-z0-9\-]{10,}"  # Slack
    r"|\bA[KS]IA[0-9A-Z]{16}\b"  # AWS access key ids
    r"|\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]*"  # JWTs (OAuth access tokens)
    r"|(?<=\b[Bb]earer )[A-Za-z0-9._~+/=\-]{8,}"
)
# Terminal escape sequences (CSI, e.g. colours), then any other control character but tab and newline: another
# program's escapes must not reach our terminal.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every one of `secrets` (those of at least MIN_SECRET characters) and every key-shaped word
    replaced by MASK, and control characters (escape sequences) dropped first: none can split a key."""
    text = _ESCAPES.sub("", text)
    for secret in sorted({s for s in secrets if len(s) >= MIN_SECRET}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return _KEY_SHAPED.sub(MASK, text)


def named_secrets(values: Mapping[str, str] | None = None) -> list[str]:
    """The values in `values` (default: this process's environment) whose names say they hold a secret, such as
    the variable ANTHROPIC_API_KEY or the header `authorization`, and each word of them (the key of `Bearer KEY`)."""
    source = os.environ if values is None else values
    found = []
    for name, value in source.items():
        if _SECRET_NAME.search(name):
            found += [value, *value.split()]
    return [value for value in dict.fromkeys(found) if len(value) >= MIN_SECRET]


def clip(text: str, limit: int, *, keep_end: bool = False) -> str:
    """`text` cut to at most `limit` characters, the cut marked with `…`: the start kept, or the end (`keep_end`:
    the last lines of a log say most)."""
    if len(text) <= limit:
        return text
    return "…" + text[len(text) - limit + 1 :] if keep_end else text[: limit - 1] + "…"
