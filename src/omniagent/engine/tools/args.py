"""Typed readers for tool arguments: each returns the value or raises `ToolError` with a sentence for the model."""

from __future__ import annotations

from collections.abc import Mapping

from omniagent.engine.tools.context import ToolError

__all__ = ["optional_bool", "optional_int", "optional_number", "optional_str", "required_str"]


def required_str(args: Mapping[str, object], name: str, *, allow_empty: bool = False) -> str:
    """The string argument `name`.

    Raises:
        ToolError: it is missing, not a string, or empty when `allow_empty` is False.
    """
    value = args.get(name)
    if value is None:
        raise ToolError(f"the argument {name!r} is required")
    if not isinstance(value, str):
        raise ToolError(f"the argument {name!r} must be a string")
    if not value and not allow_empty:
        raise ToolError(f"the argument {name!r} must not be empty")
    return _checked_text(name, value)


def optional_str(args: Mapping[str, object], name: str) -> str | None:
    """The string argument `name`, or None when absent, null or empty.

    Raises:
        ToolError: it is present but not a string.
    """
    value = args.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ToolError(f"the argument {name!r} must be a string")
    return _checked_text(name, value)


def optional_int(args: Mapping[str, object], name: str, *, minimum: int) -> int | None:
    """The integer argument `name` (at least `minimum`), or None when absent or null.

    Raises:
        ToolError: it is not an integer or is below `minimum`.
    """
    value = args.get(name)
    if value is None:
        return None
    # bool is an int subclass; integral floats (3.0) are what some models send for integers.
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"the argument {name!r} must be an integer")
    if value < minimum:
        raise ToolError(f"the argument {name!r} must be at least {minimum}")
    return value


def optional_number(args: Mapping[str, object], name: str, *, minimum: float) -> float | None:
    """The number argument `name` (greater than `minimum`), or None when absent or null.

    Raises:
        ToolError: it is not a number or is not greater than `minimum`.
    """
    value = args.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolError(f"the argument {name!r} must be a number")
    if not value > minimum:
        raise ToolError(f"the argument {name!r} must be greater than {minimum:g}")
    return float(value)


def optional_bool(args: Mapping[str, object], name: str, *, default: bool) -> bool:
    """The boolean argument `name`, or `default` when absent or null.

    Raises:
        ToolError: it is present but not a boolean.
    """
    value = args.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ToolError(f"the argument {name!r} must be true or false")
    return value


def _checked_text(name: str, value: str) -> str:
    # JSON may carry lone surrogates ("\ud800"); they cannot be written as UTF-8 or passed to the OS.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(f"the argument {name!r} is not valid Unicode text (it holds a lone surrogate)") from exc
    return value
