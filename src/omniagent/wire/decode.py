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

A line refused only for a number out of range is JSON all the same: it raises `NumberOutOfRange`, which carries the
line decoded anyway, so a face can read the request's id and answer it with the wire's error for bad params rather
than with an anonymous parse error (the client would not know which request failed).

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


class NumberOutOfRange(BadJson):
    """A line that is JSON but holds a number out of range (and is otherwise acceptable). `value` is the line decoded
    anyway, each such number as Python reads it (a big int, or an infinite float when even Python cannot hold it):
    read its envelope (id, method) only, and mind that the id may be one of those numbers."""

    def __init__(self, reason: str, value: Any = None) -> None:
        super().__init__(reason)
        self.value = value


def _reject_constant(name: str) -> Any:
    raise BadJson(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NumberOutOfRange("a number is out of range")
    return value


def _bounded_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError as exc:  # more digits than Python converts (4300 by default)
        raise NumberOutOfRange(_short(exc)) from None
    if abs(value) > MAX_INT_MAGNITUDE:
        raise NumberOutOfRange("an integer is out of range")
    return value


def _any_int(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:  # past Python's digit limit: a number no one can hold, like a float that overflows
        return -math.inf if text.startswith("-") else math.inf


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_bounded_int)
# For a line refused only for a number out of range: every number taken, to read the rest of the line.
_LENIENT = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_any_int)


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
        return _checked(line, _parse(_DECODER, text), repair_surrogates)
    except NumberOutOfRange as exc:
        out_of_range = exc.reason
    # The rest of the line may be bad too (then that is the reason), or the number is all that is wrong.
    raise NumberOutOfRange(out_of_range, _checked(line, _parse(_LENIENT, text), repair_surrogates))


def _parse(decoder: json.JSONDecoder, text: str) -> Any:
    try:
        return decoder.decode(text)
    except BadJson:
        raise
    except RecursionError:
        raise BadJson(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # JSONDecodeError
        raise BadJson(_short(exc)) from None


def _checked(line: bytes, value: Any, repair_surrogates: bool) -> Any:
    """`value`, decoded from `line`, unless it nests too deep or holds a lone surrogate (see `decode_line`)."""
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
