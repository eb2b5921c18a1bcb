"""Decoding one JSON line from a peer we do not trust: the one path every stdio face (`serve`, `rpc`, `acp`) and
every JSON-RPC peer parses its input through.

`decode_line` either returns a value every later step can handle (validate, store, echo back, encode) or raises
`BadJson` with a short reason; it never raises anything else, whatever the bytes. What it refuses, and why:
- bytes that are not UTF-8 (RFC 8259 §8.1), and a UTF-8 byte order mark;
- a lone surrogate escape (`"\\ud800"`) in any string or key: it decodes to text that has no UTF-8 form, so echoing
  it (an id in an error reply) or storing it would fail later, far from the line that caused it;
- `NaN`, `Infinity`, `-Infinity` (not JSON), and numbers outside what a peer can represent: a float that overflows
  to infinity, an integer of magnitude 2^64 or more (ids are at most u64; SQLite integers are i64);
- nesting deeper than `MAX_DEPTH`: validation, storage and encoding all recurse, so a 2 KB line of `[` must stop
  here rather than exhaust the stack in whichever of them comes first.

Framing (line splitting and the size cap) is `wire/jsonl.py`; this module sees one complete line.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from omniagent.wire.errors import WireError

# Deepest nesting accepted. Real messages nest a dozen levels; JSON schemas inside MCP configs a few dozen.
MAX_DEPTH = 128
# Integers must be within ±(2^64 - 1): a u64 id fits, anything larger is nobody's number.
MAX_INT_MAGNITUDE = 2**64 - 1
# Only lines holding a \uD800-\uDFFF escape can decode to a lone surrogate; the rest skip the check.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
# After decoding, every surrogate left in a str is a lone one (a valid pair decodes to one character).
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class BadJson(WireError):
    """A line that is not a JSON value this side accepts; `reason` says why in a short sentence."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _reject_constant(name: str) -> Any:
    raise BadJson(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadJson("a number is out of range")
    return value


def _bounded_int(text: str) -> int:
    # Python refuses more than 4300 digits itself (ValueError); this bounds the rest.
    value = int(text)
    if abs(value) > MAX_INT_MAGNITUDE:
        raise BadJson("an integer is out of range")
    return value


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_bounded_int)


def decode_line(line: bytes, *, repair_surrogates: bool = False) -> Any:
    """The JSON value of one line, or `BadJson`. See the module docstring for what is refused.

    `repair_surrogates` replaces lone surrogates with U+FFFD instead of refusing the line: for peers whose output we
    relay rather than obey (an agent CLI whose JavaScript cut a string between the halves of a surrogate pair), one
    odd character must not cost a whole update.
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadJson(f"invalid UTF-8 at byte {exc.start}") from None
    try:
        value = _DECODER.decode(text)
    except BadJson:
        raise
    except RecursionError:
        raise BadJson(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # JSONDecodeError, and an integer over Python's digit limit
        raise BadJson(_short(exc)) from None
    # Nesting can only exceed the limit when the line holds that many brackets (a cheap count, in C).
    if line.count(b"[") + line.count(b"{") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
        raise BadJson(f"nested deeper than {MAX_DEPTH} levels")
    if _SURROGATE_ESCAPE.search(line) and not _has_utf8_form(value):
        if not repair_surrogates:
            raise BadJson("a string holds a lone surrogate escape (\\ud800-\\udfff)")
        return json.loads(_LONE_SURROGATE.sub("\ufffd", json.dumps(value, ensure_ascii=False)))
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    # Iterative on purpose: the point is not to recurse over hostile nesting.
    stack: list[tuple[dict[str, Any] | list[Any], int]] = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _has_utf8_form(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return False
    return True


def _short(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at character {exc.pos}"
    return str(exc).split(";")[0][:120]
