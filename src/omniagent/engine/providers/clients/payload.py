"""Typed reads of decoded provider JSON: absent or mistyped fields read as empty, never as an exception."""

from __future__ import annotations

import json

from omniagent.engine.providers.failures import FailureKind, provider_error


def load_json(data: str | bytes) -> dict[str, object]:
    """Decode one payload that must be a JSON object.

    Raises:
        ProviderError: MALFORMED when it is not.
    """
    try:
        value = json.loads(data)
    except ValueError as exc:
        raise provider_error(FailureKind.MALFORMED) from exc
    if not isinstance(value, dict):
        raise provider_error(FailureKind.MALFORMED)
    return value


def json_object(raw: str) -> dict[str, object]:
    """A tool call's raw JSON arguments as the object a wire wants: `{}` when empty, invalid or not an object."""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def obj(value: object, key: str) -> dict[str, object]:
    """`value[key]` if both are JSON objects, else `{}`."""
    inner = value.get(key) if isinstance(value, dict) else None
    return inner if isinstance(inner, dict) else {}


def items(value: object, key: str) -> list[object]:
    """`value[key]` if it is a JSON array, else `[]`."""
    inner = value.get(key) if isinstance(value, dict) else None
    return inner if isinstance(inner, list) else []


def text(value: object, key: str) -> str:
    """`value[key]` if it is a string, else `""`."""
    inner = value.get(key) if isinstance(value, dict) else None
    return inner if isinstance(inner, str) else ""


def count(value: object, key: str) -> int:
    """`value[key]` if it is a non-negative integer (a token count), else 0."""
    inner = value.get(key) if isinstance(value, dict) else None
    return inner if isinstance(inner, int) and not isinstance(inner, bool) and inner >= 0 else 0


def error_fields(value: object) -> tuple[str, str, str]:
    """(type, code, message) of an `{"error": {...}}` object, Anthropic and OpenAI shapes alike; "" when absent."""
    error = value.get("error") if isinstance(value, dict) else None
    if isinstance(error, str):
        return "", error, ""
    if not isinstance(error, dict):
        return "", "", ""
    code = error.get("code")
    return text(error, "type"), str(code) if code is not None else "", text(error, "message")
